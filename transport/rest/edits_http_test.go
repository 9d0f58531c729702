package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	chat "github.com/teamchat/chat"
)

func TestEditMessagesHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "Verona"}, {"name": "Denmark"}]`}, "principals": {fmt.Sprintf("[%d, %d]", alice.ID, bob.ID)},
	}}).ok(t, "POST", "/users/me/subscriptions")
	r := e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {"greetings"}, "content": {"hi"}}}).ok(t, "POST", "/messages")
	id := int64(r.body["id"].(float64))
	path := fmt.Sprintf("/api/v1/messages/%d", id)

	r = e.do(t, request{method: "PATCH", path: path, user: &alice, params: url.Values{"content": {"hi **there**"}}}).ok(t, "PATCH", "/messages/{message_id}")
	assert.Equal(t, []any{}, r.body["detached_uploads"])
	r = e.do(t, request{method: "GET", path: path, user: &bob}).ok(t, "GET", "/messages/{message_id}")
	m := r.body["message"].(map[string]any)
	assert.Equal(t, "<p>hi <strong>there</strong></p>", m["content"])
	assert.NotNil(t, m["last_edit_timestamp"])
	assert.Len(t, m["edit_history"], 1)

	e.do(t, request{method: "PATCH", path: path, user: &bob, params: url.Values{"topic": {"farewells"}, "propagate_mode": {"change_all"}}}).
		ok(t, "PATCH", "/messages/{message_id}")
	r = e.do(t, request{method: "GET", path: path, user: &bob}).ok(t, "GET", "/messages/{message_id}")
	assert.Equal(t, "farewells", r.body["message"].(map[string]any)["subject"])
	r = e.do(t, request{method: "GET", path: path + "/history", user: &bob}).ok(t, "GET", "/messages/{message_id}/history")
	assert.Len(t, r.body["message_history"], 3)

	e.do(t, request{method: "PATCH", path: path, user: &bob, params: url.Values{"content": {"mine"}}}).
		fails(t, 400, chat.CodeBadRequest, "You don't have permission to edit this message")
	e.do(t, request{method: "PATCH", path: path, user: &alice}).fails(t, 400, chat.CodeBadRequest, "Nothing to change")
	e.do(t, request{method: "PATCH", path: path, user: &alice, params: url.Values{"topic": {"a"}, "subject": {"b"}}}).
		fails(t, 400, chat.CodeRequestConfusingVar, "Can't decide between 'topic' and 'subject' arguments")

	e.do(t, request{method: "POST", path: "/api/v1/messages/flags", user: &bob, params: url.Values{
		"messages": {fmt.Sprintf("[%d]", id)}, "op": {"add"}, "flag": {"read"}}}).ok(t, "POST", "/messages/flags")
	r = e.do(t, request{method: "GET", path: path + "/read_receipts", user: &alice}).ok(t, "GET", "/messages/{message_id}/read_receipts")
	assert.Equal(t, []any{float64(bob.ID)}, r.body["user_ids"])

	e.do(t, request{method: "DELETE", path: path, user: &bob}).fails(t, 400, chat.CodeBadRequest, "You don't have permission to delete this message")
	e.do(t, request{method: "DELETE", path: path, user: &alice}).ok(t, "DELETE", "/messages/{message_id}")
	e.do(t, request{method: "DELETE", path: path, user: &alice}).fails(t, 400, chat.CodeBadRequest, "Invalid message(s)")
	e.do(t, request{method: "GET", path: path + "/history", user: &alice}).fails(t, 400, chat.CodeBadRequest, "Invalid message(s)")

	r = e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &e.Owner, params: url.Values{
		"message_content_edit_limit_seconds": {`"unlimited"`}, "move_messages_within_stream_limit_seconds": {"3600"}}}).ok(t, "", "")
	r = e.do(t, request{method: "GET", path: "/api/v1/realm", user: &bob}).ok(t, "", "")
	assert.Nil(t, r.body["realm_message_content_edit_limit_seconds"])
	assert.Equal(t, float64(3600), r.body["realm_move_messages_within_stream_limit_seconds"])
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &e.Owner, params: url.Values{"message_content_edit_limit_seconds": {"0"}}}).
		fails(t, 400, chat.CodeRequestVariableInvalid, "Bad value for 'message_content_edit_limit_seconds': 0")
}
