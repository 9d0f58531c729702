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

// flagsOf fetches the messages by ID as the reader sees them.
func flagsOf(t *testing.T, h *chattest.Harness, as chattest.User, ids ...int64) map[int64][]string {
	t.Helper()
	resp := fetch(t, h, as, chat.GetMessagesRequest{MessageIDs: &ids})
	out := map[int64][]string{}
	for _, m := range resp.Messages {
		out[m.ID] = m.Flags
	}
	return out
}

func updateFlags(t *testing.T, h *chattest.Harness, as chattest.User, op, flag string, ids ...int64) *chat.UpdateMessageFlagsResponse {
	t.Helper()
	resp, err := h.Service.UpdateMessageFlags(context.Background(), as.Caller, chat.UpdateMessageFlagsRequest{Messages: ids, Op: op, Flag: flag})
	require.NoError(t, err)
	checkSchema(t, "POST", "/messages/flags", resp)
	return resp
}

// flagEvents returns the update_message_flags events among events.
func flagEvents(events []chat.Event) []chat.UpdateMessageFlagsEvent {
	var out []chat.UpdateMessageFlagsEvent
	for _, ev := range events {
		if f, ok := ev.Body.(chat.UpdateMessageFlagsEvent); ok {
			out = append(out, f)
		}
	}
	return out
}

