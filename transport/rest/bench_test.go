package rest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// BenchmarkGetOwnUser measures GET /users/me through the handler without a
// network (authentication, routing, the Service and SQLite included):
// go test -bench GetOwnUser -cpu 1,2 ./transport/rest
func BenchmarkGetOwnUser(b *testing.B) {
	h := chattest.New(b)
	alice := h.NewUser(b, chat.RoleMember)
	handler := rest.NewHandler(h.Service, rest.WithRateLimit(0, 0))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", "http://chat.example.com/api/v1/users/me", nil)
			req.SetBasicAuth(alice.Email, alice.APIKey)
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
			_, _ = io.Copy(io.Discard, w.Body)
		}
	})
}

// BenchmarkTelemetry measures what the instrumentation costs: GET
// /users/me and channel sends, with no providers ("off") and with an SDK
// MeterProvider (a manual reader, as a Prometheus exporter has) and an
// SDK TracerProvider sampling 1% of traces into a batching exporter
// ("on"). The two sides are two Services, each on its own Store, on one
// SQLite file, serving the same user and channel; each iteration serves
// one request on each side, alternating which goes first, and times
// each, so that both see the same machine and the same data (a shared
// machine drifts by more than the difference, and two databases differ
// by as much). It reports the median of each and the overhead in percent:
//
//	go test -run - -bench Telemetry -benchtime 5000x ./transport/rest
//
// With TEAMCHAT_BENCH_AA=1 both sides are off (the benchmark's own
// error: the overhead should then be near 0).
//
// Beside them it times, in each iteration, what the SDK does for every
// request whatever the handler does around it: one server span started
// and ended under the same sampler and one histogram record with a made
// attribute set, on providers of their own. Its median as a share of the
// off side is the floor of the overhead ("sdk-floor-%").
func BenchmarkTelemetry(b *testing.B) {
	ctx := context.Background()
	sdkTP, mp := benchProviders(b)
	path := filepath.Join(b.TempDir(), "bench.db")
	open := func(tb testing.TB) storage.Store {
		st, err := bunstore.OpenSQLite(ctx, path)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = st.Close() })
		return st
	}
	h := chattest.New(b, chattest.WithStore(open))
	offHandler := rest.NewHandler(h.Service, rest.WithRateLimit(0, 0))
	stOn := open(b).(*bunstore.Store)
	onOpts := []chat.Option{chat.WithClock(h.Clock.Now)}
	onHandler := http.Handler(rest.NewHandler(chat.New(stOn, onOpts...), rest.WithRateLimit(0, 0)))
	if os.Getenv("TEAMCHAT_BENCH_AA") == "" {
		if err := stOn.Instrument(sdkTP, mp); err != nil {
			b.Fatal(err)
		}
		onOpts = append(onOpts, chat.WithTracerProvider(sdkTP), chat.WithMeterProvider(mp))
		onHandler = rest.NewHandler(chat.New(stOn, onOpts...), rest.WithRateLimit(0, 0),
			rest.WithTracerProvider(sdkTP), rest.WithMeterProvider(mp))
	}
	u := h.NewUser(b, chat.RoleMember)
	if w := serveOnce(offHandler, "POST", "/api/v1/users/me/subscriptions", &u, url.Values{"subscriptions": {`[{"name": "bench"}]`}}, nil); w.Code != http.StatusOK {
		b.Fatal(w.Body)
	}
	handlers := [2]http.Handler{offHandler, onHandler}
	floor := newSDKFloor(b)
	send := url.Values{"type": {"channel"}, "to": {"bench"}, "topic": {"t"}, "content": {"hello **there**"}}
	for _, c := range []struct {
		name, method, path string
		form               url.Values
	}{
		{"users_me", "GET", "/api/v1/users/me", nil},
		{"send", "POST", "/api/v1/messages", send},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took [2][]time.Duration
			var sdk []time.Duration
			n := 0
			for b.Loop() {
				sdk = append(sdk, floor.once())
				for j := range 2 {
					side := (n + j) % 2
					start := time.Now()
					w := serveOnce(handlers[side], c.method, c.path, &u, c.form, nil)
					took[side] = append(took[side], time.Since(start))
					if w.Code != http.StatusOK {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
				}
				n++
			}
			// Medians: a request that the machine's other work stalled
			// says nothing about either side.
			off, on := float64(median(took[0])), float64(median(took[1]))
			b.ReportMetric(off, "ns-off/req")
			b.ReportMetric(on, "ns-on/req")
			b.ReportMetric(100*(on-off)/off, "overhead-%")
			b.ReportMetric(100*float64(median(sdk))/off, "sdk-floor-%")
		})
	}
}

// sdkFloor is the SDK's part of a request's telemetry, on providers of
// its own configured as BenchmarkTelemetry's.
type sdkFloor struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
	opts     []metric.RecordOption
}

func newSDKFloor(b *testing.B) *sdkFloor {
	tp, mp := benchProviders(b)
	h, err := mp.Meter("floor").Float64Histogram("http.server.request.duration", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	if err != nil {
		b.Fatal(err)
	}
	return &sdkFloor{tracer: tp.Tracer("floor"), duration: h, opts: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(
		attribute.String("http.request.method", "GET"), attribute.String("url.scheme", "http"),
		attribute.Int("http.response.status_code", 200), attribute.String("http.route", "/api/v1/users/me")))}}
}

// benchProviders are the SDK providers of BenchmarkTelemetry's "on"
// side: traces sampled at 1% into a batching exporter, metrics read by a
// manual reader (as a Prometheus exporter reads them).
func benchProviders(b *testing.B) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))),
		sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
}

// once times one span and one record.
func (f *sdkFloor) once() time.Duration {
	start := time.Now()
	_, sp := f.tracer.Start(context.Background(), "GET", trace.WithSpanKind(trace.SpanKindServer))
	sp.End()
	f.duration.Record(context.Background(), time.Since(start).Seconds(), f.opts...)
	return time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}
