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
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Instrument reports the Store's statements and connection pools through
// OpenTelemetry: a span per statement (bun's own instrumentation,
// bunotel, with the statement's text as bun writes it, placeholders for
// values, plus a span per prepared statement, which bun does not see),
// bunotel's go.sql.query_timing histogram, and the pools' state
// (db.client.connection.* below). Either provider may be nil. Call it
// once, before the Store serves.
func (s *Store) Instrument(tp trace.TracerProvider, mp metric.MeterProvider) error {
	if tp != nil || mp != nil {
		// bunotel falls back on the global providers, which a library
		// must not report to: it gets no-op ones instead of nil.
		h := statementHook{traces: tp != nil, metrics: mp != nil}
		if tp != nil {
			s.hooks.tracer = tp.Tracer("github.com/teamchat/chat/storage/bunstore")
		} else {
			tp = tracenoop.NewTracerProvider()
		}
		if mp == nil {
			mp = metricnoop.NewMeterProvider()
		}
		// Without Init: bunotel's Init would report the pool to the
		// global MeterProvider too; the pools are reported below.
		h.h = bunotel.NewQueryHook(bunotel.WithTracerProvider(tp), bunotel.WithMeterProvider(mp))
		for _, db := range s.pools() {
			db.AddQueryHook(h)
		}
	}
	if _, noop := mp.(metricnoop.MeterProvider); mp == nil || noop {
		return nil
	}
	return s.observePools(mp.Meter("github.com/teamchat/chat/storage/bunstore"))
}

// statementHook is bunotel's hook without its Init; without traces it
// makes no spans.
type statementHook struct {
	h               *bunotel.QueryHook
	traces, metrics bool
}

// BeforeQuery starts bunotel's span, except under a span that is not
// recorded (a trace the sampler left out), whose children would not be
// recorded either under parent-based sampling: AfterQuery then finds
// that span, records the statement's timing and stops.
func (h statementHook) BeforeQuery(ctx context.Context, ev *bun.QueryEvent) context.Context {
	if !h.traces || unrecordedParent(ctx) {
		return ctx
	}
	return h.h.BeforeQuery(ctx, ev)
}

// unrecordedParent reports whether ctx's span belongs to a trace that is
// not recorded.
func unrecordedParent(ctx context.Context) bool {
	parent := trace.SpanFromContext(ctx)
	return parent.SpanContext().IsValid() && !parent.IsRecording()
}

// AfterQuery records the statement's timing and ends its span; without
// metrics and with no span recorded there is nothing to do.
func (h statementHook) AfterQuery(ctx context.Context, ev *bun.QueryEvent) {
	if !h.metrics && !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	h.h.AfterQuery(ctx, ev)
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
