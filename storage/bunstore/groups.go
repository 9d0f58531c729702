package bunstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// groupMember is a row of user_group_members.
type groupMember struct {
	bun.BaseModel `bun:"table:user_group_members"`

	RealmID int64 `bun:"realm_id"`
	GroupID int64 `bun:"group_id,pk"`
	UserID  int64 `bun:"user_id,pk"`
}

// groupSubgroup is a row of user_group_subgroups.
type groupSubgroup struct {
	bun.BaseModel `bun:"table:user_group_subgroups"`

	RealmID    int64 `bun:"realm_id"`
	GroupID    int64 `bun:"group_id,pk"`
	SubgroupID int64 `bun:"subgroup_id,pk"`
}

// CreateGroup inserts g and sets g.ID. A named group whose name is taken
// in the realm gives storage.ErrConflict; any number of anonymous groups
// (empty name) may exist.
func (s *Store) CreateGroup(ctx context.Context, g *storage.UserGroup) error {
	_, err := s.w.NewInsert().Model(g).Returning("id").Exec(ctx)
	return wrapErr("create user group", err)
}

// GetGroup returns the realm's group (named or anonymous) with the given ID.
func (s *Store) GetGroup(ctx context.Context, realmID, groupID int64) (*storage.UserGroup, error) {
	g := new(storage.UserGroup)
	err := s.r.NewSelect().Model(g).
		Where("realm_id = ?", realmID).
		Where("id = ?", groupID).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get user group %d in realm %d", groupID, realmID), err)
	}
	return g, nil
}

// GetGroupByName returns the realm's named group called name (exact
// match). Anonymous groups are never found by name.
func (s *Store) GetGroupByName(ctx context.Context, realmID int64, name string) (*storage.UserGroup, error) {
	g := new(storage.UserGroup)
	err := s.r.NewSelect().Model(g).
		Where("realm_id = ?", realmID).
		Where("name = ?", name).
		Where("name <> ''").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get user group %q in realm %d", name, realmID), err)
	}
	return g, nil
}

// ListGroups returns the realm's named groups ordered by ID.
func (s *Store) ListGroups(ctx context.Context, realmID int64) ([]storage.UserGroup, error) {
	groups := []storage.UserGroup{}
	err := s.r.NewSelect().Model(&groups).
		Where("realm_id = ?", realmID).
		Where("name <> ''").
		OrderExpr("id ASC").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list user groups of realm %d", realmID), err)
	}
	return nonNil(groups), nil
}

// UpdateGroup writes the named columns of g (all but id when none are
// named). The row is matched by g.ID and g.RealmID: a group that is
// missing or of another realm gives storage.ErrNotFound. A name taken by
// another named group of the realm gives storage.ErrConflict (any number
// of groups may be anonymous, with an empty name); a creator that is missing or of
// another realm gives storage.ErrNotFound. The permission settings
// (can_..._group_id) are not checked: write 0 or a group of the realm.
func (s *Store) UpdateGroup(ctx context.Context, g *storage.UserGroup, columns ...string) error {
	q := s.w.NewUpdate().Model(g).WherePK().Where("realm_id = ?", g.RealmID)
	if len(columns) > 0 {
		q = q.Column(columns...)
	}
	res, err := q.Exec(ctx)
	op := fmt.Sprintf("update user group %d in realm %d", g.ID, g.RealmID)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// ListGroupMemberships returns every direct membership of the realm's
// groups, named and anonymous, ordered by group, then user. A realm
// without memberships (or no realm) gives an empty slice.
func (s *Store) ListGroupMemberships(ctx context.Context, realmID int64) ([]storage.GroupMembership, error) {
	var rows []groupMember
	err := s.r.NewSelect().Model(&rows).
		Column("group_id", "user_id").
		Where("realm_id = ?", realmID).
		OrderExpr("group_id ASC, user_id ASC").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list user group memberships of realm %d", realmID), err)
	}
	out := make([]storage.GroupMembership, len(rows))
	for i, r := range rows {
		out[i] = storage.GroupMembership{GroupID: r.GroupID, UserID: r.UserID}
	}
	return out, nil
}

// ListGroupEdges returns every direct subgroup relation of the realm's
// groups, ordered by group, then subgroup. A realm without subgroups (or
// no realm) gives an empty slice.
func (s *Store) ListGroupEdges(ctx context.Context, realmID int64) ([]storage.GroupEdge, error) {
	var rows []groupSubgroup
	err := s.r.NewSelect().Model(&rows).
		Column("group_id", "subgroup_id").
		Where("realm_id = ?", realmID).
		OrderExpr("group_id ASC, subgroup_id ASC").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list user group subgroups of realm %d", realmID), err)
	}
	out := make([]storage.GroupEdge, len(rows))
	for i, r := range rows {
		out[i] = storage.GroupEdge{GroupID: r.GroupID, SubgroupID: r.SubgroupID}
	}
	return out, nil
}

// AddGroupMembers adds direct members, skipping those already present.
// A group or user that is missing or of another realm gives
// storage.ErrNotFound (and adds nobody).
func (s *Store) AddGroupMembers(ctx context.Context, realmID, groupID int64, userIDs []int64) error {
	op := fmt.Sprintf("add members to user group %d in realm %d", groupID, realmID)
	if err := s.checkGroup(ctx, op, realmID, groupID); err != nil {
		return err
	}
	ids := uniqueIDs(userIDs)
	if len(ids) == 0 {
		return nil
	}
	rows := make([]groupMember, len(ids))
	for i, id := range ids {
		rows[i] = groupMember{RealmID: realmID, GroupID: groupID, UserID: id}
	}
	_, err := s.w.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx)
	return wrapErr(op, err)
}

