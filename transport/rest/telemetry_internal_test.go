package rest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkHandlerInstrumentation measures the handler's own telemetry
// (the server span, the request metrics) around a request that reaches
// no Service (OPTIONS of a route: found, answered 204), by a handler
// instrumented as BenchmarkTelemetry's and by one that is not, in turn in
// one loop; it reports the median of batches of 100 requests of each, per
// request:
//
//	go test -run - -bench HandlerInstrumentation ./transport/rest
func BenchmarkHandlerInstrumentation(b *testing.B) {
	ctx := context.Background()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))),
		sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(ctx) })
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	var hs [2]*Handler
	for i := range hs {
		hs[i] = &Handler{log: slog.New(slog.DiscardHandler), now: time.Now, router: newRouter(routes())}
		if i == 1 {
			hs[i].tel.tracerProvider, hs[i].tel.meterProvider = tp, mp
		}
		hs[i].tel.start()
	}
	req := httptest.NewRequest("OPTIONS", "http://chat.example.com/api/v1/users/me", nil)
	w := httptest.NewRecorder()
	const batch = 100
	var took [2][]time.Duration
	b.ReportAllocs()
	for b.Loop() {
		for side := range 2 {
			start := time.Now()
			for range batch {
				hs[side].ServeHTTP(w, req)
			}
			took[side] = append(took[side], time.Since(start)/batch)
		}
	}
	off, on := float64(median(took[0])), float64(median(took[1]))
	b.ReportMetric(off, "ns-off/req")
	b.ReportMetric(on, "ns-on/req")
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// headerCarrier answers as propagation.HeaderCarrier does.
func TestHeaderCarrier(t *testing.T) {
	h := http.Header{}
	h.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.Set("Baggage", "k=v")
	h.Set("X-B3-TraceId", "abc")
	for _, key := range []string{"traceparent", "tracestate", "baggage", "x-b3-traceid", "Traceparent", "missing"} {
		if got, want := headerCarrier(h).Get(key), propagation.HeaderCarrier(h).Get(key); got != want {
			t.Errorf("Get(%q) = %q, want %q", key, got, want)
		}
	}
	if got, want := len(headerCarrier(h).Keys()), 3; got != want {
		t.Errorf("%d keys, want %d", got, want)
	}
}
