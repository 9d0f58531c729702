package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage/bunstore"
)

// startOperated runs the server with -metrics-addr and the debug log
// (every request logged) until the test ends; it returns the API's base
// URL, the metrics listener's, the owner's API key and the log.
func startOperated(t *testing.T, db string) (base, metrics, key string, log *syncBuffer) {
	t.Helper()
	if db == "" {
		db = filepath.Join(t.TempDir(), "teamchat.db")
	}
	cfg := defaultConfig(db)
	cfg.metricsAddr, cfg.logLevel = "127.0.0.1:0", "debug"
	metricsReady := make(chan string, 1)
	cfg.metricsReady = metricsReady
	ctx, cancel := context.WithCancel(context.Background())
	out, log := &syncBuffer{}, &syncBuffer{}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, out, log, ready) }()
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		cancel()
		t.Fatalf("server exited: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	m := regexp.MustCompile(`owner API key:  ([A-Za-z0-9]{32})`).FindStringSubmatch(out.String())
	require.Len(t, m, 2, out.String())
	return base, "http://" + <-metricsReady, m[1], log
}

// scrape reads /metrics as Prometheus reads it.
func scrape(t *testing.T, metrics string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(metrics + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// value is the sample of the family whose labels include want: a
// counter's or gauge's value, a histogram's count. ok is false when no
// series matches.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Histogram != nil:
			v += float64(m.Histogram.GetSampleCount())
		}
		ok = true
	}
	return v, ok
}

// After a scripted sequence (a queue registered, a send, a poll, a
// failed login, a scheduled message delivered) /metrics shows each of
// them in its series.
// On SQLite and on PostgreSQL.
func TestMetricsAfterAScriptedSequence(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testMetricsAfterAScriptedSequence(t, "") })
	t.Run("postgres", func(t *testing.T) { testMetricsAfterAScriptedSequence(t, postgresTestDB(t)) })
}

