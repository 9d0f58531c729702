package rest_test

import (
	"context"
	"net/http"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	chat "github.com/teamchat/chat"
)

func BenchmarkScratch(b *testing.B) {
	sdkTP := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))),
		sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = sdkTP.Shutdown(context.Background()) })
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	h, handler := observed(b, sdkTP, mp)
	u := h.NewUser(b, chat.RoleMember)
	b.ReportAllocs()
	for b.Loop() {
		if w := serveOnce(handler, "GET", "/api/v1/users/me", &u, nil, nil); w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
