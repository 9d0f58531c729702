package bunstore

import (
	"context"
	"fmt"

	"github.com/teamchat/chat/storage"
)

// Channels are the streams table; storage.Stream is its model. Names are
// stored as given and unique per realm case-insensitively (a unique index
// on (realm_id, name_key)). The creator is a composite reference to
// users (realm_id, id); the permission settings (can_..._group_id) are not
// checked: the caller writes 0 or a group of the realm.

// CreateStream inserts c and sets c.ID. A name used by another channel of
// the realm, compared case-insensitively, gives storage.ErrConflict; a
// realm or creator that is missing (or a creator of another realm) gives
// storage.ErrNotFound.
func (s *Store) CreateStream(ctx context.Context, c *storage.Stream) error {
	_, err := insertKey(s.w.NewInsert().Model(c), "name_key", c.Name).Returning("id").Exec(ctx)
	return wrapErr(fmt.Sprintf("create channel %q in realm %d", c.Name, c.RealmID), err)
}

// GetStream returns the realm's channel with the given ID, archived or not.
func (s *Store) GetStream(ctx context.Context, realmID, streamID int64) (*storage.Stream, error) {
	c := new(storage.Stream)
	err := s.r.NewSelect().Model(c).
		Where("realm_id = ?", realmID).
		Where("id = ?", streamID).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get channel %d in realm %d", streamID, realmID), err)
	}
	return c, nil
}

// GetStreamByName returns the realm's channel whose name equals name,
// ignoring case.
func (s *Store) GetStreamByName(ctx context.Context, realmID int64, name string) (*storage.Stream, error) {
	c := new(storage.Stream)
	err := s.r.NewSelect().Model(c).
		Where("realm_id = ?", realmID).
		Where("name_key = ?", storage.Fold(name)).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get channel %q in realm %d", name, realmID), err)
	}
	return c, nil
}

// ListStreams returns every channel of the realm, archived ones too,
// ordered by ID.
func (s *Store) ListStreams(ctx context.Context, realmID int64) ([]storage.Stream, error) {
	streams := []storage.Stream{}
	err := s.r.NewSelect().Model(&streams).
		Where("realm_id = ?", realmID).
		OrderExpr("id ASC").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list channels of realm %d", realmID), err)
	}
	return nonNil(streams), nil
}

// UpdateStream writes the named columns of c (all but id when none are
// named), matching the row by c.RealmID and c.ID: a channel that is
// missing or of another realm gives storage.ErrNotFound. A name taken by
// another channel of the realm gives storage.ErrConflict; a creator that
// is missing or of another realm gives storage.ErrNotFound.
func (s *Store) UpdateStream(ctx context.Context, c *storage.Stream, columns ...string) error {
	q := s.w.NewUpdate().Model(c).WherePK().Where("realm_id = ?", c.RealmID)
	if len(columns) > 0 {
		q = q.Column(columns...)
	}
	q = updateKey(q, columns, "name", "name_key", c.Name)
	res, err := q.Exec(ctx)
	op := fmt.Sprintf("update channel %d in realm %d", c.ID, c.RealmID)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}
