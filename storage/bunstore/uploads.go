package bunstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Uploaded files' records, their links to messages, and custom emoji
// (migration 0012); and who hears of an action on a message.

type attachmentRow struct {
	bun.BaseModel `bun:"table:attachments,alias:at"`
	storage.Attachment
}

type attachmentMessageRow struct {
	bun.BaseModel `bun:"table:attachment_messages,alias:am"`

	RealmID      int64 `bun:"realm_id"`
	AttachmentID int64 `bun:"attachment_id,pk"`
	MessageID    int64 `bun:"message_id,pk"`
}

type realmEmojiRow struct {
	bun.BaseModel `bun:"table:realm_emoji,alias:rem"`
	storage.RealmEmoji
}

// CreateAttachment inserts the record.
func (s *Store) CreateAttachment(ctx context.Context, a *storage.Attachment) error {
	row := &attachmentRow{Attachment: *a}
	row.ID = 0
	if _, err := s.w.NewInsert().Model(row).Returning("id").Exec(ctx); err != nil {
		return wrapErr(fmt.Sprintf("create attachment %q", a.PathID), err)
	}
	a.ID = row.ID
	_, err := s.w.NewUpdate().Table("realms").Set("upload_bytes = upload_bytes + ?", a.Size).
		Where("id = ?", a.RealmID).Exec(ctx)
	return wrapErr(fmt.Sprintf("count attachment %q", a.PathID), err)
}

// RealmUploadBytes reads the realm's upload total from its row.
func (s *Store) RealmUploadBytes(ctx context.Context, realmID int64) (int64, error) {
	var n int64
	err := s.r.NewSelect().Table("realms").Column("upload_bytes").Where("id = ?", realmID).Scan(ctx, &n)
	return n, wrapErr(fmt.Sprintf("upload total of realm %d", realmID), err)
}

// GetAttachmentsByPath reads through the unique path_id.
func (s *Store) GetAttachmentsByPath(ctx context.Context, realmID int64, pathIDs []string) ([]storage.Attachment, error) {
	out := []storage.Attachment{}
	err := inChunks(pathIDs, func(part []string) error {
		var rows []attachmentRow
		err := s.r.NewSelect().Model(&rows).Where("realm_id = ?", realmID).Where("path_id IN (?)", bun.List(part)).
			OrderExpr("id ASC").Scan(ctx)
		for _, r := range rows {
			out = append(out, r.Attachment)
		}
		return wrapErr(fmt.Sprintf("get attachments in realm %d", realmID), err)
	})
	return out, err
}

// LinkAttachments inserts the links that are missing.
func (s *Store) LinkAttachments(ctx context.Context, realmID, messageID int64, attachmentIDs []int64) error {
	ids := uniqueIDs(attachmentIDs)
	if len(ids) == 0 {
		return nil
	}
	rows := make([]attachmentMessageRow, len(ids))
	for i, id := range ids {
		rows[i] = attachmentMessageRow{RealmID: realmID, AttachmentID: id, MessageID: messageID}
	}
	_, err := s.w.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx)
	return wrapErr(fmt.Sprintf("link attachments to message %d", messageID), err)
}

// UnlinkAttachments deletes the links.
func (s *Store) UnlinkAttachments(ctx context.Context, realmID, messageID int64, attachmentIDs []int64) error {
	return chunked(attachmentIDs, func(ids []int64) error {
		_, err := s.w.NewDelete().Model((*attachmentMessageRow)(nil)).Where("realm_id = ?", realmID).
			Where("message_id = ?", messageID).Where("attachment_id IN (?)", bun.List(ids)).Exec(ctx)
		return wrapErr(fmt.Sprintf("unlink attachments from message %d", messageID), err)
	})
}

// ListAttachmentMessages reads the primary key's prefix.
func (s *Store) ListAttachmentMessages(ctx context.Context, realmID, attachmentID int64, limit int) ([]int64, error) {
	out := []int64{}
	err := s.r.NewSelect().Model((*attachmentMessageRow)(nil)).Column("message_id").
		Where("realm_id = ?", realmID).Where("attachment_id = ?", attachmentID).
		OrderExpr("message_id ASC").Limit(limit).Scan(ctx, &out)
	return out, wrapErr(fmt.Sprintf("messages of attachment %d", attachmentID), err)
}

