package bunstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Invitations (migration 0022): one row per invitation, its channels and
// groups in invite_streams and invite_groups.

type inviteRow struct {
	bun.BaseModel `bun:"table:invites,alias:inv"`
	storage.Invite
}

type inviteStreamRow struct {
	bun.BaseModel `bun:"table:invite_streams"`
	RealmID       int64 `bun:"realm_id"`
	InviteID      int64 `bun:"invite_id"`
	StreamID      int64 `bun:"stream_id"`
}

type inviteGroupRow struct {
	bun.BaseModel `bun:"table:invite_groups"`
	RealmID       int64 `bun:"realm_id"`
	InviteID      int64 `bun:"invite_id"`
	GroupID       int64 `bun:"group_id"`
}

// sortedIDs is ids ascending without repeats (nil for none).
func sortedIDs(ids []int64) []int64 {
	if len(ids) == 0 {
		return nil
	}
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// CreateInvite inserts the invitation and its channel and group rows in
// one transaction; the composite foreign keys refuse a referrer, channel
// or group of another realm, the unique key a key in use.
func (s *Store) CreateInvite(ctx context.Context, inv *storage.Invite) error {
	op := fmt.Sprintf("create invitation in realm %d", inv.RealmID)
	streams, groups := sortedIDs(inv.StreamIDs), sortedIDs(inv.GroupIDs)
	var id int64
	err := s.withTx(ctx, func(tx *Store) error {
		row := &inviteRow{Invite: *inv}
		row.ID = 0
		if _, err := insertKey(tx.w.NewInsert().Model(row), "email_key", inv.Email).Returning("id").Exec(ctx); err != nil {
			return wrapErr(op, err)
		}
		id = row.ID
		if len(streams) > 0 {
			rows := make([]inviteStreamRow, len(streams))
			for i, sid := range streams {
				rows[i] = inviteStreamRow{RealmID: inv.RealmID, InviteID: id, StreamID: sid}
			}
			if _, err := tx.w.NewInsert().Model(&rows).Exec(ctx); err != nil {
				return wrapErr(op+": channels", err)
			}
		}
		if len(groups) > 0 {
			rows := make([]inviteGroupRow, len(groups))
			for i, gid := range groups {
				rows[i] = inviteGroupRow{RealmID: inv.RealmID, InviteID: id, GroupID: gid}
			}
			if _, err := tx.w.NewInsert().Model(&rows).Exec(ctx); err != nil {
				return wrapErr(op+": groups", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	inv.ID, inv.StreamIDs, inv.GroupIDs = id, streams, groups
	return nil
}

// GetInvite reads the invitation by realm and ID, with its channels and
// groups.
func (s *Store) GetInvite(ctx context.Context, realmID, id int64) (*storage.Invite, error) {
	return s.getInvite(ctx, realmID, fmt.Sprintf("get invitation %d of realm %d", id, realmID), "inv.id = ?", id)
}

// GetInviteByKey reads the invitation by realm and key, with its
// channels and groups.
func (s *Store) GetInviteByKey(ctx context.Context, realmID int64, key string) (*storage.Invite, error) {
	return s.getInvite(ctx, realmID, fmt.Sprintf("get invitation by key in realm %d", realmID), "inv.invite_key = ?", key)
}

func (s *Store) getInvite(ctx context.Context, realmID int64, op, where string, arg any) (*storage.Invite, error) {
	row := new(inviteRow)
	if err := s.r.NewSelect().Model(row).Where("inv.realm_id = ?", realmID).Where(where, arg).Scan(ctx); err != nil {
		return nil, wrapErr(op, err)
	}
	inv := row.Invite
	err := s.r.NewSelect().TableExpr("invite_streams").Column("stream_id").
		Where("realm_id = ?", realmID).Where("invite_id = ?", inv.ID).OrderExpr("stream_id ASC").Scan(ctx, &inv.StreamIDs)
	if err != nil {
		return nil, wrapErr(op+": channels", err)
	}
	err = s.r.NewSelect().TableExpr("invite_groups").Column("group_id").
		Where("realm_id = ?", realmID).Where("invite_id = ?", inv.ID).OrderExpr("group_id ASC").Scan(ctx, &inv.GroupIDs)
	if err != nil {
		return nil, wrapErr(op+": groups", err)
	}
	if len(inv.StreamIDs) == 0 {
		inv.StreamIDs = nil
	}
	if len(inv.GroupIDs) == 0 {
		inv.GroupIDs = nil
	}
	return &inv, nil
}

// ListInvites reads the realm's invitations (of one referrer: the
// (realm_id, referrer_id) index); with ValidAt, only the active and
// unexpired ones of active referrers.
func (s *Store) ListInvites(ctx context.Context, realmID int64, f storage.InviteFilter) ([]storage.Invite, error) {
	var rows []inviteRow
	q := s.r.NewSelect().Model(&rows).Where("inv.realm_id = ?", realmID)
	if f.ReferrerID != 0 {
		q = q.Where("inv.referrer_id = ?", f.ReferrerID)
	}
	if f.ValidAt != 0 {
		q = q.Join("JOIN users AS u ON u.realm_id = inv.realm_id AND u.id = inv.referrer_id").
			Where("u.is_active = ?", true).
			Where("inv.status = ?", storage.InviteActive).
			Where("(inv.expires_at IS NULL OR inv.expires_at >= ?)", f.ValidAt)
	}
	err := q.OrderExpr("inv.id ASC").Scan(ctx)
	out := make([]storage.Invite, len(rows))
	for i, r := range rows {
		out[i] = r.Invite
	}
	return out, wrapErr(fmt.Sprintf("list invitations of realm %d", realmID), err)
}

// SetInviteStatus writes the state by realm and ID.
func (s *Store) SetInviteStatus(ctx context.Context, realmID, id int64, status int) error {
	op := fmt.Sprintf("set status of invitation %d of realm %d", id, realmID)
	res, err := s.w.NewUpdate().Model((*inviteRow)(nil)).Set("status = ?", status).
		Where("realm_id = ?", realmID).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// RevokeEmailInvites revokes by (realm_id, email_key), the email index.
func (s *Store) RevokeEmailInvites(ctx context.Context, realmID int64, email string, except int64) (int, error) {
	op := fmt.Sprintf("revoke email invitations in realm %d", realmID)
	res, err := s.w.NewUpdate().Model((*inviteRow)(nil)).Set("status = ?", storage.InviteRevoked).
		Where("realm_id = ?", realmID).Where("email_key = ?", storage.Fold(email)).
		Where("is_multiuse = ?", false).Where("status = ?", storage.InviteActive).Where("id <> ?", except).Exec(ctx)
	if err != nil {
		return 0, wrapErr(op, err)
	}
	n, err := res.RowsAffected()
	return int(n), wrapErr(op, err)
}
