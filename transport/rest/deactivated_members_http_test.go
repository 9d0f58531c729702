package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	chat "github.com/teamchat/chat"
)

// Deactivated users leave group views until they are reactivated.
func TestDeactivatedGroupMembersHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	r := e.do(t, request{method: "POST", path: "/api/v1/user_groups/create", user: &alice, params: url.Values{
		"name": {"support"}, "description": {""}, "members": {fmt.Sprintf("[%d, %d]", alice.ID, bob.ID)},
	}}).ok(t, "POST", "/user_groups/create")
	base := fmt.Sprintf("/api/v1/user_groups/%d", int64(r.body["group_id"].(float64)))

	e.Deactivate(t, bob)
	r = e.do(t, request{method: "GET", path: base + "/members", user: &alice}).ok(t, "GET", "/user_groups/{user_group_id}/members")
	assert.Equal(t, []any{float64(alice.ID)}, r.body["members"])
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("%s/members/%d", base, bob.ID), user: &alice}).ok(t, "GET", "/user_groups/{user_group_id}/members/{user_id}")
	assert.Equal(t, false, r.body["is_user_group_member"])
	e.do(t, request{method: "POST", path: base + "/members", user: &alice, params: url.Values{"delete": {fmt.Sprintf("[%d]", bob.ID)}}}).
		fails(t, 400, chat.CodeBadRequest, fmt.Sprintf("Invalid user ID: %d", bob.ID))

	e.do(t, request{method: "POST", path: fmt.Sprintf("/api/v1/users/%d/reactivate", bob.ID), user: &e.Owner}).ok(t, "POST", "/users/{user_id}/reactivate")
	r = e.do(t, request{method: "GET", path: base + "/members", user: &alice}).ok(t, "GET", "/user_groups/{user_group_id}/members")
	assert.Equal(t, []any{float64(alice.ID), float64(bob.ID)}, r.body["members"])
}
