package chat_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func gravatar(email string, version int) string {
	sum := md5.Sum([]byte(strings.ToLower(email)))
	return fmt.Sprintf("https://secure.gravatar.com/avatar/%s?d=identicon&version=%d", hex.EncodeToString(sum[:]), version)
}

var allRoles = []int{chat.RoleOwner, chat.RoleAdministrator, chat.RoleModerator, chat.RoleMember, chat.RoleGuest}

func TestGetOwnUser(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	for _, role := range allRoles {
		t.Run(fmt.Sprint(role), func(t *testing.T) {
			u := h.NewUser(t, role)
			me, err := h.Service.GetOwnUser(ctx, u.Caller)
			require.NoError(t, err)
			checkSchema(t, "GET", "/users/me", me)
			assert.Equal(t, &chat.OwnUser{
				AvatarURL: gravatar(u.Email, 1), AvatarVersion: 1, Email: u.Email, FullName: u.FullName,
				IsAdmin: role <= chat.RoleAdministrator, IsOwner: role == chat.RoleOwner, Role: role,
				IsGuest: role == chat.RoleGuest, IsActive: true, Timezone: "",
				DateJoined: chattest.Start.Format("2006-01-02T15:04:05+00:00"), MaxMessageID: -1,
				UserID: u.ID, DeliveryEmail: u.Email, ProfileData: map[string]chat.ProfileFieldValue{},
				Settings: chat.DefaultSettings,
			}, me)
		})
	}
	t.Run("bot", func(t *testing.T) {
		bot := h.NewBot(t, h.Owner)
		me, err := h.Service.GetOwnUser(ctx, bot.Caller)
		require.NoError(t, err)
		checkSchema(t, "GET", "/users/me", me)
		assert.True(t, me.IsBot)
		assert.Nil(t, me.ProfileData, "bots have no profile_data")
	})
	t.Run("own email is real even when emails are hidden", func(t *testing.T) {
		h := chattest.New(t, chattest.WithRealm(chat.CreateRealmRequest{EmailAddressVisibility: chat.EmailVisibleNobody}))
		u := h.NewUser(t, chat.RoleMember)
		me, err := h.Service.GetOwnUser(ctx, u.Caller)
		require.NoError(t, err)
		assert.Equal(t, u.Email, me.DeliveryEmail)
		assert.Equal(t, fmt.Sprintf("user%d@chat.example.com", u.ID), me.Email)
	})
	t.Run("deactivated", func(t *testing.T) {
		u := h.NewUser(t, chat.RoleMember)
		h.Deactivate(t, u)
		_, err := h.Service.GetOwnUser(ctx, u.Caller)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
	})
	t.Run("caller names a user of another realm", func(t *testing.T) {
		h2 := h.NewRealm(t, "http://other.example.com")
		_, err := h.Service.GetOwnUser(ctx, chat.Caller{RealmID: h2.RealmID, UserID: h.Owner.ID})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUnauthorized, "Invalid user")
		_, err = h.Service.GetOwnUser(ctx, chat.Caller{RealmID: h2.RealmID + 1, UserID: h.Owner.ID})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUnauthorized, "Invalid organization")
	})
}

