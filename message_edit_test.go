package chat_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func editMessage(t *testing.T, h *chattest.Harness, as chattest.User, req chat.UpdateMessageRequest) error {
	t.Helper()
	resp, err := h.Service.UpdateMessage(context.Background(), as.Caller, req)
	if err == nil {
		checkSchema(t, "PATCH", "/messages/{message_id}", resp)
	}
	return err
}

// topicIDs lists the channel's topic, as the reader fetches it.
func topicIDs(t *testing.T, h *chattest.Harness, as chattest.User, channel, topic string) []int64 {
	t.Helper()
	narrow := fmt.Sprintf(`[{"operator":"channel","operand":%q},{"operator":"topic","operand":%q}]`, channel, topic)
	return fetchedIDs(fetch(t, h, as, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100), Narrow: &narrow}))
}

func TestEditContent(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID, carol.ID)
	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"),
		Content: fmt.Sprintf("hello @**%s**", carol.FullName)})
	assert.Contains(t, getMessage(t, h, carol, id).Flags, "mentioned")

	h.Clock.Advance(30 * time.Second)
	h.Events.Take()
	resp, err := h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: id,
		Content: ptr(fmt.Sprintf("hello @**%s**, **bold**", bob.FullName))})
	require.NoError(t, err)
	checkSchema(t, "PATCH", "/messages/{message_id}", resp)
	m := getMessage(t, h, bob, id)
	assert.Equal(t, fmt.Sprintf(`<p>hello <span class="user-mention" data-user-id="%d">@%s</span>, <strong>bold</strong></p>`, bob.ID, bob.FullName), m.Content)
	assert.Contains(t, m.Flags, "mentioned", "re-rendering mentions bob")
	assert.NotContains(t, getMessage(t, h, carol, id).Flags, "mentioned", "and no longer carol")
	require.NotNil(t, m.LastEditTime)
	assert.Equal(t, h.Clock.Now().Unix(), *m.LastEditTime)
	assert.Nil(t, m.LastMovedTime)
	require.Len(t, m.EditHistory, 1)
	var ev chat.UpdateMessageEvent
	for _, e := range h.Events.Take() {
		if u, ok := e.Body.(chat.UpdateMessageEvent); ok {
			ev = u
		}
	}
	assert.Equal(t, []int64{id}, ev.MessageIDs)
	assert.Equal(t, fmt.Sprintf("hello @**%s**", carol.FullName), *ev.OrigContent)
	assert.Contains(t, *ev.RenderedContent, "<strong>bold</strong>")

	hist, err := h.Service.GetMessageHistory(ctx, bob.Caller, chat.GetMessageHistoryRequest{MessageID: id})
	require.NoError(t, err)
	checkSchema(t, "GET", "/messages/{message_id}/history", hist)
	require.Len(t, hist.MessageHistory, 2)
	assert.Equal(t, fmt.Sprintf("hello @**%s**", carol.FullName), hist.MessageHistory[0].Content, "as sent, first")
	assert.Equal(t, fmt.Sprintf("hello @**%s**", carol.FullName), *hist.MessageHistory[1].PrevContent)
	assert.Contains(t, *hist.MessageHistory[1].ContentHTMLDiff, `<span class="highlight_text_inserted">`)

	// Blank content becomes "(deleted)".
	require.NoError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: id, Content: ptr("  ")}))
	assert.Equal(t, "<p>(deleted)</p>", getMessage(t, h, alice, id).Content)

	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "psst"})
	for _, tc := range []struct {
		as   chattest.User
		req  chat.UpdateMessageRequest
		msg  string
		kind chat.Kind
	}{
		{bob, chat.UpdateMessageRequest{MessageID: id, Content: ptr("mine now")}, "You don't have permission to edit this message", chat.KindForbidden},
		{alice, chat.UpdateMessageRequest{MessageID: id}, "Nothing to change", 0},
		{alice, chat.UpdateMessageRequest{MessageID: id, Topic: ptr("t")}, "Nothing to change", 0},
		{alice, chat.UpdateMessageRequest{MessageID: dm, Topic: ptr("x")}, "Direct messages cannot have topics.", 0},
		{alice, chat.UpdateMessageRequest{MessageID: dm, StreamID: ptr(int64(1))}, "Direct messages cannot be moved to channels.", 0},
		{alice, chat.UpdateMessageRequest{MessageID: id, Content: ptr("x"), PropagateMode: ptr("change_all")}, "Invalid propagate_mode without topic edit", 0},
		{alice, chat.UpdateMessageRequest{MessageID: id, Content: ptr("x"), StreamID: ptr(channelID(t, h, alice, "general") + 1000)}, "Cannot change message content while changing channel", 0},
		{alice, chat.UpdateMessageRequest{MessageID: id, Topic: ptr("✔ general chat")}, "General chat cannot be marked as resolved", 0},
		{alice, chat.UpdateMessageRequest{MessageID: id, Topic: ptr("x"), PropagateMode: ptr("sideways")}, "Invalid propagate_mode", 0},
		{carol, chat.UpdateMessageRequest{MessageID: dm, Content: ptr("x")}, "Invalid message(s)", chat.KindNotFound},
	} {
		err := editMessage(t, h, tc.as, tc.req)
		require.Error(t, err, tc.msg)
		requireError(t, err, orInvalid(tc.kind), chat.CodeBadRequest, tc.msg)
	}
	require.NoError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: dm, Content: ptr("psst, edited")}))
	h.Clock.Advance(11 * time.Minute)
	requireError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: dm, Content: ptr("late")}),
		chat.KindForbidden, chat.CodeBadRequest, "The time limit for editing this message has passed")
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{AllowMessageEditing: ptr(false)})
	require.NoError(t, err)
	requireError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: dm, Content: ptr("x")}),
		chat.KindForbidden, chat.CodeBadRequest, "Your organization has turned off message editing")
}

