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

func getStatus(t *testing.T, h *chattest.Harness, as chattest.User, id int64) chat.UserStatusView {
	t.Helper()
	resp, err := h.Service.GetUserStatus(context.Background(), as.Caller, chat.GetUserStatusRequest{UserID: id})
	require.NoError(t, err)
	checkSchema(t, "GET", "/users/{user_id}/status", resp)
	return resp.Status
}

func TestUserStatus(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	assert.Equal(t, chat.UserStatusView{}, getStatus(t, h, guest, alice.ID), "never set: empty")
	h.Events.Take()

	// A text, with the surrounding spaces trimmed: everyone is told that field only.
	_, err := h.Service.UpdateStatus(ctx, alice.Caller, chat.UpdateStatusRequest{StatusText: ptr("  " + strings.Repeat("x", 60) + "  ")})
	require.NoError(t, err)
	ev := only(t, takeEvents(t, h), "user_status", "")
	delete(ev.JSON, "id")
	assert.Equal(t, map[string]any{"type": "user_status", "user_id": float64(alice.ID), "status_text": strings.Repeat("x", 60)}, ev.JSON)
	assert.Equal(t, activeIDs(t, h), ev.To)
	assert.Equal(t, chat.UserStatusView{StatusText: strings.Repeat("x", 60)}, getStatus(t, h, guest, alice.ID))

	// An emoji by name: its code and type are filled in; the text stays.
	_, err = h.Service.UpdateStatus(ctx, alice.Caller, chat.UpdateStatusRequest{EmojiName: ptr("palm_tree")})
	require.NoError(t, err)
	ev = only(t, takeEvents(t, h), "user_status", "")
	assert.Equal(t, "1f334", ev.JSON["emoji_code"])
	assert.Equal(t, "unicode_emoji", ev.JSON["reaction_type"])
	assert.NotContains(t, ev.JSON, "status_text")
	assert.Equal(t, chat.UserStatusView{StatusText: strings.Repeat("x", 60), EmojiName: "palm_tree", EmojiCode: "1f334", ReactionType: "unicode_emoji"},
		getStatus(t, h, alice, alice.ID))

	// away is the inverse of presence_enabled.
	_, err = h.Service.UpdateStatus(ctx, alice.Caller, chat.UpdateStatusRequest{Away: ptr(true), StatusText: ptr("")})
	require.NoError(t, err)
	evs := takeEvents(t, h)
	assert.Contains(t, kinds(evs), "user_settings/update")
	ev = only(t, evs, "user_status", "")
	assert.Equal(t, true, ev.JSON["away"])
	assert.Equal(t, "", ev.JSON["status_text"])
	settings, err := h.Service.GetSettings(ctx, alice.Caller)
	require.NoError(t, err)
	assert.False(t, settings.UserSettings.PresenceEnabled)
	assert.Equal(t, chat.UserStatusView{Away: true, EmojiName: "palm_tree", EmojiCode: "1f334", ReactionType: "unicode_emoji"}, getStatus(t, h, guest, alice.ID))

	// Registration lists the statuses that say something.
	c := register(t, h, guest, chat.RegisterRequest{FetchEventTypes: &[]string{"user_status"}})
	assert.Equal(t, map[string]any{itoa(alice.ID): map[string]any{"away": true, "emoji_name": "palm_tree", "emoji_code": "1f334", "reaction_type": "unicode_emoji"}},
		c.state["user_status"])

	// Clearing the emoji and coming back leaves nothing to say.
	_, err = h.Service.UpdateStatus(ctx, alice.Caller, chat.UpdateStatusRequest{Away: ptr(false), EmojiName: ptr("")})
	require.NoError(t, err)
	ev = only(t, takeEvents(t, h), "user_status", "")
	assert.Equal(t, "", ev.JSON["emoji_name"])
	assert.Equal(t, "", ev.JSON["emoji_code"])
	assert.Equal(t, "unicode_emoji", ev.JSON["reaction_type"])
	assert.Equal(t, chat.UserStatusView{}, getStatus(t, h, guest, alice.ID))
	c = register(t, h, guest, chat.RegisterRequest{FetchEventTypes: &[]string{"user_status"}})
	assert.Equal(t, map[string]any{}, c.state["user_status"])
}

func TestUserStatusErrors(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bot := h.NewBot(t, alice)
	h.Events.Take()
	for _, c := range []struct {
		req  chat.UpdateStatusRequest
		msg  string
		kind chat.Kind
	}{
		{chat.UpdateStatusRequest{}, "Client did not pass any new values.", 0},
		{chat.UpdateStatusRequest{StatusText: ptr(strings.Repeat("é", 61))}, "status_text is too long (limit: 60 characters)", 0},
		{chat.UpdateStatusRequest{EmojiCode: ptr("1f334")}, "Client did not pass any new values.", 0},
		{chat.UpdateStatusRequest{EmojiCode: ptr("1f334"), Away: ptr(false)}, "Client must pass emoji_name if they pass either emoji_code or reaction_type.", 0},
		{chat.UpdateStatusRequest{ReactionType: ptr("unicode_emoji"), StatusText: ptr("x")}, "Client must pass emoji_name if they pass either emoji_code or reaction_type.", 0},
		{chat.UpdateStatusRequest{EmojiName: ptr("no_such_emoji")}, "Emoji 'no_such_emoji' does not exist", chat.KindNotFound},
		{chat.UpdateStatusRequest{EmojiName: ptr("palm_tree"), EmojiCode: ptr("1f600")}, "Invalid emoji name.", 0},
		{chat.UpdateStatusRequest{EmojiName: ptr("palm_tree"), EmojiCode: ptr("zzzz")}, "Invalid emoji code.", 0},
		{chat.UpdateStatusRequest{EmojiName: ptr("palm_tree"), ReactionType: ptr("realm_emoji")}, "Invalid custom emoji.", 0},
		{chat.UpdateStatusRequest{EmojiName: ptr("palm_tree"), ReactionType: ptr("bogus")}, "Invalid emoji type.", 0},
	} {
		_, err := h.Service.UpdateStatus(ctx, alice.Caller, c.req)
		requireError(t, err, orInvalid(c.kind), chat.CodeBadRequest, c.msg)
	}
	assert.Empty(t, takeEvents(t, h), "a refused change says nothing")
	_, err := h.Service.UpdateStatus(ctx, bot.Caller, chat.UpdateStatusRequest{StatusText: ptr("beep")})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "This endpoint does not accept bot requests.")
	_, err = h.Service.GetUserStatus(ctx, alice.Caller, chat.GetUserStatusRequest{UserID: 999999})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
}
