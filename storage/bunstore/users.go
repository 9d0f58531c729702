package bunstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// CreateUser inserts u and sets u.ID. An email already used in the realm,
// compared case-insensitively, gives storage.ErrConflict; a missing realm
// or bot owner gives storage.ErrNotFound.
func (s *Store) CreateUser(ctx context.Context, u *storage.User) error {
	q := insertKey(s.w.NewInsert().Model(u), "email_key", u.Email)
	_, err := insertKey(q, "full_name_key", u.FullName).Returning("id").Exec(ctx)
	return wrapErr("create user", err)
}

// GetUser returns the realm's user with the given ID.
func (s *Store) GetUser(ctx context.Context, realmID, userID int64) (*storage.User, error) {
	u := new(storage.User)
	err := s.r.NewSelect().Model(u).
		Where("realm_id = ?", realmID).
		Where("id = ?", userID).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get user %d in realm %d", userID, realmID), err)
	}
	return u, nil
}

// GetUserByEmail returns the realm's user whose email equals email,
// ignoring case.
func (s *Store) GetUserByEmail(ctx context.Context, realmID int64, email string) (*storage.User, error) {
	u := new(storage.User)
	err := s.r.NewSelect().Model(u).
		Where("realm_id = ?", realmID).
		Where("email_key = ?", storage.Fold(email)).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get user by email in realm %d", realmID), err)
	}
	return u, nil
}

// ListUsers returns the realm's users, active or not, ordered by ID.
func (s *Store) ListUsers(ctx context.Context, realmID int64) ([]storage.User, error) {
	users := []storage.User{}
	err := s.r.NewSelect().Model(&users).
		Where("realm_id = ?", realmID).
		OrderExpr("id ASC").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list users of realm %d", realmID), err)
	}
	return nonNil(users), nil
}

// UpdateUser writes the named columns of u (all but id when none are
// named). The row is matched by u.ID and u.RealmID: a user of another
// realm gives storage.ErrNotFound.
func (s *Store) UpdateUser(ctx context.Context, u *storage.User, columns ...string) error {
	q := s.w.NewUpdate().Model(u).WherePK().Where("realm_id = ?", u.RealmID)
	if len(columns) > 0 {
		q = q.Column(columns...)
	}
	q = updateKey(q, columns, "email", "email_key", u.Email)
	q = updateKey(q, columns, "full_name", "full_name_key", u.FullName)
	res, err := q.Exec(ctx)
	op := fmt.Sprintf("update user %d in realm %d", u.ID, u.RealmID)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// realmUserRow reads a user and their realm with one join.
type realmUserRow struct {
	bun.BaseModel `bun:"table:users,alias:u"`
	storage.User
	Realm *storage.Realm `bun:"rel:belongs-to,join:realm_id=id"`
}

// GetRealmUser returns a user with their realm in one query.
func (s *Store) GetRealmUser(ctx context.Context, realmID, userID int64) (*storage.Realm, *storage.User, error) {
	row := new(realmUserRow)
	var err error
	if s.prepared != nil {
		err = s.queryPrepared(ctx, s.prepared.realmUserByID, "user with realm", row, realmID, userID)
		if err == nil && row.ID == 0 {
			err = sql.ErrNoRows // no row scanned
		}
	} else {
		err = s.r.NewSelect().Model(row).Relation("Realm").
			Where("u.realm_id = ?", realmID).
			Where("u.id = ?", userID).
			Scan(ctx)
	}
	if err != nil {
		return nil, nil, wrapErr(fmt.Sprintf("get user %d with realm %d", userID, realmID), err)
	}
	return row.Realm, &row.User, nil
}

// GetRealmUserByEmail returns a user, found by real email
// case-insensitively, with their realm in one query.
func (s *Store) GetRealmUserByEmail(ctx context.Context, realmID int64, email string) (*storage.Realm, *storage.User, error) {
	row := new(realmUserRow)
	err := s.r.NewSelect().Model(row).Relation("Realm").
		Where("u.realm_id = ?", realmID).
		Where("u.email_key = ?", storage.Fold(email)).
		Scan(ctx)
	if err != nil {
		return nil, nil, wrapErr(fmt.Sprintf("get user by email with realm %d", realmID), err)
	}
	return row.Realm, &row.User, nil
}