func TestMoveTopic(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	var m []int64
	for i := range 5 {
		m = append(m, send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("old"), Content: fmt.Sprint(i)}))
	}
	other := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("elsewhere"), Content: "x"})
	updateFlags(t, h, bob, "add", "read", m[0], m[1])
	updateFlags(t, h, bob, "add", "starred", m[3])
	_, err := h.Service.UpdateUserTopic(ctx, bob.Caller, chat.UpdateUserTopicRequest{StreamID: channelID(t, h, bob, "general"), Topic: "old", VisibilityPolicy: chat.TopicPolicyFollowed})
	require.NoError(t, err)

	// change_later from m[3]: m[3], m[4] move.
	require.NoError(t, editMessage(t, h, bob, chat.UpdateMessageRequest{MessageID: m[3], Topic: ptr("new"), PropagateMode: ptr("change_later"),
		SendNotificationToOldThread: ptr(true)}))
	newTopic := topicIDs(t, h, bob, "general", "new")
	require.Len(t, newTopic, 3, "two moved and the notice")
	assert.Equal(t, m[3:], newTopic[:2])
	notice := getMessage(t, h, bob, newTopic[2])
	assert.Equal(t, "Notification Bot", notice.SenderFullName)
	assert.Contains(t, notice.Content, "2 messages were moved here from")
	oldTopic := topicIDs(t, h, bob, "general", "old")
	require.Len(t, oldTopic, 4)
	assert.Contains(t, getMessage(t, h, bob, oldTopic[3]).Content, "2 messages were moved from this topic to")
	flags := flagsOf(t, h, bob, m...)
	assert.Equal(t, []string{"read"}, flags[m[0]])
	assert.Equal(t, []string{"starred"}, flags[m[3]], "state kept")
	moved := getMessage(t, h, bob, m[3])
	require.NotNil(t, moved.LastMovedTime)
	assert.Nil(t, moved.LastEditTime, "moved, not edited")

	// change_all: the rest of the topic. Bob's policy moves with it,
	// merged with the destination's (which has messages): following
	// merged with nothing is nothing, as in the reference.
	require.NoError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: m[0], Topic: ptr("new"), PropagateMode: ptr("change_all"),
		SendNotificationToNewThread: ptr(false)}))
	assert.Empty(t, topicIDs(t, h, bob, "general", "old"))
	assert.Equal(t, []int64{other}, topicIDs(t, h, bob, "general", "elsewhere"))
	topics, err := h.Service.GetUserTopics(ctx, bob.Caller)
	require.NoError(t, err)
	assert.Empty(t, topics.UserTopics)
	// Into a new topic, the policy is kept.
	_, err = h.Service.UpdateUserTopic(ctx, bob.Caller, chat.UpdateUserTopicRequest{StreamID: channelID(t, h, bob, "general"), Topic: "elsewhere", VisibilityPolicy: chat.TopicPolicyFollowed})
	require.NoError(t, err)
	require.NoError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: other, Topic: ptr("fresh"), PropagateMode: ptr("change_all")}))
	topics, err = h.Service.GetUserTopics(ctx, bob.Caller)
	require.NoError(t, err)
	require.Len(t, topics.UserTopics, 1)
	assert.Equal(t, "fresh", topics.UserTopics[0].TopicName)
	assert.Equal(t, chat.TopicPolicyFollowed, topics.UserTopics[0].VisibilityPolicy)

	// Resolving, and undoing within a minute deletes the notice.
	require.NoError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: m[0], Topic: ptr("✔ new"), PropagateMode: ptr("change_all")}))
	resolved := topicIDs(t, h, bob, "general", "✔ new")
	last := getMessage(t, h, bob, resolved[len(resolved)-1])
	assert.Equal(t, fmt.Sprintf(`<p><span class="user-mention silent" data-user-id="%d">%s</span> has marked this topic as resolved.</p>`, alice.ID, alice.FullName), last.Content)
	require.NoError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: m[0], Topic: ptr("new"), PropagateMode: ptr("change_all")}))
	back := topicIDs(t, h, bob, "general", "new")
	assert.Len(t, back, len(resolved)-1, "the resolve notice is gone, no unresolve notice")
	resolvedOnly := getMessage(t, h, bob, m[0])
	require.NotNil(t, resolvedOnly.LastMovedTime)

	// Permissions and limits.
	admins := groupID(t, h, "role:administrators")
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
		CanMoveMessagesBetweenTopicsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins}},
		CanResolveTopicsGroup:             &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins}}})
	require.NoError(t, err)
	requireError(t, editMessage(t, h, bob, chat.UpdateMessageRequest{MessageID: m[0], Topic: ptr("mine")}),
		chat.KindForbidden, chat.CodeBadRequest, "You don't have permission to edit this message")
	requireError(t, editMessage(t, h, bob, chat.UpdateMessageRequest{MessageID: m[0], Topic: ptr("✔ new")}),
		chat.KindForbidden, chat.CodeBadRequest, "You don't have permission to resolve topics.")
	require.NoError(t, editMessage(t, h, h.Owner, chat.UpdateMessageRequest{MessageID: m[0], Topic: ptr("owner's")}))
	everyone := groupID(t, h, "role:everyone")
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
		CanMoveMessagesBetweenTopicsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &everyone}}})
	require.NoError(t, err)
	h.Clock.Advance(8 * 24 * time.Hour)
	requireError(t, editMessage(t, h, bob, chat.UpdateMessageRequest{MessageID: m[0], Topic: ptr("late")}),
		chat.KindForbidden, chat.CodeBadRequest, "The time limit for editing this message's topic has passed.")
}

