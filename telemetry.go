package chat

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/teamchat/chat/internal/cache"
	"github.com/teamchat/chat/internal/writelane"
	"github.com/teamchat/chat/storage"
)

// Telemetry.
//
// The Service reports through the OpenTelemetry API: metrics to the
// MeterProvider of WithMeterProvider, spans to the TracerProvider of
// WithTracerProvider. Without them nothing is measured and nothing is
// allocated for it: the hot paths test a boolean. The exporters (a
// Prometheus endpoint, OTLP) are the host's (see examples/server).
//
// Metric attributes never carry a user, channel or organization ID:
// their values are a handful of fixed words (a lane's kind, an outcome,
// an error kind, a cache's name), so every series stays bounded.
//
// Where time goes in a write (write.go) is measured in three parts: the
// wait for the write's turn in this process (its lane, its
// organization, a free transaction: chat.write.wait), the wait for the
// database's lock inside the transaction (chat.write.lock.duration),
// and the whole transaction (chat.write.duration), each by lane kind.

// instrumentationName names the meter and the tracer.
const instrumentationName = "github.com/teamchat/chat"

// WithMeterProvider reports the Service's metrics to mp (see the README's
// Operating section for the list). Without it nothing is measured.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(s *Service) { s.tel.meterProvider = mp }
}

// WithTracerProvider reports spans of the Service's work (authentication,
// the write path's wait, lock and transaction, rendering, event
// publication) to tp, as children of the span in the caller's context.
// Without it no span is made.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *Service) { s.tel.tracerProvider = tp }
}

// telemetry is the Service's instruments; metrics and traces say whether
// a provider was given (when false, nothing else is set).
type telemetry struct {
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	metrics        bool
	traces         bool
	tracer         trace.Tracer

	writeWait, writeLock, writeHeld metric.Float64Histogram
	writeBatch                      metric.Int64Histogram
	writeRetries, writeJoined       metric.Int64Counter
	deliveryLatency                 metric.Float64Histogram
	scheduled                       metric.Int64Counter
	scheduledLateness               metric.Float64Histogram
	webhookAttempts                 metric.Int64Counter
	errors                          metric.Int64Counter
	registration                    metric.Registration
}

// Attribute sets measured with, made once (recording with a ready set
// allocates nothing).
var (
	laneAttrs    = [3][]metric.RecordOption{recordWith(laneNames[0]), recordWith(laneNames[1]), recordWith(laneNames[2])}
	laneAddAttrs = [3][]metric.AddOption{addWith(laneNames[0]), addWith(laneNames[1]), addWith(laneNames[2])}
)