func TestUpdateMessageFlags(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	newChannelBy(t, h, alice, "secret", true)
	sendTo := func(channel, topic, content string) int64 {
		return send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel(channel), Topic: ptr(topic), Content: content})
	}
	var m []int64
	for i := range 5 {
		m = append(m, sendTo("general", "t", fmt.Sprint(i)))
	}
	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "hi"})
	secret := sendTo("secret", "t", "hidden")

	h.Events.Take()
	resp := updateFlags(t, h, bob, "add", "read", m[1], m[3], dm, m[1])
	assert.Equal(t, []int64{m[1], m[3], dm, m[1]}, resp.Messages, "the request is echoed")
	assert.Empty(t, resp.IgnoredBecauseNotSubscribedChannels)
	flags := flagsOf(t, h, bob, append(m, dm)...)
	for i, id := range m {
		assert.Equal(t, i == 1 || i == 3, contains(flags[id], "read"), "message %d", i)
	}
	assert.Contains(t, flags[dm], "read")
	evs := flagEvents(h.Events.Take())
	require.Len(t, evs, 1)
	assert.Equal(t, chat.UpdateMessageFlagsEvent{Op: "add", Operation: "add", Flag: "read", Messages: []int64{m[1], m[3], dm}}, evs[0])

	// Reading the rest of the run and then marking one unread again.
	updateFlags(t, h, bob, "add", "read", m[0], m[2], m[4])
	updateFlags(t, h, bob, "remove", "read", m[2], dm)
	flags = flagsOf(t, h, bob, append(m, dm)...)
	for i, id := range m {
		assert.Equal(t, i != 2, contains(flags[id], "read"), "message %d", i)
	}
	assert.NotContains(t, flags[dm], "read")
	evs = flagEvents(h.Events.Take())
	require.Len(t, evs, 2)
	details := evs[1].MessageDetails
	require.Len(t, details, 2)
	assert.Equal(t, "stream", details[fmt.Sprint(m[2])].Type)
	assert.Equal(t, "t", *details[fmt.Sprint(m[2])].Topic)
	assert.True(t, *details[fmt.Sprint(m[2])].UnmutedStreamMsg)
	assert.Equal(t, chat.UnreadMessageDetails{Type: "private", UserIDs: []int64{alice.ID}}, details[fmt.Sprint(dm)])
	updateFlags(t, h, bob, "remove", "read", m[2])
	assert.Empty(t, flagEvents(h.Events.Take())[0].Messages, "already unread: nothing changes")

	// Starring a received message; starring history never received gives
	// a historical row, which the reader's own narrows then include.
	updateFlags(t, h, bob, "add", "starred", m[0])
	assert.Equal(t, []string{"read", "starred"}, flagsOf(t, h, bob, m[0])[m[0]])
	carol := h.NewUser(t, chat.RoleMember)
	subscribe(t, h, alice, "general", carol.ID)
	updateFlags(t, h, carol, "add", "starred", m[1])
	assert.Equal(t, []string{"read", "starred", "historical"}, flagsOf(t, h, carol, m[1])[m[1]])
	starred := fetch(t, h, carol, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(10), Narrow: ptr(`[{"operator":"is","operand":"starred"}]`)})
	assert.Equal(t, []int64{m[1]}, fetchedIDs(starred))
	updateFlags(t, h, carol, "remove", "starred", m[1])
	assert.Equal(t, []string{"read", "historical"}, flagsOf(t, h, carol, m[1])[m[1]])
	// Marking an old message of a subscribed channel unread works too.
	updateFlags(t, h, carol, "remove", "read", m[2])
	assert.Equal(t, []string{"historical"}, flagsOf(t, h, carol, m[2])[m[2]])
	unread := fetch(t, h, carol, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(10), Narrow: ptr(`[{"operator":"is","operand":"unread"}]`)})
	assert.Equal(t, []int64{m[2]}, fetchedIDs(unread))
	first := fetch(t, h, carol, chat.GetMessagesRequest{Anchor: ptr("first_unread"), Narrow: ptr(`[{"operator":"channel","operand":"general"}]`)})
	assert.Equal(t, m[2], *first.Anchor, "first_unread finds it too")
	counts, err := h.Service.GetUnreadMessages(ctx, carol.Caller, chat.GetUnreadMessagesRequest{})
	require.NoError(t, err)
	assert.Equal(t, 1, counts.Count, "and unread_msgs counts it")

	// Messages one may not see: "Invalid message(s)" where a row would be
	// created, silently nothing where the default already says so.
	_, err = h.Service.UpdateMessageFlags(ctx, bob.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{secret}, Op: "add", Flag: "starred"})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	_, err = h.Service.UpdateMessageFlags(ctx, guest.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{m[0]}, Op: "add", Flag: "collapsed"})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	_, err = h.Service.UpdateMessageFlags(ctx, bob.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{m[4] + 1000}, Op: "add", Flag: "starred"})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	updateFlags(t, h, bob, "add", "read", secret, m[4]+1000)

	// Marking unread ignores channels one is not subscribed to.
	_, err = h.Service.Unsubscribe(ctx, bob.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"general"}})
	require.NoError(t, err)
	gid := channelID(t, h, h.Owner, "general")
	resp = updateFlags(t, h, bob, "remove", "read", m[0], dm)
	assert.Equal(t, []int64{gid}, resp.IgnoredBecauseNotSubscribedChannels)
	assert.Contains(t, flagsOf(t, h, bob, m[0])[m[0]], "read")

	for _, tc := range []struct{ op, flag, msg string }{
		{"add", "bogus", "Invalid flag: 'bogus'"},
		{"add", "mentioned", "Flag not editable: 'mentioned'"},
		{"add", "historical", "Flag not editable: 'historical'"},
		{"add", "is_private", "Invalid flag: 'is_private'"},
		{"toggle", "read", "Invalid message flag operation: 'toggle'"},
	} {
		_, err := h.Service.UpdateMessageFlags(ctx, bob.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{m[0]}, Op: tc.op, Flag: tc.flag})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, tc.msg)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestUpdateMessageFlagsForNarrow(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	var a, b []int64
	for i := range 6 {
		a = append(a, send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("a"), Content: fmt.Sprint(i)}))
		b = append(b, send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("b"), Content: fmt.Sprint(i)}))
	}
	narrowA := `[{"operator":"channel","operand":"general"},{"operator":"topic","operand":"a"}]`
	call := func(req chat.UpdateMessageFlagsForNarrowRequest) *chat.UpdateMessageFlagsForNarrowResponse {
		t.Helper()
		resp, err := h.Service.UpdateMessageFlagsForNarrow(ctx, bob.Caller, req)
		require.NoError(t, err)
		checkSchema(t, "POST", "/messages/flags/narrow", resp)
		return resp
	}
	resp := call(chat.UpdateMessageFlagsForNarrowRequest{Anchor: "oldest", NumAfter: 4, Narrow: narrowA, Op: "add", Flag: "read"})
	assert.Equal(t, 4, resp.ProcessedCount)
	assert.Equal(t, 4, resp.UpdatedCount)
	assert.Equal(t, a[0], *resp.FirstProcessedID)
	assert.Equal(t, a[3], *resp.LastProcessedID)
	assert.True(t, resp.FoundOldest)
	assert.False(t, resp.FoundNewest)
	resp = call(chat.UpdateMessageFlagsForNarrowRequest{Anchor: fmt.Sprint(a[3]), IncludeAnchor: ptr(false), NumAfter: 10, Narrow: narrowA, Op: "add", Flag: "read"})
	assert.Equal(t, 2, resp.ProcessedCount)
	assert.True(t, resp.FoundNewest)
	flags := flagsOf(t, h, bob, append(append([]int64{}, a...), b...)...)
	for i := range a {
		assert.Contains(t, flags[a[i]], "read")
		assert.NotContains(t, flags[b[i]], "read", "the other topic stays unread")
	}
	// Again: processed, not updated; the pair form of the narrow works.
	resp = call(chat.UpdateMessageFlagsForNarrowRequest{Anchor: "newest", NumBefore: 100, Narrow: `[["stream","general"],["topic","a"]]`, Op: "add", Flag: "read"})
	assert.Equal(t, 6, resp.ProcessedCount)
	assert.Equal(t, 0, resp.UpdatedCount)
	resp = call(chat.UpdateMessageFlagsForNarrowRequest{Anchor: "newest", NumBefore: 0, Narrow: `[{"operator":"is","operand":"starred"}]`, Op: "add", Flag: "starred"})
	assert.Equal(t, 0, resp.ProcessedCount)
	assert.Nil(t, resp.FirstProcessedID)
	assert.Nil(t, resp.LastProcessedID)

	for _, tc := range []struct {
		req chat.UpdateMessageFlagsForNarrowRequest
		msg string
	}{
		{chat.UpdateMessageFlagsForNarrowRequest{Anchor: "1", NumBefore: 1, NumAfter: 1, IncludeAnchor: ptr(false), Narrow: "[]", Op: "add", Flag: "read"}, "The anchor can only be excluded at an end of the range"},
		{chat.UpdateMessageFlagsForNarrowRequest{Anchor: "x", Narrow: "[]", Op: "add", Flag: "read"}, "Invalid anchor"},
		{chat.UpdateMessageFlagsForNarrowRequest{Anchor: "newest", NumBefore: -1, Narrow: "[]", Op: "add", Flag: "read"}, "num_before is too small"},
		{chat.UpdateMessageFlagsForNarrowRequest{Anchor: "newest", Narrow: "[]", Op: "add", Flag: "mentioned"}, "Flag not editable: 'mentioned'"},
		{chat.UpdateMessageFlagsForNarrowRequest{Anchor: "newest", Narrow: `[{"operator":"channel","operand":"nowhere"}]`, Op: "add", Flag: "read"}, "Invalid narrow operator: unknown channel nowhere"},
	} {
		_, err := h.Service.UpdateMessageFlagsForNarrow(ctx, bob.Caller, tc.req)
		e := chat.AsError(err)
		require.NotNil(t, e, tc.msg)
		assert.Equal(t, tc.msg, e.Msg)
	}
}

