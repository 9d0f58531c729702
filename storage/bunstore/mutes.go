package bunstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Muted users (migration 0025).

type userMuteRow struct {
	bun.BaseModel `bun:"table:user_mutes,alias:mu"`
	storage.UserMute
}

// notMutedSender is the condition that a channel message m's sender is
// not muted by the reader (the placeholder): the read-time rule that a
// muted sender's messages are read for the muter.
const notMutedSender = "NOT EXISTS (SELECT 1 FROM user_mutes AS mu WHERE mu.user_id = ? AND mu.muted_user_id = m.sender_id)"

// AddUserMute inserts; the primary key refuses a second mute.
func (s *Store) AddUserMute(ctx context.Context, m *storage.UserMute) error {
	_, err := s.w.NewInsert().Model(&userMuteRow{UserMute: *m}).Exec(ctx)
	return wrapErr(fmt.Sprintf("mute user %d for user %d in realm %d", m.MutedUserID, m.UserID, m.RealmID), err)
}

// RemoveUserMute deletes by primary key.
func (s *Store) RemoveUserMute(ctx context.Context, realmID, userID, mutedUserID int64) error {
	op := fmt.Sprintf("unmute user %d for user %d in realm %d", mutedUserID, userID, realmID)
	res, err := s.w.NewDelete().Model((*userMuteRow)(nil)).Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).Where("muted_user_id = ?", mutedUserID).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// ListUserMutes reads the user's primary-key range.
func (s *Store) ListUserMutes(ctx context.Context, realmID, userID int64) ([]storage.UserMute, error) {
	var rows []userMuteRow
	err := s.r.NewSelect().Model(&rows).Where("realm_id = ?", realmID).Where("user_id = ?", userID).
		OrderExpr("date_muted ASC, muted_user_id ASC").Scan(ctx)
	out := make([]storage.UserMute, len(rows))
	for i := range rows {
		out[i] = rows[i].UserMute
	}
	return out, wrapErr(fmt.Sprintf("list mutes of user %d in realm %d", userID, realmID), err)
}

// ListMuters reads user_mutes_muted_idx.
func (s *Store) ListMuters(ctx context.Context, realmID, mutedUserID int64) ([]int64, error) {
	ids := []int64{}
	err := s.r.NewSelect().TableExpr("user_mutes").Column("user_id").Where("realm_id = ?", realmID).
		Where("muted_user_id = ?", mutedUserID).OrderExpr("user_id ASC").Scan(ctx, &ids)
	return ids, wrapErr(fmt.Sprintf("list muters of user %d in realm %d", mutedUserID, realmID), err)
}
