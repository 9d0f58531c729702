package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/schemacheck"
)

// client is a registered event queue, polled like a real client does.
type client struct {
	t     *testing.T
	h     *chattest.Harness
	svc   *chat.Service
	as    chattest.User
	queue string
	last  int64
	state map[string]any
}

func register(t *testing.T, h *chattest.Harness, as chattest.User, req chat.RegisterRequest) *client {
	t.Helper()
	return registerOn(t, h, h.Service, as, req)
}

func registerOn(t *testing.T, h *chattest.Harness, svc *chat.Service, as chattest.User, req chat.RegisterRequest) *client {
	t.Helper()
	resp, err := svc.Register(context.Background(), as.Caller, req)
	require.NoError(t, err)
	checkSchema(t, "POST", "/register", resp)
	raw, err := json.Marshal(resp)
	require.NoError(t, err)
	var state map[string]any
	require.NoError(t, json.Unmarshal(raw, &state))
	assert.Equal(t, resp.QueueID, state["queue_id"])
	assert.EqualValues(t, -1, state["last_event_id"])
	return &client{t: t, h: h, svc: svc, as: as, queue: resp.QueueID, last: resp.LastEventID, state: state}
}

// event is one event a client received.
type event map[string]any

func (e event) typ() string { s, _ := e["type"].(string); return s }
func (e event) op() string  { s, _ := e["op"].(string); return s }

// poll returns the events waiting (dont_block), schema-checked, and
// acknowledges them.
func (c *client) poll() []event {
	c.t.Helper()
	return c.get(true)
}

// wait long-polls until events arrive.
func (c *client) wait() []event {
	c.t.Helper()
	return c.get(false)
}

func (c *client) get(dontBlock bool) []event {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.svc.GetEvents(ctx, c.as.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: &c.last, DontBlock: &dontBlock})
	require.NoError(c.t, err)
	out := make([]event, len(resp.Events))
	checked := make([]event, len(resp.Events))
	for i, raw := range resp.Events {
		require.NoError(c.t, json.Unmarshal(raw, &out[i]))
		require.NoError(c.t, json.Unmarshal(raw, &checked[i]))
		// The reference sends local_message_id to the sender's queue
		// (facts §2.4) but its schema does not list it.
		delete(checked[i], "local_message_id")
	}
	body, err := json.Marshal(map[string]any{"result": "success", "msg": "", "events": checked, "queue_id": c.queue})
	require.NoError(c.t, err)
	schemacheck.Check(c.t, "GET", "/events", 200, body)
	for i := range out {
		id := int64(out[i]["id"].(float64))
		require.Greater(c.t, id, c.last, "event IDs increase")
		c.last = id
	}
	return out
}

// settle returns the queue's events once every write committed so far has
// been delivered to it: a marker sent through the event bus after those
// writes has come back (chat.AwaitEventDelivery). What it returns is then
// all those writes will ever give this client, so an empty answer proves
// that they gave it nothing.
func (c *client) settle() []event {
	c.t.Helper()
	require.NoError(c.t, chat.AwaitEventDelivery(c.svc, c.as.Caller.RealmID))
	return c.poll()
}

// awaitWaiting returns once n long polls of svc wait for events.
func awaitWaiting(t *testing.T, svc *chat.Service, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return svc.EventQueueStats().Waiting >= n }, 10*time.Second, time.Millisecond,
		"%d long polls waiting", n)
}

func types(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.typ()
		if op := e.op(); op != "" {
			out[i] += "/" + op
		}
	}
	return out
}

func TestRegisterAndPollMessage(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "design", false)
	subscribe(t, h, alice, "design", bob.ID)

	a := register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{ApplyMarkdown: ptr(true)}})
	b := register(t, h, bob, chat.RegisterRequest{})
	for _, k := range []string{"realm_users", "subscriptions", "streams", "unread_msgs", "max_message_id", "realm_user_groups",
		"user_settings", "user_topics", "drafts", "custom_profile_fields", "realm_emoji", "realm_name", "max_message_length",
		"server_typing_started_wait_period_milliseconds", "realm_empty_topic_display_name", "service_feature_level",
		"starred_messages", "recent_private_conversations", "realm_bots", "never_subscribed", "realm_non_active_users"} {
		assert.Contains(t, a.state, k)
	}
	assert.Empty(t, a.poll())

	// Bob waits; Alice's message ends his wait.
	got := make(chan []event, 1)
	go func() { got <- b.wait() }()
	awaitWaiting(t, h.Service, 1)
	msgID := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("lunch"), Content: "Hello **team**"})
	var evs []event
	select {
	case evs = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the long poll did not return")
	}
	require.Equal(t, []string{"message"}, types(evs))
	m := evs[0]["message"].(map[string]any)
	assert.EqualValues(t, msgID, m["id"])
	assert.Equal(t, "Hello **team**", m["content"], "apply_markdown defaults to false on register")
	assert.Equal(t, "text/x-markdown", m["content_type"])
	assert.Nil(t, m["avatar_url"], "client_gravatar defaults to true")
	assert.Equal(t, []any{}, evs[0]["flags"])

	evs = a.settle()
	require.Equal(t, []string{"user_topic", "message"}, types(evs), "sending follows the topic (the sender's default)")
	m = evs[1]["message"].(map[string]any)
	assert.Equal(t, "<p>Hello <strong>team</strong></p>", m["content"])
	assert.Equal(t, "text/html", m["content_type"])
	assert.Equal(t, []any{}, evs[1]["flags"], "an API client does not mark its own message read")
}

