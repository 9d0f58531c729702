package chat_test

import (
	"context"
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// systemBots lists the organization's internal bots, from the store.
func systemBots(t *testing.T, h *chattest.Harness) map[string]int64 {
	t.Helper()
	users, err := h.Store.ListUsers(context.Background(), h.RealmID)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, u := range users {
		if u.IsSystemBot {
			out[u.Email] = u.ID
		}
	}
	return out
}

// The internal bots are made with the organization, are not its users,
// and are listed in cross_realm_bots, as the reference keeps them.
func TestSystemBotsAreNotUsers(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	bots := systemBots(t, h)
	require.Equal(t, []string{"emailgateway@teamchat.internal", "notification-bot@teamchat.internal", "welcome-bot@teamchat.internal"},
		mapKeysSorted(bots), "made with the organization")
	member := h.NewUser(t, chat.RoleMember)

	// Not in GET /users, the bots list, or any group.
	users, err := h.Service.GetUsers(ctx, h.Owner.Caller, chat.GetUsersRequest{})
	require.NoError(t, err)
	var ids []int64
	for _, u := range users.Members {
		ids = append(ids, u.UserID)
	}
	assert.Equal(t, []int64{h.Owner.ID, member.ID}, ids)
	list, err := h.Service.GetBots(ctx, h.Owner.Caller)
	require.NoError(t, err)
	assert.Empty(t, list.Bots)
	groups, err := h.Service.GetUserGroups(ctx, h.Owner.Caller, chat.GetUserGroupsRequest{})
	require.NoError(t, err)
	for _, g := range groups.UserGroups {
		for _, id := range bots {
			assert.NotContains(t, g.Members, id, g.Name)
		}
	}

	// Register: realm_users without them, cross_realm_bots with them.
	resp, err := h.Service.Register(ctx, member.Caller, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_user"}})
	require.NoError(t, err)
	checkSchema(t, "POST", "/register", resp)
	raw, err := json.Marshal(resp)
	require.NoError(t, err)
	var state struct {
		RealmUsers     []map[string]any `json:"realm_users"`
		CrossRealmBots []map[string]any `json:"cross_realm_bots"`
	}
	require.NoError(t, json.Unmarshal(raw, &state))
	assert.Len(t, state.RealmUsers, 2)
	require.Len(t, state.CrossRealmBots, 3)
	names := map[string]string{}
	for _, b := range state.CrossRealmBots {
		assert.Equal(t, true, b["is_system_bot"])
		assert.Equal(t, true, b["is_bot"])
		assert.Nil(t, b["bot_owner_id"])
		names[b["email"].(string)] = b["full_name"].(string)
	}
	assert.Equal(t, map[string]string{"notification-bot@teamchat.internal": "Notification Bot",
		"welcome-bot@teamchat.internal": "Welcome Bot", "emailgateway@teamchat.internal": "Email Gateway"}, names)

	// A move's notice comes from the Notification Bot made with the
	// organization: nothing new is made, nothing joins the users.
	newChannelBy(t, h, member, "general", false)
	id := send(t, h, member, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("old"), Content: "hi"})
	require.NoError(t, editMessage(t, h, member, chat.UpdateMessageRequest{MessageID: id, Topic: ptr("new"),
		SendNotificationToOldThread: ptr(false), SendNotificationToNewThread: ptr(true)}))
	notice := getMessage(t, h, member, id+1)
	assert.Equal(t, bots["notification-bot@teamchat.internal"], notice.SenderID)
	assert.Equal(t, bots, systemBots(t, h))
	users, err = h.Service.GetUsers(ctx, h.Owner.Caller, chat.GetUsersRequest{})
	require.NoError(t, err)
	assert.Len(t, users.Members, 2)

	// GET /users/{id} still describes a bot (a client may look a sender up).
	bot, err := h.Service.GetUser(ctx, member.Caller, chat.GetUserRequest{UserID: notice.SenderID})
	require.NoError(t, err)
	assert.Equal(t, "Notification Bot", bot.User.FullName)

	// Nobody administers them.
	_, err = h.Service.DeactivateUser(ctx, h.Owner.Caller, chat.DeactivateUserRequest{UserID: notice.SenderID})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
	_, err = h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: notice.SenderID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleOwner)}})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
	_, err = h.Service.DeactivateBot(ctx, h.Owner.Caller, chat.BotRequest{BotID: notice.SenderID})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such bot")

	// Their domain is nobody's.
	_, err = h.Service.CreateUser(ctx, h.Owner.Caller, chat.CreateUserRequest{Email: "welcome-bot@teamchat.internal",
		Password: chattest.Password, FullName: "Impostor"})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Bad name or username")
}

// The only user of an organization cannot leave it: the internal bots do
// not count as users.
func TestSystemBotsDoNotCount(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	_, err := h.Service.DeactivateOwnUser(ctx, h.Owner.Caller)
	e := requireError(t, err, chat.KindConflict, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only user.")
	assert.Equal(t, false, e.Fields["is_last_owner"])
	few, err := h.Store.ActiveUsersAtMost(ctx, h.RealmID, 1)
	require.NoError(t, err)
	assert.True(t, few, "one active user")
}

func mapKeysSorted[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
