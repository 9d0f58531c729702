package bunstore

import (
	"context"
	"fmt"

	"github.com/teamchat/chat/storage"
)

// CreateEmailChange inserts c and sets c.ID, replacing the user's earlier
// pending change if there is one: the earlier row (its ID and its key) is
// deleted and c gets a new ID, in one transaction (the caller's, when
// called on a tx-bound Store). A key already used by another pending
// change of the realm gives storage.ErrConflict; a user that is missing or
// of another realm gives storage.ErrNotFound.
//
// The insert is also an upsert on (realm_id, user_id): should a concurrent
// transaction (PostgreSQL) insert a change for the same user between the
// delete and the insert, this one overwrites it instead of failing, and c
// gets that row's ID.
func (s *Store) CreateEmailChange(ctx context.Context, c *storage.EmailChange) error {
	op := fmt.Sprintf("create email change of user %d in realm %d", c.UserID, c.RealmID)
	return s.withTx(ctx, func(tx *Store) error {
		_, err := tx.w.NewDelete().Model((*storage.EmailChange)(nil)).
			Where("realm_id = ?", c.RealmID).
			Where("user_id = ?", c.UserID).
			Exec(ctx)
		if err != nil {
			return wrapErr(op, err)
		}
		_, err = tx.w.NewInsert().Model(c).
			On("CONFLICT (realm_id, user_id) DO UPDATE").
			Set("new_email = EXCLUDED.new_email").
			Set("confirmation_key = EXCLUDED.confirmation_key").
			Set("date_created = EXCLUDED.date_created").
			Returning("id").
			Exec(ctx)
		return wrapErr(op, err)
	})
}

// GetEmailChangeByKey returns the realm's pending change whose key is key
// (exact match).
func (s *Store) GetEmailChangeByKey(ctx context.Context, realmID int64, key string) (*storage.EmailChange, error) {
	c := new(storage.EmailChange)
	err := s.r.NewSelect().Model(c).
		Where("realm_id = ?", realmID).
		Where("confirmation_key = ?", key).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get email change by key in realm %d", realmID), err)
	}
	return c, nil
}

// DeleteEmailChange removes the realm's pending change with the given ID;
// a missing change, or one of another realm, gives storage.ErrNotFound.
func (s *Store) DeleteEmailChange(ctx context.Context, realmID, id int64) error {
	op := fmt.Sprintf("delete email change %d in realm %d", id, realmID)
	res, err := s.w.NewDelete().Model((*storage.EmailChange)(nil)).
		Where("realm_id = ?", realmID).
		Where("id = ?", id).
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}
