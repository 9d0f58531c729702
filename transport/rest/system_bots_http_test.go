package rest_test

import (
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

// Over HTTP: the internal bots are in register's cross_realm_bots, not in
// GET /users or realm_users, and no administrator reaches them.
func TestSystemBotsHTTP(t *testing.T) {
	e := newEnv(t)
	member := e.NewUser(t, chat.RoleMember)
	users := e.do(t, request{method: "GET", path: "/api/v1/users", user: &member}).ok(t, "GET", "/users")
	var ids []any
	for _, u := range users.body["members"].([]any) {
		ids = append(ids, u.(map[string]any)["user_id"])
	}
	assert.ElementsMatch(t, []any{float64(e.Owner.ID), float64(member.ID)}, ids)

	reg := e.do(t, request{method: "POST", path: "/api/v1/register", user: &member, params: url.Values{
		"fetch_event_types": {`["realm_user"]`}}}).ok(t, "POST", "/register")
	assert.Len(t, reg.body["realm_users"], 2)
	bots := reg.body["cross_realm_bots"].([]any)
	require.Len(t, bots, 3)
	var botID float64
	for _, b := range bots {
		bot := b.(map[string]any)
		assert.Equal(t, true, bot["is_system_bot"])
		if bot["full_name"] == "Notification Bot" {
			botID = bot["user_id"].(float64)
		}
	}
	require.NotZero(t, botID)
	e.do(t, request{method: "DELETE", path: "/api/v1/users/" + strconv.FormatInt(int64(botID), 10), user: &e.Owner}).
		fails(t, 400, chat.CodeBadRequest, "No such user")
	list := e.do(t, request{method: "GET", path: "/api/v1/bots", user: &e.Owner}).ok(t, "GET", "")
	assert.Empty(t, list.body["bots"])
}
