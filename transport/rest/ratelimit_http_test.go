package rest_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/schemacheck"
	"github.com/teamchat/chat/transport/rest"
)

// rateLimited asserts the 429 of a limit of n per minute that is spent.
func rateLimited(t *testing.T, r response, n int) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.status, "body: %s", r.raw)
	assert.Equal(t, chat.CodeRateLimitHit, r.body["code"])
	assert.Equal(t, "API usage exceeded rate limit", r.body["msg"])
	wait := 60 / n
	assert.Equal(t, fmt.Sprint(wait), r.header.Get("Retry-After"))
	assert.EqualValues(t, wait, r.body["retry-after"])
	assert.Equal(t, fmt.Sprint(n), r.header.Get("X-RateLimit-Limit"))
	assert.Equal(t, "0", r.header.Get("X-RateLimit-Remaining"))
	schemacheck.CheckSchema(t, "RateLimitedError", r.raw)
}

// Every request that is not authenticated counts against its client
// address (the reference's api_by_ip rule), each kind of route on its
// own here; authenticated users keep their own budget.
func TestAddressRateLimitHTTP(t *testing.T) {
	h := chattest.New(t)
	routes := []request{
		{method: "GET", path: "/api/v1/server_settings"},
		{method: "POST", path: "/api/v1/fetch_api_key", params: url.Values{"username": {"nobody@example.com"}, "password": {"guess"}}},
		{method: "POST", path: "/api/v1/invites/accept", params: url.Values{"key": {"guessed"}, "full_name": {"X"}, "password": {"a long password"}}},
		{method: "POST", path: "/api/v1/accounts/confirm_new_email/guessed"},
		{method: "GET", path: "/user_uploads/temporary/guessed/a.txt"},
		{method: "GET", path: "/user_avatars/1/emoji/images/guessed.png"},
		{method: "GET", path: fmt.Sprintf("/user_uploads/%d/ab/guessed.txt", h.RealmID)},
		{method: "GET", path: "/api/v1/users/me", user: &chattest.User{Email: h.Owner.Email, APIKey: "a wrong key"}},
		{method: "GET", path: "/api/v1/users/me", header: map[string]string{"Authorization": "Basic !!!"}},
	}
	for _, route := range routes {
		t.Run(route.method+" "+route.path, func(t *testing.T) {
			clock := &chattest.Clock{}
			clock.Set(time.Unix(1_800_000_000, 0))
			e := serve(t, h, rest.WithAddressRateLimit(2, time.Minute), rest.WithClock(clock.Now))
			for i := 1; i >= 0; i-- {
				r := e.do(t, route)
				assert.NotEqual(t, http.StatusTooManyRequests, r.status)
				assert.Equal(t, fmt.Sprint(i), r.header.Get("X-RateLimit-Remaining"), "body: %s", r.raw)
				assert.Equal(t, "2", r.header.Get("X-RateLimit-Limit"))
			}
			rateLimited(t, e.do(t, route), 2)
			// Authenticated users behind the same address keep their own budget.
			r := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &e.Owner}).ok(t, "GET", "/users/me")
			assert.Equal(t, "200", r.header.Get("X-RateLimit-Limit"))
			clock.Advance(30 * time.Second)
			assert.NotEqual(t, http.StatusTooManyRequests, e.do(t, route).status, "a token is back after 30 s")
			rateLimited(t, e.do(t, route), 2)
		})
	}
}

func TestAddressRateLimitDefaultAndOff(t *testing.T) {
	h := chattest.New(t)
	e := serve(t, h)
	r := e.do(t, request{method: "GET", path: "/api/v1/server_settings"}).ok(t, "GET", "/server_settings")
	assert.Equal(t, "100", r.header.Get("X-RateLimit-Limit"), "the reference's api_by_ip: 100 a minute")
	assert.Equal(t, "99", r.header.Get("X-RateLimit-Remaining"))

	e = serve(t, h, rest.WithAddressRateLimit(0, 0))
	for range 150 {
		r = e.do(t, request{method: "GET", path: "/api/v1/server_settings"}).ok(t, "GET", "/server_settings")
	}
	assert.Empty(t, r.header.Get("X-RateLimit-Limit"), "off")
}

// The client address is the connection's unless the peer is a trusted
// proxy: then X-Forwarded-For, read from the right past trusted proxies.
func TestAddressRateLimitTrustedProxiesHTTP(t *testing.T) {
	h := chattest.New(t)
	get := func(e *env, xff string) response {
		return e.do(t, request{method: "GET", path: "/api/v1/server_settings", header: map[string]string{"X-Forwarded-For": xff}})
	}
	t.Run("untrusted peer: the header is ignored", func(t *testing.T) {
		e := serve(t, h, rest.WithAddressRateLimit(1, time.Minute))
		get(e, "203.0.113.1").ok(t, "GET", "/server_settings")
		rateLimited(t, get(e, "203.0.113.2"), 1)
	})
	t.Run("trusted peer: each client its own budget", func(t *testing.T) {
		lan := netip.MustParsePrefix("10.0.0.0/8")
		e := serve(t, h, rest.WithAddressRateLimit(1, time.Minute), rest.WithTrustedProxies(netip.MustParsePrefix("127.0.0.1/32"), lan))
		get(e, "203.0.113.1").ok(t, "GET", "/server_settings")
		rateLimited(t, get(e, "203.0.113.1"), 1)
		get(e, "203.0.113.2").ok(t, "GET", "/server_settings")
		// A client cannot choose its address by writing the header itself:
		// only what trusted proxies appended counts.
		rateLimited(t, get(e, "198.51.100.7, 203.0.113.2"), 1)
		rateLimited(t, get(e, "198.51.100.8, 203.0.113.2, 10.1.2.3"), 1)
		get(e, "198.51.100.9, 203.0.113.3, 10.1.2.3").ok(t, "GET", "/server_settings")
		// Without a header the proxy itself is the client.
		e.do(t, request{method: "GET", path: "/api/v1/server_settings"}).ok(t, "GET", "/server_settings")
		rateLimited(t, e.do(t, request{method: "GET", path: "/api/v1/server_settings"}), 1)
		// IPv6 clients share their /64.
		get(e, "2001:db8:1:2::1").ok(t, "GET", "/server_settings")
		rateLimited(t, get(e, "2001:db8:1:2::ffff"), 1)
		get(e, "2001:db8:1:3::1").ok(t, "GET", "/server_settings")
	})
}

func TestParseTrustedProxies(t *testing.T) {
	got, err := rest.ParseTrustedProxies(" 10.0.0.1, 192.168.0.0/16,fd00::/8 ,,::ffff:10.9.9.9, 172.16.5.4/12")
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{
		netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("fd00::/8"),
		netip.MustParsePrefix("10.9.9.9/32"), netip.MustParsePrefix("172.16.0.0/12"),
	}, got)
	got, err = rest.ParseTrustedProxies("")
	require.NoError(t, err)
	assert.Empty(t, got)
	for _, bad := range []string{"example.com", "10.0.0.1/33", "10.0.0.1:80"} {
		_, err := rest.ParseTrustedProxies(bad)
		assert.Error(t, err, bad)
	}
}
