package bunstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// profileFieldRow maps storage.ProfileField to its table, whose name
// (custom_profile_fields) is not the one bun derives from the type name.
type profileFieldRow struct {
	bun.BaseModel `bun:"table:custom_profile_fields,alias:f"`
	storage.ProfileField
}

// profileFieldValueRow maps storage.ProfileFieldValue to its table.
type profileFieldValueRow struct {
	bun.BaseModel `bun:"table:custom_profile_field_values,alias:v"`
	storage.ProfileFieldValue
}

// CreateProfileField inserts f and sets f.ID. A name already used in the
// realm, compared case-insensitively, gives storage.ErrConflict; a
// missing realm gives storage.ErrNotFound.
func (s *Store) CreateProfileField(ctx context.Context, f *storage.ProfileField) error {
	row := &profileFieldRow{ProfileField: *f}
	_, err := insertKey(s.w.NewInsert().Model(row), "name_key", f.Name).Returning("id").Exec(ctx)
	if err != nil {
		return wrapErr(fmt.Sprintf("create profile field %q in realm %d", f.Name, f.RealmID), err)
	}
	f.ID = row.ID
	return nil
}

// GetProfileField returns the realm's field with the given ID.
func (s *Store) GetProfileField(ctx context.Context, realmID, fieldID int64) (*storage.ProfileField, error) {
	row := new(profileFieldRow)
	err := s.r.NewSelect().Model(row).
		Where("realm_id = ?", realmID).
		Where("id = ?", fieldID).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get profile field %d in realm %d", fieldID, realmID), err)
	}
	return &row.ProfileField, nil
}

// ListProfileFields returns the realm's fields ordered by Order, then ID.
func (s *Store) ListProfileFields(ctx context.Context, realmID int64) ([]storage.ProfileField, error) {
	var rows []profileFieldRow
	err := s.r.NewSelect().Model(&rows).
		Where("realm_id = ?", realmID).
		OrderExpr("field_order ASC, id ASC").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list profile fields of realm %d", realmID), err)
	}
	fields := make([]storage.ProfileField, len(rows))
	for i, row := range rows {
		fields[i] = row.ProfileField
	}
	return fields, nil
}

// UpdateProfileField writes every column of f but its ID, matching the row
// by f.RealmID and f.ID: a field of another realm gives storage.ErrNotFound.
// A name taken by another field of the realm gives storage.ErrConflict.
func (s *Store) UpdateProfileField(ctx context.Context, f *storage.ProfileField) error {
	op := fmt.Sprintf("update profile field %d in realm %d", f.ID, f.RealmID)
	res, err := updateKey(s.w.NewUpdate().Model(&profileFieldRow{ProfileField: *f}), nil, "name", "name_key", f.Name).
		WherePK().
		Where("realm_id = ?", f.RealmID).
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// DeleteProfileField deletes the realm's field; its values go with it
// (ON DELETE CASCADE). A missing field, or one of another realm, gives
// storage.ErrNotFound.
func (s *Store) DeleteProfileField(ctx context.Context, realmID, fieldID int64) error {
	op := fmt.Sprintf("delete profile field %d in realm %d", fieldID, realmID)
	res, err := s.w.NewDelete().Model((*profileFieldRow)(nil)).
		Where("realm_id = ?", realmID).
		Where("id = ?", fieldID).
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// SetProfileFieldValues inserts the values, replacing the value and
// rendered value of a (user, field) pair that already has one; when a pair
// is given twice the last one wins. It is one statement: a user or field
// that is missing or of another realm than the value's RealmID gives
// storage.ErrNotFound and writes nothing.
//
// A conflicting row also gets realm_id from the new value, so that a value
// naming another realm fails the composite foreign keys instead of
// silently updating the existing row.
func (s *Store) SetProfileFieldValues(ctx context.Context, values []storage.ProfileFieldValue) error {
	if len(values) == 0 {
		return nil
	}
	type key struct{ user, field int64 }
	index := make(map[key]int, len(values))
	rows := make([]profileFieldValueRow, 0, len(values))
	for _, v := range values {
		k := key{v.UserID, v.FieldID}
		if i, ok := index[k]; ok {
			rows[i].ProfileFieldValue = v
			continue
		}
		index[k] = len(rows)
		rows = append(rows, profileFieldValueRow{ProfileFieldValue: v})
	}
	_, err := s.w.NewInsert().Model(&rows).
		On("CONFLICT (user_id, field_id) DO UPDATE").
		Set("realm_id = EXCLUDED.realm_id").
		Set("value = EXCLUDED.value").
		Set("rendered_value = EXCLUDED.rendered_value").
		Exec(ctx)
	return wrapErr(fmt.Sprintf("set profile field values of user %d in realm %d", values[0].UserID, values[0].RealmID), err)
}

// DeleteProfileFieldValues removes the user's values of the given fields;
// fields without a value are ignored.
func (s *Store) DeleteProfileFieldValues(ctx context.Context, realmID, userID int64, fieldIDs []int64) error {
	ids := uniqueIDs(fieldIDs)
	if len(ids) == 0 {
		return nil
	}
	_, err := s.w.NewDelete().Model((*profileFieldValueRow)(nil)).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		Where("field_id IN (?)", bun.List(ids)).
		Exec(ctx)
	return wrapErr(fmt.Sprintf("delete profile field values of user %d in realm %d", userID, realmID), err)
}

// ListProfileFieldValues returns the values of the given users of the
// realm, or of all its users when userIDs is nil (an empty, non-nil
// userIDs gives none), ordered by user ID, then field ID.
func (s *Store) ListProfileFieldValues(ctx context.Context, realmID int64, userIDs []int64) ([]storage.ProfileFieldValue, error) {
	if userIDs != nil && len(userIDs) == 0 {
		return []storage.ProfileFieldValue{}, nil
	}
	var rows []profileFieldValueRow
	if s.prepared != nil && len(userIDs) == 1 {
		err := s.queryPrepared(ctx, s.prepared.profileValuesOfUser, "profile values of one user", &rows, realmID, userIDs[0])
		if err != nil {
			return nil, wrapErr(fmt.Sprintf("list profile field values of user %d in realm %d", userIDs[0], realmID), err)
		}
		slices.SortFunc(rows, func(a, b profileFieldValueRow) int { return cmp.Compare(a.FieldID, b.FieldID) })
		return profileFieldValues(rows), nil
	}
	q := s.r.NewSelect().Model(&rows).
		Where("realm_id = ?", realmID).
		OrderExpr("user_id ASC, field_id ASC")
	if userIDs != nil {
		q = q.Where("user_id IN (?)", bun.List(uniqueIDs(userIDs)))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, wrapErr(fmt.Sprintf("list profile field values of realm %d", realmID), err)
	}
	return profileFieldValues(rows), nil
}

func profileFieldValues(rows []profileFieldValueRow) []storage.ProfileFieldValue {
	values := make([]storage.ProfileFieldValue, len(rows))
	for i, row := range rows {
		values[i] = row.ProfileFieldValue
	}
	return values
}
