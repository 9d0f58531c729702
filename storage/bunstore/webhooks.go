package bunstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Outgoing webhooks (migration 0026).

type botServiceRow struct {
	bun.BaseModel `bun:"table:bot_services,alias:bs"`
	storage.BotService
}

type webhookDeliveryRow struct {
	bun.BaseModel `bun:"table:webhook_deliveries,alias:wd"`
	storage.WebhookDelivery
}

// CreateBotService inserts; the foreign key refuses a bot of another realm.
func (s *Store) CreateBotService(ctx context.Context, svc *storage.BotService) error {
	row := &botServiceRow{BotService: *svc}
	row.ID = 0
	if _, err := s.w.NewInsert().Model(row).Returning("id").Exec(ctx); err != nil {
		return wrapErr(fmt.Sprintf("create service of bot %d in realm %d", svc.BotID, svc.RealmID), err)
	}
	svc.ID = row.ID
	return nil
}

// UpdateBotService writes base_url and interface by ID.
func (s *Store) UpdateBotService(ctx context.Context, svc *storage.BotService) error {
	op := fmt.Sprintf("update service %d of realm %d", svc.ID, svc.RealmID)
	res, err := s.w.NewUpdate().Model(&botServiceRow{BotService: *svc}).Column("base_url", "interface").
		Where("realm_id = ?", svc.RealmID).Where("id = ?", svc.ID).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// ListBotServices reads bot_services_bot_idx.
func (s *Store) ListBotServices(ctx context.Context, realmID int64, botIDs []int64) ([]storage.BotService, error) {
	if len(botIDs) == 0 {
		return nil, nil
	}
	var rows []botServiceRow
	err := s.r.NewSelect().Model(&rows).Where("realm_id = ?", realmID).Where("bot_id IN (?)", bun.List(uniqueIDs(botIDs))).
		OrderExpr("id ASC").Scan(ctx)
	out := make([]storage.BotService, len(rows))
	for i := range rows {
		out[i] = rows[i].BotService
	}
	return out, wrapErr(fmt.Sprintf("list services of %d bots in realm %d", len(botIDs), realmID), err)
}

// EnqueueWebhooks inserts the rows in one statement.
func (s *Store) EnqueueWebhooks(ctx context.Context, ds []storage.WebhookDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	rows := make([]webhookDeliveryRow, len(ds))
	for i := range ds {
		rows[i].WebhookDelivery = ds[i]
		rows[i].ID = 0
	}
	if _, err := s.w.NewInsert().Model(&rows).Returning("id").Exec(ctx); err != nil {
		return wrapErr(fmt.Sprintf("enqueue %d webhooks", len(ds)), err)
	}
	for i := range ds {
		ds[i].ID = rows[i].ID
	}
	return nil
}

// ClaimWebhooks is one conditional update over the due rows read from the
// front of webhook_deliveries_due_idx; on PostgreSQL the rows are locked
// with SKIP LOCKED, so concurrent deliverers take different rows without
// waiting (SQLite has one writer: its update is the claim).
func (s *Store) ClaimWebhooks(ctx context.Context, now, leaseUntil int64, claim string, limit int) ([]storage.WebhookDelivery, error) {
	lock := ""
	if s.ops.name == DialectPostgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var rows []webhookDeliveryRow
	query, args := s.ops.claimOnce(`SELECT id FROM webhook_deliveries WHERE next_attempt_at <= ? AND claimed_until <= ?
			ORDER BY next_attempt_at, id LIMIT ?`+lock, []any{now, now, limit}, `UPDATE webhook_deliveries SET claimed_until = ?, claim = ?
		WHERE id IN (?) RETURNING *`, []any{leaseUntil, claim})
	err := s.w.NewRaw(query, args...).Scan(ctx, &rows)
	out := make([]storage.WebhookDelivery, len(rows))
	for i := range rows {
		out[i] = rows[i].WebhookDelivery
	}
	// RETURNING has no order: the oldest due first.
	slices.SortFunc(out, func(a, b storage.WebhookDelivery) int {
		return cmp.Or(cmp.Compare(a.NextAttemptAt, b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	return out, wrapErr("claim webhooks", err)
}

// FinishWebhook deletes by ID and claim.
func (s *Store) FinishWebhook(ctx context.Context, id int64, claim string) (bool, error) {
	res, err := s.w.NewDelete().Model((*webhookDeliveryRow)(nil)).Where("id = ?", id).Where("claim = ?", claim).Exec(ctx)
	if err != nil {
		return false, wrapErr(fmt.Sprintf("finish webhook %d", id), err)
	}
	n, err := res.RowsAffected()
	return n == 1, wrapErr(fmt.Sprintf("finish webhook %d", id), err)
}

// RetryWebhook updates by ID and claim, releasing the claim.
func (s *Store) RetryWebhook(ctx context.Context, id int64, claim string, attempts int, next int64) (bool, error) {
	res, err := s.w.NewUpdate().Model((*webhookDeliveryRow)(nil)).
		Set("attempts = ?", attempts).Set("next_attempt_at = ?", next).Set("claimed_until = 0").Set("claim = ''").
		Where("id = ?", id).Where("claim = ?", claim).Exec(ctx)
	if err != nil {
		return false, wrapErr(fmt.Sprintf("retry webhook %d", id), err)
	}
	n, err := res.RowsAffected()
	return n == 1, wrapErr(fmt.Sprintf("retry webhook %d", id), err)
}

// NextWebhookAt reads the front of webhook_deliveries_due_idx.
func (s *Store) NextWebhookAt(ctx context.Context, now int64) (int64, bool, error) {
	var at []int64
	err := s.r.NewSelect().TableExpr("webhook_deliveries").ColumnExpr("next_attempt_at").
		Where("claimed_until <= ?", now).OrderExpr("next_attempt_at ASC, id ASC").Limit(1).Scan(ctx, &at)
	if err != nil || len(at) == 0 {
		return 0, false, wrapErr("next webhook", err)
	}
	return at[0], true, nil
}
