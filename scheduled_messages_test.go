package chat_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// schedule creates a scheduled message and returns its ID.
func schedule(t *testing.T, h *chattest.Harness, as chattest.User, req chat.CreateScheduledMessageRequest) int64 {
	t.Helper()
	resp, err := h.Service.CreateScheduledMessage(context.Background(), as.Caller, req)
	require.NoError(t, err)
	checkSchema(t, "POST", "/scheduled_messages", resp)
	require.NotZero(t, resp.ScheduledMessageID)
	return resp.ScheduledMessageID
}

// listScheduled is the caller's GET /scheduled_messages.
func listScheduled(t *testing.T, h *chattest.Harness, as chattest.User) []chat.ScheduledMessage {
	t.Helper()
	resp, err := h.Service.GetScheduledMessages(context.Background(), as.Caller)
	require.NoError(t, err)
	checkSchema(t, "GET", "/scheduled_messages", resp)
	return resp.ScheduledMessages
}

// deliverDue runs one delivery round and returns how many it sent.
func deliverDue(t *testing.T, h *chattest.Harness) int {
	t.Helper()
	n, err := h.Service.DeliverDueScheduledMessages(context.Background())
	require.NoError(t, err)
	return n
}

// in is the harness clock's time in d, as a delivery timestamp.
func in(h *chattest.Harness, d time.Duration) int64 { return h.Clock.Now().Add(d).Unix() }

// channelMessages are the newest messages of the channel the reader sees.
func channelMessages(t *testing.T, h *chattest.Harness, as chattest.User, channel int64) []chat.FetchedMessage {
	t.Helper()
	narrow := fmt.Sprintf(`[{"operator":"channel","operand":%d}]`, channel)
	return fetch(t, h, as, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(1000), NumAfter: ptr(0),
		Narrow: &narrow, ApplyMarkdown: ptr(false)}).Messages
}

// directMessages are the newest direct messages the reader has.
func directMessages(t *testing.T, h *chattest.Harness, as chattest.User) []chat.FetchedMessage {
	t.Helper()
	narrow := `[{"operator":"is","operand":"dm"}]`
	return fetch(t, h, as, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(1000), NumAfter: ptr(0),
		Narrow: &narrow, ApplyMarkdown: ptr(false)}).Messages
}

func scheduledIDs(list []chat.ScheduledMessage) []int64 {
	out := []int64{}
	for _, m := range list {
		out = append(out, m.ScheduledMessageID)
	}
	return out
}

