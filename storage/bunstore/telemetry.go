package bunstore

import (
	"context"
	"database/sql"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/extra/bunotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// Instrument reports the Store's statements and connection pools through
// OpenTelemetry: a span per statement (bun's own instrumentation,
// bunotel, with the statement's text as bun writes it, placeholders for
// values, plus a span per prepared statement, which bun does not see) to
// tp, and the pools' state (db.client.connection.* below) to mp. Either
// may be nil. Call it once, before the Store serves.
//
// bunotel's own metric (go.sql.query_timing) is left out: it builds an
// attribute set for every statement, which cost more than the rest of
// the instrumentation of a cached GET /users/me together (3 µs of about
// 50, measured with transport/rest's BenchmarkTelemetry), for a timing
// in whole milliseconds; the write path's metrics and the statements'
// spans tell where database time goes.
func (s *Store) Instrument(tp trace.TracerProvider, mp metric.MeterProvider) error {
	if tp != nil {
		s.hooks.tracer = tp.Tracer("github.com/teamchat/chat/storage/bunstore")
		// bunotel falls back on the global providers, which a library
		// must not report to: it gets a no-op MeterProvider. Without
		// Init: bunotel's Init would report the pools to the global one.
		h := statementHook{bunotel.NewQueryHook(bunotel.WithTracerProvider(tp), bunotel.WithMeterProvider(metricnoop.NewMeterProvider()))}
		for _, db := range s.pools() {
			db.AddQueryHook(h)
		}
	}
	if mp == nil {
		return nil
	}
	return s.observePools(mp.Meter("github.com/teamchat/chat/storage/bunstore"))
}

// statementHook is bunotel's hook without its Init, making spans only
// in recorded traces.
type statementHook struct{ h *bunotel.QueryHook }

// BeforeQuery starts bunotel's span, except under a span that is not
// recorded (a trace the sampler left out), whose children would not be
// recorded either under parent-based sampling.
func (h statementHook) BeforeQuery(ctx context.Context, ev *bun.QueryEvent) context.Context {
	if unrecordedParent(ctx) {
		return ctx
	}
	return h.h.BeforeQuery(ctx, ev)
}

// AfterQuery ends the statement's span, if one is recorded.
func (h statementHook) AfterQuery(ctx context.Context, ev *bun.QueryEvent) {
	if trace.SpanFromContext(ctx).IsRecording() {
		h.h.AfterQuery(ctx, ev)
	}
}

// unrecordedParent reports whether ctx's span belongs to a trace that is
// not recorded.
func unrecordedParent(ctx context.Context) bool {
	parent := trace.SpanFromContext(ctx)
	return parent.SpanContext().IsValid() && !parent.IsRecording()
}

// pools are the Store's connection pools (one on PostgreSQL; the writer
// and the readers on SQLite).
func (s *Store) pools() []*bun.DB {
	if s.reader != nil {
		return []*bun.DB{s.writer, s.reader}
	}
	return []*bun.DB{s.writer}
}

// observePools reports the pools' sql.DBStats under the semantic
// conventions' db.client.connection names, by pool (writer, readers).
func (s *Store) observePools(m metric.Meter) error {
	count, _ := m.Int64ObservableUpDownCounter("db.client.connection.count", metric.WithUnit("{connection}"),
		metric.WithDescription("Connections open in the pool, by state (idle, used)."))
	maxOpen, _ := m.Int64ObservableUpDownCounter("db.client.connection.max", metric.WithUnit("{connection}"),
		metric.WithDescription("The most connections the pool may open."))
	waits, _ := m.Int64ObservableCounter("db.client.connection.waits", metric.WithUnit("{wait}"),
		metric.WithDescription("Requests for a connection that had to wait for one."))
	waited, _ := m.Float64ObservableCounter("db.client.connection.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("Total time spent waiting for a connection."))
	type pool struct {
		db               *sql.DB
		all, idle, inUse []metric.ObserveOption
	}
	var pools []pool
	system := "sqlite"
	if s.ops.name == DialectPostgres {
		system = "postgresql"
	}
	for i, db := range s.pools() {
		name := "writer"
		if i == 1 {
			name = "readers"
		}
		with := func(kv ...attribute.KeyValue) []metric.ObserveOption {
			kv = append(kv, attribute.String("db.client.connection.pool.name", name), attribute.String("db.system", system))
			return []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
		}
		pools = append(pools, pool{db: db.DB, all: with(),
			idle:  with(attribute.String("db.client.connection.state", "idle")),
			inUse: with(attribute.String("db.client.connection.state", "used"))})
	}
	_, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, p := range pools {
			st := p.db.Stats()
			o.ObserveInt64(count, int64(st.Idle), p.idle...)
			o.ObserveInt64(count, int64(st.InUse), p.inUse...)
			o.ObserveInt64(maxOpen, int64(st.MaxOpenConnections), p.all...)
			o.ObserveInt64(waits, st.WaitCount, p.all...)
			o.ObserveFloat64(waited, st.WaitDuration.Seconds(), p.all...)
		}
		return nil
	}, count, maxOpen, waits, waited)
	return err
}
