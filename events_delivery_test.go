package chat_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

func createDraft(t *testing.T, h *chattest.Harness, as chattest.User, content string) int64 {
	t.Helper()
	resp, err := h.Service.CreateDrafts(context.Background(), as.Caller, chat.CreateDraftsRequest{
		Drafts: []chat.DraftInput{{Type: ptr(""), To: &[]int64{}, Topic: ptr(""), Content: ptr(content)}}})
	require.NoError(t, err)
	return resp.IDs[0]
}

// Registration and the queue are atomic: while drafts are being created,
// each registration's state plus the events its queue then receives name
// every draft exactly once.
func TestRegisterIsAtomicWithConcurrentWrites(t *testing.T) {
	h := chattest.New(t)
	var stop atomic.Bool
	var made []int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load() && i < 400; i++ {
			made = append(made, createDraft(t, h, h.Owner, "draft"))
			time.Sleep(time.Millisecond)
		}
	}()
	var clients []*client
	for range 8 {
		clients = append(clients, register(t, h, h.Owner, chat.RegisterRequest{FetchEventTypes: &[]string{"drafts"},
			QueueParams: chat.QueueParams{EventTypes: &[]string{"drafts"}}}))
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	require.NotEmpty(t, made)
	for i, c := range clients {
		seen := map[int64]int{}
		for _, d := range c.state["drafts"].([]any) {
			seen[int64(d.(map[string]any)["id"].(float64))]++
		}
		inState := len(seen)
		// Delivery is asynchronous: settle waits until every draft's
		// event was delivered.
		for _, e := range c.settle() {
			for _, d := range e["drafts"].([]any) {
				seen[int64(d.(map[string]any)["id"].(float64))]++
			}
		}
		for _, id := range made {
			assert.Equal(t, 1, seen[id], "client %d (state had %d drafts): draft %d seen once", i, inState, id)
		}
		assert.Len(t, seen, len(made))
	}
}

// A private channel's events reach its subscribers only; a user who joins
// starts receiving its messages, and stops when they leave.
func TestPrivateChannelEventsReachSubscribersOnly(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "secret", true)
	a := register(t, h, alice, chat.RegisterRequest{})
	b := register(t, h, bob, chat.RegisterRequest{})
	o := register(t, h, h.Owner, chat.RegisterRequest{})

	send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "one"})
	_, err := h.Service.UpdateChannel(ctx, alice.Caller, chat.UpdateChannelRequest{StreamID: id, Description: ptr("new")})
	require.NoError(t, err)
	assert.Contains(t, types(a.settle()), "message")
	assert.Empty(t, b.settle(), "a non-subscriber hears nothing of a private channel")
	assert.Equal(t, []string{"stream/update"}, types(o.settle()), "an administrator sees the channel's metadata, not its messages")

	// Bob joins: he is told, then gets the next message.
	subscribe(t, h, alice, "secret", bob.ID)
	evs := b.settle()
	assert.Contains(t, types(evs), "subscription/add")
	send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "two"})
	assert.Equal(t, []string{"message"}, types(b.settle()))

	// He leaves: no more messages.
	_, err = h.Service.Unsubscribe(ctx, bob.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"secret"}})
	require.NoError(t, err)
	assert.Contains(t, types(b.settle()), "subscription/remove")
	send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "three"})
	assert.Empty(t, b.settle())

	// A direct message reaches its participants only.
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: ptr("[" + itoa(bob.ID) + "]"), Content: "hi"})
	c := register(t, h, carol, chat.RegisterRequest{})
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: ptr("[" + itoa(bob.ID) + "]"), Content: "hi again"})
	assert.Contains(t, types(b.settle()), "message")
	assert.Empty(t, c.settle())
}