func TestGetEventsErrors(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	a := register(t, h, alice, chat.RegisterRequest{})

	_, err := h.Service.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{LastEventID: ptr(int64(-1))})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Missing 'queue_id' argument")
	_, err = h.Service.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{QueueID: &a.queue})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Missing 'last_event_id' argument")
	e := requireError(t, func() error {
		_, err := h.Service.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{QueueID: ptr("nope"), LastEventID: ptr(int64(-1))})
		return err
	}(), chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: nope")
	assert.Equal(t, "nope", e.Fields["queue_id"])
	_, err = h.Service.GetEvents(ctx, bob.Caller, chat.GetEventsRequest{QueueID: &a.queue, LastEventID: ptr(int64(-1)), DontBlock: ptr(true)})
	requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+a.queue)

	// Three events, then acknowledge the first.
	for _, name := range []string{"one", "two", "three"} {
		_, err := h.Service.CreateDrafts(ctx, alice.Caller, chat.CreateDraftsRequest{Drafts: []chat.DraftInput{{Type: ptr(""), To: &[]int64{}, Topic: ptr(""), Content: ptr(name)}}})
		require.NoError(t, err)
	}
	require.NoError(t, chat.AwaitEventDelivery(h.Service, h.RealmID))
	all, err := h.Service.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{QueueID: &a.queue, LastEventID: ptr(int64(-1)), DontBlock: ptr(true)})
	require.NoError(t, err)
	require.Len(t, all.Events, 3)
	var ev0 event
	require.NoError(t, json.Unmarshal(all.Events[0], &ev0))
	first := int64(ev0["id"].(float64))
	resp, err := h.Service.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{QueueID: &a.queue, LastEventID: &first, DontBlock: ptr(true)})
	require.NoError(t, err)
	assert.Len(t, resp.Events, 2, "events up to last_event_id are pruned")
	assert.Nil(t, resp.QueueID, "an immediate answer does not repeat the queue ID")
	_, err = h.Service.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{QueueID: &a.queue, LastEventID: ptr(int64(-1)), DontBlock: ptr(true)})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "An event newer than -1 has already been pruned!")
	_, err = h.Service.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{QueueID: &a.queue, LastEventID: ptr(first + 100), DontBlock: ptr(true)})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, fmt.Sprintf("Event %d was not in this queue", first+100))

	// DELETE /events.
	_, err = h.Service.DeleteEvents(ctx, bob.Caller, chat.DeleteEventsRequest{QueueID: &a.queue})
	requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+a.queue)
	_, err = h.Service.DeleteEvents(ctx, alice.Caller, chat.DeleteEventsRequest{})
	requireError(t, err, chat.KindInvalid, chat.CodeRequestVariableMissing, "Missing 'queue_id' argument")
	_, err = h.Service.DeleteEvents(ctx, alice.Caller, chat.DeleteEventsRequest{QueueID: &a.queue})
	require.NoError(t, err)
	_, err = h.Service.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{QueueID: &a.queue, LastEventID: ptr(int64(-1)), DontBlock: ptr(true)})
	requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+a.queue)
	_, err = h.Service.DeleteEvents(ctx, alice.Caller, chat.DeleteEventsRequest{QueueID: &a.queue})
	requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+a.queue)
}

func TestGetEventsCreatesQueueWithDontBlock(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	resp, err := h.Service.GetEvents(ctx, h.Owner.Caller, chat.GetEventsRequest{DontBlock: ptr(true),
		QueueParams: chat.QueueParams{EventTypes: &[]string{"drafts"}}})
	require.NoError(t, err)
	require.NotNil(t, resp.QueueID)
	assert.Empty(t, resp.Events)
	c := &client{t: t, h: h, svc: h.Service, as: h.Owner, queue: *resp.QueueID, last: -1}
	_, err = h.Service.CreateDrafts(ctx, h.Owner.Caller, chat.CreateDraftsRequest{Drafts: []chat.DraftInput{{Type: ptr(""), To: &[]int64{}, Topic: ptr(""), Content: ptr("x")}}})
	require.NoError(t, err)
	_, err = h.Service.UpdateSettings(ctx, h.Owner.Caller, chat.UpdateSettingsRequest{FullName: ptr("New Name")})
	require.NoError(t, err)
	assert.Equal(t, []string{"drafts/add"}, types(c.settle()), "event_types filters")
}