// A channel message is scheduled with the send path's checks and
// rendering, listed with its delivery time, told to its author alone, and
// sent once when due: as its author, from its client, read for its
// author as the client decides.
func TestScheduledChannelMessageLifecycle(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, h, alice, "plans", false)
	subscribe(t, h, alice, "plans", bob.ID)
	takeEvents(t, h)

	due := in(h, time.Hour)
	id := schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch),
		Topic: ptr("  launch "), Content: "Ship it, @**" + bob.FullName + "**!  \n", ScheduledDeliveryTimestamp: due,
		UserAgent: "ZulipMobile/27.1 (Android)"})
	list := listScheduled(t, h, alice)
	require.Len(t, list, 1)
	got := list[0]
	assert.Equal(t, id, got.ScheduledMessageID)
	assert.Equal(t, "stream", got.Type)
	assert.Equal(t, chat.ScheduleToChannel(ch), got.To)
	assert.Equal(t, "launch", *got.Topic)
	assert.Equal(t, "Ship it, @**"+bob.FullName+"**!", got.Content)
	assert.Contains(t, got.RenderedContent, `class="user-mention" data-user-id="`+fmt.Sprint(bob.ID)+`"`)
	assert.Equal(t, due, got.ScheduledDeliveryTimestamp)
	assert.False(t, got.Failed)
	assert.Empty(t, listScheduled(t, h, bob), "only its author sees it")

	ev := only(t, takeEvents(t, h), "scheduled_messages", "add")
	assert.Equal(t, []int64{alice.ID}, ev.To)
	added := ev.JSON["scheduled_messages"].([]any)
	require.Len(t, added, 1)
	assert.EqualValues(t, id, added[0].(map[string]any)["scheduled_message_id"])
	assert.EqualValues(t, ch, added[0].(map[string]any)["to"])

	c := register(t, h, alice, chat.RegisterRequest{FetchEventTypes: &[]string{"scheduled_messages"}})
	require.Len(t, c.state["scheduled_messages"], 1)
	assert.EqualValues(t, id, c.state["scheduled_messages"].([]any)[0].(map[string]any)["scheduled_message_id"])
	assert.Equal(t, []any{}, register(t, h, bob, chat.RegisterRequest{FetchEventTypes: &[]string{"scheduled_messages"}}).state["scheduled_messages"])
	assert.NotContains(t, register(t, h, alice, chat.RegisterRequest{FetchEventTypes: &[]string{"drafts"}}).state, "scheduled_messages")

	// Not before its time.
	h.Clock.Advance(59 * time.Minute)
	assert.Zero(t, deliverDue(t, h))
	assert.Empty(t, channelMessages(t, h, bob, ch))

	h.Clock.Set(time.Unix(due, 0).Add(30 * time.Second))
	assert.Equal(t, 1, deliverDue(t, h))
	msgs := channelMessages(t, h, bob, ch)
	require.Len(t, msgs, 1)
	m := msgs[0]
	assert.Equal(t, alice.ID, m.SenderID)
	assert.Equal(t, "Ship it, @**"+bob.FullName+"**!", m.Content)
	assert.Equal(t, "launch", m.Subject)
	assert.Equal(t, h.Clock.Now().Unix(), m.Timestamp, "sent at delivery")
	assert.Equal(t, "ZulipMobile", m.Client, "from the scheduling client")
	assert.Contains(t, m.Flags, "mentioned")
	assert.NotContains(t, m.Flags, "read")
	assert.Contains(t, getMessage(t, h, alice, m.ID).Flags, "read", "an interactive client's message is read by its sender")

	evs := takeEvents(t, h)
	rm := only(t, evs, "scheduled_messages", "remove")
	assert.Equal(t, []int64{alice.ID}, rm.To)
	assert.EqualValues(t, id, rm.JSON["scheduled_message_id"])
	assert.Contains(t, kinds(evs), "message/")
	assert.Empty(t, listScheduled(t, h, alice))
	assert.Equal(t, []any{}, register(t, h, alice, chat.RegisterRequest{FetchEventTypes: &[]string{"scheduled_messages"}}).state["scheduled_messages"])

	// Once only.
	h.Clock.Advance(time.Minute)
	assert.Zero(t, deliverDue(t, h))
	assert.Len(t, channelMessages(t, h, bob, ch), 1)
	_, err := h.Service.UpdateScheduledMessage(ctx, alice.Caller, chat.UpdateScheduledMessageRequest{ScheduledMessageID: id, Content: ptr("late")})
	requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "Scheduled message was already sent")
	// A delivered one may still be deleted, as the reference allows.
	_, err = h.Service.DeleteScheduledMessage(ctx, alice.Caller, chat.DeleteScheduledMessageRequest{ScheduledMessageID: id})
	require.NoError(t, err)
}

