package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// The email gateway's tables (migration 0031): channel addresses, the
// reply addresses of missed-message emails, and the receipts of the mails
// posted (for retried deliveries).

type channelEmailAddressRow struct {
	bun.BaseModel `bun:"table:channel_email_addresses,alias:cea"`
	storage.ChannelEmailAddress
}

type emailReplyAddressRow struct {
	bun.BaseModel `bun:"table:email_reply_addresses,alias:era"`
	storage.EmailReplyAddress
}

type gatewayReceiptRow struct {
	bun.BaseModel `bun:"table:email_gateway_received,alias:egr"`
	RealmID       int64  `bun:"realm_id"`
	EmailToken    string `bun:"email_token,pk"`
	MessageKey    string `bun:"message_key,pk"`
	MessageID     int64  `bun:"message_id"`
	ReceivedAt    int64  `bun:"received_at"`
}

// ChannelEmailAddress returns the address of (channel, creator, sender),
// inserting a when there is none.
func (s *Store) ChannelEmailAddress(ctx context.Context, a *storage.ChannelEmailAddress) (*storage.ChannelEmailAddress, error) {
	op := fmt.Sprintf("channel email address of channel %d in realm %d", a.StreamID, a.RealmID)
	find := func() (*storage.ChannelEmailAddress, error) {
		row := new(channelEmailAddressRow)
		err := s.r.NewSelect().Model(row).
			Where("realm_id = ?", a.RealmID).Where("stream_id = ?", a.StreamID).
			Where("creator_id = ?", a.CreatorID).Where("sender_id = ?", a.SenderID).
			Scan(ctx)
		return &row.ChannelEmailAddress, wrapErr(op, err)
	}
	found, err := find()
	if !errors.Is(err, storage.ErrNotFound) {
		return found, err
	}
	row := &channelEmailAddressRow{ChannelEmailAddress: *a}
	row.ID = 0
	// DO NOTHING, not a unique violation: a transaction that holds this
	// stays usable on PostgreSQL.
	if _, err = s.w.NewInsert().Model(row).On("CONFLICT DO NOTHING").Returning("id").Exec(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, wrapErr(op, err)
	}
	if row.ID != 0 {
		return &row.ChannelEmailAddress, nil
	}
	// Made meanwhile, or the token is another address's.
	if found, err := find(); !errors.Is(err, storage.ErrNotFound) {
		return found, err
	}
	return nil, fmt.Errorf("bunstore: %s: token in use: %w", op, storage.ErrConflict)
}

// ChannelEmailAddressByToken finds a channel address by its token.
func (s *Store) ChannelEmailAddressByToken(ctx context.Context, token string) (*storage.ChannelEmailAddress, error) {
	row := new(channelEmailAddressRow)
	err := s.r.NewSelect().Model(row).Where("email_token = ?", token).Scan(ctx)
	if err != nil {
		return nil, wrapErr("channel email address by token", err)
	}
	return &row.ChannelEmailAddress, nil
}

// CreateEmailReplyAddress inserts a reply address.
func (s *Store) CreateEmailReplyAddress(ctx context.Context, a *storage.EmailReplyAddress) error {
	row := &emailReplyAddressRow{EmailReplyAddress: *a}
	row.ID = 0
	if _, err := s.w.NewInsert().Model(row).Returning("id").Exec(ctx); err != nil {
		return wrapErr(fmt.Sprintf("create reply address in realm %d", a.RealmID), err)
	}
	a.ID = row.ID
	return nil
}

// EmailReplyAddressByToken finds a reply address by its token.
func (s *Store) EmailReplyAddressByToken(ctx context.Context, token string) (*storage.EmailReplyAddress, error) {
	row := new(emailReplyAddressRow)
	err := s.r.NewSelect().Model(row).Where("email_token = ?", token).Scan(ctx)
	if err != nil {
		return nil, wrapErr("reply address by token", err)
	}
	return &row.EmailReplyAddress, nil
}

// UseEmailReplyAddress counts a use while fewer than max were made.
func (s *Store) UseEmailReplyAddress(ctx context.Context, realmID, id int64, max int) error {
	op := fmt.Sprintf("use reply address %d in realm %d", id, realmID)
	res, err := s.w.NewUpdate().Table("email_reply_addresses").Set("times_used = times_used + 1").
		Where("realm_id = ?", realmID).Where("id = ?", id).Where("times_used < ?", max).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// RecordGatewayReceipt records a posted mail; the primary key refuses a
// second with the same token and key.
func (s *Store) RecordGatewayReceipt(ctx context.Context, r storage.GatewayReceipt) error {
	row := &gatewayReceiptRow{RealmID: r.RealmID, EmailToken: r.EmailToken, MessageKey: r.MessageKey, MessageID: r.MessageID, ReceivedAt: r.ReceivedAt}
	_, err := s.w.NewInsert().Model(row).Exec(ctx)
	return wrapErr(fmt.Sprintf("record a gateway mail in realm %d", r.RealmID), err)
}

// GatewayReceipt returns the receipt of token and key.
func (s *Store) GatewayReceipt(ctx context.Context, token, key string) (*storage.GatewayReceipt, error) {
	row := new(gatewayReceiptRow)
	err := s.r.NewSelect().Model(row).Where("email_token = ?", token).Where("message_key = ?", key).Scan(ctx)
	if err != nil {
		return nil, wrapErr("gateway mail", err)
	}
	return &storage.GatewayReceipt{RealmID: row.RealmID, EmailToken: row.EmailToken, MessageKey: row.MessageKey,
		MessageID: row.MessageID, ReceivedAt: row.ReceivedAt}, nil
}

// PruneEmailGateway deletes expired reply addresses and old receipts, a
// bounded number of each, through their time indexes.
func (s *Store) PruneEmailGateway(ctx context.Context, repliesBefore, receiptsBefore int64, limit int) (int, error) {
	n := 0
	for _, q := range []struct{ table, column string }{{"email_reply_addresses", "created_at"}, {"email_gateway_received", "received_at"}} {
		before := repliesBefore
		if q.column == "received_at" {
			before = receiptsBefore
		}
		key, columns := "id", "id"
		if q.table == "email_gateway_received" {
			key, columns = "(email_token, message_key)", "email_token, message_key" // its primary key
		}
		res, err := s.w.NewRaw(fmt.Sprintf(`DELETE FROM %s WHERE %s IN (SELECT %s FROM %s WHERE %s < ? ORDER BY %s LIMIT ?)`,
			q.table, key, columns, q.table, q.column, q.column), before, limit).Exec(ctx)
		if err != nil {
			return n, wrapErr("prune the email gateway", err)
		}
		affected, _ := res.RowsAffected()
		n += int(affected)
	}
	return n, nil
}
