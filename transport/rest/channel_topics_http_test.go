package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	chat "github.com/teamchat/chat"
)

func TestChannelTopicsHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob, guest := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleGuest)
	subscribe := func(name string, private bool) int64 {
		e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
			"subscriptions": {fmt.Sprintf(`[{"name": %q}]`, name)}, "invite_only": {fmt.Sprint(private)}}}).ok(t, "POST", "/users/me/subscriptions")
		r := e.do(t, request{method: "GET", path: "/api/v1/get_stream_id", user: &alice, params: url.Values{"stream": {name}}}).ok(t, "GET", "/get_stream_id")
		return int64(r.body["stream_id"].(float64))
	}
	post := func(channel, topic string) int64 {
		r := e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
			params: url.Values{"type": {"stream"}, "to": {channel}, "topic": {topic}, "content": {"hi"}}}).ok(t, "POST", "/messages")
		return int64(r.body["id"].(float64))
	}
	public := subscribe("Verona", false)
	older := post("Verona", "older")
	empty := post("Verona", "")
	newer := post("Verona", "Newer")
	path := fmt.Sprintf("/api/v1/users/me/%d/topics", public)

	r := e.do(t, request{method: "GET", path: path, user: &bob}).ok(t, "GET", "/users/me/{stream_id}/topics")
	assert.Equal(t, []any{
		map[string]any{"name": "Newer", "max_id": float64(newer)},
		map[string]any{"name": "general chat", "max_id": float64(empty)},
		map[string]any{"name": "older", "max_id": float64(older)},
	}, r.body["topics"])
	r = e.do(t, request{method: "GET", path: path, user: &bob, params: url.Values{"allow_empty_topic_name": {"true"}, "bogus": {"1"}}}).
		ok(t, "GET", "/users/me/{stream_id}/topics")
	assert.Equal(t, "", r.body["topics"].([]any)[1].(map[string]any)["name"])
	assert.Equal(t, []any{"bogus"}, r.body["ignored_parameters_unsupported"])
	e.do(t, request{method: "GET", path: path, user: &bob, params: url.Values{"allow_empty_topic_name": {"yes"}}}).
		fails(t, 400, chat.CodeBadRequest, "allow_empty_topic_name is not a boolean")

	// Who may not: a guest outside the channel, a non-subscriber of a
	// private channel, a channel that does not exist; no credentials.
	private := subscribe("secret", true)
	post("secret", "hidden")
	for _, tc := range []struct {
		id int64
		as chat.Caller
	}{{public, guest.Caller}, {private, bob.Caller}, {private + 100, bob.Caller}} {
		u := bob
		if tc.as == guest.Caller {
			u = guest
		}
		e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/users/me/%d/topics", tc.id), user: &u}).
			failsAs(t, "GET", "/users/me/{stream_id}/topics", 400, chat.CodeBadRequest, "Invalid channel ID")
	}
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/users/me/%d/topics", private), user: &alice}).ok(t, "GET", "/users/me/{stream_id}/topics")
	assert.Len(t, r.body["topics"], 1)
	e.do(t, request{method: "GET", path: path}).fails(t, 401, chat.CodeUnauthorized, "")
	e.do(t, request{method: "GET", path: "/api/v1/users/me/abc/topics", user: &bob}).fails(t, 404, chat.CodeBadRequest, "Not found")
}