func TestGetUsers(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	member := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	bot := h.NewBot(t, member)
	gone := h.NewUser(t, chat.RoleModerator)
	h.Deactivate(t, gone)

	for _, caller := range []chattest.User{h.Owner, member, guest, bot} {
		t.Run("caller "+caller.Email, func(t *testing.T) {
			resp, err := h.Service.GetUsers(ctx, caller.Caller, chat.GetUsersRequest{})
			require.NoError(t, err)
			checkSchema(t, "GET", "/users", resp)
			require.Len(t, resp.Members, 5)
			ids := []int64{}
			for _, m := range resp.Members {
				ids = append(ids, m.UserID)
			}
			assert.Equal(t, []int64{h.Owner.ID, member.ID, guest.ID, bot.ID, gone.ID}, ids)
		})
	}
	resp, err := h.Service.GetUsers(ctx, member.Caller, chat.GetUsersRequest{})
	require.NoError(t, err)
	byID := map[int64]chat.User{}
	for _, m := range resp.Members {
		byID[m.UserID] = m
	}
	t.Run("fields", func(t *testing.T) {
		g := byID[guest.ID]
		assert.Equal(t, guest.Email, g.Email)
		assert.Equal(t, ptr(guest.Email), g.DeliveryEmail)
		assert.True(t, g.IsGuest)
		assert.Equal(t, chat.RoleGuest, g.Role)
		assert.Nil(t, g.AvatarURL, "client_gravatar defaults to true and the email is visible")
		assert.Nil(t, g.BotType)
		assert.Nil(t, g.BotOwnerID)
		assert.Nil(t, g.ProfileData, "profile data only on request")
		assert.False(t, byID[gone.ID].IsActive, "deactivated users are listed")
		b := byID[bot.ID]
		assert.True(t, b.IsBot)
		assert.Equal(t, ptr(chat.BotTypeGeneric), b.BotType)
		require.NotNil(t, b.BotOwnerID)
		assert.Equal(t, ptr(member.ID), b.BotOwnerID.ID)
		o := byID[h.Owner.ID]
		assert.True(t, o.IsOwner)
		assert.True(t, o.IsAdmin)
	})
	t.Run("client_gravatar false sends URLs", func(t *testing.T) {
		resp, err := h.Service.GetUsers(ctx, member.Caller, chat.GetUsersRequest{ClientGravatar: ptr(false)})
		require.NoError(t, err)
		checkSchema(t, "GET", "/users", resp)
		for _, m := range resp.Members {
			require.NotNil(t, m.AvatarURL)
			assert.Equal(t, gravatar(*m.DeliveryEmail, 1), *m.AvatarURL)
		}
	})
	t.Run("include_custom_profile_fields", func(t *testing.T) {
		resp, err := h.Service.GetUsers(ctx, member.Caller, chat.GetUsersRequest{IncludeCustomProfileFields: ptr(true)})
		require.NoError(t, err)
		checkSchema(t, "GET", "/users", resp)
		for _, m := range resp.Members {
			if m.IsBot {
				assert.Nil(t, m.ProfileData)
			} else {
				assert.NotNil(t, m.ProfileData)
			}
		}
	})
	t.Run("deactivated caller", func(t *testing.T) {
		_, err := h.Service.GetUsers(ctx, gone.Caller, chat.GetUsersRequest{})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
	})
	t.Run("other realms are invisible", func(t *testing.T) {
		h2 := h.NewRealm(t, "http://other.example.com")
		h2.NewUser(t, chat.RoleMember)
		resp, err := h.Service.GetUsers(ctx, member.Caller, chat.GetUsersRequest{})
		require.NoError(t, err)
		assert.Len(t, resp.Members, 5)
	})
}

// TestEmailVisibility checks delivery_email, the API email and avatar_url
// for each visibility setting and viewer role.
func TestEmailVisibility(t *testing.T) {
	ctx := context.Background()
	type want struct{ owner, admin, moderator, member, guest bool }
	cases := []struct {
		vis  int
		want want
	}{
		{chat.EmailVisibleEveryone, want{true, true, true, true, true}},
		{chat.EmailVisibleMembers, want{true, true, true, true, false}},
		{chat.EmailVisibleModerators, want{true, true, true, false, false}},
		{chat.EmailVisibleAdministrators, want{true, true, false, false, false}},
		{chat.EmailVisibleNobody, want{false, false, false, false, false}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.vis), func(t *testing.T) {
			h := chattest.New(t, chattest.WithRealm(chat.CreateRealmRequest{EmailAddressVisibility: c.vis}))
			target := h.NewUser(t, chat.RoleMember)
			bot := h.NewBot(t, target)
			viewers := map[int]bool{chat.RoleOwner: c.want.owner, chat.RoleAdministrator: c.want.admin,
				chat.RoleModerator: c.want.moderator, chat.RoleMember: c.want.member, chat.RoleGuest: c.want.guest}
			for role, visible := range viewers {
				viewer := h.NewUser(t, role)
				got, err := h.Service.GetUser(ctx, viewer.Caller, chat.GetUserRequest{UserID: target.ID})
				require.NoError(t, err)
				checkSchema(t, "GET", "/users/{user_id}", got)
				u := got.User
				if c.vis == chat.EmailVisibleEveryone {
					assert.Equal(t, target.Email, u.Email)
				} else {
					assert.Equal(t, fmt.Sprintf("user%d@chat.example.com", target.ID), u.Email, "API email is the dummy form")
				}
				if visible {
					assert.Equal(t, ptr(target.Email), u.DeliveryEmail, "role %d", role)
					assert.Nil(t, u.AvatarURL, "client computes the gravatar")
				} else {
					assert.Nil(t, u.DeliveryEmail, "role %d", role)
					assert.Equal(t, ptr(gravatar(target.Email, 1)), u.AvatarURL, "the URL is sent so the hash does not leak")
				}
				// Finding a user by a real email the viewer cannot see fails like an unknown one.
				byEmail, err := h.Service.GetUserByEmail(ctx, viewer.Caller, chat.GetUserByEmailRequest{Email: target.Email})
				if visible {
					require.NoError(t, err)
					assert.Equal(t, target.ID, byEmail.User.UserID)
				} else {
					requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
				}
				// The API email always works.
				byAPI, err := h.Service.GetUserByEmail(ctx, viewer.Caller, chat.GetUserByEmailRequest{Email: u.Email})
				require.NoError(t, err)
				assert.Equal(t, target.ID, byAPI.User.UserID)
				// Bots' emails are public.
				b, err := h.Service.GetUser(ctx, viewer.Caller, chat.GetUserRequest{UserID: bot.ID})
				require.NoError(t, err)
				assert.Equal(t, bot.Email, b.User.Email)
				assert.Equal(t, ptr(bot.Email), b.User.DeliveryEmail)
			}
		})
	}
}

