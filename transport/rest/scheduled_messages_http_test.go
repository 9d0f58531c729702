package rest_test

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func TestScheduledMessagesHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	guest := e.NewUser(t, chat.RoleGuest)
	_, err := e.Service.Subscribe(ctxBg, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "plans"}}})
	require.NoError(t, err)
	chID, err := e.Service.GetChannelID(ctxBg, alice.Caller, chat.GetChannelIDRequest{Stream: "plans"})
	require.NoError(t, err)
	ch := chID.StreamID
	const path = "/api/v1/scheduled_messages"
	due := e.Clock.Now().Add(time.Hour).Unix()
	post := func(u *chattest.User, params url.Values, header map[string]string) response {
		return e.do(t, request{method: "POST", path: path, user: u, params: params, header: header})
	}
	channelParams := func(content string) url.Values {
		return url.Values{"type": {"channel"}, "to": {fmt.Sprint(ch)}, "topic": {"launch"}, "content": {content},
			"scheduled_delivery_timestamp": {fmt.Sprint(due)}}
	}

	// Create (the client is the User-Agent's), list, register.
	r := post(&alice, channelParams("Ship **it**"), map[string]string{"User-Agent": "ZulipMobile/27.1 (Android)"}).
		ok(t, "POST", "/scheduled_messages")
	id := int64(r.body["scheduled_message_id"].(float64))
	require.NotZero(t, id)
	r = post(&alice, url.Values{"type": {"direct"}, "to": {fmt.Sprintf("[%d]", bob.ID)}, "content": {"psst"},
		"scheduled_delivery_timestamp": {fmt.Sprint(due - 60)}, "read_by_sender": {"false"}, "bogus": {"1"}}, nil).
		ok(t, "POST", "/scheduled_messages")
	dm := int64(r.body["scheduled_message_id"].(float64))
	assert.Equal(t, []any{"bogus"}, r.body["ignored_parameters_unsupported"])
	r = e.do(t, request{method: "GET", path: path, user: &alice}).ok(t, "GET", "/scheduled_messages")
	assert.Equal(t, []any{
		map[string]any{"scheduled_message_id": float64(dm), "type": "private", "to": []any{float64(bob.ID)}, "content": "psst",
			"rendered_content": "<p>psst</p>", "scheduled_delivery_timestamp": float64(due - 60), "failed": false},
		map[string]any{"scheduled_message_id": float64(id), "type": "stream", "to": float64(ch), "topic": "launch", "content": "Ship **it**",
			"rendered_content": "<p>Ship <strong>it</strong></p>", "scheduled_delivery_timestamp": float64(due), "failed": false},
	}, r.body["scheduled_messages"], "by delivery time")
	r = e.do(t, request{method: "GET", path: path, user: &bob}).ok(t, "GET", "/scheduled_messages")
	assert.Equal(t, []any{}, r.body["scheduled_messages"], "another user's are not listed")
	r = e.do(t, request{method: "POST", path: "/api/v1/register", user: &alice,
		params: url.Values{"fetch_event_types": {`["scheduled_messages"]`}}}).ok(t, "POST", "/register")
	assert.Len(t, r.body["scheduled_messages"], 2)

	// Missing parameters, in the reference's order, and malformed ones.
	full := channelParams("x")
	without := func(names ...string) url.Values {
		v := url.Values{}
		for k, vs := range full {
			if !slices.Contains(names, k) {
				v[k] = vs
			}
		}
		return v
	}
	with := func(k, val string) url.Values {
		v := without(k)
		v.Set(k, val)
		return v
	}
	post(&alice, url.Values{}, nil).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'content' argument")
	post(&alice, without("to", "type", "scheduled_delivery_timestamp"), nil).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'to' argument")
	post(&alice, without("type", "scheduled_delivery_timestamp"), nil).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'type' argument")
	post(&alice, without("scheduled_delivery_timestamp"), nil).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'scheduled_delivery_timestamp' argument")
	post(&alice, with("to", fmt.Sprintf(`["%s"]`, bob.Email)), nil).fails(t, 400, chat.CodeBadRequest, `to["int"] is not an integer`)
	post(&alice, with("to", `"plans"`), nil).fails(t, 400, chat.CodeBadRequest, `to["int"] is not an integer`)
	post(&alice, with("to", `[1, 2.5]`), nil).fails(t, 400, chat.CodeBadRequest, `to["int"] is not an integer`)
	post(&alice, with("to", `plans`), nil).fails(t, 400, chat.CodeBadRequest, "to is not valid JSON")
	post(&alice, with("scheduled_delivery_timestamp", "soon"), nil).fails(t, 400, chat.CodeBadRequest, "scheduled_delivery_timestamp is not an integer")
	post(&alice, with("read_by_sender", "perhaps"), nil).fails(t, 400, chat.CodeBadRequest, "read_by_sender is not a boolean")
	post(&alice, with("type", "huddle"), nil).fails(t, 400, chat.CodeBadRequest, "Invalid type")
	post(&alice, without("topic"), nil).fails(t, 400, chat.CodeBadRequest, "Missing topic")
	post(&alice, with("subject", "s"), nil).fails(t, 400, chat.CodeRequestConfusingVar, "Can't decide between 'topic' and 'subject' arguments")
	post(&alice, with("scheduled_delivery_timestamp", fmt.Sprint(e.Clock.Now().Unix())), nil).
		fails(t, 400, chat.CodeBadRequest, "Scheduled delivery time must be in the future.")
	post(&alice, with("to", fmt.Sprintf("[%d]", ch)), nil).fails(t, 400, chat.CodeBadRequest, "Invalid data type for channel ID")
	r = post(&alice, with("to", fmt.Sprint(ch+100)), nil).
		failsAs(t, "POST", "/scheduled_messages", 400, chat.CodeStreamDoesNotExist, fmt.Sprintf("Channel with ID '%d' does not exist", ch+100))
	assert.EqualValues(t, ch+100, r.body["stream_id"])
	post(&alice, url.Values{"type": {"private"}, "to": {fmt.Sprintf("[%d, 9999]", bob.ID)}, "content": {"x"},
		"scheduled_delivery_timestamp": {fmt.Sprint(due)}}, nil).failsAs(t, "POST", "/scheduled_messages", 400, chat.CodeBadRequest, "Invalid user ID 9999")
	post(&alice, url.Values{"type": {"direct"}, "to": {fmt.Sprint(bob.ID)}, "content": {"x"},
		"scheduled_delivery_timestamp": {fmt.Sprint(due)}}, nil).fails(t, 400, chat.CodeBadRequest, "Invalid data type for recipients")
	post(&guest, channelParams("x"), nil).fails(t, 400, chat.CodeBadRequest, "Not authorized to send to channel 'plans'")
	post(nil, channelParams("x"), nil).fails(t, 401, chat.CodeUnauthorized, "")

	// Edit.
	item := fmt.Sprintf("%s/%d", path, id)
	patch := func(u *chattest.User, target string, params url.Values) response {
		return e.do(t, request{method: "PATCH", path: target, user: u, params: params})
	}
	patch(&alice, item, url.Values{"content": {"Ship it *now*"}, "scheduled_delivery_timestamp": {fmt.Sprint(due + 60)}}).
		ok(t, "PATCH", "/scheduled_messages/{scheduled_message_id}")
	patch(&alice, item, url.Values{"topic": {"(no topic)"}}).ok(t, "PATCH", "/scheduled_messages/{scheduled_message_id}")
	patch(&alice, item, nil).fails(t, 400, chat.CodeBadRequest, "Nothing to change")
	patch(&alice, item, url.Values{"type": {"direct"}}).fails(t, 400, chat.CodeBadRequest, "Recipient required when updating type of scheduled message.")
	patch(&alice, item, url.Values{"type": {"stream"}, "to": {fmt.Sprint(ch)}}).
		fails(t, 400, chat.CodeBadRequest, "Topic required when updating scheduled message type to channel.")
	patch(&alice, item, url.Values{"to": {"[true]"}}).fails(t, 400, chat.CodeBadRequest, `to["int"] is not an integer`)
	patch(&alice, item, url.Values{"to": {fmt.Sprint(ch + 100)}}).
		failsAs(t, "PATCH", "/scheduled_messages/{scheduled_message_id}", 400, chat.CodeStreamDoesNotExist, "")
	patch(&alice, item, url.Values{"scheduled_delivery_timestamp": {"1"}}).
		fails(t, 400, chat.CodeBadRequest, "Scheduled delivery time must be in the future.")
	for _, tc := range []struct {
		u      *chattest.User
		target string
	}{{&bob, item}, {&alice, fmt.Sprintf("%s/%d", path, id+1000)}} {
		patch(tc.u, tc.target, url.Values{"content": {"x"}}).
			failsAs(t, "PATCH", "/scheduled_messages/{scheduled_message_id}", 404, chat.CodeBadRequest, "Scheduled message does not exist")
		e.do(t, request{method: "DELETE", path: tc.target, user: tc.u}).
			failsAs(t, "DELETE", "/scheduled_messages/{scheduled_message_id}", 404, chat.CodeBadRequest, "Scheduled message does not exist")
	}
	r = e.do(t, request{method: "GET", path: path, user: &alice}).ok(t, "GET", "/scheduled_messages")
	edited := r.body["scheduled_messages"].([]any)[1].(map[string]any)
	assert.Equal(t, "Ship it *now*", edited["content"])
	assert.Equal(t, "", edited["topic"], "the empty topic, as stored")
	assert.EqualValues(t, due+60, edited["scheduled_delivery_timestamp"])

	// Delete the direct one; deliver the other when due, as alice from the
	// edit's client (this test's Go client here).
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, dm), user: &alice}).
		ok(t, "DELETE", "/scheduled_messages/{scheduled_message_id}")
	e.Clock.Set(time.Unix(due+61, 0))
	n, err := e.Service.DeliverDueScheduledMessages(ctxBg)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	r = e.do(t, request{method: "GET", path: "/api/v1/messages", user: &alice, params: url.Values{"anchor": {"newest"},
		"num_before": {"5"}, "num_after": {"0"}, "apply_markdown": {"false"}, "allow_empty_topic_name": {"true"}}}).ok(t, "GET", "/messages")
	msgs := r.body["messages"].([]any)
	require.Len(t, msgs, 1, "the deleted one was not sent")
	m := msgs[0].(map[string]any)
	assert.Equal(t, "Ship it *now*", m["content"])
	assert.Equal(t, "", m["subject"])
	assert.EqualValues(t, alice.ID, m["sender_id"])
	assert.Equal(t, "Go-http-client", m["client"])
	r = e.do(t, request{method: "GET", path: path, user: &alice}).ok(t, "GET", "/scheduled_messages")
	assert.Equal(t, []any{}, r.body["scheduled_messages"])
	patch(&alice, item, url.Values{"content": {"again"}}).fails(t, 400, chat.CodeBadRequest, "Scheduled message was already sent")
}