// The four type names, both stored as the reference's two; `to` follows
// the type; read_by_sender follows the client unless the message is to
// oneself alone, and is kept when given.
func TestScheduledDirectMessagesAndTypes(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, h, alice, "general", false)
	due := in(h, time.Minute)
	web := ptr("website")

	mk := func(typ string, to chat.ScheduledRecipient, content string, readBySender *bool) int64 {
		return schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: typ, To: to, Topic: ptr("t"), Content: content,
			ScheduledDeliveryTimestamp: due, Client: web, ReadBySender: readBySender})
	}
	toBob := mk("direct", chat.ScheduleToUsers(bob.ID), "to bob", nil)
	group := mk("private", chat.ScheduleToUsers(carol.ID, alice.ID, bob.ID, bob.ID), "to the group", nil)
	self := mk("direct", chat.ScheduleToUsers(alice.ID), "to me", nil)
	selfRead := mk("direct", chat.ScheduleToUsers(alice.ID), "to me, read", ptr(true))
	unread := mk("direct", chat.ScheduleToUsers(bob.ID), "to bob, unread", ptr(false))
	stream := mk("stream", chat.ScheduleToChannel(ch), "by its old name", nil)

	byID := map[int64]chat.ScheduledMessage{}
	for _, m := range listScheduled(t, h, alice) {
		byID[m.ScheduledMessageID] = m
	}
	assert.Equal(t, "private", byID[toBob].Type)
	assert.Equal(t, chat.ScheduleToUsers(bob.ID), byID[toBob].To)
	assert.Nil(t, byID[toBob].Topic, "a direct message has no topic")
	assert.Equal(t, chat.ScheduleToUsers(bob.ID, carol.ID), byID[group].To, "the others, once each")
	assert.Equal(t, chat.ScheduleToUsers(alice.ID), byID[self].To, "oneself")
	assert.Equal(t, "stream", byID[stream].Type)

	h.Clock.Advance(2 * time.Minute)
	assert.Equal(t, 6, deliverDue(t, h))
	readFor := map[string]bool{}
	for _, m := range directMessages(t, h, alice) {
		readFor[m.Content] = slices.Contains(m.Flags, "read")
		assert.Equal(t, "website", m.Client)
	}
	assert.Equal(t, map[string]bool{"to bob": true, "to the group": true, "to me": false, "to me, read": true, "to bob, unread": false},
		readFor, "read_by_sender: the client's default except to oneself; or as given")
	var bobs []string
	for _, m := range directMessages(t, h, bob) {
		bobs = append(bobs, m.Content)
		assert.NotContains(t, m.Flags, "read")
	}
	assert.ElementsMatch(t, []string{"to bob", "to the group", "to bob, unread"}, bobs)
	assert.Len(t, directMessages(t, h, carol), 1)
	_ = unread
	_ = selfRead
}

