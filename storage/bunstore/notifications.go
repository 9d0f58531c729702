package bunstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Missed-message notifications (migration 0028). The conditions of the
// partial indexes are written in the words of their WHERE clauses, so
// that both planners use them (SQLite does only when the query's WHERE
// contains the index's terms).

type pendingNotificationRow struct {
	bun.BaseModel `bun:"table:pending_notifications,alias:pn"`
	storage.PendingNotification
}

// Bits of users.stream_notifications.
const (
	streamNotifyEmail = 1
	streamNotifyPush  = 2
)

// QueueNotifications is one insert that skips the rows already there
// (message, user, kind); nothing is read back.
func (s *Store) QueueNotifications(ctx context.Context, rows []storage.PendingNotification) error {
	if len(rows) == 0 {
		return nil
	}
	models := make([]pendingNotificationRow, len(rows))
	for i := range rows {
		models[i].PendingNotification = rows[i]
		models[i].ID = 0
	}
	_, err := s.w.NewInsert().Model(&models).ExcludeColumn("id").
		On("CONFLICT (message_id, user_id, kind) DO NOTHING").Returning("NULL").Exec(deferrable(ctx))
	return wrapErr(fmt.Sprintf("queue %d notifications", len(rows)), err)
}

// ChannelNotificationCandidates is one statement of three indexed parts:
// subscriptions_notifications_idx (the subscription turns notifications
// on), users_stream_notifications_idx probing each such user's
// subscription by its key (the user-level default is on and the
// subscription inherits it), and user_topics_topic_idx (followers of the
// topic, kept if subscribed).
func (s *Store) ChannelNotificationCandidates(ctx context.Context, realmID, streamID int64, topic string) ([]int64, error) {
	ids := []int64{}
	err := s.r.NewRaw(`SELECT user_id FROM subscriptions
			WHERE realm_id = ?0 AND stream_id = ?1 AND (email_notifications OR push_notifications) AND active
		UNION SELECT s.user_id FROM users AS u JOIN subscriptions AS s ON s.user_id = u.id AND s.stream_id = ?1
			WHERE u.realm_id = ?0 AND u.stream_notifications <> 0 AND s.active
				AND (s.email_notifications IS NULL AND (u.stream_notifications & 1) <> 0
					OR s.push_notifications IS NULL AND (u.stream_notifications & 2) <> 0)
		UNION SELECT t.user_id FROM user_topics AS t JOIN subscriptions AS s ON s.user_id = t.user_id AND s.stream_id = ?1
			WHERE t.realm_id = ?0 AND t.stream_id = ?1 AND t.topic_key = ?2 AND t.visibility_policy = 3 AND s.active
		ORDER BY 1`, realmID, streamID, storage.Fold(topic)).Scan(ctx, &ids)
	return ids, wrapErr(fmt.Sprintf("notification candidates of channel %d in realm %d", streamID, realmID), err)
}

