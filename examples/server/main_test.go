package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start runs the server until the returned stop is called.
func start(t testing.TB, cfg config) (addr string, out *syncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &syncBuffer{}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, out, io.Discard, ready) }()
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("server exited: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	return addr, out, func() {
		cancel()
		require.NoError(t, <-done, "graceful shutdown")
	}
}

func defaultConfig(db string) config {
	return config{addr: "127.0.0.1:0", db: db, realmName: "Teamchat", ownerEmail: "owner@teamchat.localhost", logLevel: "info", rateLimit: 200, addressRateLimit: 100}
}

func TestServerFirstAndLaterStarts(t *testing.T) {
	db := filepath.Join(t.TempDir(), "teamchat.db")
	addr, out, stop := start(t, defaultConfig(db))
	text := out.String()
	assert.Contains(t, text, "owner email:    owner@teamchat.localhost")
	password := regexp.MustCompile(`owner password: (\S+)`).FindStringSubmatch(text)
	key := regexp.MustCompile(`owner API key:  ([A-Za-z0-9]{32})`).FindStringSubmatch(text)
	require.Len(t, password, 2, text)
	require.Len(t, key, 2, text)
	assert.Contains(t, text, "curl -sS -u owner@teamchat.localhost:"+key[1]+" http://"+addr+"/api/v1/users/me")

	// The printed curl command works.
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/users/me", nil)
	req.SetBasicAuth("owner@teamchat.localhost", key[1])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var me map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&me))
	resp.Body.Close()
	assert.Equal(t, "success", me["result"])
	assert.EqualValues(t, 100, me["role"])
	stop()

	// A later start reuses the database: same owner, same key, the printed password still logs in.
	addr, out, stop = start(t, defaultConfig(db))
	defer stop()
	assert.Contains(t, out.String(), `serving "Teamchat"`)
	assert.NotContains(t, out.String(), "owner password")
	resp, err = http.PostForm("http://"+addr+"/api/v1/fetch_api_key", map[string][]string{
		"username": {"owner@teamchat.localhost"}, "password": {password[1]}})
	require.NoError(t, err)
	var fetched map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&fetched))
	resp.Body.Close()
	assert.Equal(t, key[1], fetched["api_key"])
}

// The web client is at "/", beside the API, and the first start says so.
func TestServerServesTheWebClient(t *testing.T) {
	addr, out, stop := start(t, defaultConfig(filepath.Join(t.TempDir(), "teamchat.db")))
	defer stop()
	assert.Contains(t, out.String(), "Web client: open http://"+addr+"/ and log in with the email and password above.")
	for path, typ := range map[string]string{"/": "text/html; charset=utf-8", "/web/js/main.js": "text/javascript; charset=utf-8"} {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Equal(t, typ, resp.Header.Get("Content-Type"), path)
		assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'", path)
	}
	resp, err := http.Get("http://" + addr + "/api/v1/server_settings")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
}

func TestServerFlags(t *testing.T) {
	cfg := defaultConfig(filepath.Join(t.TempDir(), "x.db"))
	cfg.ownerEmail, cfg.ownerPassword, cfg.realmName = "boss@acme.example.com", "my chosen password", "Acme"
	_, out, stop := start(t, cfg)
	defer stop()
	assert.Contains(t, out.String(), `created organization "Acme"`)
	assert.Contains(t, out.String(), "owner password: my chosen password")

	bad := defaultConfig(filepath.Join(t.TempDir(), "y.db"))
	bad.ownerPassword = "123"
	err := run(context.Background(), bad, io.Discard, io.Discard, nil)
	require.ErrorContains(t, err, "The password is too weak.")
	bad.logLevel = "loud"
	require.ErrorContains(t, run(context.Background(), bad, io.Discard, io.Discard, nil), "-log-level")
	bad = defaultConfig(filepath.Join(t.TempDir(), "z.db"))
	bad.trustedProxies = "10.0.0.0/8, proxy.example.com"
	require.ErrorContains(t, run(context.Background(), bad, io.Discard, io.Discard, nil), `-trusted-proxies: trusted proxy "proxy.example.com"`)
}

