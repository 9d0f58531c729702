package chat_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func TestCreateBot(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	member := h.NewUser(t, chat.RoleMember)
	resp, err := h.Service.CreateBot(ctx, member.Caller, chat.CreateBotRequest{FullName: "Weather Bot", ShortName: "Weather"})
	require.NoError(t, err)
	checkEnvelope(t, resp) // POST /bots is not in the reference OpenAPI
	assert.Len(t, resp.APIKey, 32)
	c, err := h.Service.Authenticate(ctx, h.RealmID, "weather-bot@chat.example.com", resp.APIKey)
	require.NoError(t, err, "the bot authenticates with its own key")
	me, err := h.Service.GetOwnUser(ctx, c)
	require.NoError(t, err)
	assert.True(t, me.IsBot)
	got, err := h.Service.GetUser(ctx, member.Caller, chat.GetUserRequest{UserID: resp.UserID})
	require.NoError(t, err)
	assert.Equal(t, ptr(chat.BotTypeGeneric), got.User.BotType)
	assert.Equal(t, ptr(member.ID), got.User.BotOwnerID.ID)

	for _, c := range []struct {
		name string
		req  chat.CreateBotRequest
		msg  string
		kind chat.Kind
	}{
		{"short name taken", chat.CreateBotRequest{FullName: "Other Name", ShortName: "weather"}, "Username already in use", chat.KindConflict},
		{"full name taken", chat.CreateBotRequest{FullName: "weather bot", ShortName: "w2"}, "Name is already in use!", chat.KindConflict},
		{"empty short name", chat.CreateBotRequest{FullName: "Bot X", ShortName: " "}, "Bad name or username", 0},
		{"bad short name", chat.CreateBotRequest{FullName: "Bot X", ShortName: "a@b"}, "Bad name or username", 0},
		{"bad full name", chat.CreateBotRequest{FullName: "B", ShortName: "bx"}, "Name too short!", 0},
		{"embedded bots not offered", chat.CreateBotRequest{FullName: "Bot X", ShortName: "bx", BotType: ptr(4)}, "Invalid bot type", 0},
		{"unknown type", chat.CreateBotRequest{FullName: "Bot X", ShortName: "bx", BotType: ptr(9)}, "Invalid bot type", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.Service.CreateBot(ctx, member.Caller, c.req)
			requireError(t, err, orInvalid(c.kind), chat.CodeBadRequest, c.msg)
		})
	}
	t.Run("guests may not", func(t *testing.T) {
		_, err := h.Service.CreateBot(ctx, h.NewUser(t, chat.RoleGuest).Caller, chat.CreateBotRequest{FullName: "Guest Bot", ShortName: "guestbot"})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Not allowed for guest users")
	})
	t.Run("the organization's bot groups decide", func(t *testing.T) {
		mods, err := h.Store.GetGroupByName(ctx, h.RealmID, chat.GroupModerators)
		require.NoError(t, err)
		_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
			CanCreateBotsGroup:          &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &mods.ID}},
			CanCreateWriteOnlyBotsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{DirectMembers: []int64{member.ID}, DirectSubgroups: []int64{}}},
		})
		require.NoError(t, err)
		_, err = h.Service.CreateBot(ctx, member.Caller, chat.CreateBotRequest{FullName: "Generic Two", ShortName: "g2"})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
		_, err = h.Service.CreateBot(ctx, member.Caller, chat.CreateBotRequest{FullName: "Hook Bot", ShortName: "hook", BotType: ptr(chat.BotTypeIncomingWebhook)})
		require.NoError(t, err, "a direct member of the write-only group may make incoming-webhook bots")
		other := h.NewUser(t, chat.RoleMember)
		_, err = h.Service.CreateBot(ctx, other.Caller, chat.CreateBotRequest{FullName: "Hook Two", ShortName: "hook2", BotType: ptr(chat.BotTypeIncomingWebhook)})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
		// Moderators, and administrators and owners through the nested groups, may.
		for _, role := range []int{chat.RoleModerator, chat.RoleAdministrator, chat.RoleOwner} {
			u := h.NewUser(t, role)
			_, err := h.Service.CreateBot(ctx, u.Caller, chat.CreateBotRequest{FullName: "Bot of " + u.FullName, ShortName: "b" + itoa(u.ID)})
			require.NoError(t, err, "role %d", role)
		}
	})
}