// A deactivated user's queues are dropped.
func TestDeactivationDropsQueues(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	bob := h.NewUser(t, chat.RoleMember)
	b := register(t, h, bob, chat.RegisterRequest{})
	_, err := h.Service.DeactivateUser(ctx, h.Owner.Caller, chat.DeactivateUserRequest{UserID: bob.ID})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return h.Service.EventQueueStats().Queues == 0 }, 2*time.Second, 10*time.Millisecond)
	_, err = h.Service.GetEvents(ctx, bob.Caller, chat.GetEventsRequest{QueueID: &b.queue, LastEventID: ptr(int64(-1))})
	require.Error(t, err)
}

// Per-queue forms: bulk_message_deletion, user_settings_object,
// update_message_flags compression.
func TestQueueForms(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "forms", false)
	caps := &chat.ClientCapabilities{NotificationSettingsNull: ptr(false), BulkMessageDeletion: true, UserSettingsObject: true}
	modern := register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: caps}})
	legacy := register(t, h, alice, chat.RegisterRequest{})
	assert.Contains(t, legacy.state, "twenty_four_hour_time", "without user_settings_object the settings are top-level too")
	assert.NotContains(t, modern.state, "twenty_four_hour_time")

	m1 := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "one"})
	m2 := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "two"})
	modern.settle()
	legacy.settle()

	// Two starrings while undelivered become one event.
	for _, m := range []int64{m1, m2} {
		_, err := h.Service.UpdateMessageFlags(ctx, alice.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{m}, Op: "add", Flag: "starred"})
		require.NoError(t, err)
	}
	_, err := h.Service.DeleteMessage(ctx, h.Owner.Caller, chat.DeleteMessageRequest{MessageID: m1})
	require.NoError(t, err)
	_, err = h.Service.UpdateSettings(ctx, alice.Caller, chat.UpdateSettingsRequest{SettingsPatch: chat.SettingsPatch{TwentyFourHourTime: ptr(true)}})
	require.NoError(t, err)

	evs := modern.settle()
	// (The channel's first message changes with the deletion.)
	require.Equal(t, []string{"update_message_flags/add", "stream/update", "delete_message", "user_settings/update"}, types(evs))
	assert.Equal(t, []any{float64(m1), float64(m2)}, evs[0]["messages"])
	assert.Equal(t, []any{float64(m1)}, evs[2]["message_ids"])
	evs = legacy.poll()
	require.Equal(t, []string{"update_message_flags/add", "stream/update", "delete_message", "user_settings/update", "update_display_settings"}, types(evs))
	assert.Equal(t, float64(m1), evs[2]["message_id"])
	assert.NotContains(t, evs[2], "message_ids")
}

