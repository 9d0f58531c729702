package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	chat "github.com/teamchat/chat"
)

func TestMessageFlagsHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob, outsider := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "Verona"}]`}, "principals": {fmt.Sprintf("[%d, %d]", alice.ID, bob.ID)}, "invite_only": {"true"},
	}}).ok(t, "POST", "/users/me/subscriptions")
	var ids []int64
	for i := range 4 {
		r := e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
			params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {[]string{"a", "b"}[i%2]}, "content": {"hi"}}}).ok(t, "POST", "/messages")
		ids = append(ids, int64(r.body["id"].(float64)))
	}
	r := e.do(t, request{method: "GET", path: "/api/v1/streams", user: &alice}).ok(t, "GET", "/streams")
	var verona int64
	for _, s := range r.body["streams"].([]any) {
		if s.(map[string]any)["name"] == "Verona" {
			verona = int64(s.(map[string]any)["stream_id"].(float64))
		}
	}

	r = e.do(t, request{method: "POST", path: "/api/v1/messages/flags", user: &bob, params: url.Values{
		"messages": {fmt.Sprintf("[%d, %d]", ids[0], ids[1])}, "op": {"add"}, "flag": {"read"}}}).ok(t, "POST", "/messages/flags")
	assert.Equal(t, []any{float64(ids[0]), float64(ids[1])}, r.body["messages"])
	assert.Equal(t, []any{}, r.body["ignored_because_not_subscribed_channels"])
	e.do(t, request{method: "POST", path: "/api/v1/messages/flags", user: &bob, params: url.Values{
		"messages": {fmt.Sprintf("[%d]", ids[2])}, "op": {"add"}, "flag": {"starred"}}}).ok(t, "POST", "/messages/flags")
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/messages/%d", ids[2]), user: &bob}).ok(t, "GET", "/messages/{message_id}")
	assert.Equal(t, []any{"starred"}, r.body["message"].(map[string]any)["flags"])
	e.do(t, request{method: "POST", path: "/api/v1/messages/flags", user: &outsider, params: url.Values{
		"messages": {fmt.Sprintf("[%d]", ids[2])}, "op": {"add"}, "flag": {"starred"}}}).fails(t, 400, chat.CodeBadRequest, "Invalid message(s)")
	e.do(t, request{method: "POST", path: "/api/v1/messages/flags", user: &bob, params: url.Values{
		"messages": {"[1]"}, "op": {"add"}, "flag": {"mentioned"}}}).fails(t, 400, chat.CodeBadRequest, "Flag not editable: 'mentioned'")
	e.do(t, request{method: "POST", path: "/api/v1/messages/flags", user: &bob, params: url.Values{
		"op": {"add"}, "flag": {"read"}}}).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'messages' argument")

	r = e.do(t, request{method: "POST", path: "/api/v1/messages/flags/narrow", user: &bob, params: url.Values{
		"anchor": {"oldest"}, "num_before": {"0"}, "num_after": {"100"}, "op": {"add"}, "flag": {"read"},
		"narrow": {`[{"operator":"channel","operand":"Verona"},{"operator":"topic","operand":"a"}]`}}}).ok(t, "POST", "/messages/flags/narrow")
	assert.Equal(t, float64(2), r.body["processed_count"])
	assert.Equal(t, float64(1), r.body["updated_count"], "ids[0] was read already")
	assert.Equal(t, true, r.body["found_newest"])
	e.do(t, request{method: "POST", path: "/api/v1/messages/flags/narrow", user: &bob, params: url.Values{
		"anchor": {"oldest"}, "num_before": {"0"}, "num_after": {"100"}, "op": {"add"}, "flag": {"read"}}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'narrow' argument")

	e.do(t, request{method: "POST", path: "/api/v1/mark_topic_as_read", user: &bob, params: url.Values{
		"stream_id": {fmt.Sprint(verona)}, "topic_name": {"b"}}}).ok(t, "POST", "/mark_topic_as_read")
	e.do(t, request{method: "POST", path: "/api/v1/mark_topic_as_read", user: &bob, params: url.Values{
		"stream_id": {fmt.Sprint(verona)}, "topic_name": {"nope"}}}).fails(t, 400, chat.CodeBadRequest, "No such topic 'nope'")
	e.do(t, request{method: "POST", path: "/api/v1/mark_stream_as_read", user: &bob, params: url.Values{
		"stream_id": {fmt.Sprint(verona)}}}).ok(t, "POST", "/mark_stream_as_read")
	e.do(t, request{method: "POST", path: "/api/v1/mark_stream_as_read", user: &outsider, params: url.Values{
		"stream_id": {fmt.Sprint(verona)}}}).fails(t, 400, chat.CodeBadRequest, "Invalid channel ID")
	r = e.do(t, request{method: "POST", path: "/api/v1/mark_all_as_read", user: &bob}).ok(t, "POST", "/mark_all_as_read")
	assert.Equal(t, true, r.body["complete"])
	r = e.do(t, request{method: "GET", path: "/api/v1/messages", user: &bob, params: url.Values{
		"anchor": {"newest"}, "num_before": {"10"}, "narrow": {`[{"operator":"is","operand":"unread"}]`}}}).ok(t, "GET", "/messages")
	assert.Empty(t, r.body["messages"])
}
