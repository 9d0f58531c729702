package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	chat "github.com/teamchat/chat"
)

func TestUserStatusHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleGuest)
	path := fmt.Sprintf("/api/v1/users/%d/status", alice.ID)
	r := e.do(t, request{method: "GET", path: path, user: &bob}).ok(t, "GET", "/users/{user_id}/status")
	assert.Equal(t, map[string]any{}, r.body["status"])

	e.do(t, request{method: "POST", path: "/api/v1/users/me/status", user: &alice, params: url.Values{
		"status_text": {"in a meeting"}, "emoji_name": {"calendar"}, "away": {"true"}}}).ok(t, "POST", "/users/me/status")
	r = e.do(t, request{method: "GET", path: path, user: &bob}).ok(t, "GET", "/users/{user_id}/status")
	assert.Equal(t, map[string]any{"status_text": "in a meeting", "emoji_name": "calendar", "emoji_code": "1f4c5",
		"reaction_type": "unicode_emoji", "away": true}, r.body["status"])

	e.do(t, request{method: "POST", path: "/api/v1/users/me/status", user: &alice}).
		fails(t, 400, chat.CodeBadRequest, "Client did not pass any new values.")
	e.do(t, request{method: "POST", path: "/api/v1/users/me/status", user: &alice, params: url.Values{"away": {"maybe"}}}).
		fails(t, 400, chat.CodeBadRequest, "away is not a boolean")
	e.do(t, request{method: "GET", path: "/api/v1/users/999999/status", user: &bob}).fails(t, 400, chat.CodeBadRequest, "No such user")
}
