package chat_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func TestArgon2id(t *testing.T) {
	h := chat.Argon2id{Time: 1, MemoryKiB: 64}
	enc, err := h.Hash("secret password")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$"), enc)
	assert.True(t, h.Verify(enc, "secret password"))
	assert.False(t, h.Verify(enc, "secret passwore"))
	// Parameters come from the hash, not the hasher.
	assert.True(t, chat.Argon2id{}.Verify(enc, "secret password"))
	again, err := h.Hash("secret password")
	require.NoError(t, err)
	assert.NotEqual(t, enc, again, "salted")
	for _, bad := range []string{"", "plain", "$argon2id$v=19$m=64,t=1,p=1$!!$!!", "$bcrypt$x$y$z$w",
		"$argon2id$v=18$m=64,t=1,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=64,t=0,p=1$c2FsdA$aGFzaA"} {
		assert.False(t, h.Verify(bad, "secret password"), bad)
	}
}

func TestAuthenticate(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	other := h.NewRealm(t, "http://other.example.com")

	t.Run("success, email case-insensitive", func(t *testing.T) {
		c, err := h.Service.Authenticate(ctx, h.RealmID, strings.ToUpper(alice.Email), alice.APIKey)
		require.NoError(t, err)
		assert.Equal(t, alice.Caller, c)
	})
	cases := []struct {
		name, email, key string
		realm            int64
		code, msg        string
	}{
		{"malformed key", alice.Email, "short", h.RealmID, chat.CodeUnauthorized, "Malformed API key"},
		{"malformed characters", alice.Email, strings.Repeat("-", 32), h.RealmID, chat.CodeUnauthorized, "Malformed API key"},
		{"wrong key", alice.Email, strings.Repeat("a", 32), h.RealmID, chat.CodeUnauthorized, "Invalid API key"},
		{"other user's key", alice.Email, h.Owner.APIKey, h.RealmID, chat.CodeUnauthorized, "Invalid API key"},
		{"unknown email", "nobody@example.com", alice.APIKey, h.RealmID, chat.CodeUnauthorized, "Invalid API key"},
		{"unknown realm", alice.Email, alice.APIKey, h.RealmID + 100, chat.CodeUnauthorized, "Invalid API key"},
		{"realm of another user", alice.Email, alice.APIKey, other.RealmID, chat.CodeUnauthorized, "Invalid API key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.Service.Authenticate(ctx, c.realm, c.email, c.key)
			requireError(t, err, chat.KindUnauthenticated, c.code, c.msg)
		})
	}
	t.Run("deactivated user", func(t *testing.T) {
		bob := h.NewUser(t, chat.RoleMember)
		h.Deactivate(t, bob)
		_, err := h.Service.Authenticate(ctx, h.RealmID, bob.Email, bob.APIKey)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "Account is deactivated")
		// A wrong key does not reveal the deactivation.
		_, err = h.Service.Authenticate(ctx, h.RealmID, bob.Email, alice.APIKey)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUnauthorized, "Invalid API key")
	})
	t.Run("deactivated organization", func(t *testing.T) {
		h2 := chattest.New(t)
		h2.DeactivateRealm(t)
		_, err := h2.Service.Authenticate(ctx, h2.RealmID, h2.Owner.Email, h2.Owner.APIKey)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeRealmDeactivated, "This organization has been deactivated")
		_, err = h2.Service.GetOwnUser(ctx, h2.Owner.Caller)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeRealmDeactivated, "")
	})
}

func TestFetchAPIKey(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)

	t.Run("success", func(t *testing.T) {
		resp, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: strings.ToUpper(alice.Email), Password: chattest.Password})
		require.NoError(t, err)
		assert.Equal(t, &chat.FetchAPIKeyResponse{APIKey: alice.APIKey, Email: alice.Email, UserID: alice.ID}, resp)
		checkSchema(t, "POST", "/fetch_api_key", resp)
	})
	for _, c := range []struct{ name, user, pass string }{
		{"wrong password", alice.Email, "wrong password"},
		{"empty password", alice.Email, ""},
		{"unknown user", "ghost@example.com", chattest.Password},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: c.user, Password: c.pass})
			requireError(t, err, chat.KindUnauthenticated, chat.CodeAuthenticationFailed, "Your username or password is incorrect")
		})
	}
	t.Run("missing username", func(t *testing.T) {
		_, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Password: "x"})
		e := requireError(t, err, chat.KindInvalid, chat.CodeRequestVariableMissing, "Missing 'username' argument")
		assert.Equal(t, "username", e.Fields["var_name"])
	})
	t.Run("bots cannot log in with a password", func(t *testing.T) {
		bot := h.NewBot(t, alice)
		_, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: bot.Email, Password: ""})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeAuthenticationFailed, "")
	})
	t.Run("deactivated user", func(t *testing.T) {
		bob := h.NewUser(t, chat.RoleMember)
		h.Deactivate(t, bob)
		_, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: bob.Email, Password: chattest.Password})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "Account is deactivated")
	})
	t.Run("deactivated organization", func(t *testing.T) {
		h2 := chattest.New(t)
		h2.DeactivateRealm(t)
		_, err := h2.Service.FetchAPIKey(ctx, h2.RealmID, chat.FetchAPIKeyRequest{Username: h2.Owner.Email, Password: chattest.Password})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeRealmDeactivated, "")
	})
	t.Run("unknown organization", func(t *testing.T) {
		_, err := h.Service.FetchAPIKey(ctx, h.RealmID+100, chat.FetchAPIKeyRequest{Username: alice.Email, Password: chattest.Password})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeAuthenticationFailed, "")
	})
}