// Every documented error of scheduling, checked as sending checks; a
// refused message is neither stored nor announced.
func TestScheduledMessageCreateErrors(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	gone := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	h.Deactivate(t, gone)
	ch := newChannelBy(t, h, alice, "open", false)
	secret := newChannelBy(t, h, alice, "secret", true)
	closed := newChannelBy(t, h, h.Owner, "announcements", false)
	admins := groupID(t, h, chat.GroupAdministrators)
	_, err := h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: closed,
		CanSendMessageGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins}}})
	require.NoError(t, err)
	archived := newChannelBy(t, h, alice, "old", false)
	_, err = h.Service.ArchiveChannel(ctx, h.Owner.Caller, chat.ArchiveChannelRequest{StreamID: archived})
	require.NoError(t, err)
	takeEvents(t, h)

	due := in(h, time.Hour)
	channel := func(id int64) chat.CreateScheduledMessageRequest {
		return chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(id), Topic: ptr("t"),
			Content: "hi", ScheduledDeliveryTimestamp: due}
	}
	direct := func(ids ...int64) chat.CreateScheduledMessageRequest {
		return chat.CreateScheduledMessageRequest{Type: "direct", To: chat.ScheduleToUsers(ids...), Content: "hi", ScheduledDeliveryTimestamp: due}
	}
	with := func(r chat.CreateScheduledMessageRequest, f func(*chat.CreateScheduledMessageRequest)) chat.CreateScheduledMessageRequest {
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name string
		as   chattest.User
		req  chat.CreateScheduledMessageRequest
		code string
		msg  string
		kind chat.Kind
	}{
		{"now", alice, with(channel(ch), func(r *chat.CreateScheduledMessageRequest) { r.ScheduledDeliveryTimestamp = h.Clock.Now().Unix() }),
			chat.CodeBadRequest, "Scheduled delivery time must be in the future.", 0},
		{"past", alice, with(direct(bob.ID), func(r *chat.CreateScheduledMessageRequest) { r.ScheduledDeliveryTimestamp = in(h, -24*time.Hour) }),
			chat.CodeBadRequest, "Scheduled delivery time must be in the future.", 0},
		{"unknown type", alice, with(channel(ch), func(r *chat.CreateScheduledMessageRequest) { r.Type = "huddle" }), chat.CodeBadRequest, "Invalid type", 0},
		{"no to", alice, with(channel(ch), func(r *chat.CreateScheduledMessageRequest) { r.To = chat.ScheduledRecipient{} }),
			chat.CodeRequestVariableMissing, "Missing 'to' argument", 0},
		{"unknown channel", alice, channel(ch + 1000), chat.CodeStreamDoesNotExist, fmt.Sprintf("Channel with ID '%d' does not exist", ch+1000), chat.KindNotFound},
		{"unknown user", alice, direct(bob.ID, 9999), chat.CodeBadRequest, "Invalid user ID 9999", chat.KindNotFound},
		{"channel given users", alice, with(channel(ch), func(r *chat.CreateScheduledMessageRequest) { r.To = chat.ScheduleToUsers(ch) }),
			chat.CodeBadRequest, "Invalid data type for channel ID", 0},
		{"users given a channel", alice, with(direct(bob.ID), func(r *chat.CreateScheduledMessageRequest) { r.To = chat.ScheduleToChannel(bob.ID) }),
			chat.CodeBadRequest, "Invalid data type for recipients", 0},
		{"no recipients", alice, direct(), chat.CodeBadRequest, "Message must have recipients", 0},
		{"deactivated recipient", alice, direct(gone.ID), chat.CodeBadRequest, fmt.Sprintf("'%s' is no longer using Zulip.", gone.Email), 0},
		{"no topic", alice, with(channel(ch), func(r *chat.CreateScheduledMessageRequest) { r.Topic = nil }), chat.CodeBadRequest, "Missing topic", 0},
		{"topic and subject", alice, with(channel(ch), func(r *chat.CreateScheduledMessageRequest) { r.Subject = ptr("s") }),
			chat.CodeRequestConfusingVar, "Can't decide between 'topic' and 'subject' arguments", 0},
		{"unprintable topic", alice, with(channel(ch), func(r *chat.CreateScheduledMessageRequest) { r.Topic = ptr("a\x01b") }),
			chat.CodeBadRequest, "Invalid character in topic, at position 2!", 0},
		{"empty content", alice, with(channel(ch), func(r *chat.CreateScheduledMessageRequest) { r.Content = " \n " }),
			chat.CodeBadRequest, "Message must not be empty", 0},
		{"posting permission", alice, channel(closed), chat.CodeBadRequest, "You do not have permission to post in this channel.", chat.KindForbidden},
		{"archived channel", alice, channel(archived), chat.CodeBadRequest, "Not authorized to send to channel 'old'", chat.KindForbidden},
		{"private channel, not subscribed", bob, channel(secret), chat.CodeBadRequest, "Not authorized to send to channel 'secret'", chat.KindForbidden},
		{"guest, public channel not subscribed", guest, channel(ch), chat.CodeBadRequest, "Not authorized to send to channel 'open'", chat.KindForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.Service.CreateScheduledMessage(ctx, tc.as.Caller, tc.req)
			e := requireError(t, err, orInvalid(tc.kind), tc.code, tc.msg)
			if tc.code == chat.CodeStreamDoesNotExist {
				assert.Equal(t, map[string]any{"stream_id": ch + 1000}, e.Fields)
			}
		})
	}
	for _, u := range []chattest.User{alice, bob, guest} {
		assert.Empty(t, listScheduled(t, h, u))
	}
	assert.Empty(t, takeEvents(t, h), "nothing announced")

	// What they may: an admin to the closed channel, a guest where
	// subscribed, a member to a private channel they are in.
	schedule(t, h, h.Owner, channel(closed))
	subscribe(t, h, alice, "open", guest.ID)
	schedule(t, h, guest, channel(ch))
	schedule(t, h, alice, channel(secret))
	_, err = h.Service.CreateScheduledMessage(ctx, gone.Caller, channel(ch))
	requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "Account is deactivated")
}

