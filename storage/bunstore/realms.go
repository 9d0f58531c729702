package bunstore

import (
	"context"
	"fmt"

	"github.com/teamchat/chat/storage"
)

// CreateRealm inserts r and sets r.ID. Host is stored as given; uniqueness
// and lookups compare lower(host).
func (s *Store) CreateRealm(ctx context.Context, r *storage.Realm) error {
	_, err := s.w.NewInsert().Model(r).Returning("id").Exec(ctx)
	return wrapErr("create realm", err)
}

// GetRealm returns the realm with the given ID.
func (s *Store) GetRealm(ctx context.Context, id int64) (*storage.Realm, error) {
	r := new(storage.Realm)
	err := s.r.NewSelect().Model(r).Where("id = ?", id).Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get realm %d", id), err)
	}
	return r, nil
}

// GetRealmByHost returns the realm whose host equals host, ignoring case.
func (s *Store) GetRealmByHost(ctx context.Context, host string) (*storage.Realm, error) {
	r := new(storage.Realm)
	err := s.r.NewSelect().Model(r).Where("lower(host) = lower(?)", host).Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get realm by host %q", host), err)
	}
	return r, nil
}

// ListRealms returns every realm ordered by ID.
func (s *Store) ListRealms(ctx context.Context) ([]storage.Realm, error) {
	realms := []storage.Realm{}
	if err := s.r.NewSelect().Model(&realms).OrderExpr("id ASC").Scan(ctx); err != nil {
		return nil, wrapErr("list realms", err)
	}
	return nonNil(realms), nil
}

// UpdateRealm writes the named columns of r (all but id when none are
// named). A missing realm gives storage.ErrNotFound.
func (s *Store) UpdateRealm(ctx context.Context, r *storage.Realm, columns ...string) error {
	q := s.w.NewUpdate().Model(r).WherePK()
	if len(columns) > 0 {
		q = q.Column(columns...)
	}
	res, err := q.Exec(ctx)
	op := fmt.Sprintf("update realm %d", r.ID)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}
