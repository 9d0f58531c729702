package rest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

// A POST whose form has a "method" field is served as that method, as the
// reference's rest.py does.
func TestMethodTunnellingHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "tunnels"}]`}}}).ok(t, "POST", "/users/me/subscriptions")
	r := e.do(t, request{method: "GET", path: "/api/v1/get_stream_id", user: &alice, params: url.Values{"stream": {"tunnels"}}}).ok(t, "GET", "/get_stream_id")
	id := int64(r.body["stream_id"].(float64))

	// PATCH through POST: the body's other parameters are the PATCH's.
	r = e.do(t, request{method: "POST", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &alice,
		params: url.Values{"method": {"PATCH"}, "description": {"Dug by hand"}}}).ok(t, "PATCH", "/streams/{stream_id}")
	assert.Equal(t, []any{"method"}, r.body["ignored_parameters_unsupported"])
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &alice}).ok(t, "GET", "/streams/{stream_id}")
	assert.Equal(t, "Dug by hand", r.body["stream"].(map[string]any)["description"])

	// GET (and HEAD, as GET) through POST.
	r = e.do(t, request{method: "POST", path: "/api/v1/users/me", user: &alice, params: url.Values{"method": {"GET"}}}).ok(t, "GET", "/users/me")
	assert.Equal(t, float64(alice.ID), r.body["user_id"])
	e.do(t, request{method: "POST", path: "/api/v1/users/me", user: &alice, params: url.Values{"method": {"HEAD"}}}).ok(t, "GET", "/users/me")

	// The value is case-sensitive and must be one of the route's methods.
	for _, m := range []string{"patch", "PUT", "OPTIONS"} {
		r = e.do(t, request{method: "POST", path: fmt.Sprintf("/api/v1/streams/%d", id), user: &alice,
			params: url.Values{"method": {m}, "description": {"no"}}})
		require.Equal(t, http.StatusMethodNotAllowed, r.status, "method=%s: %s", m, r.raw)
		assert.Equal(t, "Method Not Allowed", r.body["msg"])
		assert.NotContains(t, r.body, "code")
		assert.NotEmpty(t, r.header.Get("Allow"))
	}

	// A "method" in the query string does nothing: this is a subscribe.
	r = e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions?method=DELETE", user: &alice,
		params: url.Values{"subscriptions": {`[{"name": "more tunnels"}]`}}}).ok(t, "POST", "/users/me/subscriptions")
	assert.Contains(t, r.body["subscribed"], fmt.Sprint(alice.ID))

	// Unauthenticated tunnelled requests are still refused.
	e.do(t, request{method: "POST", path: "/api/v1/users/me", params: url.Values{"method": {"GET"}}}).fails(t, 401, chat.CodeUnauthorized, "")

	// OPTIONS is answered before any tunnelling.
	req, err := http.NewRequest("OPTIONS", e.srv.URL+"/api/v1/users/me", strings.NewReader("method=GET"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
}

// Tunnelling reads multipart bodies too, and only POSTs tunnel.
func TestMethodTunnellingFormsHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "multipart tunnels"}]`}}}).ok(t, "POST", "/users/me/subscriptions")
	r := e.do(t, request{method: "GET", path: "/api/v1/get_stream_id", user: &alice,
		params: url.Values{"stream": {"multipart tunnels"}}}).ok(t, "GET", "/get_stream_id")
	path := fmt.Sprintf("/api/v1/streams/%d", int64(r.body["stream_id"].(float64)))

	// multipart/form-data, as zulip-js sends it.
	body, ct := multipartBody(t, map[string]string{"method": "PATCH", "description": "Sent in parts"})
	r = e.do(t, request{method: "POST", path: path, user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		ok(t, "PATCH", "/streams/{stream_id}")
	assert.Equal(t, []any{"method"}, r.body["ignored_parameters_unsupported"])
	r = e.do(t, request{method: "GET", path: path, user: &alice}).ok(t, "GET", "/streams/{stream_id}")
	assert.Equal(t, "Sent in parts", r.body["stream"].(map[string]any)["description"])

	// A GET with a "method" parameter stays a GET, which ignores it.
	r = e.do(t, request{method: "GET", path: path, user: &alice, params: url.Values{"method": {"PATCH"}, "description": {"no"}}}).
		ok(t, "GET", "/streams/{stream_id}")
	assert.Equal(t, "Sent in parts", r.body["stream"].(map[string]any)["description"])
	assert.ElementsMatch(t, []any{"description", "method"}, r.body["ignored_parameters_unsupported"])

	// A POST whose body is not a form does not tunnel: this route has no POST.
	r = e.do(t, request{method: "POST", path: path, user: &alice, body: strings.NewReader(`{"method": "PATCH"}`),
		header: map[string]string{"Content-Type": "application/json"}})
	assert.Equal(t, http.StatusMethodNotAllowed, r.status, "body: %s", r.raw)
}
