package bunstore

import (
	"context"
	"fmt"

	"github.com/teamchat/chat/storage"
)

// The fleet's tables (storage.FleetStore; migration 0029). They stay
// small: a row per running server, one secret, a row per queue handed
// over, and the queues saved by a server that stopped alone.

// RegisterServer implements storage.FleetStore.
func (s *Store) RegisterServer(ctx context.Context, srv *storage.Server) error {
	_, err := s.w.NewInsert().Model(srv).Returning("id").Exec(ctx)
	return wrapErr("register server", err)
}

// BeatServer implements storage.FleetStore.
func (s *Store) BeatServer(ctx context.Context, id, seenAt int64, draining bool) error {
	res, err := s.w.NewUpdate().Table("servers").Set("seen_at = ?", seenAt).Set("draining = ?", draining).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return wrapErr("server heartbeat", err)
	}
	return checkAffected(fmt.Sprintf("server heartbeat of %d", id), res)
}

// ListServers implements storage.FleetStore.
func (s *Store) ListServers(ctx context.Context, since int64) ([]storage.Server, error) {
	out := []storage.Server{}
	err := s.r.NewSelect().Model(&out).Where("seen_at >= ?", since).Order("id").Scan(ctx)
	return out, wrapErr("list servers", err)
}

// RemoveServer implements storage.FleetStore.
func (s *Store) RemoveServer(ctx context.Context, id int64) error {
	return s.withTx(ctx, func(tx *Store) error {
		if _, err := tx.w.NewDelete().Table("queue_moves").Where("server_id = ?", id).Exec(ctx); err != nil {
			return wrapErr("remove server's queue moves", err)
		}
		_, err := tx.w.NewDelete().Table("servers").Where("id = ?", id).Exec(ctx)
		return wrapErr("remove server", err)
	})
}

// ForgetServers implements storage.FleetStore.
func (s *Store) ForgetServers(ctx context.Context, before int64) error {
	return s.withTx(ctx, func(tx *Store) error {
		if _, err := tx.w.NewDelete().Table("servers").Where("seen_at < ?", before).Exec(ctx); err != nil {
			return wrapErr("forget servers", err)
		}
		_, err := tx.w.NewDelete().Table("queue_moves").
			Where("server_id NOT IN (?)", tx.w.NewSelect().Table("servers").Column("id")).Exec(ctx)
		return wrapErr("forget queue moves", err)
	})
}

// FleetSecret implements storage.FleetStore.
func (s *Store) FleetSecret(ctx context.Context, candidate string) (string, error) {
	if _, err := s.w.NewRaw("INSERT INTO fleet_secrets (id, secret) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", candidate).
		Exec(ctx); err != nil {
		return "", wrapErr("store fleet secret", err)
	}
	var secret string
	err := s.w.NewSelect().Table("fleet_secrets").Column("secret").Where("id = 1").Scan(ctx, &secret)
	return secret, wrapErr("read fleet secret", err)
}

// RecordQueueMoves implements storage.FleetStore.
func (s *Store) RecordQueueMoves(ctx context.Context, server int64, queueIDs []string, now int64) error {
	if len(queueIDs) == 0 {
		return nil
	}
	rows := make([]storage.QueueMove, len(queueIDs))
	for i, id := range queueIDs {
		rows[i] = storage.QueueMove{QueueID: id, ServerID: server, MovedAt: now}
	}
	_, err := s.w.NewInsert().Model(&rows).
		On("CONFLICT (queue_id) DO UPDATE").Set("server_id = EXCLUDED.server_id").Set("moved_at = EXCLUDED.moved_at").
		Exec(ctx)
	return wrapErr("record queue moves", err)
}

// ListQueueMoves implements storage.FleetStore.
func (s *Store) ListQueueMoves(ctx context.Context) ([]storage.QueueMove, error) {
	out := []storage.QueueMove{}
	err := s.r.NewSelect().Model(&out).Scan(ctx)
	return out, wrapErr("list queue moves", err)
}

// GetQueueMove implements storage.FleetStore.
func (s *Store) GetQueueMove(ctx context.Context, queueID string) (*storage.QueueMove, error) {
	m := new(storage.QueueMove)
	err := s.r.NewSelect().Model(m).Where("queue_id = ?", queueID).Scan(ctx)
	if err != nil {
		return nil, wrapErr("get queue move", err)
	}
	return m, nil
}

// SaveEventQueues implements storage.FleetStore.
func (s *Store) SaveEventQueues(ctx context.Context, qs []storage.SavedEventQueue) error {
	if len(qs) == 0 {
		return nil
	}
	return s.withTx(ctx, func(tx *Store) error {
		for start := 0; start < len(qs); start += 200 {
			batch := qs[start:min(start+200, len(qs))]
			_, err := tx.w.NewInsert().Model(&batch).
				On("CONFLICT (queue_id) DO UPDATE").Set("state = EXCLUDED.state").Set("saved_at = EXCLUDED.saved_at").
				Exec(ctx)
			if err != nil {
				return wrapErr("save event queues", err)
			}
		}
		return nil
	})
}

// TakeSavedEventQueues implements storage.FleetStore.
func (s *Store) TakeSavedEventQueues(ctx context.Context) ([]storage.SavedEventQueue, error) {
	out := []storage.SavedEventQueue{}
	err := s.withTx(ctx, func(tx *Store) error {
		return wrapErr("take saved event queues",
			tx.w.NewRaw("DELETE FROM saved_event_queues RETURNING queue_id, realm_id, user_id, saved_at, state").Scan(ctx, &out))
	})
	return out, err
}
