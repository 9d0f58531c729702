package rest_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	chat "github.com/teamchat/chat"
)

func TestMutedUsersHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleGuest)
	bot := e.NewBot(t, bob)
	path := func(id int64) string { return fmt.Sprintf("/api/v1/users/me/muted_users/%d", id) }

	e.do(t, request{method: "POST", path: path(bob.ID), user: &alice}).ok(t, "POST", "/users/me/muted_users/{muted_user_id}")
	e.do(t, request{method: "POST", path: path(bot.ID), user: &alice}).ok(t, "POST", "/users/me/muted_users/{muted_user_id}")
	r := e.do(t, request{method: "POST", path: "/api/v1/register", user: &alice, params: map[string][]string{
		"fetch_event_types": {`["muted_users"]`}}}).ok(t, "POST", "/register")
	assert.Len(t, r.body["muted_users"], 2)

	e.do(t, request{method: "POST", path: path(bob.ID), user: &alice}).fails(t, 400, chat.CodeBadRequest, "User already muted")
	e.do(t, request{method: "POST", path: path(alice.ID), user: &alice}).fails(t, 400, chat.CodeBadRequest, "Cannot mute self")
	e.do(t, request{method: "POST", path: path(999999), user: &alice}).fails(t, 400, chat.CodeBadRequest, "No such user")
	e.do(t, request{method: "DELETE", path: path(bob.ID), user: &alice}).ok(t, "DELETE", "/users/me/muted_users/{muted_user_id}")
	e.do(t, request{method: "DELETE", path: path(bob.ID), user: &alice}).fails(t, 400, chat.CodeBadRequest, "User is not muted")
	e.do(t, request{method: "DELETE", path: path(999999), user: &alice}).fails(t, 400, chat.CodeBadRequest, "No such user")
	// A guest may mute too.
	e.do(t, request{method: "POST", path: path(alice.ID), user: &bob}).ok(t, "POST", "/users/me/muted_users/{muted_user_id}")
	e.do(t, request{method: "POST", path: path(alice.ID)}).fails(t, 401, chat.CodeUnauthorized, "Not logged in: API authentication or user session required")
}
