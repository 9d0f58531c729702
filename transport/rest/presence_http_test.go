package rest_test

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

func TestPresenceHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleGuest)
	bot := e.NewBot(t, alice)

	// A ping-only report answers nothing but the envelope.
	r := e.do(t, request{method: "POST", path: "/api/v1/users/me/presence", user: &alice, params: url.Values{
		"status": {"active"}, "ping_only": {"true"}, "new_user_input": {"true"}}}).ok(t, "POST", "/users/me/presence")
	assert.NotContains(t, r.body, "presences")
	assert.NotContains(t, r.body, "presence_last_update_id")

	// The modern protocol.
	r = e.do(t, request{method: "POST", path: "/api/v1/users/me/presence", user: &bob, params: url.Values{
		"status": {"idle"}, "last_update_id": {"-1"}, "history_limit_days": {"7"}}}).ok(t, "POST", "/users/me/presence")
	presences := r.body["presences"].(map[string]any)
	require.Contains(t, presences, strconv.FormatInt(alice.ID, 10))
	assert.Contains(t, presences[strconv.FormatInt(alice.ID, 10)], "active_timestamp")
	last := r.body["presence_last_update_id"].(float64)
	assert.Contains(t, r.body, "server_timestamp")
	r = e.do(t, request{method: "POST", path: "/api/v1/users/me/presence", user: &bob, params: url.Values{
		"status": {"idle"}, "last_update_id": {strconv.FormatFloat(last, 'f', -1, 64)}}}).ok(t, "POST", "/users/me/presence")
	assert.Empty(t, r.body["presences"])
	assert.Equal(t, last, r.body["presence_last_update_id"])

	// The legacy forms.
	r = e.do(t, request{method: "GET", path: "/api/v1/realm/presence", user: &bob}).ok(t, "GET", "/realm/presence")
	assert.Contains(t, r.body["presences"], alice.Email)
	assert.NotContains(t, r.body, "presence_last_update_id")
	for _, target := range []string{strconv.FormatInt(alice.ID, 10), url.PathEscape(alice.Email)} {
		r = e.do(t, request{method: "GET", path: "/api/v1/users/" + target + "/presence", user: &bob}).
			ok(t, "GET", "/users/{user_id_or_email}/presence")
		assert.Equal(t, "active", r.body["presence"].(map[string]any)["aggregated"].(map[string]any)["status"])
	}

	// Errors.
	e.do(t, request{method: "POST", path: "/api/v1/users/me/presence", user: &alice}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'status' argument")
	e.do(t, request{method: "POST", path: "/api/v1/users/me/presence", user: &alice, params: url.Values{"status": {"busy"}}}).
		fails(t, 400, chat.CodeBadRequest, "Invalid status: busy")
	e.do(t, request{method: "POST", path: "/api/v1/users/me/presence", user: &alice, params: url.Values{"status": {"active"}, "last_update_id": {"x"}}}).
		fails(t, 400, chat.CodeBadRequest, "last_update_id is not an integer")
	e.do(t, request{method: "POST", path: "/api/v1/users/me/presence", user: &bot, params: url.Values{"status": {"active"}}}).
		fails(t, 400, chat.CodeBadRequest, "This endpoint does not accept bot requests.")
	e.do(t, request{method: "GET", path: "/api/v1/users/999999/presence", user: &bob}).fails(t, 400, chat.CodeBadRequest, "No such user")
	e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/users/%d/presence", bot.ID), user: &bob}).
		fails(t, 400, chat.CodeBadRequest, "Presence is not supported for bot users.")
	carol := e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/users/%d/presence", carol.ID), user: &alice}).
		fails(t, 400, chat.CodeBadRequest, fmt.Sprintf("No presence data for %d", carol.ID))
	e.do(t, request{method: "GET", path: "/api/v1/realm/presence"}).fails(t, 401, chat.CodeUnauthorized, "Not logged in: API authentication or user session required")
}