// RemoveGroupMembers removes direct members; IDs that are not members are
// ignored. A group that is missing or of another realm gives storage.ErrNotFound.
func (s *Store) RemoveGroupMembers(ctx context.Context, realmID, groupID int64, userIDs []int64) error {
	op := fmt.Sprintf("remove members from user group %d in realm %d", groupID, realmID)
	if err := s.checkGroup(ctx, op, realmID, groupID); err != nil {
		return err
	}
	ids := uniqueIDs(userIDs)
	if len(ids) == 0 {
		return nil
	}
	_, err := s.w.NewDelete().Model((*groupMember)(nil)).
		Where("realm_id = ?", realmID).
		Where("group_id = ?", groupID).
		Where("user_id IN (?)", bun.List(ids)).
		Exec(ctx)
	return wrapErr(op, err)
}

// GroupMembers lists the group's direct member IDs, ascending. A group
// that is missing or of another realm gives storage.ErrNotFound.
func (s *Store) GroupMembers(ctx context.Context, realmID, groupID int64) ([]int64, error) {
	q := s.r.NewSelect().
		TableExpr("user_groups AS g").
		ColumnExpr("m.user_id").
		Join("LEFT JOIN user_group_members AS m ON m.group_id = g.id").
		Where("g.realm_id = ?", realmID).
		Where("g.id = ?", groupID).
		OrderExpr("m.user_id ASC")
	return scanIDs(ctx, q, fmt.Sprintf("members of user group %d in realm %d", groupID, realmID))
}

// AddSubgroups adds direct subgroups, skipping those already present. A
// group or subgroup that is missing or of another realm gives
// storage.ErrNotFound (and adds nothing).
func (s *Store) AddSubgroups(ctx context.Context, realmID, groupID int64, subgroupIDs []int64) error {
	op := fmt.Sprintf("add subgroups to user group %d in realm %d", groupID, realmID)
	if err := s.checkGroup(ctx, op, realmID, groupID); err != nil {
		return err
	}
	ids := uniqueIDs(subgroupIDs)
	if len(ids) == 0 {
		return nil
	}
	rows := make([]groupSubgroup, len(ids))
	for i, id := range ids {
		rows[i] = groupSubgroup{RealmID: realmID, GroupID: groupID, SubgroupID: id}
	}
	_, err := s.w.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx)
	return wrapErr(op, err)
}

// RemoveSubgroups removes direct subgroups; IDs that are not subgroups are
// ignored. A group that is missing or of another realm gives storage.ErrNotFound.
func (s *Store) RemoveSubgroups(ctx context.Context, realmID, groupID int64, subgroupIDs []int64) error {
	op := fmt.Sprintf("remove subgroups from user group %d in realm %d", groupID, realmID)
	if err := s.checkGroup(ctx, op, realmID, groupID); err != nil {
		return err
	}
	ids := uniqueIDs(subgroupIDs)
	if len(ids) == 0 {
		return nil
	}
	_, err := s.w.NewDelete().Model((*groupSubgroup)(nil)).
		Where("realm_id = ?", realmID).
		Where("group_id = ?", groupID).
		Where("subgroup_id IN (?)", bun.List(ids)).
		Exec(ctx)
	return wrapErr(op, err)
}

// Subgroups lists the group's direct subgroup IDs, ascending. A group
// that is missing or of another realm gives storage.ErrNotFound.
func (s *Store) Subgroups(ctx context.Context, realmID, groupID int64) ([]int64, error) {
	q := s.r.NewSelect().
		TableExpr("user_groups AS g").
		ColumnExpr("sg.subgroup_id").
		Join("LEFT JOIN user_group_subgroups AS sg ON sg.group_id = g.id").
		Where("g.realm_id = ?", realmID).
		Where("g.id = ?", groupID).
		OrderExpr("sg.subgroup_id ASC")
	return scanIDs(ctx, q, fmt.Sprintf("subgroups of user group %d in realm %d", groupID, realmID))
}

// UserGroupIDs lists the groups the user is a direct member of, ascending.
// A user that is missing or of another realm gives storage.ErrNotFound.
func (s *Store) UserGroupIDs(ctx context.Context, realmID, userID int64) ([]int64, error) {
	q := s.r.NewSelect().
		TableExpr("users AS u").
		ColumnExpr("m.group_id").
		Join("LEFT JOIN user_group_members AS m ON m.user_id = u.id").
		Where("u.realm_id = ?", realmID).
		Where("u.id = ?", userID).
		OrderExpr("m.group_id ASC")
	return scanIDs(ctx, q, fmt.Sprintf("user groups of user %d in realm %d", userID, realmID))
}

// checkGroup returns storage.ErrNotFound unless the realm has the group.
func (s *Store) checkGroup(ctx context.Context, op string, realmID, groupID int64) error {
	ok, err := s.r.NewSelect().
		TableExpr("user_groups").
		Where("realm_id = ?", realmID).
		Where("id = ?", groupID).
		Exists(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	if !ok {
		return notFound(op)
	}
	return nil
}

// scanIDs runs q, a LEFT JOIN from the owning row (group or user) to its
// link rows selecting one nullable ID column. No row at all means the
// owner does not exist; a single NULL means it has no links.
func scanIDs(ctx context.Context, q *bun.SelectQuery, op string) ([]int64, error) {
	rows, err := q.Rows(ctx)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	defer rows.Close()
	found := false
	ids := []int64{}
	for rows.Next() {
		found = true
		var id sql.NullInt64
		if err := rows.Scan(&id); err != nil {
			return nil, wrapErr(op, err)
		}
		if id.Valid {
			ids = append(ids, id.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr(op, err)
	}
	if !found {
		return nil, notFound(op)
	}
	return ids, nil
}

// uniqueIDs returns ids sorted, without duplicates, in a new slice.
func uniqueIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}