func recordWith(kv ...attribute.KeyValue) []metric.RecordOption {
	return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

func addWith(kv ...attribute.KeyValue) []metric.AddOption {
	return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

func observeWith(kv ...attribute.KeyValue) []metric.ObserveOption {
	return []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

// laneNames are the span attributes of the lane kinds.
var laneNames = [3]attribute.KeyValue{
	attribute.String("chat.write.lane", "organization"),
	attribute.String("chat.write.lane", "channel"),
	attribute.String("chat.write.lane", "direct"),
}

// laneKind is the index of key's kind in laneAttrs.
func laneKind(key writelane.Key) int {
	switch {
	case key.Lane == 0:
		return 0
	case key.Lane&laneDirect == laneDirect:
		return 2
	default:
		return 1
	}
}

// Bucket bounds in seconds, from a tenth of a millisecond (a write
// waiting for nothing) to ten seconds.
var secondsBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// start makes the instruments (once, in New).
func (s *Service) startTelemetry() {
	t := &s.tel
	if t.tracerProvider != nil {
		t.traces = true
		t.tracer = t.tracerProvider.Tracer(instrumentationName)
	}
	if t.meterProvider == nil {
		return
	}
	t.metrics = true
	m := t.meterProvider.Meter(instrumentationName)
	sec := func(name, desc string) metric.Float64Histogram {
		h, _ := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(secondsBuckets...))
		return h
	}
	count := func(name, unit, desc string) metric.Int64Counter {
		c, _ := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	t.writeWait = sec("chat.write.wait", "Time a write waited in this process for its turn: its lane, its organization and a free transaction.")
	t.writeLock = sec("chat.write.lock.duration", "Time a write transaction waited for the database's lock of its lane or organization.")
	t.writeHeld = sec("chat.write.duration", "Time a write transaction was open, from its start to its commit or rollback.")
	t.writeBatch, _ = m.Int64Histogram("chat.write.batch.size", metric.WithUnit("{write}"),
		metric.WithDescription("Writes that shared one transaction (group commit)."),
		metric.WithExplicitBucketBoundaries(1, 2, 4, 8, 16, 32))
	t.writeRetries = count("chat.write.retries", "{write}", "Writes run again alone after the transaction they shared failed.")
	t.writeJoined = count("chat.write.joined", "{write}", "Writes taken into a transaction of their lane that had started before they arrived, once it held its lock.")
	t.deliveryLatency = sec("chat.event.delivery.latency", "Time from a write's publication of its events, just before its commit, to their delivery to this server's event queues.")
	t.scheduled = count("chat.scheduled.deliveries", "{message}", "Scheduled messages handled when due, by outcome (sent, failed).")
	t.scheduledLateness = sec("chat.scheduled.lateness", "Time between a scheduled message's due time and its sending.")
	t.webhookAttempts = count("chat.webhook.attempts", "{attempt}", "Outgoing webhook delivery attempts, by outcome (reply, no_reply, retry, failure).")
	t.errors = count("chat.errors", "{error}", "Unexpected errors the Service logged, by error.type (internal, unavailable).")
	s.observe(m)
}

// observe registers the gauges and counters read when metrics are
// collected: each reads counters kept anyway, or asks the store one
// indexed question (the background backlog).
func (s *Service) observe(m metric.Meter) {
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, _ := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return g
	}
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, _ := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	queues := gauge("chat.event_queue.count", "{queue}", "Event queues open on this server.")
	events := gauge("chat.event_queue.events", "{event}", "Events held by all event queues, not yet acknowledged.")
	bytes := gauge("chat.event_queue.size", "By", "Bytes of the events held by all event queues.")
	polls := gauge("chat.event_queue.polls.waiting", "{poll}", "Long polls waiting for events.")
	dropped := counter("chat.event_queue.dropped", "{queue}", "Event queues dropped, by reason: behind (their client fell behind), memory (all queues held too much), idle (nobody polled them).")
	hits := counter("chat.cache.hits", "{lookup}", "Cache lookups answered from memory, by cache.")
	misses := counter("chat.cache.misses", "{lookup}", "Cache lookups that read the store, by cache.")
	invalidations := counter("chat.cache.invalidations", "{invalidation}", "Invalidations of an organization's cached records (every committed write that changes them), and messages forgotten after a change (cache=messages).")
	presence := gauge("chat.presence.buffered", "{user}", "Presence reports held in memory, not yet written to the store.")
	due := gauge("chat.scheduled.due", "{message}", "Scheduled messages due and not yet sent.")
	dueAge := gauge("chat.scheduled.oldest_due.age", "s", "How long the oldest due scheduled message has been due (0: none).")
	outbox := gauge("chat.webhook.outbox.depth", "{delivery}", "Outgoing webhook deliveries waiting (due or backing off).")
	outboxAge := gauge("chat.webhook.outbox.oldest.age", "s", "Age of the oldest waiting outgoing webhook delivery (0: none).")

	var (
		reasons   = [3][]metric.ObserveOption{observeWith(attribute.String("reason", "behind")), observeWith(attribute.String("reason", "memory")), observeWith(attribute.String("reason", "idle"))}
		cacheName = func(n string) []metric.ObserveOption { return observeWith(attribute.String("cache", n)) }
		callers   = s.records
		named     = []struct {
			opts  []metric.ObserveOption
			stats func() cache.Stats
		}{
			{cacheName("callers"), func() cache.Stats { return sumStats(callers.byID.Stats(), callers.byEmail.Stats()) }},
			{cacheName("channels"), callers.channels.Stats},
			{cacheName("groups"), callers.groups.Stats},
			{cacheName("subscriptions"), callers.periods.Stats},
			{cacheName("mutes"), func() cache.Stats { return sumStats(callers.mutes.Stats(), callers.muters.Stats()) }},
			{cacheName("linkifiers"), s.linkifiers.Stats},
			{cacheName("channel_names"), callers.channelNames.Stats},
			{cacheName("alert_words"), func() cache.Stats {
				return sumStats(callers.alertTokens.Stats(), callers.anyAlertWords.Stats())
			}},
			{cacheName("topic_policies"), callers.topicPolicies.Stats},
			{cacheName("profile_values"), callers.profileValues.Stats},
			{cacheName("messages"), s.messages.stats},
		}
		orgCaches = cacheName("organization")
		msgCache  = cacheName("messages")
	)
	backlog, _ := s.store.(storage.BacklogReader)
	reg, _ := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		st := s.hub.Stats()
		o.ObserveInt64(queues, int64(st.Queues))
		o.ObserveInt64(events, int64(st.Events))
		o.ObserveInt64(bytes, st.Bytes)
		o.ObserveInt64(polls, int64(st.Waiting))
		o.ObserveInt64(dropped, int64(st.DroppedBehind), reasons[0]...)
		o.ObserveInt64(dropped, int64(st.DroppedOverTotal), reasons[1]...)
		o.ObserveInt64(dropped, int64(st.DroppedIdle), reasons[2]...)
		for _, c := range named {
			cs := c.stats()
			o.ObserveInt64(hits, int64(cs.Hits), c.opts...)
			o.ObserveInt64(misses, int64(cs.Misses), c.opts...)
		}
		o.ObserveInt64(invalidations, int64(callers.gens.Invalidations()), orgCaches...)
		o.ObserveInt64(invalidations, int64(s.messages.stats().Forgotten), msgCache...)
		o.ObserveInt64(presence, int64(s.presence.Dirty()))
		if backlog != nil {
			now := s.nowUnix()
			b, err := backlog.Backlog(ctx, now)
			if err != nil {
				return err // the other observations stand
			}
			o.ObserveInt64(due, b.ScheduledDue)
			o.ObserveInt64(dueAge, ageOf(now, b.OldestScheduledDue))
			o.ObserveInt64(outbox, b.WebhooksWaiting)
			o.ObserveInt64(outboxAge, ageOf(now, b.OldestWebhook))
		}
		return nil
	}, queues, events, bytes, polls, dropped, hits, misses, invalidations, presence, due, dueAge, outbox, outboxAge)
	s.tel.registration = reg
}

