package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// Database faults, through a real fault proxy (toxiproxy, in this
// process) between the server and PostgreSQL: the database going away and
// coming back, every connection reset, and a stall. Requests during an
// outage get a clear answer (503, never a panic, a stack or SQL text); the
// server reconnects by itself; no acknowledged message is lost; the event
// listener listens again and queues that may have missed events are
// dropped, so that their clients register again.

// faultyPostgres is a test server whose store reaches PostgreSQL through
// a proxy.
type faultyPostgres struct {
	proxy *toxiproxy.Proxy
	srv   *httptest.Server
	h     *chattest.Harness
}

func newFaultyPostgres(t *testing.T) *faultyPostgres {
	t.Helper()
	dsn, schema := bunstore.NewTestPostgresSchema(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	proxy := toxiproxy.NewProxy(api, "postgres", "127.0.0.1:0", u.Host)
	require.NoError(t, proxy.Start())
	t.Cleanup(proxy.Stop)
	u.Host = proxy.Listen
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	st, err := bunstore.OpenPostgres(context.Background(), u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	logs := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return st }),
		chattest.WithServiceOptions(chat.WithLogger(slog.New(slog.NewTextHandler(logs, nil)))))
	ctx, stop := context.WithCancel(context.Background())
	go func() { _ = h.Service.Run(ctx) }() // the event bus's listener among others
	t.Cleanup(stop)
	srv := httptest.NewServer(rest.NewHandler(h.Service, rest.WithRateLimit(0, 0)))
	t.Cleanup(srv.Close)
	return &faultyPostgres{proxy: proxy, srv: srv, h: h}
}

// lockedBuffer collects the server's log, shown when a test fails.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// call sends one request as u; a transport error gives status 0.
func (f *faultyPostgres) call(ctx context.Context, u chattest.User, method, path string, form url.Values) (int, map[string]any, string) {
	var body io.Reader
	target := f.srv.URL + path
	if method == http.MethodGet {
		target += "?" + form.Encode()
	} else {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequestWithContext(ctx, method, target, body)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.SetBasicAuth(u.Email, u.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, string(raw)
}

// sendLoad runs 8 clients sending to channel until stop closes; count
// says how many sends were acknowledged so far, and wait (after stop)
// returns the acknowledged IDs and every failed answer.
func (f *faultyPostgres) sendLoad(u chattest.User, channel string, stop <-chan struct{}) (count func() int, wait func() (acked []int64, failures []string)) {
	var mu sync.Mutex
	var ids []int64
	var failed []string
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				status, body, raw := f.call(ctx, u, "POST", "/api/v1/messages", url.Values{"type": {"channel"}, "to": {channel},
					"topic": {"load"}, "content": {fmt.Sprintf("%d-%d", w, i)}})
				cancel()
				mu.Lock()
				if status == http.StatusOK {
					ids = append(ids, int64(body["id"].(float64)))
				} else {
					failed = append(failed, fmt.Sprintf("%d %s", status, raw))
				}
				mu.Unlock()
				if status != http.StatusOK {
					time.Sleep(20 * time.Millisecond) // as a client backs off
				}
			}
		})
	}
	count = func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(ids)
	}
	return count, func() ([]int64, []string) {
		wg.Wait()
		return ids, failed
	}
}

// checkOutageAnswers: every failed answer is a clear 503 in the API's
// envelope, with nothing of the server's insides.
func checkOutageAnswers(t *testing.T, failures []string) {
	t.Helper()
	for _, f := range failures {
		require.True(t, strings.HasPrefix(f, "503 "), "a failure during the outage: %s", f)
		for _, leak := range []string{"SELECT", "INSERT", "pgdriver", "bunstore", "goroutine", "panic", "dial tcp", ".go:"} {
			assert.NotContains(t, f, leak)
		}
		var body map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(f, "503 ")), &body))
		assert.Equal(t, "error", body["result"])
		assert.Equal(t, chat.CodeServiceUnavailable, body["code"])
	}
}