func TestGetUser(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	member := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	bot := h.NewBot(t, member)
	gone := h.NewUser(t, chat.RoleMember)
	h.Deactivate(t, gone)

	for _, caller := range []chattest.User{h.Owner, member, guest, bot} {
		for _, target := range []chattest.User{h.Owner, member, guest, bot, gone} {
			resp, err := h.Service.GetUser(ctx, caller.Caller, chat.GetUserRequest{UserID: target.ID, ClientGravatar: ptr(false), IncludeCustomProfileFields: ptr(true)})
			require.NoError(t, err)
			checkSchema(t, "GET", "/users/{user_id}", resp)
			assert.Equal(t, target.ID, resp.User.UserID)
			assert.Equal(t, target.FullName, resp.User.FullName)
			assert.Equal(t, target.ID != gone.ID, resp.User.IsActive)
			assert.NotNil(t, resp.User.AvatarURL)

			byEmail, err := h.Service.GetUserByEmail(ctx, caller.Caller, chat.GetUserByEmailRequest{Email: strings.ToUpper(target.Email)})
			require.NoError(t, err)
			checkSchema(t, "GET", "/users/{email}", byEmail)
			assert.Equal(t, resp.User.UserID, byEmail.User.UserID)
		}
	}
	for _, id := range []int64{0, -1, 9999} {
		_, err := h.Service.GetUser(ctx, member.Caller, chat.GetUserRequest{UserID: id})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
	}
	for _, email := range []string{"", "nobody@example.com", "user9999@chat.example.com", fmt.Sprintf("user%d@other.example.com", member.ID),
		fmt.Sprintf("user0%d@chat.example.com", member.ID), "not an email"} {
		_, err := h.Service.GetUserByEmail(ctx, member.Caller, chat.GetUserByEmailRequest{Email: email})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
	}
	t.Run("users of another realm are not found", func(t *testing.T) {
		h2 := h.NewRealm(t, "http://other.example.com")
		stranger := h2.NewUser(t, chat.RoleMember)
		_, err := h.Service.GetUser(ctx, member.Caller, chat.GetUserRequest{UserID: stranger.ID})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
		_, err = h.Service.GetUserByEmail(ctx, member.Caller, chat.GetUserByEmailRequest{Email: stranger.Email})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
		// ... and the same email may be used in both organizations.
		_, err = h.Service.ProvisionUser(ctx, h2.RealmID, chat.ProvisionUserRequest{Email: member.Email, FullName: "Same Email"})
		require.NoError(t, err)
	})
	t.Run("deactivated caller", func(t *testing.T) {
		_, err := h.Service.GetUser(ctx, gone.Caller, chat.GetUserRequest{UserID: member.ID})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
		_, err = h.Service.GetUserByEmail(ctx, gone.Caller, chat.GetUserByEmailRequest{Email: member.Email})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
	})
}

