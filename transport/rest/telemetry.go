package rest

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	active         metric.Int64UpDownCounter

	mu   sync.RWMutex
	sets map[requestKind][]metric.RecordOption
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
		t.active, _ = m.Int64UpDownCounter("http.server.active_requests", metric.WithUnit("{request}"),
			metric.WithDescription("Number of active HTTP server requests."))
		t.sets = map[requestKind][]metric.RecordOption{}
		t.on = true
	}
}

// knownMethods are the methods reported by name; any other is _OTHER
// (the conventions' bound on the attribute's values).
var knownMethods = map[string]string{"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH",
	"DELETE": "DELETE", "OPTIONS": "OPTIONS", "CONNECT": "CONNECT", "TRACE": "TRACE"}

func methodName(m string) string {
	if n, ok := knownMethods[m]; ok {
		return n
	}
	return "_OTHER"
}

// activeOpts are http.server.active_requests' attribute sets of a method
// (by name, as methodName gives it) and scheme, made once.
var activeOpts = func() map[string][2][]metric.AddOption {
	m := map[string][2][]metric.AddOption{}
	for _, method := range append(slices.Collect(maps.Values(knownMethods)), "_OTHER") {
		var opts [2][]metric.AddOption
		for i, scheme := range []string{"http", "https"} {
			opts[i] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
				attribute.String("http.request.method", method), attribute.String("url.scheme", scheme)))}
		}
		m[method] = opts
	}
	return m
}()

// record returns the attribute set of a kind of request, made once.
func (t *handlerTelemetry) record(k requestKind) []metric.RecordOption {
	t.mu.RLock()
	opts, ok := t.sets[k]
	t.mu.RUnlock()
	if ok {
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
	opts = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
	t.mu.Lock()
	t.sets[k] = opts
	t.mu.Unlock()
	return opts
}

var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// serveObserved serves r in a server span, measured.
func (h *Handler) serveObserved(w http.ResponseWriter, r *http.Request, serve func(*statusRecorder, *http.Request)) {
	t := &h.tel
	start := time.Now()
	method, scheme, tls := methodName(r.Method), "http", 0
	if r.TLS != nil {
		scheme, tls = "https", 1
	}
	ctx := r.Context()
	var sp trace.Span
	if t.tracer != nil {
		ctx = otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(r.Header))
		// The attributes are set once the span is known to be recorded
		// (not given to Start: the SDK's samplers do not read them, and
		// copying them cost every unsampled request a microsecond).
		ctx, sp = t.tracer.Start(ctx, method, serverKind)
		if sp.IsRecording() {
			sp.SetAttributes(attribute.String("http.request.method", method), attribute.String("url.scheme", scheme),
				attribute.String("url.path", r.URL.Path), attribute.String("user_agent.original", r.UserAgent()))
		}
		r = r.WithContext(ctx)
	}
	if t.active != nil {
		active := activeOpts[method][tls]
		t.active.Add(ctx, 1, active...)
		defer t.active.Add(ctx, -1, active...)
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	serve(rec, r)
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
		t.duration.Record(ctx, time.Since(start).Seconds(), t.record(k)...)
	}
	h.logRequest(r, rec, start)
}