// Topics and content follow the send path: the empty topic and its
// names, stripping, the limits by truncation.
func TestScheduledMessageTopicAndContentRules(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, h, alice, "rules", false)
	due := in(h, time.Hour)
	long := strings.Repeat("x", h.Service.Limits().MaxMessageLength+50)
	for _, tc := range []struct{ topic, content, wantTopic, wantContent string }{
		{"", "empty topic", "", "empty topic"},
		{"(no topic)", "no topic", "", "no topic"},
		{chat.EmptyTopicDisplayName, "display name", "", "display name"},
		{"  padded\t", "\n\nleading newlines and trailing space  ", "padded", "leading newlines and trailing space"},
		{strings.Repeat("é", 70), "long topic", strings.Repeat("é", 57) + "...", "long topic"},
		{"long content", long, "long content", long[:h.Service.Limits().MaxMessageLength-len("\n[message truncated]")] + "\n[message truncated]"},
	} {
		schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "stream", To: chat.ScheduleToChannel(ch), Topic: ptr(tc.topic),
			Content: tc.content, ScheduledDeliveryTimestamp: due})
		list := listScheduled(t, h, alice)
		got := list[len(list)-1]
		assert.Equal(t, tc.wantTopic, *got.Topic, tc.topic)
		assert.Equal(t, tc.wantContent, got.Content, tc.topic)
	}
	h.Clock.Advance(time.Hour)
	assert.Equal(t, 6, deliverDue(t, h))
	topics := map[string]int{}
	for _, m := range fetch(t, h, alice, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(10), NumAfter: ptr(0),
		AllowEmptyTopicName: ptr(true), ApplyMarkdown: ptr(false)}).Messages {
		topics[m.Subject]++
	}
	assert.Equal(t, map[string]int{"": 3, "padded": 1, strings.Repeat("é", 57) + "...": 1, "long content": 1}, topics)
}

// The list is the caller's undelivered messages, by delivery time, failed
// ones included; delivery goes in that order.
func TestScheduledMessagesOrder(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, h, alice, "order", false)
	base := in(h, 5*time.Minute)
	var ids []int64
	for i, offset := range []int64{2, 0, 1} {
		ids = append(ids, schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch),
			Topic: ptr("t"), Content: fmt.Sprint("part ", i), ScheduledDeliveryTimestamp: base + offset}))
	}
	assert.Equal(t, []int64{ids[1], ids[2], ids[0]}, scheduledIDs(listScheduled(t, h, alice)))
	h.Clock.Advance(6 * time.Minute)
	assert.Equal(t, 3, deliverDue(t, h))
	msgs := channelMessages(t, h, alice, ch)
	var contents []string
	for _, m := range msgs {
		contents = append(contents, m.Content)
	}
	assert.Equal(t, []string{"part 1", "part 2", "part 0"}, contents, "sent by delivery time")
}

