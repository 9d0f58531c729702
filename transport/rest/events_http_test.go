package rest_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
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
	time.Sleep(50 * time.Millisecond)
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

	time.Sleep(100 * time.Millisecond)
	got = e.do(t, request{method: "GET", path: "/api/v1/events", user: &bob, params: url.Values{"queue_id": {queue}, "last_event_id": {"0"}, "dont_block": {"true"}}}).ok(t, "GET", "/events")
	evs = got.body["events"].([]any)
	require.Len(t, evs, 1, "typing_edit_message is not among the registered event types: %v", evs)
	assert.Equal(t, "typing", evs[0].(map[string]any)["type"])
	assert.NotContains(t, got.body, "queue_id")

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
