package rest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
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
// ("on"), in the same run:
//
//	go test -run - -bench Telemetry -count 6 ./transport/rest
func BenchmarkTelemetry(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		var tp trace.TracerProvider
		var mp metric.MeterProvider
		if on {
			name = "on"
			sdkTP := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))),
				sdktrace.WithBatcher(tracetest.NewNoopExporter()))
			b.Cleanup(func() { _ = sdkTP.Shutdown(context.Background()) })
			tp, mp = sdkTP, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		}
		h, handler := observed(b, tp, mp)
		alice := h.NewUser(b, chat.RoleMember)
		b.Run("users_me/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if w := serveOnce(handler, "GET", "/api/v1/users/me", &alice, nil, nil); w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
		w := serveOnce(handler, "POST", "/api/v1/users/me/subscriptions", &alice, url.Values{"subscriptions": {`[{"name": "bench"}]`}}, nil)
		if w.Code != http.StatusOK {
			b.Fatal(w.Body)
		}
		send := url.Values{"type": {"channel"}, "to": {"bench"}, "topic": {"t"}, "content": {"hello **there**"}}
		b.Run("send/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if w := serveOnce(handler, "POST", "/api/v1/messages", &alice, send, nil); w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