// ListMessageAttachments reads attachment_messages_message_idx.
func (s *Store) ListMessageAttachments(ctx context.Context, realmID, messageID int64) ([]storage.Attachment, error) {
	var rows []attachmentRow
	err := s.r.NewSelect().Model(&rows).Where("at.realm_id = ?", realmID).
		Where("at.id IN (SELECT am.attachment_id FROM attachment_messages AS am WHERE am.realm_id = ? AND am.message_id = ?)", realmID, messageID).
		OrderExpr("at.id ASC").Scan(ctx)
	out := make([]storage.Attachment, len(rows))
	for i, r := range rows {
		out[i] = r.Attachment
	}
	return out, wrapErr(fmt.Sprintf("attachments of message %d", messageID), err)
}

// ListRealmEmoji reads the organization's emoji.
func (s *Store) ListRealmEmoji(ctx context.Context, realmID int64) ([]storage.RealmEmoji, error) {
	var rows []realmEmojiRow
	err := s.r.NewSelect().Model(&rows).Where("realm_id = ?", realmID).OrderExpr("id ASC").Scan(ctx)
	out := make([]storage.RealmEmoji, len(rows))
	for i, r := range rows {
		out[i] = r.RealmEmoji
	}
	return out, wrapErr(fmt.Sprintf("list custom emoji of realm %d", realmID), err)
}

// GetRealmEmojiByName reads the active-name index.
func (s *Store) GetRealmEmojiByName(ctx context.Context, realmID int64, name string) (*storage.RealmEmoji, error) {
	row := new(realmEmojiRow)
	err := s.r.NewSelect().Model(row).Where("realm_id = ?", realmID).Where("name = ?", name).Where("NOT deactivated").Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get custom emoji %q of realm %d", name, realmID), err)
	}
	return &row.RealmEmoji, nil
}

// GetRealmEmojiByCode reads by ID.
func (s *Store) GetRealmEmojiByCode(ctx context.Context, realmID int64, code string) (*storage.RealmEmoji, error) {
	op := fmt.Sprintf("get custom emoji %q of realm %d", code, realmID)
	id, err := strconv.ParseInt(code, 10, 64)
	if err != nil || strconv.FormatInt(id, 10) != code {
		return nil, fmt.Errorf("bunstore: %s: %w", op, storage.ErrNotFound)
	}
	row := new(realmEmojiRow)
	if err := s.r.NewSelect().Model(row).Where("realm_id = ?", realmID).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, wrapErr(op, err)
	}
	return &row.RealmEmoji, nil
}

// CreateRealmEmoji inserts; the partial unique index refuses a second
// active emoji of a name.
func (s *Store) CreateRealmEmoji(ctx context.Context, e *storage.RealmEmoji) error {
	row := &realmEmojiRow{RealmEmoji: *e}
	row.ID = 0
	if _, err := s.w.NewInsert().Model(row).Returning("id").Exec(ctx); err != nil {
		return wrapErr(fmt.Sprintf("create custom emoji %q", e.Name), err)
	}
	e.ID = row.ID
	return nil
}

// DeactivateRealmEmoji sets deactivated.
func (s *Store) DeactivateRealmEmoji(ctx context.Context, realmID, id int64) error {
	op := fmt.Sprintf("deactivate custom emoji %d of realm %d", id, realmID)
	res, err := s.w.NewUpdate().Model((*realmEmojiRow)(nil)).Set("deactivated = ?", true).
		Where("realm_id = ?", realmID).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// SubscribersWhoReceived joins the channel's active subscriptions to
// their open periods.
func (s *Store) SubscribersWhoReceived(ctx context.Context, realmID, streamID, messageID int64) ([]int64, error) {
	out := []int64{}
	err := s.r.NewRaw(`SELECT sp.user_id FROM subscription_periods AS sp
		JOIN users AS u ON u.realm_id = sp.realm_id AND u.id = sp.user_id AND u.is_active
		WHERE sp.realm_id = ? AND sp.stream_id = ? AND sp.end_message_id IS NULL AND sp.start_message_id < ?
		ORDER BY sp.user_id`, realmID, streamID, messageID).Scan(ctx, &out)
	return out, wrapErr(fmt.Sprintf("subscribers of channel %d who received message %d", streamID, messageID), err)
}

// MessageRowUsers reads user_messages_message_idx.
func (s *Store) MessageRowUsers(ctx context.Context, realmID, messageID int64) ([]int64, error) {
	out := []int64{}
	err := s.r.NewSelect().Model((*userMessageRow)(nil)).Column("user_id").
		Where("realm_id = ?", realmID).Where("message_id = ?", messageID).OrderExpr("user_id ASC").Scan(ctx, &out)
	return out, wrapErr(fmt.Sprintf("users with a row for message %d", messageID), err)
}