// The reference's sequence of edits (test_edit_schedule_message), and the
// rest of the edit rules.
func TestScheduledMessageUpdate(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, h, alice, "Verona", false)
	due := in(h, 24*time.Hour)
	id := schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch), Topic: ptr("Test topic"),
		Content: "Original test message", ScheduledDeliveryTimestamp: due})
	takeEvents(t, h)
	update := func(req chat.UpdateScheduledMessageRequest) error {
		req.ScheduledMessageID = id
		resp, err := h.Service.UpdateScheduledMessage(ctx, alice.Caller, req)
		if err == nil {
			checkSchema(t, "PATCH", "/scheduled_messages/{scheduled_message_id}", resp)
		}
		return err
	}
	current := func() chat.ScheduledMessage {
		list := listScheduled(t, h, alice)
		require.Len(t, list, 1)
		return list[0]
	}

	// The same recipient by its other type name: nothing changes but the
	// event says so.
	require.NoError(t, update(chat.UpdateScheduledMessageRequest{Type: ptr("stream"), To: ptr(chat.ScheduleToChannel(ch)), Topic: ptr("Test topic")}))
	m := current()
	assert.Equal(t, "stream", m.Type)
	assert.Equal(t, "Original test message", m.Content)
	assert.Equal(t, due, m.ScheduledDeliveryTimestamp)
	ev := only(t, takeEvents(t, h), "scheduled_messages", "update")
	assert.Equal(t, []int64{alice.ID}, ev.To)

	for _, tc := range []struct {
		req  chat.UpdateScheduledMessageRequest
		code string
		msg  string
		kind chat.Kind
	}{
		{chat.UpdateScheduledMessageRequest{}, chat.CodeBadRequest, "Nothing to change", 0},
		{chat.UpdateScheduledMessageRequest{Client: ptr("website")}, chat.CodeBadRequest, "Nothing to change", 0},
		{chat.UpdateScheduledMessageRequest{Type: ptr("direct")}, chat.CodeBadRequest, "Recipient required when updating type of scheduled message.", 0},
		{chat.UpdateScheduledMessageRequest{Type: ptr("channel"), To: ptr(chat.ScheduleToChannel(ch))}, chat.CodeBadRequest,
			"Topic required when updating scheduled message type to channel.", 0},
		{chat.UpdateScheduledMessageRequest{Type: ptr("group"), To: ptr(chat.ScheduleToChannel(ch))}, chat.CodeBadRequest, "Invalid type", 0},
		{chat.UpdateScheduledMessageRequest{Topic: ptr("a"), Subject: ptr("b")}, chat.CodeRequestConfusingVar, "", 0},
		{chat.UpdateScheduledMessageRequest{ScheduledDeliveryTimestamp: ptr(h.Clock.Now().Unix())}, chat.CodeBadRequest,
			"Scheduled delivery time must be in the future.", 0},
		{chat.UpdateScheduledMessageRequest{To: ptr(chat.ScheduleToUsers(bob.ID))}, chat.CodeBadRequest, "Invalid data type for channel ID", 0},
		{chat.UpdateScheduledMessageRequest{To: ptr(chat.ScheduleToChannel(ch + 500))}, chat.CodeStreamDoesNotExist, "", chat.KindNotFound},
		{chat.UpdateScheduledMessageRequest{Type: ptr("direct"), To: ptr(chat.ScheduleToUsers(bob.ID, 9999))}, chat.CodeBadRequest, "Invalid user ID 9999", chat.KindNotFound},
		{chat.UpdateScheduledMessageRequest{Content: ptr("  ")}, chat.CodeBadRequest, "Message must not be empty", 0},
		{chat.UpdateScheduledMessageRequest{Topic: ptr("x\x00y")}, chat.CodeBadRequest, "Invalid character in topic, at position 2!", 0},
	} {
		requireError(t, update(tc.req), orInvalid(tc.kind), tc.code, tc.msg)
	}
	assert.Equal(t, m, current(), "refused edits change nothing")
	assert.Empty(t, takeEvents(t, h))

	// To a direct message: the topic goes; a topic given later is ignored.
	require.NoError(t, update(chat.UpdateScheduledMessageRequest{Type: ptr("direct"), To: ptr(chat.ScheduleToUsers(bob.ID))}))
	m = current()
	assert.Equal(t, "private", m.Type)
	assert.Equal(t, chat.ScheduleToUsers(bob.ID), m.To)
	assert.Nil(t, m.Topic)
	require.NoError(t, update(chat.UpdateScheduledMessageRequest{Topic: ptr("Direct message topic")}))
	assert.Nil(t, current().Topic)
	requireError(t, update(chat.UpdateScheduledMessageRequest{To: ptr(chat.ScheduleToChannel(ch))}), chat.KindInvalid, chat.CodeBadRequest,
		"Invalid data type for recipients")

	// Back to the channel with a topic; then the topic alone, normalized.
	require.NoError(t, update(chat.UpdateScheduledMessageRequest{Type: ptr("channel"), To: ptr(chat.ScheduleToChannel(ch)), Topic: ptr("New test topic")}))
	m = current()
	assert.Equal(t, "stream", m.Type)
	assert.Equal(t, chat.ScheduleToChannel(ch), m.To)
	assert.Equal(t, "New test topic", *m.Topic)
	require.NoError(t, update(chat.UpdateScheduledMessageRequest{Subject: ptr(" (no topic) ")}))
	assert.Equal(t, "", *current().Topic)

	// Content is checked and rendered again; the time moves.
	require.NoError(t, update(chat.UpdateScheduledMessageRequest{Content: ptr("**bold** now"), ScheduledDeliveryTimestamp: ptr(due + 60)}))
	m = current()
	assert.Equal(t, "**bold** now", m.Content)
	assert.Equal(t, "<p><strong>bold</strong> now</p>", m.RenderedContent)
	assert.Equal(t, due+60, m.ScheduledDeliveryTimestamp)
	evs := takeEvents(t, h)
	assert.Len(t, evs, 5)
	last := evs[len(evs)-1]
	assert.Equal(t, "scheduled_messages/update", last.Type+"/"+last.Op)
	assert.Equal(t, "**bold** now", last.JSON["scheduled_message"].(map[string]any)["content"])

	// Nobody else's.
	for _, req := range []chat.UpdateScheduledMessageRequest{{ScheduledMessageID: id, Content: ptr("mine now")}, {ScheduledMessageID: id + 100, Content: ptr("x")}} {
		_, err := h.Service.UpdateScheduledMessage(ctx, bob.Caller, req)
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Scheduled message does not exist")
	}
	_, err := h.Service.DeleteScheduledMessage(ctx, bob.Caller, chat.DeleteScheduledMessageRequest{ScheduledMessageID: id})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Scheduled message does not exist")
	assert.Equal(t, m, current(), "untouched by bob")
	assert.Empty(t, takeEvents(t, h))

	// The client of the last edit sends it.
	require.NoError(t, update(chat.UpdateScheduledMessageRequest{Content: ptr("from the terminal"), UserAgent: "ZulipTerminal/0.7"}))
	h.Clock.Set(time.Unix(due+61, 0))
	assert.Equal(t, 1, deliverDue(t, h))
	sent := channelMessages(t, h, alice, ch)
	require.Len(t, sent, 1)
	assert.Equal(t, "ZulipTerminal", sent[0].Client)
	assert.Equal(t, "from the terminal", sent[0].Content)
}

