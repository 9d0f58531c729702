package bunstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Code playgrounds (migration 0018).

type playgroundRow struct {
	bun.BaseModel `bun:"table:realm_playgrounds,alias:pg"`
	storage.Playground
}

// CreatePlayground inserts; the unique (realm, language, name) constraint
// refuses a duplicate, the realm's foreign key a missing realm.
func (s *Store) CreatePlayground(ctx context.Context, p *storage.Playground) error {
	row := &playgroundRow{Playground: *p}
	row.ID = 0
	if _, err := s.w.NewInsert().Model(row).Returning("id").Exec(ctx); err != nil {
		return wrapErr(fmt.Sprintf("create playground %q (%s) in realm %d", p.Name, p.PygmentsLanguage, p.RealmID), err)
	}
	p.ID = row.ID
	return nil
}

// ListPlaygrounds reads the (realm_id, id) key in order.
func (s *Store) ListPlaygrounds(ctx context.Context, realmID int64) ([]storage.Playground, error) {
	var rows []playgroundRow
	err := s.r.NewSelect().Model(&rows).Where("realm_id = ?", realmID).OrderExpr("id ASC").Scan(ctx)
	out := make([]storage.Playground, len(rows))
	for i, r := range rows {
		out[i] = r.Playground
	}
	return out, wrapErr(fmt.Sprintf("list playgrounds of realm %d", realmID), err)
}

// DeletePlayground deletes by realm and ID.
func (s *Store) DeletePlayground(ctx context.Context, realmID, id int64) error {
	op := fmt.Sprintf("delete playground %d of realm %d", id, realmID)
	res, err := s.w.NewDelete().Model((*playgroundRow)(nil)).Where("realm_id = ?", realmID).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}
