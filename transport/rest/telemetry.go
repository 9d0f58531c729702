package rest

import (
	"context"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	chat "github.com/teamchat/chat"
)

// The handler's telemetry follows OpenTelemetry's HTTP server semantic
// conventions by hand rather than through otelhttp, because only the
// router knows the route pattern (http.route) and only the handler knows
// the Service's error kind (error.type): the request duration histogram
// (http.server.request.duration), the requests in flight
// (http.server.active_requests), and a server span per request named
// "METHOD /api/v1/route", continuing the client's trace (W3C
// traceparent, through the global propagator), under which the Service's
// spans (authentication, the write path, rendering) and the store's
// statements nest. Without providers none of it runs.
//
// Its cost is paid by every request, so it is kept to what the SDK must
// do: one span start and one histogram record per request. The requests
// in flight are atomic counters read at collection (an observable
// counter), the histogram's attribute sets are made once per kind of
// request and found without a lock, a request whose trace is not
// recorded is served in the span's context without copying the request
// (serveObserved), and the propagators' headers are read without
// canonicalizing their names. BenchmarkHandlerInstrumentation measures
// this part alone, BenchmarkTelemetry a whole request's.

const instrumentationName = "github.com/teamchat/chat/transport/rest"

// WithMeterProvider measures the requests: http.server.request.duration
// by http.route, http.request.method, http.response.status_code and
// error.type (the Service's error kind), and http.server.active_requests.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(h *Handler) { h.tel.meterProvider = mp }
}

// WithTracerProvider makes a server span of every request, continuing the
// client's trace when its headers carry one (the global propagator's
// format, W3C trace context by default in the OpenTelemetry SDK setups).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(h *Handler) { h.tel.tracerProvider = tp }
}

type handlerTelemetry struct {
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	on             bool
	tracer         trace.Tracer
	duration       metric.Float64Histogram
	// active counts the requests in flight by method (methodNames'
	// index) and scheme (0 http, 1 https), read when metrics are
	// collected (http.server.active_requests): an add to an SDK counter
	// twice per request cost a third of the handler's telemetry.
	active *[len(methodNames)][2]activeCount

	// sets are the attribute sets by kind of request, a map replaced
	// whole when a kind is added (kinds are few; reading it takes no
	// lock); mu orders the additions.
	mu   sync.Mutex
	sets atomic.Pointer[map[requestKind][]metric.RecordOption]
}

// requestKind is what a request's duration is recorded by.
type requestKind struct {
	route, method, scheme string
	status                int
	// failed: the answer was an error of kind (else kind is unset).
	failed bool
	kind   chat.Kind
}

// errorType is error.type of a request that failed with an error of
// kind, or answered status without one ("" when it did not fail).
func (k requestKind) errorType() string {
	switch {
	case k.failed:
		return strings.ReplaceAll(k.kind.String(), " ", "_")
	case k.status >= 500:
		return strconv.Itoa(k.status)
	}
	return ""
}

func (t *handlerTelemetry) start() {
	if t.tracerProvider != nil {
		t.tracer = t.tracerProvider.Tracer(instrumentationName)
		t.on = true
	}
	if t.meterProvider != nil {
		m := t.meterProvider.Meter(instrumentationName)
		t.duration, _ = m.Float64Histogram("http.server.request.duration", metric.WithUnit("s"),
			metric.WithDescription("Duration of HTTP server requests."),
			metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
		active, _ := m.Int64ObservableUpDownCounter("http.server.active_requests", metric.WithUnit("{request}"),
			metric.WithDescription("Number of active HTTP server requests."))
		t.active = new([len(methodNames)][2]activeCount)
		_, _ = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
			for i := range t.active {
				for j := range t.active[i] {
					// A method and scheme are reported once a request
					// of theirs came, as the SDK's own counter would.
					if c := &t.active[i][j]; c.seen.Load() {
						o.ObserveInt64(active, c.n.Load(), activeOpts[i][j]...)
					}
				}
			}
			return nil
		}, active)
		t.sets.Store(&map[requestKind][]metric.RecordOption{})
		t.on = true
	}
}

// methodNames are the methods reported by name; any other is _OTHER
// (the conventions' bound on the attribute's values), the last.
var methodNames = [...]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "_OTHER"}

// methodIndex is the index of m's name in methodNames.
func methodIndex(m string) int {
	for i, n := range methodNames[:len(methodNames)-1] {
		if m == n {
			return i
		}
	}
	return len(methodNames) - 1
}

// activeCount is the requests in flight of one method and scheme, and
// whether one ever came.
type activeCount struct {
	n    atomic.Int64
	seen atomic.Bool
}

