package bunstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Linkifiers (migration 0021).

type linkifierRow struct {
	bun.BaseModel `bun:"table:realm_linkifiers,alias:lf"`
	storage.Linkifier
}

// CreateLinkifier inserts with the next order, computed in the same
// statement; the unique (realm, pattern) constraint refuses a duplicate,
// the realm's foreign key a missing realm.
func (s *Store) CreateLinkifier(ctx context.Context, l *storage.Linkifier) error {
	row := &linkifierRow{Linkifier: *l}
	row.ID = 0
	_, err := s.w.NewInsert().Model(row).
		Value("linkifier_order", "(SELECT COALESCE(MAX(linkifier_order) + 1, 0) FROM realm_linkifiers WHERE realm_id = ?)", l.RealmID).
		Returning("id, linkifier_order").Exec(ctx)
	if err != nil {
		return wrapErr(fmt.Sprintf("create linkifier %q in realm %d", l.Pattern, l.RealmID), err)
	}
	l.ID, l.Order = row.ID, row.Order
	return nil
}

// ListLinkifiers reads the realm's linkifiers by order, then ID.
func (s *Store) ListLinkifiers(ctx context.Context, realmID int64) ([]storage.Linkifier, error) {
	var rows []linkifierRow
	err := s.r.NewSelect().Model(&rows).Where("realm_id = ?", realmID).OrderExpr("linkifier_order ASC, id ASC").Scan(ctx)
	out := make([]storage.Linkifier, len(rows))
	for i, r := range rows {
		out[i] = r.Linkifier
	}
	return out, wrapErr(fmt.Sprintf("list linkifiers of realm %d", realmID), err)
}

// UpdateLinkifier writes the pattern and the URL template.
func (s *Store) UpdateLinkifier(ctx context.Context, l *storage.Linkifier) error {
	op := fmt.Sprintf("update linkifier %d of realm %d", l.ID, l.RealmID)
	res, err := s.w.NewUpdate().Model((*linkifierRow)(nil)).
		Set("pattern = ?", l.Pattern).
		Set("url_template = ?", l.URLTemplate).
		Where("realm_id = ?", l.RealmID).Where("id = ?", l.ID).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// DeleteLinkifier deletes by realm and ID.
func (s *Store) DeleteLinkifier(ctx context.Context, realmID, id int64) error {
	op := fmt.Sprintf("delete linkifier %d of realm %d", id, realmID)
	res, err := s.w.NewDelete().Model((*linkifierRow)(nil)).Where("realm_id = ?", realmID).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// ReorderLinkifiers writes each listed linkifier's new order; an
// organization has few linkifiers, so one statement each.
func (s *Store) ReorderLinkifiers(ctx context.Context, realmID int64, ids []int64) error {
	for i, id := range ids {
		_, err := s.w.NewUpdate().Model((*linkifierRow)(nil)).
			Set("linkifier_order = ?", i).
			Where("realm_id = ?", realmID).Where("id = ?", id).Exec(ctx)
		if err != nil {
			return wrapErr(fmt.Sprintf("reorder linkifier %d of realm %d", id, realmID), err)
		}
	}
	return nil
}