func TestFetchAPIKeyRateLimit(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	wrong := chat.FetchAPIKeyRequest{Username: alice.Email, Password: "wrong password"}
	right := chat.FetchAPIKeyRequest{Username: alice.Email, Password: chattest.Password}

	for i := 0; i < chat.DefaultLimits.LoginAttempts; i++ {
		_, err := h.Service.FetchAPIKey(ctx, h.RealmID, wrong)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeAuthenticationFailed, "")
		h.Clock.Advance(time.Minute)
	}
	// Now even the right password is refused until the oldest failure ages out.
	_, err := h.Service.FetchAPIKey(ctx, h.RealmID, right)
	e := requireError(t, err, chat.KindRateLimited, chat.CodeRateLimitHit, "")
	assert.Contains(t, e.Msg, "too many attempts")
	assert.InDelta(t, float64(25*60), e.Fields["retry-after"], 1, "the first failure expires 30 min after it happened")
	// The limit is per account.
	_, err = h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: bob.Email, Password: chattest.Password})
	require.NoError(t, err)
	// Case does not make a new account.
	_, err = h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: strings.ToUpper(alice.Email), Password: chattest.Password})
	requireError(t, err, chat.KindRateLimited, chat.CodeRateLimitHit, "")

	h.Clock.Advance(26 * time.Minute)
	_, err = h.Service.FetchAPIKey(ctx, h.RealmID, right)
	require.NoError(t, err, "the oldest failure has aged out")
	// A success clears the count: five more failures are allowed.
	for i := 0; i < chat.DefaultLimits.LoginAttempts; i++ {
		_, err := h.Service.FetchAPIKey(ctx, h.RealmID, wrong)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeAuthenticationFailed, "")
	}
	_, err = h.Service.FetchAPIKey(ctx, h.RealmID, wrong)
	requireError(t, err, chat.KindRateLimited, chat.CodeRateLimitHit, "")
}

func TestFetchAPIKeyRateLimitConcurrent(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: alice.Email, Password: "wrong password"})
			mu.Lock()
			codes[chat.AsError(err).Code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	// Concurrent guesses get exactly LoginAttempts password checks.
	assert.Equal(t, chat.DefaultLimits.LoginAttempts, codes[chat.CodeAuthenticationFailed])
	assert.Equal(t, 20-chat.DefaultLimits.LoginAttempts, codes[chat.CodeRateLimitHit])
}

func TestRegenerateAPIKey(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	for _, role := range []int{chat.RoleOwner, chat.RoleAdministrator, chat.RoleModerator, chat.RoleMember, chat.RoleGuest} {
		u := h.NewUser(t, role)
		resp, err := h.Service.RegenerateAPIKey(ctx, u.Caller)
		require.NoError(t, err)
		checkEnvelope(t, resp) // not in the reference OpenAPI
		require.Len(t, resp.APIKey, chat.APIKeyLength)
		require.NotEqual(t, u.APIKey, resp.APIKey)
		_, err = h.Service.Authenticate(ctx, h.RealmID, u.Email, u.APIKey)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUnauthorized, "Invalid API key")
		c, err := h.Service.Authenticate(ctx, h.RealmID, u.Email, resp.APIKey)
		require.NoError(t, err)
		require.Equal(t, u.Caller, c)
	}
	t.Run("bots regenerate their own key", func(t *testing.T) {
		bot := h.NewBot(t, h.Owner)
		resp, err := h.Service.RegenerateAPIKey(ctx, bot.Caller)
		require.NoError(t, err)
		_, err = h.Service.Authenticate(ctx, h.RealmID, bot.Email, resp.APIKey)
		require.NoError(t, err)
	})
	t.Run("deactivated caller", func(t *testing.T) {
		u := h.NewUser(t, chat.RoleMember)
		h.Deactivate(t, u)
		_, err := h.Service.RegenerateAPIKey(ctx, u.Caller)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
	})
	t.Run("unknown caller", func(t *testing.T) {
		_, err := h.Service.RegenerateAPIKey(ctx, chat.Caller{RealmID: h.RealmID, UserID: 9999})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUnauthorized, "")
	})
	t.Run("keys are distinct and well formed", func(t *testing.T) {
		u := h.NewUser(t, chat.RoleMember)
		seen := map[string]bool{}
		for i := 0; i < 50; i++ {
			resp, err := h.Service.RegenerateAPIKey(ctx, u.Caller)
			require.NoError(t, err)
			require.Regexp(t, `^[A-Za-z0-9]{32}$`, resp.APIKey)
			require.False(t, seen[resp.APIKey])
			seen[resp.APIKey] = true
		}
	})
}

