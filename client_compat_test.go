package chat_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// What real clients of the reference read under the reference's names
// (issue 22): the version fields, the extra emoji's reaction type, the
// reaction event's user object and max_message_id.

func TestVersionFieldsUnderBothNames(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	settings, err := h.Service.GetServerSettings(ctx, h.RealmID)
	require.NoError(t, err)
	checkSchema(t, "GET", "/server_settings", settings)
	want := chat.Versions{FeatureLevel: chat.FeatureLevel, Version: chat.Version, MergeBase: chat.Version,
		ZulipFeatureLevel: chat.FeatureLevel, ZulipVersion: chat.Version, ZulipMergeBase: chat.Version}
	assert.Equal(t, want, settings.Versions)

	// Every register answer has both names, whatever the fetch list asks
	// for (the reference's terminal client asks for zulip_version), and
	// the fetch list's version names fetch no other state.
	for _, fetch := range []*[]string{nil, {}, {"zulip_version"}, {"service_version"}, {"realm"}} {
		c := register(t, h, h.Owner, chat.RegisterRequest{FetchEventTypes: fetch})
		for k, v := range map[string]any{
			"zulip_version": chat.Version, "zulip_feature_level": float64(chat.FeatureLevel), "zulip_merge_base": chat.Version,
			"service_version": chat.Version, "service_feature_level": float64(chat.FeatureLevel), "service_merge_base": chat.Version,
		} {
			assert.Equal(t, v, c.state[k], "%s with fetch_event_types %v", k, fetch)
		}
		if fetch != nil && (len(*fetch) == 0 || (*fetch)[0] != "realm") {
			assert.Len(t, c.state, 8, "queue_id, last_event_id and the six version fields: %v", c.state)
		}
	}
}

func TestReferenceExtraEmojiType(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "general", false)
	msg := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "hi"})

	// The reference's name is taken for ours, and answered with ours.
	_, err := h.Service.AddReaction(ctx, alice.Caller, chat.AddReactionRequest{MessageID: msg, EmojiName: "zulip", EmojiCode: ptr("zulip"), ReactionType: ptr("zulip_extra_emoji")})
	require.NoError(t, err)
	assert.Equal(t, []chat.Reaction{{EmojiName: "zulip", EmojiCode: "zulip", ReactionType: "service_extra_emoji", UserID: alice.ID}}, reactionsOf(t, h, alice, msg))
	_, err = h.Service.AddReaction(ctx, alice.Caller, chat.AddReactionRequest{MessageID: msg, EmojiName: "zulip", EmojiCode: ptr("zulip"), ReactionType: ptr("service_extra_emoji")})
	requireError(t, err, chat.KindConflict, chat.CodeReactionAlreadyExists, "Reaction already exists.")
	_, err = h.Service.RemoveReaction(ctx, alice.Caller, chat.RemoveReactionRequest{MessageID: msg, EmojiCode: ptr("zulip"), ReactionType: ptr("zulip_extra_emoji")})
	require.NoError(t, err)
	assert.Empty(t, reactionsOf(t, h, alice, msg))
	_, err = h.Service.AddReaction(ctx, alice.Caller, chat.AddReactionRequest{MessageID: msg, EmojiName: "smile", EmojiCode: ptr("zulip"), ReactionType: ptr("zulip_extra_emoji")})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid emoji name.")
	_, err = h.Service.AddReaction(ctx, alice.Caller, chat.AddReactionRequest{MessageID: msg, EmojiName: "zulip", EmojiCode: ptr("zulip"), ReactionType: ptr("Zulip_extra_emoji")})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid emoji type.")

	// The status emoji takes it too.
	_, err = h.Service.UpdateStatus(ctx, alice.Caller, chat.UpdateStatusRequest{EmojiName: ptr("zulip"), EmojiCode: ptr("zulip"), ReactionType: ptr("zulip_extra_emoji")})
	require.NoError(t, err)
	st, err := h.Service.GetUserStatus(ctx, alice.Caller, chat.GetUserStatusRequest{UserID: alice.ID})
	require.NoError(t, err)
	assert.Equal(t, "service_extra_emoji", st.Status.ReactionType)
}

func TestReactionEventUserObject(t *testing.T) {
	ctx := context.Background()
	// Hidden emails: the user object carries the API (dummy) address, as
	// the message's sender_email does.
	h := chattest.New(t, chattest.WithRealm(chat.CreateRealmRequest{EmailAddressVisibility: chat.EmailVisibleNobody}))
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	msg := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "hi"})
	c := register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"reaction"}}})

	_, err := h.Service.AddReaction(ctx, bob.Caller, chat.AddReactionRequest{MessageID: msg, EmojiName: "tada"})
	require.NoError(t, err)
	_, err = h.Service.RemoveReaction(ctx, bob.Caller, chat.RemoveReactionRequest{MessageID: msg, EmojiName: ptr("tada")})
	require.NoError(t, err)
	var evs []event // schema-checked against EmojiReactionEvent
	for len(evs) < 2 {
		evs = append(evs, c.wait()...)
	}
	require.Equal(t, []string{"reaction/add", "reaction/remove"}, types(evs))
	user := map[string]any{"user_id": float64(bob.ID), "email": fmt.Sprintf("user%d@chat.example.com", bob.ID), "full_name": bob.FullName}
	for _, ev := range evs {
		assert.Equal(t, user, ev["user"])
		assert.EqualValues(t, bob.ID, ev["user_id"])
	}
}

func TestMaxMessageID(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, bob, carol := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	maxID := func(u chattest.User) int64 {
		t.Helper()
		me, err := h.Service.GetOwnUser(ctx, u.Caller)
		require.NoError(t, err)
		checkSchema(t, "GET", "/users/me", me)
		c := register(t, h, u, chat.RegisterRequest{FetchEventTypes: &[]string{"message"}})
		assert.EqualValues(t, me.MaxMessageID, c.state["max_message_id"], "register agrees with GET /users/me")
		return me.MaxMessageID
	}
	assert.EqualValues(t, -1, maxID(bob), "nothing received yet")

	newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	first := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "hi"})
	assert.Equal(t, first, maxID(bob), "a channel message received")
	assert.Equal(t, first, maxID(alice), "and sent")
	assert.EqualValues(t, -1, maxID(carol), "a public channel's message one did not receive")

	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(carol.ID), Content: "psst"})
	assert.Equal(t, dm, maxID(carol))
	assert.Equal(t, first, maxID(bob), "someone else's direct message")

	_, err := h.Service.Unsubscribe(ctx, bob.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"general"}})
	require.NoError(t, err)
	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "after"})
	assert.Equal(t, first, maxID(bob), "nothing after unsubscribing")

	// Sent to a channel one is not subscribed to: received too.
	newChannelBy(t, h, carol, "other", false)
	sent := send(t, h, bob, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("other"), Topic: ptr("t"), Content: "drop by"})
	assert.Equal(t, sent, maxID(bob))
}