func TestTyping(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	quiet := h.NewUser(t, chat.RoleMember)
	_, err := h.Service.UpdateSettings(ctx, quiet.Caller, chat.UpdateSettingsRequest{SettingsPatch: chat.SettingsPatch{ReceivesTypingNotifications: ptr(false)}})
	require.NoError(t, err)
	id := newChannelBy(t, h, alice, "typing", false)
	subscribe(t, h, alice, "typing", bob.ID, quiet.ID)
	streamCaps := &chat.ClientCapabilities{NotificationSettingsNull: ptr(false), StreamTypingNotifications: true}
	b := register(t, h, bob, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: streamCaps}})
	bOld := register(t, h, bob, chat.RegisterRequest{})
	q := register(t, h, quiet, chat.RegisterRequest{})

	_, err = h.Service.SetTyping(ctx, alice.Caller, chat.TypingRequest{Op: "start", To: &[]int64{bob.ID, quiet.ID}})
	require.NoError(t, err)
	evs := b.settle()
	require.Equal(t, []string{"typing/start"}, types(evs))
	assert.Equal(t, "direct", evs[0]["message_type"])
	assert.Equal(t, float64(alice.ID), evs[0]["sender"].(map[string]any)["user_id"])
	assert.Len(t, evs[0]["recipients"], 3, "the recipients include the sender")
	assert.Equal(t, []string{"typing/start"}, types(bOld.settle()))
	assert.Empty(t, q.settle(), "receives_typing_notifications off")

	_, err = h.Service.SetTyping(ctx, alice.Caller, chat.TypingRequest{Type: ptr("channel"), Op: "stop", StreamID: &id, Topic: ptr("lunch")})
	require.NoError(t, err)
	evs = b.settle()
	require.Equal(t, []string{"typing/stop"}, types(evs))
	assert.Equal(t, "stream", evs[0]["message_type"])
	assert.Equal(t, "lunch", evs[0]["topic"])
	assert.Empty(t, bOld.settle(), "channel typing needs the stream_typing_notifications capability")

	msg := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: ptr("[" + itoa(bob.ID) + "]"), Content: "hi"})
	b.settle()
	_, err = h.Service.SetEditTyping(ctx, alice.Caller, chat.TypingEditRequest{MessageID: msg, Op: "start"})
	require.NoError(t, err)
	evs = b.settle()
	require.Equal(t, []string{"typing_edit_message/start"}, types(evs))
	assert.Equal(t, "direct", evs[0]["recipient"].(map[string]any)["type"])

	for _, c := range []struct {
		req  chat.TypingRequest
		code string
		msg  string
		kind chat.Kind
	}{
		{chat.TypingRequest{Op: "start"}, chat.CodeBadRequest, "Missing 'to' argument", 0},
		{chat.TypingRequest{Op: "start", To: &[]int64{}}, chat.CodeBadRequest, "Empty 'to' list", 0},
		{chat.TypingRequest{Op: "start", To: &[]int64{999999}}, chat.CodeBadRequest, "Invalid user ID 999999", chat.KindNotFound},
		{chat.TypingRequest{Type: ptr("stream"), Op: "start", Topic: ptr("x")}, chat.CodeBadRequest, "Missing 'stream_id' argument", 0},
		{chat.TypingRequest{Type: ptr("stream"), Op: "start", StreamID: &id}, chat.CodeBadRequest, "Missing topic", 0},
		{chat.TypingRequest{Type: ptr("stream"), Op: "start", StreamID: ptr(int64(999999)), Topic: ptr("x")}, chat.CodeBadRequest, "Invalid channel ID", chat.KindNotFound},
		{chat.TypingRequest{To: &[]int64{bob.ID}}, chat.CodeRequestVariableMissing, "Missing 'op' argument", 0},
	} {
		_, err := h.Service.SetTyping(ctx, alice.Caller, c.req)
		requireError(t, err, orInvalid(c.kind), c.code, c.msg)
	}
	_, err = h.Service.SetEditTyping(ctx, quiet.Caller, chat.TypingEditRequest{MessageID: msg, Op: "start"})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
}

// A queue that falls behind its bound is dropped; its client re-registers.
func TestQueueDroppedWhenBehind(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithQueueLimits(chat.QueueLimits{MaxQueueEvents: 3})))
	c := register(t, h, h.Owner, chat.RegisterRequest{})
	for range 4 {
		createDraft(t, h, h.Owner, "x")
	}
	require.Eventually(t, func() bool { return h.Service.EventQueueStats().Queues == 0 }, 2*time.Second, 10*time.Millisecond)
	_, err := h.Service.GetEvents(ctx, h.Owner.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: ptr(int64(-1))})
	requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+c.queue)
}

