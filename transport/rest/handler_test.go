package rest_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/transport/rest"
)

func TestRoutingHTTP(t *testing.T) {
	e := newEnv(t)
	t.Run("unknown paths answer JSON 404", func(t *testing.T) {
		for _, p := range []string{"/api/v1/nope", "/api/v1/users/1/2/3", "/", "/api/v2/users", "/favicon.ico", "/api/v1"} {
			e.do(t, request{method: "GET", path: p, user: &e.Owner}).fails(t, 404, chat.CodeBadRequest, "Not found")
		}
	})
	t.Run("wrong method answers JSON 405 with Allow", func(t *testing.T) {
		r := e.do(t, request{method: "DELETE", path: "/api/v1/users", user: &e.Owner})
		require.Equal(t, http.StatusMethodNotAllowed, r.status)
		assert.Equal(t, "GET, HEAD, POST", r.header.Get("Allow"))
		assert.Equal(t, map[string]any{"result": "error", "msg": "Method Not Allowed", "allowed_methods": []any{"GET", "HEAD", "POST"}}, r.body)
	})
	t.Run("OPTIONS lists the methods", func(t *testing.T) {
		r := e.do(t, request{method: "OPTIONS", path: "/api/v1/users/me"})
		assert.Equal(t, http.StatusNoContent, r.status)
		assert.Equal(t, "DELETE, GET, HEAD", r.header.Get("Allow"))
	})
	t.Run("HEAD is answered like GET", func(t *testing.T) {
		r := e.do(t, request{method: "HEAD", path: "/api/v1/users/me", user: &e.Owner})
		assert.Equal(t, http.StatusOK, r.status)
		assert.Empty(t, r.raw)
		assert.NotEmpty(t, r.header.Get("Content-Length"))
	})
	t.Run("repeated slashes are collapsed, never redirected", func(t *testing.T) {
		for _, p := range []string{"//api/v1/users/me", "/api//v1///users/me", "/api/v1/users/me/"} {
			e.do(t, request{method: "GET", path: p, user: &e.Owner}).ok(t, "GET", "/users/me")
		}
		r := e.do(t, request{method: "POST", path: "//api/v1/fetch_api_key",
			params: url.Values{"username": {e.Owner.Email}, "password": {chattest.Password}}})
		r.ok(t, "POST", "/fetch_api_key")
	})
	t.Run("routing happens before authentication", func(t *testing.T) {
		e.do(t, request{method: "GET", path: "/api/v1/nope"}).fails(t, 404, chat.CodeBadRequest, "")
		r := e.do(t, request{method: "PUT", path: "/api/v1/users/me"})
		assert.Equal(t, http.StatusMethodNotAllowed, r.status)
	})
}

func TestRateLimitHTTP(t *testing.T) {
	clock := &chattest.Clock{}
	clock.Set(time.Unix(1_800_000_000, 0))
	h := chattest.New(t)
	e := serve(t, h, rest.WithRateLimit(3, time.Minute), rest.WithClock(clock.Now))
	alice := e.NewUser(t, chat.RoleMember)
	for i := 2; i >= 0; i-- {
		r := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &alice}).ok(t, "GET", "/users/me")
		assert.Equal(t, "3", r.header.Get("X-RateLimit-Limit"))
		assert.Equal(t, fmt.Sprint(i), r.header.Get("X-RateLimit-Remaining"))
		assert.NotEmpty(t, r.header.Get("X-RateLimit-Reset"))
	}
	r := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &alice}).fails(t, 429, chat.CodeRateLimitHit, "API usage exceeded rate limit")
	assert.Equal(t, "20", r.header.Get("Retry-After"), "one token comes back every 20 s")
	assert.EqualValues(t, 20, r.body["retry-after"])
	assert.Equal(t, "0", r.header.Get("X-RateLimit-Remaining"))
	assert.Equal(t, fmt.Sprint(clock.Now().Add(time.Minute).Unix()), r.header.Get("X-RateLimit-Reset"))

	// Other users have their own budget.
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &e.Owner}).ok(t, "GET", "/users/me")
	// Unauthenticated endpoints are not counted against users.
	e.do(t, request{method: "GET", path: "/api/v1/server_settings"}).ok(t, "GET", "/server_settings")

	clock.Advance(20 * time.Second)
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &alice}).ok(t, "GET", "/users/me")
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &alice}).fails(t, 429, chat.CodeRateLimitHit, "")
	clock.Advance(time.Hour)
	for i := 0; i < 3; i++ {
		e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &alice}).ok(t, "GET", "/users/me")
	}
}

func TestRateLimitDefaultOn(t *testing.T) {
	h := chattest.New(t)
	e := serve(t, h)
	r := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &e.Owner}).ok(t, "GET", "/users/me")
	assert.Equal(t, "200", r.header.Get("X-RateLimit-Limit"))
	assert.Equal(t, "199", r.header.Get("X-RateLimit-Remaining"))
}

