package bunstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Presence (migration 0024).

type presenceRow struct {
	bun.BaseModel `bun:"table:user_presences,alias:p"`
	storage.Presence
}

type presenceEntryRow struct {
	bun.BaseModel `bun:"table:user_presences,alias:p"`
	storage.PresenceEntry
}

// GetPresences reads the users' rows by primary key.
func (s *Store) GetPresences(ctx context.Context, realmID int64, userIDs []int64) ([]storage.Presence, error) {
	if len(userIDs) == 0 {
		return nil, nil
	}
	var rows []presenceRow
	err := s.r.NewSelect().Model(&rows).Where("realm_id = ?", realmID).Where("user_id IN (?)", bun.In(userIDs)).Scan(ctx)
	out := make([]storage.Presence, len(rows))
	for i := range rows {
		out[i] = rows[i].Presence
	}
	return out, wrapErr(fmt.Sprintf("get presence of %d users in realm %d", len(userIDs), realmID), err)
}

// SavePresences takes len(rows) values of the realm's sequence in one
// upsert (which also locks the sequence row until commit, so values are
// handed out in commit order), then upserts the rows in one statement.
func (s *Store) SavePresences(ctx context.Context, realmID int64, rows []storage.Presence) error {
	if len(rows) == 0 {
		return nil
	}
	op := fmt.Sprintf("save %d presence rows in realm %d", len(rows), realmID)
	var last int64
	err := s.w.NewRaw(`INSERT INTO presence_sequences (realm_id, last_update_id) VALUES (?, ?)
		ON CONFLICT (realm_id) DO UPDATE SET last_update_id = presence_sequences.last_update_id + EXCLUDED.last_update_id
		RETURNING last_update_id`, realmID, len(rows)).Scan(ctx, &last)
	if err != nil {
		return wrapErr(op, err)
	}
	models := make([]presenceRow, len(rows))
	for i := range rows {
		rows[i].RealmID = realmID
		rows[i].LastUpdateID = last - int64(len(rows)-1-i)
		models[i].Presence = rows[i]
	}
	_, err = s.w.NewInsert().Model(&models).
		On("CONFLICT (user_id) DO UPDATE").
		Set("last_active_time = EXCLUDED.last_active_time").
		Set("last_connected_time = EXCLUDED.last_connected_time").
		Set("last_update_id = EXCLUDED.last_update_id").
		Exec(ctx)
	return wrapErr(op, err)
}

// DeletePresence deletes by primary key.
func (s *Store) DeletePresence(ctx context.Context, realmID, userID int64) error {
	_, err := s.w.NewDelete().Model((*presenceRow)(nil)).Where("realm_id = ?", realmID).Where("user_id = ?", userID).Exec(ctx)
	return wrapErr(fmt.Sprintf("delete presence of user %d in realm %d", userID, realmID), err)
}

// ListPresences walks the (realm_id, last_update_id) index from afterID.
func (s *Store) ListPresences(ctx context.Context, realmID, afterID, connectedSince int64) ([]storage.PresenceEntry, error) {
	var rows []presenceEntryRow
	err := s.r.NewSelect().Model(&rows).
		ColumnExpr("p.*, u.email, u.date_joined, u.settings").
		Join("JOIN users AS u ON u.realm_id = p.realm_id AND u.id = p.user_id").
		Where("p.realm_id = ?", realmID).Where("p.last_update_id > ?", afterID).
		Where("COALESCE(p.last_connected_time, u.date_joined) >= ?", connectedSince).
		Where("u.is_active").Where("NOT u.is_bot").
		OrderExpr("p.last_update_id ASC").Scan(ctx)
	out := make([]storage.PresenceEntry, len(rows))
	for i := range rows {
		out[i] = rows[i].PresenceEntry
	}
	return out, wrapErr(fmt.Sprintf("list presence of realm %d", realmID), err)
}

// ActiveUsersAtMost counts at most n+1 active users.
func (s *Store) ActiveUsersAtMost(ctx context.Context, realmID int64, n int) (bool, error) {
	var count int
	err := s.r.NewRaw(`SELECT count(*) FROM (SELECT 1 FROM users WHERE realm_id = ? AND is_active AND NOT is_system_bot LIMIT ?) AS active_users`, realmID, n+1).Scan(ctx, &count)
	return count <= n, wrapErr(fmt.Sprintf("count active users of realm %d", realmID), err)
}