// Two Services on one PostgreSQL database deliver each other's events and
// refresh each other's caches through the event bus.
func TestTwoServersOnePostgres(t *testing.T) {
	chattest.SkipStoreRerun(t)
	dsn, schema := bunstore.NewTestPostgresSchema(t)
	open := func(t testing.TB) *bunstore.Store {
		st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	st1, st2 := open(t), open(t)
	h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return st1 }))
	other := chat.New(st2)
	t.Cleanup(func() { _ = other.Close() })
	ctx := context.Background()
	go func() { _ = other.Run(t.Context()) }()

	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "shared", false)
	subscribe(t, h, alice, "shared", bob.ID)
	b := registerOn(t, h, other, bob, chat.RegisterRequest{})
	for i := range 5 {
		send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "n" + itoa(int64(i))})
	}
	var contents []string
	require.Eventually(t, func() bool {
		for _, e := range b.poll() {
			if e.typ() == "message" {
				contents = append(contents, e["message"].(map[string]any)["content"].(string))
			}
		}
		return len(contents) == 5
	}, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"n0", "n1", "n2", "n3", "n4"}, contents, "in commit order")

	// A message cached on the other server is forgotten there when it is
	// edited here.
	msg := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "before"})
	read := func() string {
		r, err := other.GetMessages(ctx, bob.Caller, chat.GetMessagesRequest{MessageIDs: &[]int64{msg}, ApplyMarkdown: ptr(false)})
		require.NoError(t, err)
		require.Len(t, r.Messages, 1)
		return r.Messages[0].Content
	}
	require.Equal(t, "before", read())
	_, err := h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: msg, Content: ptr("after")})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return read() == "after" }, 2*time.Second, 5*time.Millisecond)

	// Bob's account is cached on the other server; deactivating him here
	// reaches it through the bus, well before the cache would expire.
	_, err = other.GetOwnUser(ctx, bob.Caller)
	require.NoError(t, err)
	start := time.Now()
	_, err = h.Service.DeactivateUser(ctx, h.Owner.Caller, chat.DeactivateUserRequest{UserID: bob.ID})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := other.GetOwnUser(ctx, bob.Caller)
		return err != nil
	}, 2*time.Second, 5*time.Millisecond)
	assert.Less(t, time.Since(start), 2*time.Second)
}

// Clients without the empty_topic_name capability see the empty topic as
// "general chat" in every event; those with it see "".
func TestEmptyTopicInEvents(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "topics", false)
	caps := &chat.ClientCapabilities{NotificationSettingsNull: ptr(false), EmptyTopicName: true, BulkMessageDeletion: true}
	modern := register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: caps}})
	legacy := register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{
		ClientCapabilities: &chat.ClientCapabilities{NotificationSettingsNull: ptr(false), BulkMessageDeletion: true}}})

	m := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr(""), Content: "x"})
	_, err := h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: m, Topic: ptr("named")})
	require.NoError(t, err)
	_, err = h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: m, Topic: ptr("")})
	require.NoError(t, err)
	_, err = h.Service.UpdateUserTopic(ctx, alice.Caller, chat.UpdateUserTopicRequest{StreamID: id, Topic: "", VisibilityPolicy: 1})
	require.NoError(t, err)
	_, err = h.Service.DeleteMessage(ctx, alice.Caller, chat.DeleteMessageRequest{MessageID: m})
	require.NoError(t, err)

	topics := func(evs []event) []string {
		var out []string
		for _, e := range evs {
			switch e.typ() {
			case "message":
				out = append(out, "message:"+e["message"].(map[string]any)["subject"].(string))
			case "update_message":
				out = append(out, "update:"+e["orig_subject"].(string)+">"+e["subject"].(string))
			case "user_topic":
				out = append(out, "user_topic:"+e["topic_name"].(string))
			case "delete_message":
				out = append(out, "delete:"+e["topic"].(string))
			}
		}
		return out
	}
	got := topics(modern.settle())
	for _, want := range []string{"message:", "user_topic:", "update:>named", "update:named>", "delete:"} {
		assert.Contains(t, got, want)
	}
	// The same events, with the empty topic displayed.
	var display []string
	for _, s := range got {
		s = strings.Replace(s, ":>", ":general chat>", 1)
		if strings.HasSuffix(s, ":") || strings.HasSuffix(s, ">") {
			s += "general chat"
		}
		display = append(display, s)
	}
	assert.Equal(t, display, topics(legacy.poll()))

	// And in the registration state.
	userTopics := func(c *client) []string {
		var out []string
		for _, ut := range c.state["user_topics"].([]any) {
			out = append(out, ut.(map[string]any)["topic_name"].(string))
		}
		return out
	}
	assert.Contains(t, userTopics(register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: caps}})), "")
	assert.Contains(t, userTopics(register(t, h, alice, chat.RegisterRequest{})), "general chat")
}

