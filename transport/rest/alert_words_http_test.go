package rest_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	chat "github.com/teamchat/chat"
)

func TestAlertWordsHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	r := e.do(t, request{method: "GET", path: "/api/v1/users/me/alert_words", user: &alice}).ok(t, "GET", "/users/me/alert_words")
	assert.Equal(t, []any{}, r.body["alert_words"])
	r = e.do(t, request{method: "POST", path: "/api/v1/users/me/alert_words", user: &alice,
		params: url.Values{"alert_words": {`["deploy", "on call"]`}}}).ok(t, "POST", "/users/me/alert_words")
	assert.Equal(t, []any{"deploy", "on call"}, r.body["alert_words"])
	r = e.do(t, request{method: "DELETE", path: "/api/v1/users/me/alert_words", user: &alice,
		params: url.Values{"alert_words": {`["DEPLOY"]`}}}).ok(t, "DELETE", "/users/me/alert_words")
	assert.Equal(t, []any{"on call"}, r.body["alert_words"])
	e.do(t, request{method: "POST", path: "/api/v1/users/me/alert_words", user: &alice}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'alert_words' argument")
	e.do(t, request{method: "POST", path: "/api/v1/users/me/alert_words", user: &alice, params: url.Values{"alert_words": {`"deploy"`}}}).
		fails(t, 400, chat.CodeBadRequest, "alert_words is not a list")
}
