package webhook

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsPublicAddr(t *testing.T) {
	tests := []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"93.184.216.34", true},
		{"2606:4700:4700::1111", true},
		{"2001:4860:4860::8888", true},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", true},  // 6to4 of 8.8.8.8

		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"::1", false},
		{"10.0.0.1", false},
		{"10.255.255.255", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"169.254.0.1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fd00::1", false},
		{"fc00::1", false},
		{"100.64.0.1", false},
		{"100.127.255.254", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"::", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"ff02::1", false},
		{"ff0e::1", false},
		{"255.255.255.255", false},
		{"240.0.0.1", false},
		{"192.0.2.1", false},
		{"198.51.100.1", false},
		{"203.0.113.1", false},
		{"198.18.0.1", false},
		{"192.0.0.8", false},
		{"2001:db8::1", false},
		{"fec0::1", false},
		{"100::1", false},
		{"2001::1", false}, // Teredo
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::127.0.0.1", false},        // IPv4-compatible
		{"64:ff9b::7f00:1", false},    // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"64:ff9b:1::a00:1", false},
		{"2002:a00:1::1", false},  // 6to4 of 10.0.0.1
		{"2002:7f00:1::1", false}, // 6to4 of 127.0.0.1
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		assert.Equal(t, tt.public, IsPublicAddr(a), tt.addr)
	}
	assert.False(t, IsPublicAddr(netip.Addr{}), "zero Addr")
}

// TestDeliverRefusesNonPublic delivers to each kind of forbidden address
// with the production policy: the dialer refuses before connecting, no
// retry, the reference's 407 texts.
func TestDeliverRefusesNonPublic(t *testing.T) {
	bot := newBot(t, answer(200, `{"content": "should not be reached"}`))
	port := bot.Listener.Addr().(*net.TCPAddr).Port
	hostPort := func(host string) string { return net.JoinHostPort(host, itoa(port)) }
	urls := []string{
		"http://" + hostPort("127.0.0.1"),
		"http://" + hostPort("localhost"), // after DNS resolution
		"http://" + hostPort("::1"),
		"http://" + hostPort("0.0.0.0"),
		"http://" + hostPort("::ffff:127.0.0.1"),
		"http://" + hostPort("::"),
		"http://10.1.2.3/hook",
		"http://172.16.5.4/hook",
		"http://192.168.0.10:8080/hook",
		"http://169.254.169.254/latest/meta-data/",
		"http://100.64.1.1/hook",
		"https://[fd00::1]/hook",
		"http://[fe80::1]/hook",
		"http://224.0.0.1/hook",
		"http://255.255.255.255/hook",
		"http://[::ffff:169.254.169.254]/hook",
		"http://[64:ff9b::a9fe:a9fe]/hook",
	}
	for _, u := range urls {
		t.Run(u, func(t *testing.T) {
			c, rec := newTestClient(t, Options{}) // production policy
			o, err := c.Deliver(context.Background(), genericRequest(u))
			require.NoError(t, err)
			assert.Equal(t, Failure, o.Kind)
			assert.Equal(t, "Failure! Third party responded with 407", o.Message)
			assert.Equal(t, "The URL configured for the webhook is for a private or disallowed network.", o.OwnerDetail)
			assert.Equal(t,
				"[A message](http://chat.example.com/#narrow/channel/3-Verona/topic/Foo/near/7) to your bot @_**Echo** triggered an outgoing webhook.\n"+
					"The URL configured for the webhook is for a private or disallowed network.",
				o.OwnerMessage("http://chat.example.com/#narrow/channel/3-Verona/topic/Foo/near/7", "Echo"))
			assert.ErrorIs(t, o.Err, ErrForbiddenAddress)
			assert.Equal(t, 1, o.Attempts, "no retry")
			assert.Empty(t, rec.got())
		})
	}
	assert.Zero(t, bot.hits.Load(), "the loopback server was never reached")
}

