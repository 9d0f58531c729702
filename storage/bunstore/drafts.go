package bunstore

import (
	"context"
	"fmt"

	"github.com/teamchat/chat/storage"
)

// Drafts belong to a user: every method matches realm, user and (for one
// draft) ID, so another user's or another realm's draft is
// storage.ErrNotFound. The drafts table has a composite foreign key to
// users (realm_id, id), ON DELETE CASCADE.

// CreateDraft inserts d and sets d.ID. A user that is missing or of
// another realm gives storage.ErrNotFound.
func (s *Store) CreateDraft(ctx context.Context, d *storage.Draft) error {
	_, err := s.w.NewInsert().Model(d).Returning("id").Exec(ctx)
	return wrapErr(fmt.Sprintf("create draft of user %d in realm %d", d.UserID, d.RealmID), err)
}

// GetDraft returns the user's draft with the given ID.
func (s *Store) GetDraft(ctx context.Context, realmID, userID, draftID int64) (*storage.Draft, error) {
	d := new(storage.Draft)
	err := s.r.NewSelect().Model(d).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		Where("id = ?", draftID).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get draft %d of user %d in realm %d", draftID, userID, realmID), err)
	}
	return d, nil
}

// ListDrafts returns the user's drafts, newest timestamp first, then by
// ascending ID. A user without drafts (or a missing one) gives an empty list.
func (s *Store) ListDrafts(ctx context.Context, realmID, userID int64) ([]storage.Draft, error) {
	drafts := []storage.Draft{}
	err := s.r.NewSelect().Model(&drafts).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		OrderExpr(`"timestamp" DESC, id ASC`).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list drafts of user %d in realm %d", userID, realmID), err)
	}
	return nonNil(drafts), nil
}

// UpdateDraft writes every column of d but its ID, matching the row by
// d.RealmID, d.UserID and d.ID: a draft of another user or realm gives
// storage.ErrNotFound (and is not written).
func (s *Store) UpdateDraft(ctx context.Context, d *storage.Draft) error {
	op := fmt.Sprintf("update draft %d of user %d in realm %d", d.ID, d.UserID, d.RealmID)
	res, err := s.w.NewUpdate().Model(d).
		WherePK().
		Where("realm_id = ?", d.RealmID).
		Where("user_id = ?", d.UserID).
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// DeleteDraft deletes the user's draft; a missing draft, or one of
// another user or realm, gives storage.ErrNotFound.
func (s *Store) DeleteDraft(ctx context.Context, realmID, userID, draftID int64) error {
	op := fmt.Sprintf("delete draft %d of user %d in realm %d", draftID, userID, realmID)
	res, err := s.w.NewDelete().Model((*storage.Draft)(nil)).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		Where("id = ?", draftID).
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// DeleteUserDrafts deletes every draft of the user; a user without drafts
// (or a missing one) is not an error.
func (s *Store) DeleteUserDrafts(ctx context.Context, realmID, userID int64) error {
	_, err := s.w.NewDelete().Model((*storage.Draft)(nil)).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		Exec(ctx)
	return wrapErr(fmt.Sprintf("delete drafts of user %d in realm %d", userID, realmID), err)
}