func TestMarkAsRead(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithMarkAllAsReadBatch(2)))
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "general", false)
	newChannelBy(t, h, alice, "random", false)
	newChannelBy(t, h, alice, "secret", true)
	subscribe(t, h, alice, "general", bob.ID)
	subscribe(t, h, alice, "random", bob.ID)
	var gen, other []int64
	for i := range 4 {
		gen = append(gen, send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr([]string{"x", "y"}[i%2]), Content: "m"}))
		other = append(other, send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("random"), Topic: ptr("z"), Content: "m"}))
	}
	unreadCount := func() int {
		u, err := h.Service.GetUnreadMessages(ctx, bob.Caller, chat.GetUnreadMessagesRequest{})
		require.NoError(t, err)
		return u.Count
	}
	require.Equal(t, 8, unreadCount())

	h.Events.Take()
	_, err := h.Service.MarkTopicAsRead(ctx, bob.Caller, chat.MarkTopicAsReadRequest{StreamID: channelID(t, h, h.Owner, "general"), TopicName: "X"})
	require.NoError(t, err)
	assert.Equal(t, []int64{gen[0], gen[2]}, flagEvents(h.Events.Take())[0].Messages, "topics compare case-insensitively")
	assert.Equal(t, 6, unreadCount())
	_, err = h.Service.MarkStreamAsRead(ctx, bob.Caller, chat.MarkStreamAsReadRequest{StreamID: channelID(t, h, h.Owner, "general")})
	require.NoError(t, err)
	assert.Equal(t, []int64{gen[1], gen[3]}, flagEvents(h.Events.Take())[0].Messages)
	assert.Equal(t, 4, unreadCount())
	_, err = h.Service.MarkStreamAsRead(ctx, bob.Caller, chat.MarkStreamAsReadRequest{StreamID: channelID(t, h, h.Owner, "general")})
	require.NoError(t, err)
	assert.Empty(t, flagEvents(h.Events.Take()), "nothing left to mark")

	_, err = h.Service.MarkStreamAsRead(ctx, bob.Caller, chat.MarkStreamAsReadRequest{StreamID: channelID(t, h, h.Owner, "secret")})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
	_, err = h.Service.MarkStreamAsRead(ctx, bob.Caller, chat.MarkStreamAsReadRequest{StreamID: 99999})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
	_, err = h.Service.MarkTopicAsRead(ctx, bob.Caller, chat.MarkTopicAsReadRequest{StreamID: channelID(t, h, h.Owner, "random"), TopicName: "nowhere"})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such topic 'nowhere'")

	// mark_all_as_read in batches of two: four direct messages and one
	// channel take three batches, then it is complete.
	carol := h.NewUser(t, chat.RoleMember)
	for range 4 {
		send(t, h, carol, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "ping"})
	}
	require.Equal(t, 8, unreadCount())
	h.Events.Take()
	all, err := h.Service.MarkAllAsRead(ctx, bob.Caller)
	require.NoError(t, err)
	checkSchema(t, "POST", "/mark_all_as_read", all)
	assert.True(t, all.Complete)
	assert.Equal(t, 0, unreadCount())
	evs := flagEvents(h.Events.Take())
	require.Len(t, evs, 1)
	assert.True(t, evs[0].All)
	assert.Equal(t, []int64{}, evs[0].Messages)
	for _, f := range flagsOf(t, h, bob, other...) {
		assert.Contains(t, f, "read")
	}
}

// A request does at most 25 batches: with batches of two, 60 unread
// direct messages need a second request.
func TestMarkAllAsReadIncomplete(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithMarkAllAsReadBatch(2)))
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	for range 60 {
		send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "ping"})
	}
	h.Events.Take()
	resp, err := h.Service.MarkAllAsRead(ctx, bob.Caller)
	require.NoError(t, err)
	assert.False(t, resp.Complete)
	assert.Empty(t, flagEvents(h.Events.Take()), "the event comes when all is read, as in the reference")
	u, err := h.Service.GetUnreadMessages(ctx, bob.Caller, chat.GetUnreadMessagesRequest{})
	require.NoError(t, err)
	assert.Equal(t, 10, u.Count, "the newest 50 were marked")
	assert.Equal(t, 10, len(u.PMs[0].UnreadMessageIDs))
	resp, err = h.Service.MarkAllAsRead(ctx, bob.Caller)
	require.NoError(t, err)
	assert.True(t, resp.Complete)
}