// SetChannelNotificationDefaults writes users.stream_notifications.
func (s *Store) SetChannelNotificationDefaults(ctx context.Context, realmID, userID int64, email, push bool) error {
	bits := 0
	if email {
		bits |= streamNotifyEmail
	}
	if push {
		bits |= streamNotifyPush
	}
	op := fmt.Sprintf("set channel notification defaults of user %d in realm %d", userID, realmID)
	res, err := s.w.NewUpdate().Table("users").Set("stream_notifications = ?", bits).
		Where("realm_id = ?", realmID).Where("id = ?", userID).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// streamNotificationDefaults is migration 0028's step: it fills
// users.stream_notifications from the settings documents. Package chat
// stores only the settings that differ from its defaults, and both of
// these default to off, so a document turns one on only by naming it true.
func streamNotificationDefaults(ctx context.Context, tx bun.Tx) error {
	var rows []struct {
		ID       int64  `bun:"id"`
		Settings string `bun:"settings"`
	}
	err := tx.NewSelect().TableExpr("users").ColumnExpr("id, settings").
		Where("settings LIKE ?", "%enable_stream_%").Scan(ctx, &rows)
	if err != nil {
		return fmt.Errorf("read users.settings: %w", err)
	}
	for _, r := range rows {
		var set map[string]any
		if json.Unmarshal([]byte(r.Settings), &set) != nil {
			continue
		}
		bits := 0
		if set["enable_stream_email_notifications"] == true {
			bits |= streamNotifyEmail
		}
		if set["enable_stream_push_notifications"] == true {
			bits |= streamNotifyPush
		}
		if bits == 0 {
			continue
		}
		if _, err := tx.NewUpdate().Table("users").Set("stream_notifications = ?", bits).Where("id = ?", r.ID).Exec(ctx); err != nil {
			return fmt.Errorf("set users.stream_notifications of %d: %w", r.ID, err)
		}
	}
	return nil
}

// ListSubscriptionsOf reads subscriptions by their key.
func (s *Store) ListSubscriptionsOf(ctx context.Context, realmID, streamID int64, userIDs []int64) ([]storage.Subscription, error) {
	out := []storage.Subscription{}
	err := chunked(userIDs, func(ids []int64) error {
		var part []storage.Subscription
		err := s.r.NewSelect().Model(&part).Where("realm_id = ?", realmID).Where("stream_id = ?", streamID).
			Where("user_id IN (?)", bun.List(ids)).OrderExpr("user_id ASC").Scan(ctx)
		out = append(out, part...)
		return wrapErr(fmt.Sprintf("subscriptions of %d users to channel %d in realm %d", len(ids), streamID, realmID), err)
	})
	return out, err
}

// ListChannelSubscriptions reads subscriptions_realm_stream_user_key from
// afterUserID on.
func (s *Store) ListChannelSubscriptions(ctx context.Context, realmID, streamID, afterUserID int64, limit int) ([]storage.Subscription, error) {
	var out []storage.Subscription
	err := s.r.NewSelect().Model(&out).Where("realm_id = ?", realmID).Where("stream_id = ?", streamID).
		Where("user_id > ?", afterUserID).Where("active").OrderExpr("user_id ASC").Limit(limit).Scan(ctx)
	return nonNil(out), wrapErr(fmt.Sprintf("subscriptions of channel %d in realm %d", streamID, realmID), err)
}

// ClaimNotifications is one conditional update. The rows that make a user
// (or a fan-out) due are read from the front of
// pending_notifications_kind_due_idx; on PostgreSQL they are locked with
// SKIP LOCKED, so concurrent deliverers take different users without
// waiting, and a row the update finds claimed meanwhile is left to its
// claimer (SQLite has one writer: its update is the claim).
func (s *Store) ClaimNotifications(ctx context.Context, kind int, now, leaseUntil int64, claim string, limit int) ([]storage.PendingNotification, error) {
	lock := " FOR UPDATE SKIP LOCKED"
	by := "user_id"
	if kind == storage.NotificationFanout {
		by = "id"
	}
	pick := `SELECT ` + by + ` FROM pending_notifications WHERE kind = ? AND due_at <= ? AND claimed_until <= ?
		ORDER BY due_at, id LIMIT ?`
	pickArgs := []any{kind, now, now, limit}
	if s.ops.name == DialectPostgres {
		// The kind and the due time as row comparisons, in the order of
		// pending_notifications_kind_due_idx: no other index fits them,
		// and without statistics the planner expects many rows and stops
		// at the limit (see window_postgres.go), where with kind = ? it
		// took every due row of the kind and sorted them.
		pick = `SELECT ` + by + ` FROM pending_notifications WHERE (kind, due_at) >= (?, ?) AND (kind, due_at) <= (?, ?)
			AND claimed_until <= ? ORDER BY kind, due_at, id LIMIT ?` + lock
		pickArgs = []any{kind, int64(math.MinInt64), kind, now, now, limit}
	}
	var rows []pendingNotificationRow
	var err error
	// The update takes every unclaimed row of the users the subquery
	// locked, and another deliverer may hold some of them (its subquery
	// locked a later row of the same user): PostgreSQL then aborts one of
	// the two as a deadlock. The statement is atomic, so the victim runs
	// it again and finds the other's rows claimed.
	for attempt := 0; ; attempt++ {
		rows = rows[:0]
		query, args := s.ops.claimOnce(pick, pickArgs, `UPDATE pending_notifications SET claimed_until = ?, claim = ?
		WHERE kind = ? AND claimed_until <= ? AND `+by+` IN (?)
		RETURNING *`, []any{leaseUntil, claim, kind, now})
		err = s.w.NewRaw(query, args...).Scan(ctx, &rows)
		if attempt == 4 || !isDeadlock(err) {
			break
		}
	}
	out := make([]storage.PendingNotification, len(rows))
	for i := range rows {
		out[i] = rows[i].PendingNotification
	}
	slices.SortFunc(out, func(a, b storage.PendingNotification) int {
		return cmp.Or(cmp.Compare(a.UserID, b.UserID), cmp.Compare(a.ID, b.ID))
	})
	return out, wrapErr(fmt.Sprintf("claim notifications of kind %d", kind), err)
}

// FinishNotifications deletes by ID and claim.
func (s *Store) FinishNotifications(ctx context.Context, ids []int64, claim string) (int, error) {
	return countAffected("finish notifications", ids, func(part []int64) (sql.Result, error) {
		return s.w.NewDelete().Model((*pendingNotificationRow)(nil)).
			Where("id IN (?)", bun.List(part)).Where("claim = ?", claim).Exec(ctx)
	})
}

// RetryNotifications updates by ID and claim, releasing the claim.
func (s *Store) RetryNotifications(ctx context.Context, ids []int64, claim string, attempts int, next int64) (int, error) {
	return countAffected("retry notifications", ids, func(part []int64) (sql.Result, error) {
		return s.w.NewUpdate().Model((*pendingNotificationRow)(nil)).
			Set("attempts = ?", attempts).Set("due_at = ?", next).Set("claimed_until = 0").Set("claim = ''").
			Where("id IN (?)", bun.List(part)).Where("claim = ?", claim).Exec(ctx)
	})
}

// countAffected runs a statement on the IDs a chunk at a time and adds up
// the rows it changed.
func countAffected(op string, ids []int64, run func(part []int64) (sql.Result, error)) (int, error) {
	n := 0
	err := chunked(ids, func(part []int64) error {
		res, err := run(part)
		if err != nil {
			return wrapErr(op, err)
		}
		k, err := res.RowsAffected()
		n += int(k)
		return wrapErr(op, err)
	})
	return n, err
}

// AdvanceNotificationCursor updates by ID and claim.
func (s *Store) AdvanceNotificationCursor(ctx context.Context, id int64, claim string, cursor int64) (bool, error) {
	res, err := s.w.NewUpdate().Model((*pendingNotificationRow)(nil)).Set("cursor_id = ?", cursor).
		Where("id = ?", id).Where("claim = ?", claim).Exec(ctx)
	if err != nil {
		return false, wrapErr(fmt.Sprintf("advance notification %d", id), err)
	}
	n, err := res.RowsAffected()
	return n == 1, wrapErr(fmt.Sprintf("advance notification %d", id), err)
}

// DeleteMessageNotifications reads pending_notifications_message_user_kind_key.
func (s *Store) DeleteMessageNotifications(ctx context.Context, realmID int64, messageIDs []int64) error {
	return chunked(messageIDs, func(part []int64) error {
		_, err := s.w.NewDelete().Model((*pendingNotificationRow)(nil)).
			Where("message_id IN (?)", bun.List(part)).Where("realm_id = ?", realmID).Exec(ctx)
		return wrapErr(fmt.Sprintf("drop notifications of %d messages in realm %d", len(part), realmID), err)
	})
}

// RescheduleNotifications reads pending_notifications_user_idx.
func (s *Store) RescheduleNotifications(ctx context.Context, realmID, userID int64, kind int, now, period int64) error {
	_, err := s.w.NewUpdate().Model((*pendingNotificationRow)(nil)).Set("due_at = created_at + ?", period).
		Where("user_id = ?", userID).Where("kind = ?", kind).Where("realm_id = ?", realmID).
		Where("claimed_until <= ?", now).Exec(ctx)
	return wrapErr(fmt.Sprintf("reschedule notifications of user %d in realm %d", userID, realmID), err)
}

// NextNotificationAt reads the front of pending_notifications_due_idx.
func (s *Store) NextNotificationAt(ctx context.Context, now int64) (int64, bool, error) {
	var at []int64
	err := s.r.NewSelect().TableExpr("pending_notifications").ColumnExpr("due_at").
		Where("claimed_until <= ?", now).OrderExpr("due_at ASC, id ASC").Limit(1).Scan(ctx, &at)
	if err != nil || len(at) == 0 {
		return 0, false, wrapErr("next notification", err)
	}
	return at[0], true, nil
}