func TestLongPollSupersededHeartbeatAndCollection(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithQueueLimits(chat.QueueLimits{
		HeartbeatMin: 100 * time.Millisecond, HeartbeatMax: 150 * time.Millisecond})))
	a := register(t, h, h.Owner, chat.RegisterRequest{})

	// A newer poll ends the older one with no events.
	first := make(chan *chat.GetEventsResponse, 1)
	go func() {
		resp, err := h.Service.GetEvents(ctx, h.Owner.Caller, chat.GetEventsRequest{QueueID: &a.queue, LastEventID: &a.last})
		assert.NoError(t, err)
		first <- resp
	}()
	awaitWaiting(t, h.Service, 1)
	start := time.Now()
	evs := a.wait()
	select {
	case r := <-first:
		assert.Empty(t, r.Events)
		assert.Equal(t, &a.queue, r.QueueID)
	case <-time.After(time.Second):
		t.Fatal("the older poll was not ended")
	}
	// The newer one ends with a heartbeat.
	require.Equal(t, []string{"heartbeat"}, types(evs))
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)

	// A client that went away ends its poll with its context.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := h.Service.GetEvents(cctx, h.Owner.Caller, chat.GetEventsRequest{QueueID: &a.queue, LastEventID: &a.last})
	assert.ErrorIs(t, err, context.Canceled)

	// Idle queues are collected after 10 minutes, or their lifespan, of
	// the Service's clock.
	long := register(t, h, h.Owner, chat.RegisterRequest{QueueParams: chat.QueueParams{QueueLifespanSecs: ptr(3600)}})
	now := h.Clock.Now()
	assert.Equal(t, 0, h.Service.CollectIdleQueues(now.Add(9*time.Minute)))
	assert.Equal(t, 1, h.Service.CollectIdleQueues(now.Add(11*time.Minute)))
	_, err = h.Service.GetEvents(ctx, h.Owner.Caller, chat.GetEventsRequest{QueueID: &a.queue, LastEventID: &a.last, DontBlock: ptr(true)})
	requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+a.queue)
	assert.Empty(t, long.poll())
	assert.Equal(t, 1, h.Service.CollectIdleQueues(now.Add(61*time.Minute)))
}

func TestRegisterParameterErrors(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	guest := h.NewUser(t, chat.RoleGuest)
	_, err := h.Service.Register(ctx, guest.Caller, chat.RegisterRequest{QueueParams: chat.QueueParams{AllPublicStreams: ptr(true)}})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "User not authorized for this query")
	_, err = h.Service.Register(ctx, guest.Caller, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: &chat.ClientCapabilities{}}})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, `client_capabilities["notification_settings_null"] field is missing: Field required`)
	_, err = h.Service.Register(ctx, guest.Caller, chat.RegisterRequest{QueueParams: chat.QueueParams{Narrow: ptr(`[["search","x"]]`)}})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Operator search not supported.")
	assert.Equal(t, 0, h.Service.EventQueueStats().Queues, "a failed registration leaves no queue")

	c := register(t, h, guest, chat.RegisterRequest{FetchEventTypes: &[]string{"drafts"}})
	assert.Contains(t, c.state, "drafts")
	assert.NotContains(t, c.state, "realm_users")
	assert.NotContains(t, c.state, "subscriptions")
}

func TestRegisterStarredAndRecentConversations(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	m1 := send(t, h, bob, chat.SendMessageRequest{Type: "direct", To: ptr(fmt.Sprintf("[%d]", alice.ID)), Content: "one"})
	m2 := send(t, h, carol, chat.SendMessageRequest{Type: "direct", To: ptr(fmt.Sprintf("[%d,%d]", alice.ID, bob.ID)), Content: "two"})
	m3 := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: ptr(fmt.Sprintf("[%d]", alice.ID)), Content: "note to self"})
	_, err := h.Service.UpdateMessageFlags(ctx, alice.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{m2, m1}, Op: "add", Flag: "starred"})
	require.NoError(t, err)

	c := register(t, h, alice, chat.RegisterRequest{FetchEventTypes: &[]string{"starred_messages", "recent_private_conversations"}})
	assert.Equal(t, []any{float64(m1), float64(m2)}, c.state["starred_messages"])
	assert.Equal(t, []any{
		map[string]any{"max_message_id": float64(m3), "user_ids": []any{}},
		map[string]any{"max_message_id": float64(m2), "user_ids": []any{float64(bob.ID), float64(carol.ID)}},
		map[string]any{"max_message_id": float64(m1), "user_ids": []any{float64(bob.ID)}},
	}, c.state["recent_private_conversations"])
}

