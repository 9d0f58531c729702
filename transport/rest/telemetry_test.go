package rest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// observed is a harness whose Service, store and handler report to the
// given providers (either may be nil).
func observed(tb testing.TB, tp trace.TracerProvider, mp metric.MeterProvider) (*chattest.Harness, http.Handler) {
	tb.Helper()
	var opts []chat.Option
	if tp != nil {
		opts = append(opts, chat.WithTracerProvider(tp))
	}
	if mp != nil {
		opts = append(opts, chat.WithMeterProvider(mp))
	}
	h := chattest.New(tb, chattest.WithServiceOptions(opts...))
	if st, ok := h.Store.(*bunstore.Store); ok {
		require.NoError(tb, st.Instrument(tp, mp))
	}
	return h, rest.NewHandler(h.Service, rest.WithRateLimit(0, 0), rest.WithTracerProvider(tp), rest.WithMeterProvider(mp))
}

func serveOnce(h http.Handler, method, target string, u *chattest.User, form url.Values, header http.Header) *httptest.ResponseRecorder {
	var req *http.Request
	target = "http://chat.example.com" + target // the harness's organization
	if method == "GET" {
		req = httptest.NewRequest(method, target+"?"+form.Encode(), nil)
	} else {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if u != nil {
		req.SetBasicAuth(u.Email, u.APIKey)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// A send's trace shows where its time went: the server span (continuing
// the client's trace), authentication, rendering, and the write path's
// transaction with its lock, its statements and the events' publication.
func TestTraceOfASend(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	h, handler := observed(t, tp, nil)
	owner := h.Owner
	w := serveOnce(handler, "POST", "/api/v1/users/me/subscriptions", &owner, url.Values{"subscriptions": {`[{"name": "traced"}]`}}, nil)
	require.Equal(t, 200, w.Code, w.Body.String())

	clientTrace := "4bf92f3577b34da6a3ce929d0e0e4736"
	w = serveOnce(handler, "POST", "/api/v1/messages", &owner, url.Values{"type": {"channel"}, "to": {"traced"}, "topic": {"t"}, "content": {"**hi**"}},
		http.Header{"Traceparent": {"00-" + clientTrace + "-00f067aa0ba902b7-01"}})
	require.Equal(t, 200, w.Code, w.Body.String())

	var server sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "POST /api/v1/messages" {
			server = s
		}
	}
	require.NotNil(t, server, "the server span is named by its route")
	assert.Equal(t, clientTrace, server.SpanContext().TraceID().String(), "it continues the client's trace")
	assert.Equal(t, trace.SpanKindServer, server.SpanKind())
	assert.Contains(t, server.Attributes(), attribute.String("http.route", "/api/v1/messages"))
	assert.Contains(t, server.Attributes(), attribute.Int("http.response.status_code", 200))

	// The spans of this trace, by name, and each one's parent's name.
	names := map[trace.SpanID]string{}
	var spans []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID() == server.SpanContext().TraceID() {
			names[s.SpanContext().SpanID()] = s.Name()
			spans = append(spans, s)
		}
	}
	parentOf := map[string][]string{}
	statements := 0
	for _, s := range spans {
		parent := names[s.Parent().SpanID()]
		parentOf[s.Name()] = append(parentOf[s.Name()], parent)
		if s.SpanKind() == trace.SpanKindClient && (parent == "chat.write.transaction" || parent == "chat.write.lock" || parent == "chat.events.publish") {
			statements++
		}
	}
	for name, parent := range map[string]string{
		"chat.authenticate":      "POST /api/v1/messages",
		"chat.render":            "POST /api/v1/messages",
		"chat.write":             "POST /api/v1/messages",
		"chat.write.transaction": "chat.write",
		"chat.write.lock":        "chat.write.transaction",
		"chat.events.publish":    "chat.write.transaction",
	} {
		assert.Contains(t, parentOf[name], parent, "%s is a child of %s", name, parent)
	}
	assert.Positive(t, statements, "the transaction's statements are spans of their own (bunotel)")
}

// The request metric follows the semantic conventions: by route pattern
// (never the raw path), method, status and the Service's error kind.
func TestRequestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	h, handler := observed(t, nil, mp)
	bob := h.NewUser(t, chat.RoleMember)
	for range 2 {
		require.Equal(t, 200, serveOnce(handler, "GET", "/api/v1/users/"+strconv.FormatInt(bob.ID, 10), &h.Owner, nil, nil).Code)
	}
	require.Equal(t, 400, serveOnce(handler, "GET", "/api/v1/users/999999", &h.Owner, nil, nil).Code, "the reference answers 400")
	require.Equal(t, 401, serveOnce(handler, "GET", "/api/v1/users/me", nil, nil, nil).Code)
	require.Equal(t, 404, serveOnce(handler, "GET", "/api/v1/no/such/route", &h.Owner, nil, nil).Code)

	got := map[string]uint64{}
	for _, m := range collected(t, reader, "http.server.request.duration") {
		assert.Equal(t, "s", m.Unit)
		for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
			route, _ := dp.Attributes.Value("http.route")
			status, _ := dp.Attributes.Value("http.response.status_code")
			errType, _ := dp.Attributes.Value("error.type")
			method, _ := dp.Attributes.Value("http.request.method")
			got[method.AsString()+" "+route.AsString()+" "+status.Emit()+" "+errType.AsString()] += dp.Count
		}
	}
	assert.Equal(t, map[string]uint64{
		"GET /api/v1/users/{user_id:int} 200 ":          2,
		"GET /api/v1/users/{user_id:int} 400 not_found": 1,
		"GET /api/v1/users/me 401 unauthenticated":      1,
		"GET  404 not_found":                            1, // no route: no http.route
	}, got)
}