// change_all by a member past the limit for some messages of the topic.
func TestMoveTimeLimitExceeded(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "general", false)
	old := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "old"})
	h.Clock.Advance(8 * 24 * time.Hour)
	recent := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "new"})
	err := editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: recent, Topic: ptr("t2"), PropagateMode: ptr("change_all")})
	e := requireError(t, err, chat.KindForbidden, chat.CodeMoveMessagesTimeLimitExceeded, "You only have permission to move the 1/2 most recent messages in this topic.")
	assert.Equal(t, recent, e.Fields["first_message_id_allowed_to_move"])
	assert.Equal(t, 1, e.Fields["total_messages_allowed_to_move"])
	assert.Equal(t, 2, e.Fields["total_messages_in_topic"])
	require.NoError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: recent, Topic: ptr("t2"), PropagateMode: ptr("change_later")}))
	require.NoError(t, editMessage(t, h, h.Owner, chat.UpdateMessageRequest{MessageID: old, Topic: ptr("t2"), PropagateMode: ptr("change_all")}), "administrators have no limit")
}

func TestMoveBetweenChannels(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	both := h.NewUser(t, chat.RoleMember)
	onlyA := h.NewUser(t, chat.RoleMember)
	onlyB := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "a", false)
	newChannelBy(t, h, alice, "b", true)
	subscribe(t, h, alice, "a", both.ID, onlyA.ID)
	subscribe(t, h, alice, "b", both.ID, onlyB.ID)
	var m []int64
	for i := range 4 {
		m = append(m, send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("a"), Topic: ptr("t"), Content: fmt.Sprint(i)}))
	}
	updateFlags(t, h, both, "add", "read", m[0], m[2])
	updateFlags(t, h, both, "add", "starred", m[1])
	b := channelID(t, h, alice, "b")

	requireError(t, editMessage(t, h, onlyA, chat.UpdateMessageRequest{MessageID: m[0], StreamID: &b}),
		chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
	h.Events.Take()
	require.NoError(t, editMessage(t, h, alice, chat.UpdateMessageRequest{MessageID: m[0], StreamID: &b, PropagateMode: ptr("change_all")}))
	inB := topicIDs(t, h, both, "b", "t")
	require.Len(t, inB, 5, "the messages and the notice")
	assert.Equal(t, m, inB[:4])
	assert.Contains(t, getMessage(t, h, both, inB[4]).Content, "This topic was moved here from")
	flags := flagsOf(t, h, both, m...)
	assert.Equal(t, []string{"read"}, flags[m[0]])
	assert.Equal(t, []string{"starred"}, flags[m[1]], "unread and starred, as before")
	assert.Equal(t, []string{"read"}, flags[m[2]])
	assert.Equal(t, []string{}, flags[m[3]])
	for _, f := range flagsOf(t, h, onlyB, m...) {
		assert.Equal(t, []string{"read"}, f, "received only in b: read")
	}
	_, err := h.Service.GetMessage(ctx, onlyA.Caller, chat.GetMessageRequest{MessageID: m[0]})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	u, err := h.Service.GetUnreadMessages(ctx, onlyA.Caller, chat.GetUnreadMessagesRequest{})
	require.NoError(t, err)
	assert.Equal(t, 0, u.Count, "moved away from onlyA")
	u, err = h.Service.GetUnreadMessages(ctx, both.Caller, chat.GetUnreadMessagesRequest{})
	require.NoError(t, err)
	require.Len(t, u.Streams, 1)
	assert.Equal(t, b, u.Streams[0].StreamID)
	assert.Equal(t, []int64{m[1], m[3], inB[4]}, u.Streams[0].UnreadMessageIDs, "what was unread, and the notice")
	var ev chat.UpdateMessageEvent
	for _, e := range h.Events.Take() {
		if x, ok := e.Body.(chat.UpdateMessageEvent); ok {
			ev = x
		}
	}
	assert.Equal(t, b, *ev.NewStreamID)
	assert.Equal(t, "change_all", ev.PropagateMode)

	members := groupID(t, h, "role:administrators")
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
		CanMoveMessagesBetweenChannelsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &members}}})
	require.NoError(t, err)
	a := channelID(t, h, alice, "a")
	requireError(t, editMessage(t, h, both, chat.UpdateMessageRequest{MessageID: m[0], StreamID: &a}),
		chat.KindForbidden, chat.CodeBadRequest, "You don't have permission to move this message")
}