// An upload tells its owner (attachment add, with the organization's
// upload total); a message linking it lists the message (update).
func TestAttachmentEvents(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	a := register(t, h, alice, chat.RegisterRequest{})
	b := register(t, h, bob, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"attachment"}}})
	url := upload(t, h, alice, "notes.txt", "text/plain", "hello there")
	evs := a.settle()
	require.Equal(t, []string{"attachment/add"}, types(evs))
	att := evs[0]["attachment"].(map[string]any)
	assert.Equal(t, "notes.txt", att["name"])
	assert.EqualValues(t, 11, att["size"])
	assert.Equal(t, []any{}, att["messages"])
	assert.EqualValues(t, 11, evs[0]["upload_space_used"])

	m := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: ptr(fmt.Sprintf("[%d]", bob.ID)), Content: "[notes](" + url + ")"})
	var update event
	for _, e := range a.settle() {
		if e.typ() == "attachment" {
			update = e
		}
	}
	require.NotNil(t, update)
	assert.Equal(t, "update", update.op())
	msgs := update["attachment"].(map[string]any)["messages"].([]any)
	require.Len(t, msgs, 1)
	assert.EqualValues(t, m, msgs[0].(map[string]any)["id"])
	assert.Empty(t, b.settle(), "only the owner hears of a file")
}

// A narrow filters message events only; all_public_streams receives every
// public channel's messages; the sender's queue gets local_message_id.
func TestNarrowAllPublicStreamsAndLocalID(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bot := h.NewUser(t, chat.RoleAdministrator)
	lunch := newChannelBy(t, h, alice, "lunch", false)
	work := newChannelBy(t, h, alice, "work", false)
	secret := newChannelBy(t, h, alice, "secret", true)
	narrowed := register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{Narrow: ptr(`[["channel", "LUNCH"], ["topic", "soup"]]`)}})
	starred := register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{Narrow: ptr(`[["is", "starred"]]`)}})
	all := register(t, h, bot, chat.RegisterRequest{QueueParams: chat.QueueParams{AllPublicStreams: ptr(true), EventTypes: &[]string{"message"}}})
	mine := register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message"}}})

	send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(lunch), Topic: ptr("Soup"), Content: "a"})
	send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(lunch), Topic: ptr("bread"), Content: "b"})
	send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(work), Topic: ptr("soup"), Content: "c"})
	send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(secret), Topic: ptr("soup"), Content: "d"})
	_, err := h.Service.SendMessage(context.Background(), alice.Caller, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(work),
		Topic: ptr("t"), Content: "e", QueueID: &mine.queue, LocalID: ptr("42.01")})
	require.NoError(t, err)

	contents := func(evs []event) []string {
		var out []string
		for _, e := range evs {
			if e.typ() == "message" {
				out = append(out, e["message"].(map[string]any)["content"].(string))
			}
		}
		return out
	}
	evs := narrowed.settle()
	assert.Equal(t, []string{"a"}, contents(evs), "channel and topic match without case")
	assert.Contains(t, types(evs), "user_topic", "other event types pass the narrow")
	assert.Empty(t, contents(starred.settle()))
	assert.Equal(t, []string{"a", "b", "c", "e"}, contents(all.settle()), "every public channel's messages, not the private one's")
	evs = mine.settle()
	require.Len(t, evs, 5)
	assert.Equal(t, "42.01", evs[4]["local_message_id"])
	assert.NotContains(t, evs[0], "local_message_id")
}

// Channel typing needs access to the channel's messages: an administrator
// who is not subscribed to a private channel may not (the reference's
// access_stream_by_id).
func TestChannelTypingNeedsContentAccess(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	admin := h.NewUser(t, chat.RoleAdministrator)
	id := newChannelBy(t, h, alice, "hush", true)
	_, err := h.Service.SetTyping(ctx, admin.Caller, chat.TypingRequest{Type: ptr("stream"), Op: "start", StreamID: &id, Topic: ptr("t")})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
	_, err = h.Service.SetTyping(ctx, alice.Caller, chat.TypingRequest{Type: ptr("stream"), Op: "start", StreamID: &id, Topic: ptr("t")})
	require.NoError(t, err)
}
