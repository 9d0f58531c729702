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

func reactionsOf(t *testing.T, h *chattest.Harness, as chattest.User, id int64) []chat.Reaction {
	t.Helper()
	resp, err := h.Service.GetMessage(context.Background(), as.Caller, chat.GetMessageRequest{MessageID: id})
	require.NoError(t, err)
	return resp.Message.Reactions
}

func reactionEvents(events []chat.Event) []chat.Event {
	var out []chat.Event
	for _, ev := range events {
		if _, ok := ev.Body.(chat.ReactionEvent); ok {
			out = append(out, ev)
		}
	}
	return out
}

func TestReactions(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	general := newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	newChannelBy(t, h, alice, "secret", true)
	msg := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "hi"})
	secret := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("secret"), Topic: ptr("t"), Content: "psst"})
	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "hey"})
	add := func(u chattest.User, req chat.AddReactionRequest) error {
		_, err := h.Service.AddReaction(ctx, u.Caller, req)
		return err
	}
	remove := func(u chattest.User, req chat.RemoveReactionRequest) error {
		_, err := h.Service.RemoveReaction(ctx, u.Caller, req)
		return err
	}

	h.Events.Take()
	require.NoError(t, add(bob, chat.AddReactionRequest{MessageID: msg, EmojiName: "thumbs_up"}))
	evs := reactionEvents(h.Events.Take())
	require.Len(t, evs, 1)
	assert.Equal(t, chat.ReactionEvent{Op: "add", UserID: bob.ID, User: chat.ReactionUser{UserID: bob.ID, Email: bob.Email, FullName: bob.FullName}, MessageID: msg, EmojiName: "thumbs_up", EmojiCode: "1f44d", ReactionType: "unicode_emoji"}, evs[0].Body)
	assert.Equal(t, []int64{general}, evs[0].Audience.Subscribers, "the channel's subscribers, resolved on delivery")
	// A vote: the same code under another name keeps the first name.
	require.NoError(t, add(alice, chat.AddReactionRequest{MessageID: msg, EmojiName: "+1", EmojiCode: ptr("1f44d"), ReactionType: ptr("unicode_emoji")}))
	require.NoError(t, add(alice, chat.AddReactionRequest{MessageID: msg, EmojiName: "zulip"}))
	want := []chat.Reaction{
		{EmojiName: "thumbs_up", EmojiCode: "1f44d", ReactionType: "unicode_emoji", UserID: bob.ID},
		{EmojiName: "thumbs_up", EmojiCode: "1f44d", ReactionType: "unicode_emoji", UserID: alice.ID},
		{EmojiName: "zulip", EmojiCode: "zulip", ReactionType: "service_extra_emoji", UserID: alice.ID},
	}
	assert.Equal(t, want, reactionsOf(t, h, bob, msg))
	feed := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(10), Narrow: ptr(`[{"operator":"has","operand":"reaction"}]`)})
	assert.Equal(t, []int64{msg}, fetchedIDs(feed), "has:reaction")
	assert.Equal(t, want, feed.Messages[0].Reactions)
	none := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(10), Narrow: ptr(`[{"operator":"has","operand":"reaction","negated":true}]`)})
	assert.Equal(t, []int64{dm}, fetchedIDs(none))

	err := add(bob, chat.AddReactionRequest{MessageID: msg, EmojiName: "+1"})
	requireError(t, err, chat.KindConflict, chat.CodeReactionAlreadyExists, "Reaction already exists.")

	// Reacting to history never received: a historical row, and the
	// reactor hears of later reactions.
	subscribe(t, h, alice, "general", carol.ID)
	h.Events.Take()
	require.NoError(t, add(carol, chat.AddReactionRequest{MessageID: msg, EmojiName: "tada"}))
	assert.Equal(t, []string{"read", "historical"}, flagsOf(t, h, carol, msg)[msg])
	_, err = h.Service.Unsubscribe(ctx, carol.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"general"}})
	require.NoError(t, err)
	h.Events.Take()
	require.NoError(t, add(bob, chat.AddReactionRequest{MessageID: msg, EmojiName: "tada"}))
	evs = reactionEvents(h.Events.Take())
	assert.Contains(t, evs[0].Audience.Users, carol.ID, "a row's user outside the channel")

	// Direct messages: their participants; private channels: who received.
	h.Events.Take()
	require.NoError(t, add(bob, chat.AddReactionRequest{MessageID: dm, EmojiName: "smile"}))
	assert.ElementsMatch(t, []int64{alice.ID, bob.ID}, reactionEvents(h.Events.Take())[0].Audience.Users)
	require.NoError(t, add(alice, chat.AddReactionRequest{MessageID: secret, EmojiName: "smile"}))
	assert.Equal(t, []int64{alice.ID}, reactionEvents(h.Events.Take())[0].Audience.Users)

	for _, tc := range []struct {
		req  chat.AddReactionRequest
		msg  string
		kind chat.Kind
	}{
		{chat.AddReactionRequest{MessageID: msg, EmojiName: "no_such_emoji"}, "Emoji 'no_such_emoji' does not exist", chat.KindNotFound},
		{chat.AddReactionRequest{MessageID: msg, EmojiName: "smile", EmojiCode: ptr("zzzz")}, "Invalid emoji code.", 0},
		{chat.AddReactionRequest{MessageID: msg, EmojiName: "tada", EmojiCode: ptr("1f600")}, "Invalid emoji name.", 0},
		{chat.AddReactionRequest{MessageID: msg, EmojiName: "smile", EmojiCode: ptr("1f642"), ReactionType: ptr("other_emoji")}, "Invalid emoji type.", 0},
		{chat.AddReactionRequest{MessageID: msg, EmojiName: "logo", EmojiCode: ptr("logo"), ReactionType: ptr("service_extra_emoji")}, "Invalid emoji code.", 0},
		{chat.AddReactionRequest{MessageID: dm, EmojiName: "logo", EmojiCode: ptr("zulip"), ReactionType: ptr("service_extra_emoji")}, "Invalid emoji name.", 0},
		{chat.AddReactionRequest{MessageID: msg, EmojiName: "party", EmojiCode: ptr("12345"), ReactionType: ptr("realm_emoji")}, "Invalid custom emoji.", 0},
		{chat.AddReactionRequest{MessageID: secret, EmojiName: "smile"}, "Invalid message(s)", chat.KindNotFound},
		{chat.AddReactionRequest{MessageID: dm + 1000, EmojiName: "smile"}, "Invalid message(s)", chat.KindNotFound},
	} {
		err := add(bob, tc.req)
		require.Error(t, err, tc.msg)
		requireError(t, err, orInvalid(tc.kind), chat.CodeBadRequest, tc.msg)
	}
	requireError(t, add(guest, chat.AddReactionRequest{MessageID: msg, EmojiName: "smile"}), chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	requireError(t, add(carol, chat.AddReactionRequest{MessageID: dm, EmojiName: "smile"}), chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")

	// Removing: by name, by code, neither.
	require.NoError(t, remove(bob, chat.RemoveReactionRequest{MessageID: msg, EmojiName: ptr("+1")}))
	require.NoError(t, remove(alice, chat.RemoveReactionRequest{MessageID: msg, EmojiCode: ptr("zulip"), ReactionType: ptr("service_extra_emoji")}))
	evs = reactionEvents(h.Events.Take())
	require.Len(t, evs, 2)
	assert.Equal(t, chat.ReactionEvent{Op: "remove", UserID: bob.ID, User: chat.ReactionUser{UserID: bob.ID, Email: bob.Email, FullName: bob.FullName}, MessageID: msg, EmojiName: "thumbs_up", EmojiCode: "1f44d", ReactionType: "unicode_emoji"}, evs[0].Body)
	err = remove(bob, chat.RemoveReactionRequest{MessageID: msg, EmojiName: ptr("+1")})
	requireError(t, err, chat.KindNotFound, chat.CodeReactionDoesNotExist, "Reaction doesn't exist.")
	err = remove(bob, chat.RemoveReactionRequest{MessageID: msg})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "At least one of the following arguments must be present: emoji_name, emoji_code")
	err = remove(bob, chat.RemoveReactionRequest{MessageID: secret, EmojiName: ptr("smile")})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	assert.Equal(t, []chat.Reaction{
		{EmojiName: "thumbs_up", EmojiCode: "1f44d", ReactionType: "unicode_emoji", UserID: alice.ID},
		{EmojiName: "tada", EmojiCode: "1f389", ReactionType: "unicode_emoji", UserID: carol.ID},
		{EmojiName: "tada", EmojiCode: "1f389", ReactionType: "unicode_emoji", UserID: bob.ID},
	}, reactionsOf(t, h, alice, msg))
}