func TestDeleteMessage(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	first := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "one"})
	second := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "two"})
	_, err := h.Service.AddReaction(ctx, bob.Caller, chat.AddReactionRequest{MessageID: first, EmojiName: "tada"})
	require.NoError(t, err)
	del := func(u chattest.User, id int64) error {
		_, err := h.Service.DeleteMessage(ctx, u.Caller, chat.DeleteMessageRequest{MessageID: id})
		return err
	}
	requireError(t, del(bob, first), chat.KindForbidden, chat.CodeBadRequest, "You don't have permission to delete this message")
	h.Events.Take()
	require.NoError(t, del(alice, first))
	evs := h.Events.Take()
	var dev chat.DeleteMessageEvent
	for _, e := range evs {
		if d, ok := e.Body.(chat.DeleteMessageEvent); ok {
			dev = d
		}
	}
	assert.Equal(t, chat.DeleteMessageEvent{MessageIDs: []int64{first}, MessageType: "stream", StreamID: ptr(channelID(t, h, alice, "general")), Topic: ptr("t")}, dev)
	_, err = h.Service.GetMessage(ctx, bob.Caller, chat.GetMessageRequest{MessageID: first})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	requireError(t, del(alice, first), chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	ch, err := h.Service.GetChannel(ctx, alice.Caller, chat.GetChannelRequest{StreamID: channelID(t, h, alice, "general")})
	require.NoError(t, err)
	assert.Equal(t, second, *ch.Stream.FirstMessageID, "the channel's first message moved on")

	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{MessageContentDeleteLimitSeconds: timeLimit(t, "60")})
	require.NoError(t, err)
	h.Clock.Advance(2 * time.Minute)
	requireError(t, del(alice, second), chat.KindForbidden, chat.CodeBadRequest, "The time limit for deleting this message has passed")
	require.NoError(t, del(h.Owner, second), "administrators may delete any message")
}

