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

func TestChannelsHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	guest := e.NewUser(t, chat.RoleGuest)

	r := e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "general", "description": "Everything"}]`},
		"principals":    {fmt.Sprintf(`["%s", "%s"]`, alice.Email, bob.Email)},
	}}).ok(t, "POST", "/users/me/subscriptions")
	assert.Equal(t, []any{"general"}, r.body["subscribed"].(map[string]any)[strconv.FormatInt(bob.ID, 10)])
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "private room"}]`}, "invite_only": {"true"},
		"principals": {fmt.Sprintf(`[%d, %d]`, alice.ID, bob.ID)},
	}}).ok(t, "POST", "/users/me/subscriptions")

	r = e.do(t, request{method: "GET", path: "/api/v1/get_stream_id", user: &bob, params: url.Values{"stream": {"general"}}}).ok(t, "GET", "/get_stream_id")
	id := int64(r.body["stream_id"].(float64))
	e.do(t, request{method: "GET", path: "/api/v1/get_stream_id", user: &bob, params: url.Values{"stream": {"nope"}}}).
		fails(t, 400, chat.CodeBadRequest, "Invalid channel name 'nope'")
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &bob}).ok(t, "GET", "/streams/{stream_id}")
	assert.Equal(t, "Everything", r.body["stream"].(map[string]any)["description"])
	e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &guest}).fails(t, 400, chat.CodeBadRequest, "Invalid channel ID")
	e.do(t, request{method: "GET", path: "/api/v1/streams/999999", user: &bob}).fails(t, 400, chat.CodeBadRequest, "Invalid channel ID")

	r = e.do(t, request{method: "GET", path: "/api/v1/streams", user: &bob, params: url.Values{"include_all": {"true"}}}).ok(t, "GET", "/streams")
	assert.Len(t, r.body["streams"], 2)
	r = e.do(t, request{method: "GET", path: "/api/v1/users/me/subscriptions", user: &bob, params: url.Values{"include_subscribers": {"true"}}}).
		ok(t, "GET", "/users/me/subscriptions")
	first := r.body["subscriptions"].([]any)[0].(map[string]any)
	assert.ElementsMatch(t, []any{float64(alice.ID), float64(bob.ID)}, first["subscribers"])

	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions/properties", user: &bob, params: url.Values{
		"subscription_data": {fmt.Sprintf(`[{"stream_id": %d, "property": "color", "value": "#123456"}, {"stream_id": %d, "property": "is_muted", "value": true}]`, id, id)},
	}}).ok(t, "POST", "/users/me/subscriptions/properties")
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions/properties", user: &bob, params: url.Values{
		"subscription_data": {fmt.Sprintf(`[{"stream_id": %d, "property": "volume", "value": 1}]`, id)},
	}}).fails(t, 400, chat.CodeBadRequest, "Unknown subscription property: volume")

	e.do(t, request{method: "POST", path: "/api/v1/user_topics", user: &bob, params: url.Values{
		"stream_id": {fmt.Sprint(id)}, "topic": {"lunch"}, "visibility_policy": {"1"}}}).ok(t, "POST", "/user_topics")
	e.do(t, request{method: "POST", path: "/api/v1/user_topics", user: &bob, params: url.Values{
		"stream_id": {fmt.Sprint(id)}, "topic": {"lunch"}}}).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'visibility_policy' argument")

	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &alice, params: url.Values{
		"description": {"New words"}, "can_send_message_group": {`{"new": {"direct_members": [], "direct_subgroups": []}}`}}}).ok(t, "PATCH", "/streams/{stream_id}")
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &bob, params: url.Values{"description": {"mine"}}}).
		fails(t, 400, chat.CodeBadRequest, "You do not have permission to administer this channel.")
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &e.Owner, params: url.Values{"message_retention_days": {`"unlimited"`}}}).
		ok(t, "PATCH", "/streams/{stream_id}")
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &e.Owner, params: url.Values{"message_retention_days": {`"forever"`}}}).
		fails(t, 400, chat.CodeRequestVariableInvalid, "Bad value for 'message_retention_days': forever")

	// zulip-js sends DELETE parameters comma-joined in the query string.
	r = e.do(t, request{method: "DELETE", path: "/api/v1/users/me/subscriptions?subscriptions=general,private%20room", user: &bob}).
		ok(t, "DELETE", "/users/me/subscriptions")
	assert.Equal(t, []any{"general", "private room"}, r.body["removed"])
	r = e.do(t, request{method: "DELETE", path: "/api/v1/users/me/subscriptions", user: &bob, params: url.Values{"subscriptions": {`["general"]`}}}).
		ok(t, "DELETE", "/users/me/subscriptions")
	assert.Equal(t, []any{"general"}, r.body["not_removed"])
	r = e.do(t, request{method: "DELETE", path: "/api/v1/users/me/subscriptions", user: &bob, params: url.Values{"subscriptions": {`["private room"]`}}}).
		failsAs(t, "DELETE", "/users/me/subscriptions", 400, chat.CodeStreamDoesNotExist, "Channel 'private room' does not exist")
	assert.Equal(t, "private room", r.body["stream"])
	e.do(t, request{method: "DELETE", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`["general"]`}, "principals": {"[9999]"}}}).fails(t, 400, chat.CodeBadRequest, "No such user")

	e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &alice}).ok(t, "DELETE", "/streams/{stream_id}")
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &alice}).ok(t, "GET", "/streams/{stream_id}")
	require.Equal(t, true, r.body["stream"].(map[string]any)["is_archived"])
}
