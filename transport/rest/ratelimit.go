package rest

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	chat "github.com/teamchat/chat"
)

// rateLimiter is a token bucket per key (a user, or a client address): n
// requests per window, refilled continuously. It answers with the
// X-RateLimit-* headers on every request.
type rateLimiter[K comparable] struct {
	mu      sync.Mutex
	n       float64
	window  time.Duration
	now     func() time.Time
	buckets map[K]*bucket
	sweeps  int
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRateLimiter[K comparable](n int, window time.Duration, now func() time.Time) *rateLimiter[K] {
	return &rateLimiter[K]{n: float64(n), window: window, now: now, buckets: map[K]*bucket{}}
}

func (l *rateLimiter[K]) refill(b *bucket, now time.Time) {
	elapsed := now.Sub(b.at)
	if elapsed > 0 {
		b.tokens = math.Min(l.n, b.tokens+l.n*elapsed.Seconds()/l.window.Seconds())
		b.at = now
	}
}

// allow takes one token for k, sets the X-RateLimit headers, and reports
// whether the request may go ahead.
func (l *rateLimiter[K]) allow(h http.Header, k K) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[k]
	if b == nil {
		b = &bucket{tokens: l.n, at: now}
		l.buckets[k] = b
		l.sweep(now)
	}
	l.refill(b, now)
	ok := b.tokens >= 1
	if ok {
		b.tokens--
	}
	untilFull := time.Duration((l.n - b.tokens) / l.n * float64(l.window))
	h.Set("X-RateLimit-Limit", strconv.Itoa(int(l.n)))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(int(math.Floor(b.tokens))))
	h.Set("X-RateLimit-Reset", fmt.Sprint(now.Add(untilFull).Unix()))
	return ok
}

// retryAfter is how long k must wait for the next token.
func (l *rateLimiter[K]) retryAfter(k K) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[k]
	if b == nil || b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) / l.n * float64(l.window))
}

// sweep drops full buckets now and then, so idle users and addresses cost
// no memory; the caller holds mu.
func (l *rateLimiter[K]) sweep(now time.Time) {
	if l.sweeps++; l.sweeps%1024 != 0 {
		return
	}
	for k, b := range l.buckets {
		l.refill(b, now)
		if b.tokens >= l.n {
			delete(l.buckets, k)
		}
	}
}

// limited takes a token from k's bucket of l (nil: no limit) and, when
// there is none, answers the request with RATE_LIMIT_HIT and Retry-After
// and reports true.
func limited[K comparable](h *Handler, l *rateLimiter[K], k K, w http.ResponseWriter, r *http.Request) bool {
	if l == nil || l.allow(w.Header(), k) {
		return false
	}
	retry := l.retryAfter(k)
	w.Header().Set("Retry-After", retryHeader(retry))
	writeError(w, h.log, r, chat.RateLimited("API usage exceeded rate limit", math.Ceil(retry.Seconds())))
	return true
}

// limitedAddress is limited for a request that is not authenticated: its
// client address's bucket.
func (h *Handler) limitedAddress(w http.ResponseWriter, r *http.Request) bool {
	return limited(h, h.addrLimiter, addressKey(h.clientAddr(r)), w, r)
}

// clientAddr is the address the request comes from: the connection's
// peer, unless that peer is a trusted proxy; then X-Forwarded-For is read
// from its right end, past the trusted proxies, to the first address that
// is not one (a client can write anything at the left end of the header,
// so only what the trusted proxies appended counts). An invalid entry
// stops the walk at the last trusted proxy.
func (h *Handler) clientAddr(r *http.Request) netip.Addr {
	addr := parseAddr(r.RemoteAddr)
	if !h.trusted(addr) {
		return addr
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := parseAddr(strings.TrimSpace(hops[i]))
		if !hop.IsValid() {
			break
		}
		addr = hop
		if !h.trusted(hop) {
			break
		}
	}
	return addr
}

func (h *Handler) trusted(a netip.Addr) bool {
	for _, p := range h.trustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseAddr reads an address with or without a port (IPv4-mapped IPv6
// addresses as IPv4); the zero Addr when it is neither.
func parseAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// addressKey is the bucket of an address: the address itself for IPv4,
// its /64 for IPv6 (what one subscriber is usually given, so that a client
// cannot walk its own network for fresh budgets). Requests whose address
// cannot be read share one bucket.
func addressKey(a netip.Addr) netip.Prefix {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p
	}
	p, _ := a.Prefix(a.BitLen())
	return p
}

// ParseTrustedProxies reads a comma-separated list of addresses and
// prefixes ("10.0.0.1, 192.168.0.0/16, fd00::/8") for WithTrustedProxies.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a prefix", part)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