func TestCreateUser(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	newReq := func(n string) chat.CreateUserRequest {
		return chat.CreateUserRequest{Email: n + "@example.com", Password: "a good password", FullName: "New " + n}
	}

	t.Run("who may", func(t *testing.T) {
		holder := h.Provision(t, chat.ProvisionUserRequest{Email: "holder@example.com", FullName: "Holder", Password: chattest.Password, CanCreateUsers: true})
		bt := chat.BotTypeGeneric
		holderBot := h.Provision(t, chat.ProvisionUserRequest{Email: "holder-bot@example.com", FullName: "Holder bot", BotType: &bt, BotOwnerID: &h.Owner.ID, CanCreateUsers: true})
		callers := []struct {
			name    string
			user    chattest.User
			allowed bool
		}{
			{"owner", h.Owner, true},
			{"administrator", h.NewUser(t, chat.RoleAdministrator), true},
			{"moderator", h.NewUser(t, chat.RoleModerator), false},
			{"member", h.NewUser(t, chat.RoleMember), false},
			{"guest", h.NewUser(t, chat.RoleGuest), false},
			{"bot", h.NewBot(t, h.Owner), false},
			{"member with the create-users permission", holder, true},
			{"bot with the create-users permission", holderBot, true},
		}
		for i, c := range callers {
			t.Run(c.name, func(t *testing.T) {
				req := newReq(fmt.Sprintf("who%d", i))
				resp, err := h.Service.CreateUser(ctx, c.user.Caller, req)
				if !c.allowed {
					requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
					_, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: req.Email, Password: req.Password})
					requireError(t, err, chat.KindUnauthenticated, chat.CodeAuthenticationFailed, "")
					return
				}
				require.NoError(t, err)
				checkSchema(t, "POST", "/users", resp)
				got, err := h.Service.GetUser(ctx, c.user.Caller, chat.GetUserRequest{UserID: resp.UserID})
				require.NoError(t, err)
				assert.Equal(t, chat.RoleMember, got.User.Role)
				assert.Equal(t, req.FullName, got.User.FullName)
				assert.True(t, got.User.IsActive)
				assert.False(t, got.User.IsBot)
				key, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: req.Email, Password: req.Password})
				require.NoError(t, err, "the new user can log in")
				assert.Equal(t, resp.UserID, key.UserID)
			})
		}
	})
	t.Run("new users join the members system groups", func(t *testing.T) {
		resp, err := h.Service.CreateUser(ctx, h.Owner.Caller, newReq("grouped"))
		require.NoError(t, err)
		groups, err := h.Store.UserGroupIDs(ctx, h.RealmID, resp.UserID)
		require.NoError(t, err)
		var names []string
		for _, id := range groups {
			g, err := h.Store.GetGroup(ctx, h.RealmID, id)
			require.NoError(t, err)
			names = append(names, g.Name)
		}
		assert.ElementsMatch(t, []string{chat.GroupMembers, chat.GroupFullMembers}, names)
	})
	t.Run("full name is trimmed", func(t *testing.T) {
		req := newReq("trim")
		req.FullName = "  Trimmed Name  "
		resp, err := h.Service.CreateUser(ctx, h.Owner.Caller, req)
		require.NoError(t, err)
		got, err := h.Service.GetUser(ctx, h.Owner.Caller, chat.GetUserRequest{UserID: resp.UserID})
		require.NoError(t, err)
		assert.Equal(t, "Trimmed Name", got.User.FullName)
	})
	existing := h.NewUser(t, chat.RoleMember)
	errorsCases := []struct {
		name string
		edit func(*chat.CreateUserRequest)
		msg  string
		kind chat.Kind
	}{
		{"email in use", func(r *chat.CreateUserRequest) { r.Email = existing.Email }, "Email is already in use.", chat.KindConflict},
		{"email in use, other case", func(r *chat.CreateUserRequest) { r.Email = strings.ToUpper(existing.Email) }, "Email is already in use.", chat.KindConflict},
		{"email empty", func(r *chat.CreateUserRequest) { r.Email = "" }, "Bad name or username", 0},
		{"email malformed", func(r *chat.CreateUserRequest) { r.Email = "not-an-email" }, "Bad name or username", 0},
		{"email with display name", func(r *chat.CreateUserRequest) { r.Email = "Ann <ann@example.com>" }, "Bad name or username", 0},
		{"email without domain dot", func(r *chat.CreateUserRequest) { r.Email = "ann@example" }, "Bad name or username", 0},
		{"password too short", func(r *chat.CreateUserRequest) { r.Password = "abc" }, "The password is too weak.", 0},
		{"password blank", func(r *chat.CreateUserRequest) { r.Password = "         " }, "The password is too weak.", 0},
		{"password empty", func(r *chat.CreateUserRequest) { r.Password = "" }, "The password is too weak.", 0},
		{"password too long", func(r *chat.CreateUserRequest) { r.Password = strings.Repeat("x", 101) }, "The password is too long (limit: 100 characters).", 0},
		{"name too short", func(r *chat.CreateUserRequest) { r.FullName = "A" }, "Name too short!", 0},
		{"name blank", func(r *chat.CreateUserRequest) { r.FullName = "   " }, "Name too short!", 0},
		{"name too long", func(r *chat.CreateUserRequest) { r.FullName = strings.Repeat("n", 101) }, "Name too long!", 0},
		{"name with @", func(r *chat.CreateUserRequest) { r.FullName = "Ann @ Home" }, "Invalid characters in name!", 0},
		{"name with *", func(r *chat.CreateUserRequest) { r.FullName = "Ann *" }, "Invalid characters in name!", 0},
		{"name with control character", func(r *chat.CreateUserRequest) { r.FullName = "Ann\x00Lee" }, "Invalid characters in name!", 0},
		{"name ending in |digits", func(r *chat.CreateUserRequest) { r.FullName = "Ann|12" }, "Invalid format!", 0},
	}
	for i, c := range errorsCases {
		t.Run(c.name, func(t *testing.T) {
			req := newReq(fmt.Sprintf("bad%d", i))
			c.edit(&req)
			before, err := h.Service.GetUsers(ctx, h.Owner.Caller, chat.GetUsersRequest{})
			require.NoError(t, err)
			_, err = h.Service.CreateUser(ctx, h.Owner.Caller, req)
			requireError(t, err, orInvalid(c.kind), chat.CodeBadRequest, c.msg)
			after, err := h.Service.GetUsers(ctx, h.Owner.Caller, chat.GetUsersRequest{})
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing was stored")
		})
	}
	t.Run("name at the length limits", func(t *testing.T) {
		for _, name := range []string{"Al", strings.Repeat("é", 100), "Ann|x12", "Ann | 12 x"} {
			req := newReq(fmt.Sprintf("ok%d", len(name)))
			req.FullName = name
			_, err := h.Service.CreateUser(ctx, h.Owner.Caller, req)
			require.NoError(t, err, name)
		}
	})
	t.Run("date joined follows the clock", func(t *testing.T) {
		h.Clock.Advance(48 * time.Hour)
		resp, err := h.Service.CreateUser(ctx, h.Owner.Caller, newReq("later"))
		require.NoError(t, err)
		got, err := h.Service.GetUser(ctx, h.Owner.Caller, chat.GetUserRequest{UserID: resp.UserID})
		require.NoError(t, err)
		assert.Equal(t, chattest.Start.Add(48*time.Hour).Format(time.RFC3339[:19])+"+00:00", got.User.DateJoined)
	})
	t.Run("deactivated caller", func(t *testing.T) {
		admin := h.NewUser(t, chat.RoleAdministrator)
		h.Deactivate(t, admin)
		_, err := h.Service.CreateUser(ctx, admin.Caller, newReq("byghost"))
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
	})
}

func TestProvisionUser(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	_, err := h.Service.ProvisionUser(ctx, h.RealmID+99, chat.ProvisionUserRequest{Email: "a@example.com", FullName: "Ann"})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid organization")
	_, err = h.Service.ProvisionUser(ctx, h.RealmID, chat.ProvisionUserRequest{Email: "a@example.com", FullName: "Ann", Role: 500})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid role")
	bt := chat.BotTypeGeneric
	_, err = h.Service.ProvisionUser(ctx, h.RealmID, chat.ProvisionUserRequest{Email: "b-bot@example.com", FullName: "Bot", BotType: &bt, BotOwnerID: ptr(int64(9999))})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such bot owner")
	resp, err := h.Service.ProvisionUser(ctx, h.RealmID, chat.ProvisionUserRequest{Email: "keyonly@example.com", FullName: "Key Only"})
	require.NoError(t, err)
	_, err = h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: "keyonly@example.com", Password: ""})
	requireError(t, err, chat.KindUnauthenticated, chat.CodeAuthenticationFailed, "")
	_, err = h.Service.Authenticate(ctx, h.RealmID, "keyonly@example.com", resp.APIKey)
	require.NoError(t, err, "an account without a password still has its API key")
}