func timeLimit(t *testing.T, raw string) *chat.TimeLimit {
	t.Helper()
	var l chat.TimeLimit
	require.NoError(t, l.UnmarshalJSON([]byte(raw)))
	return &l
}

func TestReadReceipts(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	outsider := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "secret", true)
	subscribe(t, h, alice, "secret", bob.ID, carol.ID)
	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("secret"), Topic: ptr("t"), Content: "x", ReadBySender: ptr(true)})
	receipts := func(as chattest.User) []int64 {
		t.Helper()
		r, err := h.Service.GetReadReceipts(ctx, as.Caller, chat.GetReadReceiptsRequest{MessageID: id})
		require.NoError(t, err)
		checkSchema(t, "GET", "/messages/{message_id}/read_receipts", r)
		return r.UserIDs
	}
	assert.Equal(t, []int64{}, receipts(alice), "the sender is left out")
	updateFlags(t, h, bob, "add", "read", id)
	updateFlags(t, h, carol, "add", "read", id)
	assert.Equal(t, []int64{bob.ID, carol.ID}, receipts(alice))
	req := chat.UpdateSettingsRequest{}
	req.SendReadReceipts = ptr(false)
	_, err := h.Service.UpdateSettings(ctx, carol.Caller, req)
	require.NoError(t, err)
	assert.Equal(t, []int64{bob.ID}, receipts(alice))
	_, err = h.Service.GetReadReceipts(ctx, outsider.Caller, chat.GetReadReceiptsRequest{MessageID: id})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{EnableReadReceipts: ptr(false)})
	require.NoError(t, err)
	_, err = h.Service.GetReadReceipts(ctx, bob.Caller, chat.GetReadReceiptsRequest{MessageID: id})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Read receipts are disabled in this organization.")
}