// collected collects reader's metrics and returns those named name.
func collected(t *testing.T, reader *sdkmetric.ManualReader, name string) []metricdata.Metrics {
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	var out []metricdata.Metrics
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				out = append(out, m)
			}
		}
	}
	return out
}

// http.server.active_requests counts the requests in flight by method and
// scheme: one while a request is served, none once it is answered.
func TestActiveRequests(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	h := chattest.New(t)
	entered, release := make(chan struct{}), make(chan struct{})
	auth := func(r *http.Request, realmID int64) (chat.Caller, error) {
		entered <- struct{}{}
		<-release
		return chat.Caller{RealmID: realmID, UserID: h.Owner.ID}, nil
	}
	handler := rest.NewHandler(h.Service, rest.WithRateLimit(0, 0), rest.WithAuthenticator(auth), rest.WithMeterProvider(mp))
	active := func() map[string]int64 {
		out := map[string]int64{}
		for _, m := range collected(t, reader, "http.server.active_requests") {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				method, _ := dp.Attributes.Value("http.request.method")
				scheme, _ := dp.Attributes.Value("url.scheme")
				out[method.AsString()+" "+scheme.AsString()] += dp.Value
			}
		}
		return out
	}
	assert.Empty(t, active(), "no request came yet")
	done := make(chan int)
	go func() { done <- serveOnce(handler, "GET", "/api/v1/users/me", nil, nil, nil).Code }()
	<-entered
	assert.Equal(t, map[string]int64{"GET http": 1}, active())
	close(release)
	require.Equal(t, 200, <-done)
	assert.Equal(t, map[string]int64{"GET http": 0}, active())
}

// A request whose trace is not sampled makes no span anywhere (the
// Service and the store learn from its context that the trace is not
// recorded, and start no trace of their own), and the host's
// Authenticator sees the server span's trace in the request's context,
// sampled or not.
func TestUnsampledRequestMakesNoSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	// Server spans without a parent are left out; any other root span
	// (one started without the request's context) would be recorded.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(serverSpansDropped{})), sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithTracerProvider(tp)))
	if st, ok := h.Store.(*bunstore.Store); ok {
		require.NoError(t, st.Instrument(tp, nil))
	}
	setup := len(rec.Ended()) // the harness's own calls, traced from no request
	var seen []trace.SpanContext
	auth := func(r *http.Request, realmID int64) (chat.Caller, error) {
		seen = append(seen, trace.SpanContextFromContext(r.Context()))
		return h.Service.Authenticate(r.Context(), realmID, h.Owner.Email, h.Owner.APIKey)
	}
	plain := rest.NewHandler(h.Service, rest.WithRateLimit(0, 0), rest.WithTracerProvider(tp))
	w := serveOnce(plain, "POST", "/api/v1/users/me/subscriptions", &h.Owner, url.Values{"subscriptions": {`[{"name": "traced"}]`}}, nil)
	require.Equal(t, 200, w.Code, w.Body.String())
	for _, handler := range []http.Handler{
		plain,
		rest.NewHandler(h.Service, rest.WithRateLimit(0, 0), rest.WithTracerProvider(tp), rest.WithAuthenticator(auth)),
	} {
		w := serveOnce(handler, "POST", "/api/v1/messages", &h.Owner, url.Values{"type": {"channel"}, "to": {"traced"}, "topic": {"t"}, "content": {"hi"}}, nil)
		require.Equal(t, 200, w.Code, w.Body.String())
		require.Equal(t, 200, serveOnce(handler, "GET", "/api/v1/users/me", &h.Owner, nil, nil).Code)
	}
	assert.Empty(t, rec.Ended()[setup:], "nothing of an unsampled trace is recorded")
	require.Len(t, seen, 2)
	for _, sc := range seen {
		assert.True(t, sc.IsValid(), "the Authenticator runs in the server span")
		assert.False(t, sc.IsSampled())
	}

	// A sampled client trace is recorded, and the Authenticator runs in it.
	clientTrace := "4bf92f3577b34da6a3ce929d0e0e4736"
	handler := rest.NewHandler(h.Service, rest.WithRateLimit(0, 0), rest.WithTracerProvider(tp), rest.WithAuthenticator(auth))
	w = serveOnce(handler, "GET", "/api/v1/users/me", &h.Owner, nil, http.Header{"Traceparent": {"00-" + clientTrace + "-00f067aa0ba902b7-01"}})
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Len(t, seen, 3)
	assert.Equal(t, clientTrace, seen[2].TraceID().String())
	assert.True(t, seen[2].IsSampled())
	names := map[string]bool{}
	for _, s := range rec.Ended()[setup:] {
		assert.Equal(t, clientTrace, s.SpanContext().TraceID().String())
		names[s.Name()] = true
	}
	assert.True(t, names["GET /api/v1/users/me"] && names["chat.authenticate"], "%v", names)
}

// serverSpansDropped samples every root span but a server's.
type serverSpansDropped struct{}

func (serverSpansDropped) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if p.Kind == trace.SpanKindServer {
		return sdktrace.SamplingResult{Decision: sdktrace.Drop}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}

func (serverSpansDropped) Description() string { return "server spans dropped" }