func TestManageBots(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	admin := h.NewUser(t, chat.RoleAdministrator)
	ab, err := h.Service.CreateBot(ctx, alice.Caller, chat.CreateBotRequest{FullName: "Alice Bot", ShortName: "alicebot"})
	require.NoError(t, err)
	bb, err := h.Service.CreateBot(ctx, bob.Caller, chat.CreateBotRequest{FullName: "Bob Bot", ShortName: "bobbot"})
	require.NoError(t, err)

	t.Run("list", func(t *testing.T) {
		got, err := h.Service.GetBots(ctx, alice.Caller)
		require.NoError(t, err)
		checkEnvelope(t, got)
		require.Len(t, got.Bots, 1)
		assert.Equal(t, ab.UserID, got.Bots[0].UserID)
		assert.Equal(t, ab.APIKey, got.Bots[0].APIKey)
		assert.Equal(t, ptr(alice.Email), got.Bots[0].Owner)
		all, err := h.Service.GetBots(ctx, admin.Caller)
		require.NoError(t, err)
		assert.Len(t, all.Bots, 2, "administrators see every bot")
		none, err := h.Service.GetBots(ctx, h.NewUser(t, chat.RoleGuest).Caller)
		require.NoError(t, err)
		assert.Empty(t, none.Bots)
	})
	t.Run("update", func(t *testing.T) {
		resp, err := h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: ab.UserID, FullName: ptr("Alice Helper")})
		require.NoError(t, err)
		checkEnvelope(t, resp)
		assert.Equal(t, "Alice Helper", resp.FullName)
		_, err = h.Service.UpdateBot(ctx, bob.Caller, chat.UpdateBotRequest{BotID: ab.UserID, FullName: ptr("Stolen")})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
		_, err = h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: ab.UserID, FullName: ptr("Bob Bot")})
		requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "Name is already in use!")
		_, err = h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: alice.ID, FullName: ptr("Not A Bot")})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such bot")
		for _, c := range []struct {
			owner int64
			msg   string
			kind  chat.Kind
		}{{9999, "Failed to change owner, no such user", chat.KindNotFound}, {bb.UserID, "Failed to change owner, bots can't own other bots", 0}} {
			_, err = h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: ab.UserID, BotOwnerID: ptr(c.owner)})
			requireError(t, err, orInvalid(c.kind), chat.CodeBadRequest, c.msg)
		}
		gone := h.NewUser(t, chat.RoleMember)
		h.Deactivate(t, gone)
		_, err = h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: ab.UserID, BotOwnerID: ptr(gone.ID)})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Failed to change owner, user is deactivated")
		resp, err = h.Service.UpdateBot(ctx, admin.Caller, chat.UpdateBotRequest{BotID: ab.UserID, BotOwnerID: ptr(bob.ID)})
		require.NoError(t, err)
		assert.Equal(t, ptr(bob.Email), resp.BotOwner)
		mine, err := h.Service.GetBots(ctx, bob.Caller)
		require.NoError(t, err)
		assert.Len(t, mine.Bots, 2)
	})
	t.Run("regenerate key", func(t *testing.T) {
		_, err := h.Service.RegenerateBotAPIKey(ctx, alice.Caller, chat.BotRequest{BotID: bb.UserID})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
		resp, err := h.Service.RegenerateBotAPIKey(ctx, bob.Caller, chat.BotRequest{BotID: bb.UserID})
		require.NoError(t, err)
		_, err = h.Service.Authenticate(ctx, h.RealmID, "bobbot-bot@chat.example.com", bb.APIKey)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUnauthorized, "")
		_, err = h.Service.Authenticate(ctx, h.RealmID, "bobbot-bot@chat.example.com", resp.APIKey)
		require.NoError(t, err)
	})
	t.Run("deactivate", func(t *testing.T) {
		_, err := h.Service.DeactivateBot(ctx, alice.Caller, chat.BotRequest{BotID: bb.UserID})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
		_, err = h.Service.DeactivateBot(ctx, bob.Caller, chat.BotRequest{BotID: bb.UserID})
		require.NoError(t, err)
		got, err := h.Service.GetUser(ctx, bob.Caller, chat.GetUserRequest{UserID: bb.UserID})
		require.NoError(t, err)
		assert.False(t, got.User.IsActive)
		_, err = h.Service.DeactivateBot(ctx, bob.Caller, chat.BotRequest{BotID: 9999})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such bot")
	})
}

// Bots may not create bots or groups, nor change settings: those endpoints
// are for humans (the reference's "does not accept bot requests").
func TestBotsRefusedOnHumanEndpoints(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	bot := h.NewBot(t, h.Owner)
	const msg = "This endpoint does not accept bot requests."
	_, err := h.Service.CreateBot(ctx, bot.Caller, chat.CreateBotRequest{FullName: "Child bot", ShortName: "child"})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, msg)
	_, err = h.Service.CreateUserGroup(ctx, bot.Caller, chat.CreateUserGroupRequest{Name: "bots"})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, msg)
	req := chat.UpdateSettingsRequest{}
	req.HighContrastMode = ptr(true)
	_, err = h.Service.UpdateSettings(ctx, bot.Caller, req)
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, msg)
	// Humans may.
	_, err = h.Service.CreateBot(ctx, h.Owner.Caller, chat.CreateBotRequest{FullName: "Child bot", ShortName: "child"})
	require.NoError(t, err)
}

// Deactivating a user stops every bot below it at once: its bots, and
// bots owned by those bots (which older versions let bots create).
func TestDeactivationStopsEveryBotBelow(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bot := h.NewBot(t, alice)
	grandchild := h.NewBot(t, h.Owner)
	rec, err := h.Store.GetUser(ctx, h.RealmID, grandchild.ID)
	require.NoError(t, err)
	rec.BotOwnerID = &bot.ID // a bot owned by a bot, as legacy data may hold
	require.NoError(t, h.Store.UpdateUser(ctx, rec, "bot_owner_id"))
	other := h.NewBot(t, h.Owner)

	_, err = h.Service.DeactivateUser(ctx, h.Owner.Caller, chat.DeactivateUserRequest{UserID: alice.ID})
	require.NoError(t, err)
	for _, u := range []chattest.User{alice, bot, grandchild} {
		_, err := h.Service.Authenticate(ctx, h.RealmID, u.Email, u.APIKey)
		requireError(t, err, chat.KindUnauthenticated, "USER_DEACTIVATED", "")
	}
	_, err = h.Service.Authenticate(ctx, h.RealmID, other.Email, other.APIKey)
	require.NoError(t, err, "bots of others keep working")
}