func TestBodyLimitHTTP(t *testing.T) {
	e := newEnv(t, rest.WithMaxBodyBytes(64))
	e.do(t, request{method: "POST", path: "/api/v1/users", user: &e.Owner,
		params: url.Values{"email": {"a@example.com"}, "password": {strings.Repeat("p", 100)}, "full_name": {"A B"}}}).
		fails(t, http.StatusRequestEntityTooLarge, chat.CodeBadRequest, "Request body too large (limit: 64 bytes)")
	e.do(t, request{method: "POST", path: "/api/v1/users", user: &e.Owner,
		params: url.Values{"email": {"a@example.com"}, "password": {"a password"}, "full_name": {"A B"}}}).ok(t, "POST", "/users")
}

func TestAuthenticatorOption(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	// The host application's own sessions: here a header naming the user.
	auth := func(r *http.Request, realmID int64) (chat.Caller, error) {
		switch r.Header.Get("X-Session") {
		case "alice":
			return chat.Caller{RealmID: realmID, UserID: alice.ID}, nil
		case "":
			return chat.Caller{}, chat.Unauthorized("no session")
		default:
			return chat.Caller{}, chat.Forbidden("unknown session")
		}
	}
	e := serve(t, h, rest.WithAuthenticator(auth), rest.WithRateLimit(0, 0))
	r := e.do(t, request{method: "GET", path: "/api/v1/users/me", header: map[string]string{"X-Session": "alice"}}).ok(t, "GET", "/users/me")
	assert.EqualValues(t, alice.ID, r.body["user_id"])
	e.do(t, request{method: "GET", path: "/api/v1/users/me"}).fails(t, 401, chat.CodeUnauthorized, "no session")
	e.do(t, request{method: "GET", path: "/api/v1/users/me", header: map[string]string{"X-Session": "mallory"}}).fails(t, 403, chat.CodeBadRequest, "unknown session")
	// Basic credentials mean nothing to this handler.
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &alice}).fails(t, 401, chat.CodeUnauthorized, "no session")
	// The Service still checks the user: deactivation applies at once.
	h.Deactivate(t, alice)
	e.do(t, request{method: "GET", path: "/api/v1/users/me", header: map[string]string{"X-Session": "alice"}}).fails(t, 401, chat.CodeUserDeactivated, "")
}

func TestMountUnderPrefix(t *testing.T) {
	h := chattest.New(t)
	other := h.NewRealm(t, "http://other.example.com")
	mux := http.NewServeMux()
	mux.Handle("/chat/", http.StripPrefix("/chat", rest.NewHandler(h.Service, rest.WithRealm(other.RealmID), rest.WithRateLimit(0, 0))))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "host app") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := &env{Harness: h, srv: srv}

	// WithRealm pins the organization whatever the Host says.
	r := e.do(t, request{method: "GET", path: "/chat/api/v1/users/me", user: &other.Owner, host: "chat.example.com"}).ok(t, "GET", "/users/me")
	assert.EqualValues(t, other.Owner.ID, r.body["user_id"])
	r = e.do(t, request{method: "GET", path: "/chat/api/v1/server_settings"}).ok(t, "GET", "/server_settings")
	assert.Equal(t, "http://other.example.com", r.body["realm_url"])
	e.do(t, request{method: "GET", path: "/chat/api/v1/users/me", user: &h.Owner}).fails(t, 401, chat.CodeUnauthorized, "Invalid API key")

	resp, err := http.Get(srv.URL + "/elsewhere")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the host application keeps its other routes")
}

func TestInternalErrorsAreGeneric(t *testing.T) {
	h := chattest.New(t)
	e := serve(t, h, rest.WithRateLimit(0, 0))
	require.NoError(t, h.Store.Close()) // every query now fails inside the Service
	r := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &h.Owner})
	require.Equal(t, http.StatusInternalServerError, r.status, "body: %s", r.raw)
	assert.Equal(t, "Internal server error", r.body["msg"])
	assert.NotContains(t, string(r.raw), "sql", "no driver detail leaks")
}

// A client that sends part of a body and stops gets an answer and loses
// its connection once the body read timeout passes, even on a server with
// no ReadTimeout of its own.
func TestStalledBodyIsCutOff(t *testing.T) {
	h := chattest.New(t)
	e := serve(t, h, rest.WithBodyReadTimeout(200*time.Millisecond))
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /api/v1/fetch_api_key HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nusername=a", e.srv.Listener.Addr())
	require.NoError(t, err)
	// The test fails (rather than hangs) if the server keeps waiting.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the server answers the stalled request")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	_, err = conn.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "and closes the connection")
}