func TestRegisterOtherStateKeys(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	id := newChannel(t, h, "quiet", false)
	_, err := h.Service.UpdateUserTopic(ctx, h.Owner.Caller, chat.UpdateUserTopicRequest{StreamID: id, Topic: "noise", VisibilityPolicy: 1})
	require.NoError(t, err)
	_, err = h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "welcome"}}, IsDefaultStream: ptr(true)})
	require.NoError(t, err)

	all := register(t, h, h.Owner, chat.RegisterRequest{})
	for _, k := range []string{"realm_default_streams", "realm_user_settings_defaults", "stop_words", "realm_domains", "saved_snippets", "onboarding_steps"} {
		assert.Contains(t, all.state, k)
	}
	assert.NotContains(t, all.state, "muted_topics", "suppressed when user_topic is fetched too")
	welcome, err := h.Service.GetChannelID(ctx, h.Owner.Caller, chat.GetChannelIDRequest{Stream: "welcome"})
	require.NoError(t, err)
	assert.Equal(t, []any{float64(welcome.StreamID)}, all.state["realm_default_streams"])
	assert.Contains(t, all.state["stop_words"], "the")

	legacy := register(t, h, h.Owner, chat.RegisterRequest{FetchEventTypes: &[]string{"muted_topics"}})
	muted := legacy.state["muted_topics"].([]any)
	require.Len(t, muted, 1)
	assert.Equal(t, "quiet", muted[0].([]any)[0])
	assert.Equal(t, "noise", muted[0].([]any)[1])
}

// A merged flags event that went out (its answer may yet be lost) keeps
// its ID: later flag changes queue a new event, so the client's next poll,
// which acknowledges that ID, is answered (it was refused with "Event N
// was not in this queue" when the later change merged into it; found by
// the web client's browser tests).
func TestDeliveredFlagsEventKeepsItsID(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "flags", false)
	m1 := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "one"})
	m2 := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "two"})
	c := register(t, h, alice, chat.RegisterRequest{})
	c.settle()
	star := func(m int64) {
		_, err := h.Service.UpdateMessageFlags(ctx, alice.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{m}, Op: "add", Flag: "starred"})
		require.NoError(t, err)
	}
	// peek answers a poll without acknowledging anything (c.last stays).
	peek := func(n int) []event {
		t.Helper()
		var evs []event
		require.Eventually(t, func() bool {
			yes := true
			resp, err := h.Service.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: &c.last, DontBlock: &yes})
			require.NoError(t, err)
			evs = make([]event, len(resp.Events))
			for i, raw := range resp.Events {
				require.NoError(t, json.Unmarshal(raw, &evs[i]))
			}
			return len(evs) >= n
		}, 5*time.Second, 5*time.Millisecond)
		return evs
	}
	star(m1)
	delivered := peek(1)
	require.Equal(t, []string{"update_message_flags/add"}, types(delivered))
	star(m2)
	again := peek(2)
	require.Len(t, again, 2, "the delivered event stays as it was; the new change is a new event")
	assert.Equal(t, delivered[0], again[0])
	assert.Equal(t, []any{float64(m2)}, again[1]["messages"])

	// The next poll acknowledges the delivered event's ID.
	c.last = int64(delivered[0]["id"].(float64))
	evs := c.poll()
	require.Equal(t, []string{"update_message_flags/add"}, types(evs))
	assert.Equal(t, []any{float64(m2)}, evs[0]["messages"])
}

// A long poll whose queue is deleted while it waits ends as the reference
// ends it: successfully, with the events the queue held (none here).
func TestDeleteQueueEndsWaitingPoll(t *testing.T) {
	h := chattest.New(t)
	bob := h.NewUser(t, chat.RoleMember)
	c := register(t, h, bob, chat.RegisterRequest{})
	done := make(chan error, 1)
	var resp *chat.GetEventsResponse
	go func() {
		var err error
		resp, err = h.Service.GetEvents(context.Background(), bob.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: &c.last})
		done <- err
	}()
	awaitWaiting(t, h.Service, 1)
	_, err := h.Service.DeleteEvents(context.Background(), bob.Caller, chat.DeleteEventsRequest{QueueID: &c.queue})
	require.NoError(t, err)
	require.NoError(t, <-done)
	assert.Empty(t, resp.Events)
	_, err = h.Service.GetEvents(context.Background(), bob.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: &c.last, DontBlock: ptr(true)})
	requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+c.queue)
}