// Deleting cancels: the author's own only, with a remove event; the
// message is never sent.
func TestScheduledMessageDelete(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	id := schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "direct", To: chat.ScheduleToUsers(bob.ID), Content: "never",
		ScheduledDeliveryTimestamp: in(h, time.Minute)})
	keep := schedule(t, h, bob, chat.CreateScheduledMessageRequest{Type: "direct", To: chat.ScheduleToUsers(alice.ID), Content: "kept",
		ScheduledDeliveryTimestamp: in(h, time.Minute)})
	takeEvents(t, h)

	_, err := h.Service.DeleteScheduledMessage(ctx, alice.Caller, chat.DeleteScheduledMessageRequest{ScheduledMessageID: keep})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Scheduled message does not exist")
	resp, err := h.Service.DeleteScheduledMessage(ctx, alice.Caller, chat.DeleteScheduledMessageRequest{ScheduledMessageID: id})
	require.NoError(t, err)
	checkSchema(t, "DELETE", "/scheduled_messages/{scheduled_message_id}", resp)
	ev := only(t, takeEvents(t, h), "scheduled_messages", "remove")
	assert.Equal(t, []int64{alice.ID}, ev.To)
	assert.EqualValues(t, id, ev.JSON["scheduled_message_id"])
	_, err = h.Service.DeleteScheduledMessage(ctx, alice.Caller, chat.DeleteScheduledMessageRequest{ScheduledMessageID: id})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Scheduled message does not exist")
	_, err = h.Service.UpdateScheduledMessage(ctx, alice.Caller, chat.UpdateScheduledMessageRequest{ScheduledMessageID: id, Content: ptr("x")})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Scheduled message does not exist")

	h.Clock.Advance(2 * time.Minute)
	assert.Equal(t, 1, deliverDue(t, h), "bob's only")
	var contents []string
	for _, m := range directMessages(t, h, bob) {
		contents = append(contents, m.Content)
	}
	assert.Equal(t, []string{"kept"}, contents)
}
