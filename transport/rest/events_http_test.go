package rest_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func TestEventsHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "Verona"}]`}, "principals": {fmt.Sprintf("[%d, %d]", alice.ID, bob.ID)}}}).ok(t, "POST", "/users/me/subscriptions")

	// Register with every kind of parameter as a client sends them.
	r := e.do(t, request{method: "POST", path: "/api/v1/register", user: &bob, params: url.Values{
		"apply_markdown":      {"true"},
		"client_gravatar":     {"false"},
		"event_types":         {`["message", "typing", "subscription"]`},
		"narrow":              {`[["channel", "Verona"]]`},
		"client_capabilities": {`{"notification_settings_null": true, "bulk_message_deletion": true, "stream_typing_notifications": true}`},
		"queue_lifespan_secs": {"900"},
	}}).ok(t, "POST", "/register")
	queue := r.body["queue_id"].(string)
	assert.EqualValues(t, -1, r.body["last_event_id"])
	assert.Contains(t, r.body, "subscriptions")
	assert.Contains(t, r.body, "max_message_id")
	assert.NotContains(t, r.body, "unread_msgs", "unread_msgs needs update_message_flags too")
	assert.NotContains(t, r.body, "realm_user_groups", "fetch_event_types falls back to event_types")

	// A long poll completes when the message arrives, with the queue ID.
	done := make(chan response, 1)
	go func() {
		done <- e.do(t, request{method: "GET", path: "/api/v1/events", user: &bob, params: url.Values{"queue_id": {queue}, "last_event_id": {"-1"}}})
	}()
	require.Eventually(t, func() bool { return e.Service.EventQueueStats().Waiting == 1 }, 10*time.Second, time.Millisecond, "the poll waits")
	e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {"t"}, "content": {"**hi**"}, "queue_id": {"other"}, "local_id": {"1.5"}}}).ok(t, "POST", "/messages")
	var got response
	select {
	case got = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the long poll did not complete")
	}
	got.ok(t, "GET", "/events")
	assert.Equal(t, queue, got.body["queue_id"])
	evs := got.body["events"].([]any)
	require.Len(t, evs, 1)
	msg := evs[0].(map[string]any)["message"].(map[string]any)
	assert.Equal(t, "<p><strong>hi</strong></p>", msg["content"])
	assert.NotNil(t, msg["avatar_url"])
	assert.NotContains(t, evs[0], "local_message_id", "only the sender's queue gets it")

	// Typing, both kinds.
	e.do(t, request{method: "POST", path: "/api/v1/typing", user: &alice, params: url.Values{"op": {"start"}, "to": {fmt.Sprintf("[%d]", bob.ID)}}}).ok(t, "POST", "/typing")
	r = e.do(t, request{method: "GET", path: "/api/v1/messages", user: &alice, params: url.Values{"anchor": {"newest"}, "num_before": {"1"}, "num_after": {"0"}}})
	last := int64(r.body["messages"].([]any)[0].(map[string]any)["id"].(float64))
	e.do(t, request{method: "POST", path: fmt.Sprintf("/api/v1/messages/%d/typing", last), user: &alice, params: url.Values{"op": {"stop"}}}).ok(t, "POST", "/messages/{message_id}/typing")
	e.do(t, request{method: "POST", path: "/api/v1/typing", user: &alice, params: url.Values{"op": {"start"}}}).fails(t, 400, chat.CodeBadRequest, "Missing 'to' argument")
	e.do(t, request{method: "POST", path: "/api/v1/typing", user: &alice, params: url.Values{"op": {"start"}, "type": {"stream"}, "topic": {"x"}}}).
		fails(t, 400, chat.CodeBadRequest, "Missing 'stream_id' argument")

	// A marker sent after them through the same path: when it arrives,
	// everything before it has.
	e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {"t"}, "content": {"marker"}}}).ok(t, "POST", "/messages")
	before, last := untilMessage(t, e, &bob, queue, 0, "<p>marker</p>")
	require.Len(t, before, 1, "typing_edit_message is not among the registered event types: %v", before)
	assert.Equal(t, "typing", before[0]["type"])
	got = e.do(t, request{method: "GET", path: "/api/v1/events", user: &bob, params: url.Values{"queue_id": {queue}, "last_event_id": {fmt.Sprint(last)}, "dont_block": {"true"}}}).ok(t, "GET", "/events")
	assert.Empty(t, got.body["events"])
	assert.NotContains(t, got.body, "queue_id", "an immediate answer does not repeat the queue ID")

	// Errors.
	e.do(t, request{method: "GET", path: "/api/v1/events", user: &bob, params: url.Values{"last_event_id": {"-1"}}}).
		fails(t, 400, chat.CodeBadRequest, "Missing 'queue_id' argument")
	e.do(t, request{method: "GET", path: "/api/v1/events", user: &bob, params: url.Values{"queue_id": {queue}}}).
		fails(t, 400, chat.CodeBadRequest, "Missing 'last_event_id' argument")
	bad := e.do(t, request{method: "GET", path: "/api/v1/events", user: &alice, params: url.Values{"queue_id": {queue}, "last_event_id": {"-1"}}}).
		failsAs(t, "GET", "/events", 400, chat.CodeBadEventQueueID, "Bad event queue ID: "+queue)
	assert.Equal(t, queue, bad.body["queue_id"])
	e.do(t, request{method: "POST", path: "/api/v1/register", user: &bob, params: url.Values{"client_capabilities": {`{"bulk_message_deletion": true}`}}}).
		fails(t, 400, chat.CodeBadRequest, `client_capabilities["notification_settings_null"] field is missing: Field required`)
	e.do(t, request{method: "POST", path: "/api/v1/register", user: &bob, params: url.Values{"narrow": {`[["search", "x"]]`}}}).
		fails(t, 400, chat.CodeBadRequest, "Operator search not supported.")

	// zulip-js's callOnEachEvent sends event_types null for "all".
	r = e.do(t, request{method: "POST", path: "/api/v1/register", user: &bob, params: url.Values{"event_types": {"null"}}}).ok(t, "POST", "/register")
	assert.Contains(t, r.body, "realm_users")

	// A queue made by GET /events with dont_block, then deleted.
	got = e.do(t, request{method: "GET", path: "/api/v1/events", user: &alice, params: url.Values{"dont_block": {"true"}}}).ok(t, "GET", "/events")
	q2 := got.body["queue_id"].(string)
	e.do(t, request{method: "DELETE", path: "/api/v1/events", user: &bob, params: url.Values{"queue_id": {q2}}}).fails(t, 400, chat.CodeBadEventQueueID, "Bad event queue ID: "+q2)
	e.do(t, request{method: "DELETE", path: "/api/v1/events", user: &alice, params: url.Values{"queue_id": {q2}}}).ok(t, "DELETE", "/events")
	e.do(t, request{method: "DELETE", path: "/api/v1/events", user: &alice}).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'queue_id' argument")
	e.do(t, request{method: "GET", path: "/api/v1/events", user: &alice, params: url.Values{"queue_id": {q2}, "last_event_id": {"-1"}}}).
		fails(t, 400, chat.CodeBadEventQueueID, "Bad event queue ID: "+q2)
}

// untilMessage long-polls the queue from after event last until a message
// event with that rendered content arrives; it returns the events before
// it, and its ID (every earlier event is acknowledged).
func untilMessage(t *testing.T, e *env, u *chattest.User, queue string, last int64, content string) ([]map[string]any, int64) {
	t.Helper()
	var before []map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		got := e.do(t, request{method: "GET", path: "/api/v1/events", user: u,
			params: url.Values{"queue_id": {queue}, "last_event_id": {fmt.Sprint(last)}}}).ok(t, "GET", "/events")
		for _, ev := range got.body["events"].([]any) {
			m := ev.(map[string]any)
			last = int64(m["id"].(float64))
			if msg, ok := m["message"].(map[string]any); ok && msg["content"] == content {
				return before, last
			}
			before = append(before, m)
		}
	}
	t.Fatalf("no message %q arrived", content)
	return nil, 0
}