func TestDatabaseOutageUnderSendLoad(t *testing.T) {
	chattest.SkipStoreRerun(t)
	faults := []struct {
		name       string
		start, end func(t *testing.T, p *toxiproxy.Proxy)
	}{
		{"restart", // gone (connections cut, new ones refused), then back
			func(t *testing.T, p *toxiproxy.Proxy) { p.Stop() },
			func(t *testing.T, p *toxiproxy.Proxy) { require.NoError(t, p.Start()) }},
		{"reset", // every connection reset as it is used, then healthy
			func(t *testing.T, p *toxiproxy.Proxy) {
				_, err := p.Toxics.AddToxicJson(strings.NewReader(`{"name":"reset","type":"reset_peer","stream":"upstream","attributes":{"timeout":0}}`))
				require.NoError(t, err)
			},
			func(t *testing.T, p *toxiproxy.Proxy) {
				require.NoError(t, p.Toxics.RemoveToxic(context.Background(), "reset"))
			}},
	}
	for _, fault := range faults {
		t.Run(fault.name, func(t *testing.T) {
			f := newFaultyPostgres(t)
			owner := f.h.Owner
			status, _, raw := f.call(context.Background(), owner, "POST", "/api/v1/users/me/subscriptions",
				url.Values{"subscriptions": {`[{"name": "faults"}]`}})
			require.Equal(t, 200, status, raw)
			status, reg, raw := f.call(context.Background(), owner, "POST", "/api/v1/register", url.Values{"event_types": {`["message"]`}})
			require.Equal(t, 200, status, raw)
			queue := reg["queue_id"].(string)

			stop := make(chan struct{})
			count, wait := f.sendLoad(owner, "faults", stop)
			time.Sleep(500 * time.Millisecond)
			fault.start(t, f.proxy)
			time.Sleep(1500 * time.Millisecond)
			fault.end(t, f.proxy)
			// Back: the server reconnects by itself.
			require.Eventually(t, func() bool {
				status, _, _ := f.call(context.Background(), owner, "GET", "/api/v1/users/me", nil)
				return status == 200
			}, 20*time.Second, 50*time.Millisecond, "the server answers again")
			before := count()
			time.Sleep(700 * time.Millisecond)
			close(stop)
			acked, failures := wait()
			assert.Greater(t, len(acked), before, "sends succeed again after the outage")
			require.NotEmpty(t, failures, "the outage was felt")
			checkOutageAnswers(t, failures)

			// No acknowledged message is lost.
			missing := 0
			for _, id := range acked {
				status, _, _ := f.call(context.Background(), owner, "GET", fmt.Sprintf("/api/v1/messages/%d", id), nil)
				if status != 200 {
					missing++
				}
			}
			assert.Zero(t, missing, "of %d acknowledged", len(acked))

			// The queue is dropped if it may have missed events (the
			// listener lost its connection), and otherwise has every
			// acknowledged message.
			dropped, got, last := false, map[int64]bool{}, "-1"
			complete := func() bool {
				for _, id := range acked {
					if !got[id] {
						return false
					}
				}
				return true
			}
			for deadline := time.Now().Add(20 * time.Second); !dropped && !complete() && time.Now().Before(deadline); {
				status, body, raw := f.call(context.Background(), owner, "GET", "/api/v1/events",
					url.Values{"queue_id": {queue}, "last_event_id": {last}, "dont_block": {"true"}})
				if status == 400 && body["code"] == chat.CodeBadEventQueueID {
					dropped = true
					break
				}
				require.Equal(t, 200, status, raw)
				for _, raw := range body["events"].([]any) {
					ev := raw.(map[string]any)
					last = fmt.Sprint(ev["id"])
					if ev["type"] == "message" {
						got[int64(ev["message"].(map[string]any)["id"].(float64))] = true
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			assert.True(t, dropped || complete(), "a queue kept through the outage has every acknowledged message")
			// A new queue gets new messages: the listener listens.
			status, reg, raw = f.call(context.Background(), owner, "POST", "/api/v1/register", url.Values{"event_types": {`["message"]`}})
			require.Equal(t, 200, status, raw)
			status, sent, raw := f.call(context.Background(), owner, "POST", "/api/v1/messages", url.Values{"type": {"channel"},
				"to": {"faults"}, "topic": {"after"}, "content": {"after the outage"}})
			require.Equal(t, 200, status, raw)
			status, evs, raw := f.call(context.Background(), owner, "GET", "/api/v1/events",
				url.Values{"queue_id": {reg["queue_id"].(string)}, "last_event_id": {"-1"}})
			require.Equal(t, 200, status, raw)
			events := evs["events"].([]any)
			require.NotEmpty(t, events)
			assert.Equal(t, sent["id"], events[0].(map[string]any)["message"].(map[string]any)["id"])
			t.Logf("%s: %d sends acknowledged, %d answered 503 during the outage; the old queue dropped: %v",
				fault.name, len(acked), len(failures), dropped)
		})
	}
}

// A database that stalls for 2 s delays writes, but a request ends by its
// deadline, and the pool serves normally once the stall is over.
func TestDatabaseStall(t *testing.T) {
	chattest.SkipStoreRerun(t)
	f := newFaultyPostgres(t)
	owner := f.h.Owner
	status, _, raw := f.call(context.Background(), owner, "POST", "/api/v1/users/me/subscriptions",
		url.Values{"subscriptions": {`[{"name": "stall"}]`}})
	require.Equal(t, 200, status, raw)
	_, err := f.proxy.Toxics.AddToxicJson(strings.NewReader(`{"name":"stall","type":"latency","stream":"downstream","attributes":{"latency":2000}}`))
	require.NoError(t, err)
	lifted := time.Now().Add(2 * time.Second)
	time.AfterFunc(2*time.Second, func() { _ = f.proxy.Toxics.RemoveToxic(context.Background(), "stall") })

	// In process, with a 500 ms deadline: back by then.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := f.h.Service.SendMessage(ctx, owner.Caller, chat.SendMessageRequest{Type: "channel",
				To: chat.ToChannel("stall"), Topic: ptr("t"), Content: fmt.Sprint("during ", i)})
			assert.Error(t, err, "the database answers after the deadline")
			assert.Less(t, time.Since(start), 1500*time.Millisecond, "ends by its deadline, not the database's")
		})
	}
	// Over HTTP, with a client that waits long enough: delayed, not lost.
	for i := range 4 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			status, _, raw := f.call(ctx, owner, "POST", "/api/v1/messages", url.Values{"type": {"channel"},
				"to": {"stall"}, "topic": {"t"}, "content": {fmt.Sprint("delayed ", i)}})
			assert.Equal(t, 200, status, raw)
		})
	}
	wg.Wait()
	// Once the stall is over, requests are fast again: no connection is
	// left stuck in the pool.
	time.Sleep(time.Until(lifted) + 100*time.Millisecond)
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		status, _, raw := f.call(ctx, owner, "POST", "/api/v1/messages", url.Values{"type": {"channel"},
			"to": {"stall"}, "topic": {"t"}, "content": {fmt.Sprint("after ", i)}})
		cancel()
		require.Equal(t, 200, status, raw)
		assert.Less(t, time.Since(start), time.Second)
	}
}

// Readiness follows the database: false while PostgreSQL is gone (the
// pool cannot reach it, the event listener lost its connection), true
// again once it is back and the listener has reconnected.
func TestReadinessFollowsTheDatabase(t *testing.T) {
	chattest.SkipStoreRerun(t)
	f := newFaultyPostgres(t)
	svc := f.h.Service
	ready := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return svc.Ready(ctx)
	}
	require.Eventually(t, func() bool { return ready() == nil }, 10*time.Second, 20*time.Millisecond, "ready once listening")
	f.proxy.Stop()
	err := ready()
	require.Error(t, err, "not ready while the database is gone")
	assert.Equal(t, chat.KindUnavailable, chat.AsError(err).Kind)
	require.Eventually(t, func() bool { err := ready(); return err != nil && strings.Contains(err.Error(), "event listener") },
		10*time.Second, 20*time.Millisecond, "the event listener's lost connection counts")
	require.NoError(t, f.proxy.Start())
	require.Eventually(t, func() bool { return ready() == nil }, 15*time.Second, 50*time.Millisecond, "ready again once it is back")
}
