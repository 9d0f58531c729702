package rest

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	chat "github.com/teamchat/chat"
)

// rateLimiter is a token bucket per user: n requests per window, refilled
// continuously. It answers with the X-RateLimit-* headers on every request.
type rateLimiter struct {
	mu      sync.Mutex
	n       float64
	window  time.Duration
	now     func() time.Time
	buckets map[chat.Caller]*bucket
	sweeps  int
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRateLimiter(n int, window time.Duration, now func() time.Time) *rateLimiter {
	return &rateLimiter{n: float64(n), window: window, now: now, buckets: map[chat.Caller]*bucket{}}
}

func (l *rateLimiter) refill(b *bucket, now time.Time) {
	elapsed := now.Sub(b.at)
	if elapsed > 0 {
		b.tokens = math.Min(l.n, b.tokens+l.n*elapsed.Seconds()/l.window.Seconds())
		b.at = now
	}
}

// allow takes one token for c, sets the X-RateLimit headers, and reports
// whether the request may go ahead.
func (l *rateLimiter) allow(h http.Header, c chat.Caller) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[c]
	if b == nil {
		b = &bucket{tokens: l.n, at: now}
		l.buckets[c] = b
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

// retryAfter is how long c must wait for the next token.
func (l *rateLimiter) retryAfter(c chat.Caller) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[c]
	if b == nil || b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) / l.n * float64(l.window))
}

// sweep drops full buckets now and then, so idle users cost no memory;
// the caller holds mu.
func (l *rateLimiter) sweep(now time.Time) {
	if l.sweeps++; l.sweeps%1024 != 0 {
		return
	}
	for c, b := range l.buckets {
		l.refill(b, now)
		if b.tokens >= l.n {
			delete(l.buckets, c)
		}
	}
}