// -address-rate-limit and -trusted-proxies: unauthenticated requests are
// counted per client, named by X-Forwarded-For from a trusted proxy.
func TestServerAddressRateLimitFlags(t *testing.T) {
	cfg := defaultConfig(filepath.Join(t.TempDir(), "x.db"))
	cfg.addressRateLimit, cfg.trustedProxies = 2, "127.0.0.1, ::1"
	addr, _, stop := start(t, cfg)
	defer stop()
	status := func(client string) int {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/server_settings", nil)
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, []int{200, 200, 429, 200}, []int{status("203.0.113.1"), status("203.0.113.1"), status("203.0.113.1"), status("203.0.113.2")})
}

// BenchmarkStartup measures a start on an existing database until the
// server listens: go test -bench Startup ./examples/server
func BenchmarkStartup(b *testing.B) {
	db := filepath.Join(b.TempDir(), "teamchat.db")
	_, _, stop := start(b, defaultConfig(db))
	stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, _, stop := start(b, defaultConfig(db))
		b.StopTimer()
		stop()
		b.StartTimer()
	}
}

// Shutting down ends a waiting long poll at once, without an error (the
// shutdown does not wait for it), and the queue survives the restart, as
// the reference's do: the client polls it again on the new process and
// gets what was sent while it was down, and after.
func TestRestartKeepsEventQueues(t *testing.T) {
	db := filepath.Join(t.TempDir(), "teamchat.db")
	cfg := defaultConfig(db)
	metricsReady := make(chan string, 1)
	cfg.metricsAddr, cfg.metricsReady = "127.0.0.1:0", metricsReady
	addr, out, stop := start(t, cfg)
	metrics := "http://" + <-metricsReady
	key := regexp.MustCompile(`owner API key:  ([A-Za-z0-9]{32})`).FindStringSubmatch(out.String())
	require.Len(t, key, 2)
	base := "http://" + addr
	reg, status, err := post(base, key[1], "/api/v1/register", map[string][]string{"event_types": {`["message"]`}})
	require.NoError(t, err)
	require.Equal(t, 200, status)
	queue := reg["queue_id"].(string)
	polled := make(chan map[string]any, 1)
	go func() {
		body, _, _ := get(base, key[1], "/api/v1/events", map[string][]string{"queue_id": {queue}, "last_event_id": {"-1"}})
		polled <- body
	}()
	require.Eventually(t, func() bool { // the poll is under way
		v, _ := value(scrape(t, metrics), "chat_event_queue_polls_waiting", nil)
		return v == 1
	}, 5*time.Second, 5*time.Millisecond)
	dm := func(base, text string) {
		body, status, err := post(base, key[1], "/api/v1/messages", map[string][]string{"type": {"private"}, "to": {`["owner@teamchat.localhost"]`}, "content": {text}})
		require.NoError(t, err)
		require.Equal(t, 200, status, "%v", body)
	}
	began := time.Now()
	stop()
	assert.Less(t, time.Since(began), 5*time.Second, "shutdown did not wait for the long poll")
	select {
	case body := <-polled:
		assert.Equal(t, "success", body["result"], "%v", body)
		assert.Empty(t, body["events"])
	case <-time.After(5 * time.Second):
		t.Fatal("the long poll did not end")
	}

	addr, _, stop = start(t, defaultConfig(db))
	defer stop()
	base = "http://" + addr
	dm(base, "after the restart")
	var got []string
	require.Eventually(t, func() bool {
		body, status, err := get(base, key[1], "/api/v1/events", map[string][]string{"queue_id": {queue}, "last_event_id": {"-1"}, "dont_block": {"true"}})
		require.NoError(t, err)
		require.Equal(t, 200, status, "the queue survived the restart: %v", body)
		got = got[:0]
		for _, e := range body["events"].([]any) {
			if m, ok := e.(map[string]any)["message"].(map[string]any); ok {
				got = append(got, m["content"].(string))
			}
		}
		return len(got) == 1
	}, 15*time.Second, 200*time.Millisecond) // a look at most five times a second: the API's rate limit stays far
	assert.Equal(t, []string{"after the restart"}, got)
}
