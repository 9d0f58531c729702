package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Scheduled messages (migration 0023). The conditions "delivered = FALSE"
// and "delivered = FALSE AND failed = FALSE" are written as literals, in
// the words of the partial indexes' own WHERE clauses, so that both
// databases' planners may use those indexes (SQLite does only when the
// query's WHERE contains the index's terms).

type scheduledRow struct {
	bun.BaseModel `bun:"table:scheduled_messages,alias:sm"`
	storage.ScheduledMessage
}

const (
	sqlUndelivered = "sm.delivered = FALSE"
	sqlPending     = "sm.delivered = FALSE AND sm.failed = FALSE"
)

// scheduledClaimLock is how a dialect locks a pending row before claiming
// it: PostgreSQL runs claims concurrently and skips a row that another
// transaction is claiming; SQLite's one writer needs no lock, its
// conditional update is the claim.
var scheduledClaimLock = map[string]string{
	DialectPostgres: "UPDATE SKIP LOCKED", // SELECT ... FOR UPDATE SKIP LOCKED
}

func scheduledRows(rows []scheduledRow) []storage.ScheduledMessage {
	out := make([]storage.ScheduledMessage, len(rows))
	for i := range rows {
		out[i] = rows[i].ScheduledMessage
	}
	return out
}

// CreateScheduledMessage inserts a pending message at version 1; the
// foreign keys refuse a sender or channel of another realm.
func (s *Store) CreateScheduledMessage(ctx context.Context, m *storage.ScheduledMessage) error {
	row := &scheduledRow{ScheduledMessage: *m}
	row.ID, row.Version = 0, 1
	row.Delivered, row.DeliveredMessageID = false, nil
	if _, err := s.w.NewInsert().Model(row).Returning("id").Exec(ctx); err != nil {
		return wrapErr(fmt.Sprintf("create scheduled message of user %d in realm %d", m.SenderID, m.RealmID), err)
	}
	m.ID, m.Version, m.Delivered, m.DeliveredMessageID = row.ID, 1, false, nil
	return nil
}

// GetScheduledMessage matches realm, sender and ID.
func (s *Store) GetScheduledMessage(ctx context.Context, realmID, senderID, id int64) (*storage.ScheduledMessage, error) {
	row := new(scheduledRow)
	err := s.r.NewSelect().Model(row).
		Where("sm.realm_id = ?", realmID).Where("sm.sender_id = ?", senderID).Where("sm.id = ?", id).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get scheduled message %d of user %d in realm %d", id, senderID, realmID), err)
	}
	return &row.ScheduledMessage, nil
}

// ListScheduledMessages reads the sender's part of the undelivered index.
func (s *Store) ListScheduledMessages(ctx context.Context, realmID, senderID int64) ([]storage.ScheduledMessage, error) {
	var rows []scheduledRow
	err := s.r.NewSelect().Model(&rows).
		Where("sm.realm_id = ?", realmID).Where("sm.sender_id = ?", senderID).Where(sqlUndelivered).
		OrderExpr("sm.scheduled_timestamp ASC, sm.id ASC").
		Scan(ctx)
	return scheduledRows(rows), wrapErr(fmt.Sprintf("list scheduled messages of user %d in realm %d", senderID, realmID), err)
}

// UpdateScheduledMessage is a conditional update on the version read.
func (s *Store) UpdateScheduledMessage(ctx context.Context, m *storage.ScheduledMessage) error {
	op := fmt.Sprintf("update scheduled message %d of user %d in realm %d", m.ID, m.SenderID, m.RealmID)
	row := &scheduledRow{ScheduledMessage: *m}
	res, err := s.w.NewUpdate().Model(row).
		Column("stream_id", "topic", "recipients", "content", "rendered_content", "scheduled_timestamp",
			"sending_client", "failed", "failure_message").
		Set("version = version + 1").
		Where("realm_id = ?", m.RealmID).Where("sender_id = ?", m.SenderID).Where("id = ?", m.ID).
		Where("version = ?", m.Version).Where("delivered = FALSE").
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	if err := checkAffected(op, res); err != nil {
		return err
	}
	m.Version++
	return nil
}

// DeleteScheduledMessage deletes by realm, sender and ID.
func (s *Store) DeleteScheduledMessage(ctx context.Context, realmID, senderID, id int64) error {
	op := fmt.Sprintf("delete scheduled message %d of user %d in realm %d", id, senderID, realmID)
	res, err := s.w.NewDelete().Model((*scheduledRow)(nil)).
		Where("realm_id = ?", realmID).Where("sender_id = ?", senderID).Where("id = ?", id).
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// ListDueScheduledMessages walks the pending index from the cursor (a row
// value comparison, which both databases turn into an index range).
func (s *Store) ListDueScheduledMessages(ctx context.Context, now int64, after storage.ScheduledCursor, limit int) ([]storage.ScheduledMessage, error) {
	var rows []scheduledRow
	err := s.r.NewSelect().Model(&rows).
		Where(sqlPending).
		Where("sm.scheduled_timestamp <= ?", now).
		Where("(sm.scheduled_timestamp, sm.id) > (?, ?)", after.Timestamp, after.ID).
		OrderExpr("sm.scheduled_timestamp ASC, sm.id ASC").
		Limit(limit).
		Scan(ctx)
	return scheduledRows(rows), wrapErr("list due scheduled messages", err)
}

// NextScheduledDelivery reads the first entry of the pending index.
func (s *Store) NextScheduledDelivery(ctx context.Context) (int64, bool, error) {
	var at int64
	err := s.r.NewSelect().Model((*scheduledRow)(nil)).Column("sm.scheduled_timestamp").
		Where(sqlPending).
		OrderExpr("sm.scheduled_timestamp ASC, sm.id ASC").
		Limit(1).
		Scan(ctx, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, wrapErr("next scheduled delivery", err)
	}
	return at, true, nil
}

// ClaimScheduledMessage locks the pending row where the dialect needs it,
// then marks it delivered with a conditional update.
func (s *Store) ClaimScheduledMessage(ctx context.Context, realmID, id, version, messageID int64) error {
	op := fmt.Sprintf("claim scheduled message %d (version %d) in realm %d", id, version, realmID)
	if lock := scheduledClaimLock[s.ops.name]; lock != "" {
		var got int64
		err := s.w.NewSelect().Model((*scheduledRow)(nil)).Column("sm.id").
			Where("sm.realm_id = ?", realmID).Where("sm.id = ?", id).Where("sm.version = ?", version).Where(sqlPending).
			For(lock).
			Scan(ctx, &got)
		if err != nil {
			return wrapErr(op, err)
		}
	}
	res, err := s.w.NewUpdate().Model((*scheduledRow)(nil)).
		Set("delivered = TRUE").Set("delivered_message_id = ?", messageID).
		Where("realm_id = ?", realmID).Where("id = ?", id).Where("version = ?", version).Where("delivered = FALSE AND failed = FALSE").
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// FailScheduledMessage is a conditional update like the claim's.
func (s *Store) FailScheduledMessage(ctx context.Context, realmID, id, version int64, reason string) error {
	op := fmt.Sprintf("fail scheduled message %d (version %d) in realm %d", id, version, realmID)
	res, err := s.w.NewUpdate().Model((*scheduledRow)(nil)).
		Set("failed = TRUE").Set("failure_message = ?", reason).Set("version = version + 1").
		Where("realm_id = ?", realmID).Where("id = ?", id).Where("version = ?", version).Where("delivered = FALSE AND failed = FALSE").
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}
