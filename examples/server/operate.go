package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	chat "github.com/teamchat/chat"
)

// Operating the server: what an operator watches it with.
//
//   - -metrics-addr serves /metrics (Prometheus text, through
//     OpenTelemetry's Prometheus exporter) apart from the API, with
//     /healthz and /readyz beside it.
//   - /healthz (the process answers) and /readyz (the database answers,
//     is migrated, and on PostgreSQL the event listener is connected) on
//     the API's address too, for a load balancer that probes there.
//   - Every request gets an ID: the client's X-Request-ID when it is
//     sane, a new one otherwise; it is answered in X-Request-ID and
//     carried on every log line of the request.
//   - Traces go to an OTLP/HTTP collector when OTEL_EXPORTER_OTLP_ENDPOINT
//     (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp
//     is set; the rest of the standard OTEL_* variables (headers,
//     sampler, service name) apply as the SDK reads them.

// telemetry is what the server reports with: providers for the library
// (nil when off) and the /metrics handler.
type telemetry struct {
	meters  metric.MeterProvider
	tracers trace.TracerProvider
	metrics http.Handler
	stop    func(context.Context)
}

// setupTelemetry makes the providers that the flags and the environment
// ask for.
func setupTelemetry(ctx context.Context, cfg config, log *slog.Logger) (*telemetry, error) {
	t := &telemetry{stop: func(context.Context) {}}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceVersion(chat.Version)))
	if err != nil {
		return nil, err
	}
	if os.Getenv("OTEL_SERVICE_NAME") == "" {
		// resource.Default names the service after nothing useful.
		res, _ = resource.Merge(res, resource.NewSchemaless(semconv.ServiceName("teamchat")))
	}
	var stops []func(context.Context) error
	if cfg.metricsAddr != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res))
		stops = append(stops, mp.Shutdown)
		t.meters = mp
		t.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)})
	}
	if tracesWanted() {
		if e := os.Getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: only otlp (over HTTP) is built in", e)
		}
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("traces: %w", err)
		}
		// The sampler comes from OTEL_TRACES_SAMPLER(_ARG) (the SDK reads
		// them), parent-based always-on by default.
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		stops = append(stops, tp.Shutdown)
		t.tracers = tp
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
		log.Info("exporting traces over OTLP/HTTP")
	}
	t.stop = func(ctx context.Context) {
		for _, stop := range stops {
			if err := stop(ctx); err != nil {
				log.Warn("telemetry shutdown", "err", err)
			}
		}
	}
	return t, nil
}

// tracesWanted reports whether the environment asks for traces.
func tracesWanted() bool {
	if e := os.Getenv("OTEL_TRACES_EXPORTER"); e != "" {
		return e != "none"
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// chatOptions are the Service's telemetry options.
func (t *telemetry) chatOptions() []chat.Option {
	var opts []chat.Option
	if t.meters != nil {
		opts = append(opts, chat.WithMeterProvider(t.meters))
	}
	if t.tracers != nil {
		opts = append(opts, chat.WithTracerProvider(t.tracers))
	}
	return opts
}

// health serves /healthz and /readyz, and hands every other request to
// next.
//
// The two paths are matched exactly, and every other request goes to
// next as it came: a net/http ServeMux would answer paths with dot
// segments or doubled slashes (/api/v1//users, which some clients send)
// with a redirect and an HTML body, where the API answers JSON.
func health(svc *chat.Service, next http.Handler) http.Handler {
	if next == nil {
		next = http.NotFoundHandler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte("ok\n"))
		case r.URL.Path == "/readyz" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			if err := svc.Ready(ctx); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
				return
			}
			_, _ = w.Write([]byte("ok\n"))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// serveMetrics serves /metrics, /healthz and /readyz on addr until stop.
func serveMetrics(addr string, svc *chat.Service, metrics http.Handler) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.Handle("/", health(svc, nil))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// Request IDs.

type requestIDKey struct{}

// requestIDHeader carries a request's ID both ways.
const requestIDHeader = "X-Request-ID"

// withRequestID gives each request its ID: the client's (or a proxy's)
// when it is sane, else a new one, answered in the header and put in the
// request's context for the log lines.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(requestIDHeader)
		if !saneRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(requestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// saneRequestID accepts up to 128 letters, digits and -_.:/+= (what
// proxies and tracing systems send), nothing that could forge a log
// line or a header.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '/', c == '+', c == '=':
		default:
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// requestIDHandler adds the request ID of the context, if any, to every
// record as request_id, and the trace ID as trace_id when the request's
// trace is recorded (to find it in the tracing system).
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