func sumStats(a, b cache.Stats) cache.Stats {
	return cache.Stats{Hits: a.Hits + b.Hits, Misses: a.Misses + b.Misses, Forgotten: a.Forgotten + b.Forgotten}
}

// ageOf is how long ago the Unix time at was (0 for none).
func ageOf(now, at int64) int64 {
	if at == 0 || at > now {
		return 0
	}
	return now - at
}

// span starts a span named name under ctx's when tracing is on (else
// it returns ctx and a span that does nothing, allocating nothing).
// Under a span that is not recorded (a trace the sampler left out) it
// makes none either: its children would not be recorded under the
// parent-based samplers that OpenTelemetry's SDK uses by default, and
// making them would cost every request what only sampled ones need.
func (s *Service) span(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !s.tel.traces {
		return ctx, noSpan
	}
	if parent := trace.SpanFromContext(ctx); parent.SpanContext().IsValid() && !parent.IsRecording() {
		return ctx, noSpan
	}
	return s.tel.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// noSpan is the span of a Service without a TracerProvider.
var noSpan = trace.SpanFromContext(context.Background())

// endSpan ends sp, marking it failed with err (if any).
func endSpan(sp trace.Span, err error) {
	if err != nil && sp.IsRecording() {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, AsError(err).Kind.String())
	}
	sp.End()
}

// since is the seconds elapsed since start.
func since(start time.Time) float64 { return time.Since(start).Seconds() }

// errorAttrs are the chat.errors attribute sets by kind.
var errorAttrs = map[Kind][]metric.AddOption{
	KindInternal:    addWith(attribute.String("error.type", "internal")),
	KindUnavailable: addWith(attribute.String("error.type", "unavailable")),
}

// countError counts an unexpected error the Service logs.
func (s *Service) countError(ctx context.Context, kind Kind) {
	if s.tel.metrics {
		if opts, ok := errorAttrs[kind]; ok {
			s.tel.errors.Add(ctx, 1, opts...)
		}
	}
}

// Outcome attribute sets of the background work's counters.
var (
	scheduledSent   = addWith(attribute.String("outcome", "sent"))
	scheduledFailed = addWith(attribute.String("outcome", "failed"))
	webhookOutcomes = map[WebhookResultKind][]metric.AddOption{
		WebhookReply:   addWith(attribute.String("outcome", "reply")),
		WebhookNoReply: addWith(attribute.String("outcome", "no_reply")),
		WebhookFailure: addWith(attribute.String("outcome", "failure")),
		WebhookRetry:   addWith(attribute.String("outcome", "retry")),
	}
)

// countScheduled counts a due scheduled message sent (late by lateness)
// or failed.
func (s *Service) countScheduled(ctx context.Context, sent bool, lateness time.Duration) {
	if !s.tel.metrics {
		return
	}
	if !sent {
		s.tel.scheduled.Add(ctx, 1, scheduledFailed...)
		return
	}
	s.tel.scheduled.Add(ctx, 1, scheduledSent...)
	s.tel.scheduledLateness.Record(ctx, max(lateness, 0).Seconds())
}

// countWebhookAttempt counts an outgoing webhook attempt by its outcome.
func (s *Service) countWebhookAttempt(ctx context.Context, kind WebhookResultKind) {
	if opts, ok := webhookOutcomes[kind]; ok && s.tel.metrics {
		s.tel.webhookAttempts.Add(ctx, 1, opts...)
	}
}

// Ready reports whether the Service can serve: it listens to the event
// bus (Ready starts listening, as Run does, if nothing did yet), its
// store answers and its schema is migrated, and the bus's connection to
// the database (on PostgreSQL) is up. A host answers its readiness probe
// with it. Its error is of KindUnavailable, or KindInternal once the
// Service is shutting down (StopEvents), and of KindUnavailable once it is
// draining (DrainEvents), so that a balancer that probes it sends it
// nothing new.
func (s *Service) Ready(ctx context.Context) error {
	if s.hub.Draining() {
		return shuttingDown(errDraining)
	}
	if err := s.listening(ctx); err != nil {
		return err
	}
	rc, ok := s.store.(storage.ReadinessChecker)
	if !ok {
		return nil
	}
	if err := rc.Ready(ctx); err != nil {
		return Unavailable(err)
	}
	return nil
}
