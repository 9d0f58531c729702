package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/teamchat/chat/storage"
)

var (
	_ storage.ReadinessChecker = (*Store)(nil)
	_ storage.BacklogReader    = (*Store)(nil)
)

// Ready reports whether the Store can serve: the database answers (the
// readers' pool too, on SQLite), every migration this build knows is
// applied, and no PostgreSQL event listener of the Store has lost its
// connection. It costs one small query per pool.
func (s *Store) Ready(ctx context.Context) error {
	if s.closed.Load() {
		return errors.New("bunstore: closed")
	}
	if n := s.listenDown.Load(); n > 0 {
		// A listener learns that it is connected again when a
		// notification reaches it: send it one, for the next probe.
		_, _ = s.writer.ExecContext(ctx, "SELECT pg_notify(?, ?)", s.channel, listenMarker+"ready")
		return fmt.Errorf("bunstore: ready: %w: the event listener's connection is broken", storage.ErrUnavailable)
	}
	var applied int
	err := s.writer.NewSelect().TableExpr("bun_migrations").ColumnExpr("count(*)").
		Where("migrated_at IS NOT NULL").Scan(ctx, &applied)
	if err != nil {
		return wrapErr("ready: read migrations", err)
	}
	if applied < len(schemaMigrations) {
		return fmt.Errorf("bunstore: ready: %d of %d migrations applied", applied, len(schemaMigrations))
	}
	if s.reader != nil {
		if _, err := s.reader.ExecContext(ctx, "SELECT 1"); err != nil {
			return wrapErr("ready: readers", err)
		}
	}
	return nil
}

// listenerUp records that a listener whose connection was broken (when
// *broken) has one again.
func (s *Store) listenerUp(broken *bool) {
	if *broken {
		*broken = false
		s.listenDown.Add(-1)
	}
}

// Backlog counts the due scheduled messages (a range of the index of
// pending ones) and the webhook outbox (which holds only what waits).
func (s *Store) Backlog(ctx context.Context, now int64) (storage.Backlog, error) {
	var b storage.Backlog
	var oldest sql.NullInt64
	err := s.r.NewSelect().TableExpr("scheduled_messages").ColumnExpr("count(*), min(scheduled_timestamp)").
		Where("delivered = FALSE AND failed = FALSE AND scheduled_timestamp <= ?", now).
		Scan(ctx, &b.ScheduledDue, &oldest)
	if err != nil {
		return b, wrapErr("backlog: scheduled", err)
	}
	b.OldestScheduledDue = oldest.Int64
	err = s.r.NewSelect().TableExpr("webhook_deliveries").ColumnExpr("count(*), min(created_at)").
		Scan(ctx, &b.WebhooksWaiting, &oldest)
	if err != nil {
		return b, wrapErr("backlog: webhooks", err)
	}
	b.OldestWebhook = oldest.Int64
	return b, nil
}