// allowOnly makes c treat one test server's address as public, keeping
// the production policy for every other address.
func allowOnly(c *Client, srv *botServer) {
	allowed := netip.MustParseAddrPort(srv.Listener.Addr().String())
	c.checkAddr = func(ap netip.AddrPort) error {
		if ap == allowed {
			return nil
		}
		return checkPublic(ap)
	}
}

func TestDeliverRefusesRedirectToNonPublic(t *testing.T) {
	internal := newBot(t, answer(200, `{"content": "internal secret"}`))
	internalPort := itoa(internal.Listener.Addr().(*net.TCPAddr).Port)
	targets := []string{
		internal.URL + "/admin",
		"http://localhost:" + internalPort + "/admin",
		"http://[::ffff:127.0.0.1]:" + internalPort + "/admin",
		"http://169.254.169.254/latest/meta-data/iam/",
		"http://10.0.0.5/",
	}
	for _, target := range targets {
		for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
			t.Run(target+" "+itoa(status), func(t *testing.T) {
				public := newBot(t, func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, target, status)
				})
				c, rec := newTestClient(t, Options{})
				allowOnly(c, public)
				o, err := c.Deliver(context.Background(), genericRequest(public.URL))
				require.NoError(t, err)
				assert.EqualValues(t, 1, public.hits.Load(), "the allowed server was called")
				assert.Equal(t, Failure, o.Kind)
				assert.Equal(t, "Failure! Third party responded with 407", o.Message)
				assert.Equal(t, "The URL configured for the webhook is for a private or disallowed network.", o.OwnerDetail)
				assert.ErrorIs(t, o.Err, ErrForbiddenAddress)
				assert.Equal(t, 1, o.Attempts)
				assert.Empty(t, rec.got())
			})
		}
	}
	assert.Zero(t, internal.hits.Load(), "the internal server was never reached")
}

func TestDeliverFollowsAllowedRedirect(t *testing.T) {
	final := newBot(t, answer(200, `{"content": "moved here"}`))
	first := newBot(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, final.URL, http.StatusTemporaryRedirect)
	})
	// The production policy with both servers' addresses taken as public.
	c, _ := newTestClient(t, Options{})
	a1 := netip.MustParseAddrPort(first.Listener.Addr().String())
	a2 := netip.MustParseAddrPort(final.Listener.Addr().String())
	c.checkAddr = func(ap netip.AddrPort) error {
		if ap == a1 || ap == a2 {
			return nil
		}
		return checkPublic(ap)
	}
	o, err := c.Deliver(context.Background(), genericRequest(first.URL))
	require.NoError(t, err)
	assert.Equal(t, Reply, o.Kind)
	assert.Equal(t, "moved here", o.Content)
	assert.EqualValues(t, 1, final.hits.Load())
}

func TestClientTransport(t *testing.T) {
	c := New(Options{})
	tr, ok := c.http.Transport.(*http.Transport)
	require.True(t, ok)
	assert.Nil(t, tr.Proxy, "no proxy: the dialer must see the bot's address")
	assert.NotNil(t, c.checkAddr, "the production policy is on by default")
	assert.Nil(t, New(Options{AllowPrivate: true}).checkAddr)

	// The Control hook refuses an address it cannot parse.
	assert.ErrorIs(t, c.control("tcp", "not-an-address", nil), ErrForbiddenAddress)
	assert.ErrorIs(t, c.control("tcp4", "10.0.0.1:80", nil), ErrForbiddenAddress)
	assert.NoError(t, c.control("tcp4", "8.8.8.8:443", nil))
	assert.NoError(t, New(Options{AllowPrivate: true}).control("tcp4", "10.0.0.1:80", nil))
}

func TestRefusalErrorText(t *testing.T) {
	err := (&url.Error{Op: "Post", URL: "http://10.0.0.1", Err: &ForbiddenAddressError{Addr: "10.0.0.1:80"}})
	assert.Contains(t, err.Error(), "refusing to connect to 10.0.0.1:80")
}

func itoa(n int) string { return strconv.Itoa(n) }