// activeOpts are http.server.active_requests' attribute sets by method
// (methodNames' index) and scheme (http, https), made once.
var activeOpts = func() (opts [len(methodNames)][2][]metric.ObserveOption) {
	for i, method := range methodNames {
		for j, scheme := range []string{"http", "https"} {
			opts[i][j] = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(
				attribute.String("http.request.method", method), attribute.String("url.scheme", scheme)))}
		}
	}
	return opts
}()

// record returns the attribute set of a kind of request, made once.
func (t *handlerTelemetry) record(k requestKind) []metric.RecordOption {
	if opts, ok := (*t.sets.Load())[k]; ok {
		return opts
	}
	kv := []attribute.KeyValue{attribute.String("http.request.method", k.method), attribute.String("url.scheme", k.scheme),
		attribute.Int("http.response.status_code", k.status)}
	if k.route != "" {
		kv = append(kv, attribute.String("http.route", k.route))
	}
	if et := k.errorType(); et != "" {
		kv = append(kv, attribute.String("error.type", et))
	}
	opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, ok := (*t.sets.Load())[k]; ok {
		return prev
	}
	next := maps.Clone(*t.sets.Load())
	next[k] = opts
	t.sets.Store(&next)
	return opts
}

var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// serveObserved serves r in a server span, measured.
func (h *Handler) serveObserved(w http.ResponseWriter, r *http.Request, start time.Time) {
	t := &h.tel
	mi, scheme, tls := methodIndex(r.Method), "http", 0
	method := methodNames[mi]
	if r.TLS != nil {
		scheme, tls = "https", 1
	}
	ctx := r.Context()
	var sp trace.Span
	if t.tracer != nil {
		ctx = otel.GetTextMapPropagator().Extract(ctx, headerCarrier(r.Header))
		// The attributes are set once the span is known to be recorded
		// (not given to Start: the SDK's samplers do not read them, and
		// copying them cost every unsampled request a microsecond).
		ctx, sp = t.tracer.Start(ctx, method, serverKind)
		if sp.IsRecording() {
			sp.SetAttributes(attribute.String("http.request.method", method), attribute.String("url.scheme", scheme),
				attribute.String("url.path", r.URL.Path), attribute.String("user_agent.original", r.UserAgent()))
			// A recorded request carries its span for whatever reads
			// the request's context (log lines take its trace ID). An
			// unrecorded one is served in ctx without copying the
			// request for it (a fifth of the handler's telemetry): what
			// runs in ctx (the Service, the store, the host's
			// Authenticator, given r with it) learns from it that its
			// trace is not recorded, and the request's log lines carry
			// no trace ID then.
			r = r.WithContext(ctx)
		}
	}
	if t.active != nil {
		c := &t.active[mi][tls]
		if !c.seen.Load() {
			c.seen.Store(true)
		}
		c.n.Add(1)
		defer c.n.Add(-1)
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	h.serve(rec, r, ctx)
	k := requestKind{route: rec.route, method: method, scheme: scheme, status: rec.status}
	if rec.failure != nil {
		k.failed, k.kind = true, rec.failure.Kind
	}
	if sp != nil && !sp.IsRecording() {
		sp.End()
	} else if sp != nil {
		if rec.route != "" {
			sp.SetName(method + " " + rec.route)
			sp.SetAttributes(attribute.String("http.route", rec.route))
		}
		sp.SetAttributes(attribute.Int("http.response.status_code", rec.status))
		if et := k.errorType(); et != "" {
			sp.SetAttributes(attribute.String("error.type", et))
			if rec.status >= 500 {
				sp.SetStatus(codes.Error, "")
			}
		}
		sp.End()
	}
	if t.duration != nil {
		// The context only serves exemplars, which come from recorded
		// traces: without one, looking for its span would be wasted.
		mctx := context.Background()
		if sp != nil && sp.IsRecording() {
			mctx = ctx
		}
		t.duration.Record(mctx, h.now().Sub(start).Seconds(), t.record(k)...)
	}
	h.logRequest(r, rec, start)
}

// headerCarrier is propagation.HeaderCarrier reading the propagators'
// usual fields by their canonical names, made once: http.Header.Get
// makes a new string of each lower-case name it is asked (traceparent,
// tracestate, baggage) on every request.
type headerCarrier http.Header

var canonicalFields = map[string]string{"traceparent": "Traceparent", "tracestate": "Tracestate", "baggage": "Baggage"}

func (c headerCarrier) Get(key string) string {
	if k, ok := canonicalFields[key]; ok {
		if v := c[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return propagation.HeaderCarrier(c).Get(key)
}

func (c headerCarrier) Set(key, value string) { propagation.HeaderCarrier(c).Set(key, value) }

func (c headerCarrier) Keys() []string { return propagation.HeaderCarrier(c).Keys() }
