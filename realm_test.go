package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func TestCreateRealm(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	valid := func() chat.CreateRealmRequest {
		return chat.CreateRealmRequest{Name: "Acme", URL: "https://acme.example.com", OwnerEmail: "boss@acme.example.com",
			OwnerFullName: "Boss", OwnerPassword: "a long password"}
	}
	t.Run("success", func(t *testing.T) {
		resp, err := h.Service.CreateRealm(ctx, valid())
		require.NoError(t, err)
		owner := chat.Caller{RealmID: resp.RealmID, UserID: resp.OwnerID}
		me, err := h.Service.GetOwnUser(ctx, owner)
		require.NoError(t, err)
		assert.Equal(t, chat.RoleOwner, me.Role)
		c, err := h.Service.Authenticate(ctx, resp.RealmID, "boss@acme.example.com", resp.OwnerAPIKey)
		require.NoError(t, err)
		assert.Equal(t, owner, c)

		// System groups, nested each in the next, with the owner in role:owners.
		groups, err := h.Store.ListGroups(ctx, resp.RealmID)
		require.NoError(t, err)
		byName := map[string]int64{}
		for _, g := range groups {
			assert.True(t, g.IsSystemGroup)
			byName[g.Name] = g.ID
		}
		require.Len(t, byName, 8)
		chain := []string{chat.GroupOwners, chat.GroupAdministrators, chat.GroupModerators, chat.GroupFullMembers,
			chat.GroupMembers, chat.GroupEveryone, chat.GroupInternet}
		for i := 1; i < len(chain); i++ {
			subs, err := h.Store.Subgroups(ctx, resp.RealmID, byName[chain[i]])
			require.NoError(t, err)
			assert.Equal(t, []int64{byName[chain[i-1]]}, subs, chain[i])
		}
		for _, empty := range []string{chat.GroupOwners, chat.GroupNobody} {
			subs, err := h.Store.Subgroups(ctx, resp.RealmID, byName[empty])
			require.NoError(t, err)
			assert.Empty(t, subs, empty)
		}
		members, err := h.Store.GroupMembers(ctx, resp.RealmID, byName[chat.GroupOwners])
		require.NoError(t, err)
		assert.Equal(t, []int64{resp.OwnerID}, members)
	})
	cases := []struct {
		name string
		edit func(*chat.CreateRealmRequest)
		msg  string
		kind chat.Kind
	}{
		{"empty name", func(r *chat.CreateRealmRequest) { r.Name = "  " }, "Organization name can't be empty.", 0},
		{"long name", func(r *chat.CreateRealmRequest) { r.Name = strings.Repeat("n", 41) }, "Organization name is too long (limit: 40 characters).", 0},
		{"no URL", func(r *chat.CreateRealmRequest) { r.URL = "" }, "", 0},
		{"URL without scheme", func(r *chat.CreateRealmRequest) { r.URL = "acme.example.com" }, "", 0},
		{"URL with path", func(r *chat.CreateRealmRequest) { r.URL = "https://acme.example.com/chat" }, "", 0},
		{"ftp URL", func(r *chat.CreateRealmRequest) { r.URL = "ftp://acme.example.com" }, "", 0},
		{"host taken", func(r *chat.CreateRealmRequest) { r.URL = "http://CHAT.example.com" }, "An organization is already served at chat.example.com", chat.KindConflict},
		{"bad owner email", func(r *chat.CreateRealmRequest) { r.OwnerEmail = "boss" }, "Bad name or username", 0},
		{"bad owner name", func(r *chat.CreateRealmRequest) { r.OwnerFullName = "B" }, "Name too short!", 0},
		{"weak password", func(r *chat.CreateRealmRequest) { r.OwnerPassword = "123" }, "The password is too weak.", 0},
		{"bad visibility", func(r *chat.CreateRealmRequest) { r.EmailAddressVisibility = 9 }, "Invalid email_address_visibility", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, err := h.Store.ListRealms(ctx)
			require.NoError(t, err)
			req := valid()
			req.URL = "https://" + strings.ReplaceAll(c.name, " ", "-") + ".example.com"
			c.edit(&req)
			_, err = h.Service.CreateRealm(ctx, req)
			requireError(t, err, orInvalid(c.kind), chat.CodeBadRequest, c.msg)
			after, err := h.Store.ListRealms(ctx)
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing was stored")
		})
	}
}

func TestRealmForHost(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	t.Run("single organization answers on any host", func(t *testing.T) {
		for _, host := range []string{"chat.example.com", "CHAT.example.com:443", "127.0.0.1:9991", "elsewhere"} {
			id, err := h.Service.RealmForHost(ctx, host)
			require.NoError(t, err, host)
			assert.Equal(t, h.RealmID, id)
		}
	})
	other := h.NewRealm(t, "http://other.example.com:8080")
	t.Run("several organizations are chosen by host", func(t *testing.T) {
		for host, want := range map[string]int64{
			"chat.example.com": h.RealmID, "chat.example.com:80": h.RealmID, "Chat.Example.com": h.RealmID,
			"other.example.com:8080": other.RealmID, "other.example.com": other.RealmID,
		} {
			id, err := h.Service.RealmForHost(ctx, host)
			require.NoError(t, err, host)
			assert.Equal(t, want, id, host)
		}
		_, err := h.Service.RealmForHost(ctx, "elsewhere.example.com")
		requireError(t, err, chat.KindNotFound, chat.CodeNonexistentSubdomain, "Invalid subdomain")
	})
}

func TestGetServerSettings(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithRealm(chat.CreateRealmRequest{Name: "Acme", Description: "We **build** things"}))
	t.Run("organization", func(t *testing.T) {
		resp, err := h.Service.GetServerSettings(ctx, h.RealmID)
		require.NoError(t, err)
		checkSchema(t, "GET", "/server_settings", resp)
		assert.Equal(t, chat.FeatureLevel, resp.FeatureLevel)
		assert.Equal(t, chat.Version, resp.Version)
		assert.Equal(t, chat.Version, resp.MergeBase)
		assert.True(t, resp.AuthenticationMethods.Password)
		assert.True(t, resp.EmailAuthEnabled)
		assert.True(t, resp.RequireEmailFormatUsernames)
		assert.False(t, resp.IsIncompatible)
		assert.Equal(t, "http://chat.example.com", resp.RealmURL)
		assert.Equal(t, resp.RealmURL, resp.RealmURI)
		assert.Equal(t, "Acme", resp.RealmName)
		assert.Equal(t, ptr("<p>We <strong>build</strong> things</p>"), resp.RealmDescription)
		assert.Equal(t, ptr(false), resp.RealmWebPublicAccessEnabled)
		assert.True(t, strings.HasPrefix(resp.RealmIcon, "https://secure.gravatar.com/avatar/"))
		assert.NotNil(t, resp.ExternalAuthenticationMethods)
	})
	t.Run("root domain has no organization fields", func(t *testing.T) {
		for _, id := range []int64{0, h.RealmID + 100} {
			resp, err := h.Service.GetServerSettings(ctx, id)
			require.NoError(t, err)
			checkSchema(t, "GET", "/server_settings", resp)
			assert.Empty(t, resp.RealmURL)
			assert.Empty(t, resp.RealmName)
			assert.Nil(t, resp.RealmDescription)
			assert.Equal(t, chat.FeatureLevel, resp.FeatureLevel)
		}
	})
}