// countingHasher counts password verifications.
type countingHasher struct {
	chat.PasswordHasher
	verified atomic.Int64
}

func (c *countingHasher) Verify(encoded, password string) bool {
	c.verified.Add(1)
	return c.PasswordHasher.Verify(encoded, password)
}

// An unknown account costs a login as much as a wrong password: a hash is
// verified either way, so timing does not reveal which accounts exist.
func TestFetchAPIKeyUnknownAccountVerifiesAHash(t *testing.T) {
	ctx := context.Background()
	hasher := &countingHasher{PasswordHasher: chat.Argon2id{Time: 1, MemoryKiB: 64}}
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithPasswordHasher(hasher)))
	bot := h.NewBot(t, h.Owner)
	for _, username := range []string{"nobody@example.com", h.Owner.Email, bot.Email} {
		before := hasher.verified.Load()
		_, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: username, Password: "wrong password"})
		requireError(t, err, chat.KindUnauthenticated, "AUTHENTICATION_FAILED", "")
		assert.Equal(t, int64(1), hasher.verified.Load()-before, "one verification for %s", username)
	}
}

// Authentication and the caller's account are cached, and every change
// through the Service takes effect on the next request.
func TestCallerCache(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	queries := countQueries(t, h)
	c, err := h.Service.Authenticate(ctx, h.RealmID, alice.Email, alice.APIKey)
	require.NoError(t, err)
	_, err = h.Service.GetSettings(ctx, c)
	require.NoError(t, err)
	before := queries.Load()
	_, err = h.Service.Authenticate(ctx, h.RealmID, strings.ToUpper(alice.Email), alice.APIKey)
	require.NoError(t, err)
	_, err = h.Service.GetSettings(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, before, queries.Load(), "a repeated request reads nothing")

	// Sending a message changes no caller: the cache stays.
	_, err = h.Service.SendMessage(ctx, c, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(alice.ID), Content: "note"})
	require.NoError(t, err)
	before = queries.Load()
	_, err = h.Service.Authenticate(ctx, h.RealmID, alice.Email, alice.APIKey)
	require.NoError(t, err)
	assert.Equal(t, before, queries.Load(), "still cached after a message")

	// A new key: the old one fails at once.
	key, err := h.Service.RegenerateAPIKey(ctx, alice.Caller)
	require.NoError(t, err)
	_, err = h.Service.Authenticate(ctx, h.RealmID, alice.Email, alice.APIKey)
	requireError(t, err, chat.KindUnauthenticated, "UNAUTHORIZED", "Invalid API key")
	_, err = h.Service.Authenticate(ctx, h.RealmID, alice.Email, key.APIKey)
	require.NoError(t, err)

	// A role change shows on the next call.
	_, err = h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: alice.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleAdministrator)}})
	require.NoError(t, err)
	me, err := h.Service.GetOwnUser(ctx, alice.Caller)
	require.NoError(t, err)
	assert.True(t, me.IsAdmin)

	// Deactivation stops the next request.
	_, err = h.Service.DeactivateUser(ctx, h.Owner.Caller, chat.DeactivateUserRequest{UserID: alice.ID})
	require.NoError(t, err)
	_, err = h.Service.Authenticate(ctx, h.RealmID, alice.Email, key.APIKey)
	requireError(t, err, chat.KindUnauthenticated, "USER_DEACTIVATED", "")
	_, err = h.Service.GetOwnUser(ctx, alice.Caller)
	requireError(t, err, chat.KindUnauthenticated, "USER_DEACTIVATED", "")

	// A change written to the store directly needs InvalidateCaches.
	bob := h.NewUser(t, chat.RoleMember)
	_, err = h.Service.Authenticate(ctx, h.RealmID, bob.Email, bob.APIKey)
	require.NoError(t, err)
	rec, err := h.Store.GetUser(ctx, h.RealmID, bob.ID)
	require.NoError(t, err)
	rec.IsActive = false
	require.NoError(t, h.Store.UpdateUser(ctx, rec, "is_active"))
	h.Service.InvalidateCaches(h.RealmID)
	_, err = h.Service.Authenticate(ctx, h.RealmID, bob.Email, bob.APIKey)
	requireError(t, err, chat.KindUnauthenticated, "USER_DEACTIVATED", "")
}