func testMetricsAfterAScriptedSequence(t *testing.T, db string) {
	base, metrics, key, _ := startOperated(t, db)
	ch := channelIDOf(t, base, key, "watched")
	reg, status, err := post(base, key, "/api/v1/register", url.Values{"event_types": {`["message"]`}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", reg)
	body, status, err := post(base, key, "/api/v1/messages", url.Values{"type": {"channel"}, "to": {ch}, "topic": {"t"}, "content": {"hello"}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", body)
	// A blocking poll: the send's answer can come back before its event
	// reaches the queue (delivery runs beside it).
	body, status, err = get(base, key, "/api/v1/events", url.Values{"queue_id": {reg["queue_id"].(string)},
		"last_event_id": {"-1"}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", body)
	require.Len(t, body["events"], 1, "the send reached the queue")
	resp, err := http.PostForm(base+"/api/v1/fetch_api_key", url.Values{"username": {"owner@teamchat.localhost"}, "password": {"wrong password"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 401, resp.StatusCode)
	scheduleAll(t, base, key, ch, 1, time.Now().Add(time.Second).Unix())
	require.Eventually(t, func() bool { return pending(t, base, key) == 0 }, 15*time.Second, 50*time.Millisecond)

	fams := scrape(t, metrics)
	http := "http_server_request_duration_seconds"
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{http, map[string]string{"http_route": "/api/v1/messages", "http_request_method": "POST", "http_response_status_code": "200"}, 1},
		{http, map[string]string{"http_route": "/api/v1/events", "http_request_method": "GET", "http_response_status_code": "200"}, 1},
		{http, map[string]string{"http_route": "/api/v1/fetch_api_key", "http_response_status_code": "401", "error_type": "unauthenticated"}, 1},
		{http, map[string]string{"http_route": "/api/v1/scheduled_messages", "http_request_method": "POST"}, 1},
		{"chat_scheduled_deliveries_total", map[string]string{"outcome": "sent"}, 1},
		{"chat_scheduled_lateness_seconds", nil, 1},
		{"chat_scheduled_due", nil, 0},
		{"chat_event_queue_count", nil, 1},
		{"chat_event_queue_events", nil, 2}, // not acknowledged: the send's and the scheduled send's
		{"chat_event_queue_polls_waiting", nil, 0},
		{"chat_event_queue_dropped_total", map[string]string{"reason": "behind"}, 0},
		// The new organization's twelve welcome messages, the send and the
		// scheduled send.
		{"chat_write_duration_seconds", map[string]string{"chat_write_lane": "channel"}, 14},
		// Their writes, and the scheduling's (its scheduled_messages event).
		{"chat_event_delivery_latency_seconds", nil, 3},
		{"chat_webhook_outbox_depth", nil, 0},
	} {
		got, ok := value(fams, c.name, c.labels)
		require.True(t, ok, "%s%v is missing", c.name, c.labels)
		// Writes outside the script (the scheduler's bookkeeping, a
		// presence flush) may add deliveries: at least the script's.
		if c.name == "chat_event_delivery_latency_seconds" {
			assert.GreaterOrEqual(t, got, c.want, "%s%v", c.name, c.labels)
			continue
		}
		assert.Equal(t, c.want, got, "%s%v", c.name, c.labels)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"chat_write_wait_seconds", map[string]string{"chat_write_lane": "organization"}}, // the channel's creation
		{"chat_write_lock_duration_seconds", map[string]string{"chat_write_lane": "channel"}},
		{"chat_cache_hits_total", map[string]string{"cache": "callers"}},
		{"chat_cache_misses_total", map[string]string{"cache": "callers"}},
		{"chat_cache_invalidations_total", map[string]string{"cache": "organization"}},
		{"db_client_connection_max", map[string]string{"db_client_connection_pool_name": "writer"}},
		{"db_client_connection_count", map[string]string{"db_client_connection_state": "idle"}},
		{"go_goroutines", nil},
	} {
		got, ok := value(fams, c.name, c.labels)
		require.True(t, ok, "%s%v is missing", c.name, c.labels)
		assert.Positive(t, got, "%s%v", c.name, c.labels)
	}
	// No series carries an ID of a user, a channel or an organization.
	for name, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				assert.NotRegexp(t, `(^|_)(user|realm|stream|channel|organization)_id$`, l.GetName(), name)
				assert.NotContains(t, l.GetValue(), "/"+ch, name) // no raw paths
			}
		}
	}
}

// /healthz and /readyz answer on the API's address and the metrics one.
func TestHealthAndReadiness(t *testing.T) {
	base, metrics, _, _ := startOperated(t, "")
	for _, u := range []string{base + "/healthz", base + "/readyz", metrics + "/healthz", metrics + "/readyz"} {
		resp, err := http.Get(u)
		require.NoError(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode, u)
		assert.Equal(t, "ok\n", string(raw), u)
	}
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.NotEqual(t, 200, resp.StatusCode, "metrics are served on their own address only")
}

// A request's ID comes from X-Request-ID when it is sane, is made up
// otherwise, and is answered and logged with the request.
func TestRequestIDs(t *testing.T) {
	base, _, key, log := startOperated(t, "")
	do := func(id string) string {
		req, _ := http.NewRequest("GET", base+"/api/v1/users/me", nil)
		req.SetBasicAuth("owner@teamchat.localhost", key)
		if id != "" {
			req.Header.Set("X-Request-ID", id)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		return resp.Header.Get("X-Request-ID")
	}
	assert.Equal(t, "client-given.42", do("client-given.42"))
	made := do("")
	assert.Regexp(t, `^[0-9a-f]{24}$`, made)
	assert.NotEqual(t, made, do(""), "each request gets its own")
	forged := do("x\" level=ERROR msg=forged")
	assert.Regexp(t, `^[0-9a-f]{24}$`, forged, "an ID that could forge a log line is replaced")
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "request_id="+made) }, 5*time.Second, 10*time.Millisecond)
	for _, id := range []string{"client-given.42", made, forged} {
		line := lineWith(log.String(), "request_id="+id)
		assert.Contains(t, line, "path=/api/v1/users/me", "the request's log line carries its ID")
	}
}

func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return fmt.Sprintf("(no line with %q)", s)
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, requests' traces reach the
// collector over OTLP/HTTP, named by their route; other OTEL_* variables
// (here the batch delay) apply.
func TestOTLPTraces(t *testing.T) {
	spans := make(chan string, 100)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(raw, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans <- s.Name
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	base, _, key, log := startOperated(t, "")
	req, _ := http.NewRequest("GET", base+"/api/v1/users/me", nil)
	req.SetBasicAuth("owner@teamchat.localhost", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	seen := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for !seen["GET /api/v1/users/me"] || !seen["chat.authenticate"] {
		select {
		case name := <-spans:
			seen[name] = true
		case <-deadline:
			t.Fatalf("spans seen: %v", seen)
		}
	}

	assert.Regexp(t, `trace_id=[0-9a-f]{32}`, lineWith(log.String(), "path=/api/v1/users/me"), "a request's log line names its trace")

	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	err = run(context.Background(), defaultConfig(filepath.Join(t.TempDir(), "x.db")), io.Discard, io.Discard, nil)
	require.ErrorContains(t, err, "OTEL_TRACES_EXPORTER=zipkin")
}

// /readyz answers 503 with the reason when the Service cannot serve
// (here its store is closed; transport/rest's TestReadinessFollowsTheDatabase
// takes PostgreSQL away and back).
func TestReadyzWhenNotReady(t *testing.T) {
	st, err := bunstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "x.db"))
	require.NoError(t, err)
	svc := chat.New(st)
	t.Cleanup(svc.StopEvents)
	probe := func() (int, string) {
		w := httptest.NewRecorder()
		health(svc, nil).ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		return w.Code, w.Body.String()
	}
	code, body := probe()
	require.Equal(t, 200, code, body)
	require.NoError(t, st.Close())
	code, body = probe()
	assert.Equal(t, 503, code)
	assert.Contains(t, body, "not ready: ")
	assert.Contains(t, body, "closed")
}