// A window of history read before and after reactions change shows them
// as they are (the message cache keeps reactions with messages, and a
// reaction forgets its message).
func TestFetchedReactionsFollowChanges(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, h, alice, "reacts", false)
	msg := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(ch), Topic: ptr("t"), Content: "hi"})
	reactions := func() []chat.Reaction {
		t.Helper()
		narrow := fmt.Sprintf(`[{"operator":"channel","operand":%d}]`, ch)
		resp, err := h.Service.GetMessages(ctx, alice.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"),
			NumBefore: ptr(10), NumAfter: ptr(0), Narrow: &narrow})
		require.NoError(t, err)
		require.Len(t, resp.Messages, 1)
		return resp.Messages[0].Reactions
	}
	assert.Empty(t, reactions())
	assert.Empty(t, reactions(), "from the cache")
	_, err := h.Service.AddReaction(ctx, alice.Caller, chat.AddReactionRequest{MessageID: msg, EmojiName: "thumbs_up"})
	require.NoError(t, err)
	got := reactions()
	require.Len(t, got, 1)
	assert.Equal(t, "thumbs_up", got[0].EmojiName)
	require.Len(t, reactions(), 1, "from the cache")
	_, err = h.Service.RemoveReaction(ctx, alice.Caller, chat.RemoveReactionRequest{MessageID: msg, EmojiName: ptr("thumbs_up")})
	require.NoError(t, err)
	assert.Empty(t, reactions())
}
