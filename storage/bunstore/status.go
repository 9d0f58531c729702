package bunstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// userStatusRow maps storage.UserStatus to its table.
type userStatusRow struct {
	bun.BaseModel `bun:"table:user_statuses,alias:us"`
	storage.UserStatus
}

// GetUserStatus reads the user's row by its primary key.
func (s *Store) GetUserStatus(ctx context.Context, realmID, userID int64) (*storage.UserStatus, error) {
	row := new(userStatusRow)
	err := s.r.NewSelect().Model(row).Where("realm_id = ?", realmID).Where("user_id = ?", userID).Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get status of user %d in realm %d", userID, realmID), err)
	}
	return &row.UserStatus, nil
}

// SetUserStatus upserts the user's row.
func (s *Store) SetUserStatus(ctx context.Context, st *storage.UserStatus) error {
	row := &userStatusRow{UserStatus: *st}
	_, err := s.w.NewInsert().Model(row).
		On("CONFLICT (user_id) DO UPDATE").
		Set("status_text = EXCLUDED.status_text").
		Set("emoji_name = EXCLUDED.emoji_name").
		Set("emoji_code = EXCLUDED.emoji_code").
		Set("reaction_type = EXCLUDED.reaction_type").
		Set("updated_at = EXCLUDED.updated_at").
		Exec(ctx)
	return wrapErr(fmt.Sprintf("set status of user %d in realm %d", st.UserID, st.RealmID), err)
}

// ListUserStatuses reads the realm's rows of active users.
func (s *Store) ListUserStatuses(ctx context.Context, realmID int64) ([]storage.UserStatus, error) {
	var rows []userStatusRow
	err := s.r.NewSelect().Model(&rows).
		Join("JOIN users AS u ON u.realm_id = us.realm_id AND u.id = us.user_id").
		Where("us.realm_id = ?", realmID).Where("u.is_active").
		OrderExpr("us.user_id ASC").Scan(ctx)
	out := make([]storage.UserStatus, len(rows))
	for i := range rows {
		out[i] = rows[i].UserStatus
	}
	return out, wrapErr(fmt.Sprintf("list statuses of realm %d", realmID), err)
}