// A failed message is listed with failed true and needs a new time.
func TestScheduledMessageFailedHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	due := e.Clock.Now().Add(time.Minute).Unix()
	r := e.do(t, request{method: "POST", path: "/api/v1/scheduled_messages", user: &alice, params: url.Values{"type": {"direct"},
		"to": {fmt.Sprintf("[%d]", bob.ID)}, "content": {"hi"}, "scheduled_delivery_timestamp": {fmt.Sprint(due)}}}).
		ok(t, "POST", "/scheduled_messages")
	item := fmt.Sprintf("/api/v1/scheduled_messages/%d", int64(r.body["scheduled_message_id"].(float64)))
	e.Deactivate(t, bob)
	e.Clock.Advance(2 * time.Minute)
	n, err := e.Service.DeliverDueScheduledMessages(ctxBg)
	require.NoError(t, err)
	assert.Zero(t, n)
	r = e.do(t, request{method: "GET", path: "/api/v1/scheduled_messages", user: &alice}).ok(t, "GET", "/scheduled_messages")
	require.Len(t, r.body["scheduled_messages"], 1)
	assert.Equal(t, true, r.body["scheduled_messages"].([]any)[0].(map[string]any)["failed"])
	e.do(t, request{method: "PATCH", path: item, user: &alice, params: url.Values{"topic": {"x"}}}).
		fails(t, 400, chat.CodeBadRequest, "Scheduled delivery time must be in the future.")
	e.do(t, request{method: "PATCH", path: item, user: &alice, params: url.Values{"scheduled_delivery_timestamp": {fmt.Sprint(due + 3600)}}}).
		ok(t, "PATCH", "/scheduled_messages/{scheduled_message_id}")
	r = e.do(t, request{method: "GET", path: "/api/v1/scheduled_messages", user: &alice}).ok(t, "GET", "/scheduled_messages")
	assert.Equal(t, false, r.body["scheduled_messages"].([]any)[0].(map[string]any)["failed"])
}
