package bunstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// This file holds the targeted queries of storage.QueryStore: each reads
// the rows its answer needs, through an index, never a whole realm.

// maxListArgs bounds the IDs bound into one IN list; longer lists are
// queried in chunks (SQLite allows 32,766 variables, PostgreSQL 65,535).
const maxListArgs = 5000

// chunked calls fn on successive pieces of the distinct ids of at most
// maxListArgs.
func chunked(ids []int64, fn func([]int64) error) error {
	return inChunks(uniqueIDs(ids), fn)
}

// inChunks calls fn on successive pieces of values of at most maxListArgs.
func inChunks[T any](values []T, fn func([]T) error) error {
	for len(values) > 0 {
		n := min(len(values), maxListArgs)
		if err := fn(values[:n]); err != nil {
			return err
		}
		values = values[n:]
	}
	return nil
}

func applyUserFilter(q *bun.SelectQuery, realmID int64, f storage.UserFilter, ids []int64) *bun.SelectQuery {
	q = q.Where("realm_id = ?", realmID)
	if ids != nil {
		q = q.Where("id IN (?)", bun.List(ids))
	}
	if f.Role != nil {
		q = q.Where("role = ?", *f.Role)
	}
	if f.Active != nil {
		q = q.Where("is_active = ?", *f.Active)
	}
	if f.Bot != nil {
		q = q.Where("is_bot = ?", *f.Bot)
	}
	if f.BotOwnerIDs != nil {
		q = q.Where("bot_owner_id IN (?)", bun.List(uniqueIDs(f.BotOwnerIDs)))
	}
	if f.FullNames != nil {
		keys := make([]string, len(f.FullNames))
		for i, name := range f.FullNames {
			keys[i] = storage.Fold(name)
		}
		q = q.Where("full_name_key IN (?)", bun.List(keys))
	}
	return q
}

// FindUsers returns the realm's users that match f, by ID.
func (s *Store) FindUsers(ctx context.Context, realmID int64, f storage.UserFilter) ([]storage.User, error) {
	out := []storage.User{}
	if (f.IDs != nil && len(f.IDs) == 0) || (f.BotOwnerIDs != nil && len(f.BotOwnerIDs) == 0) ||
		(f.FullNames != nil && len(f.FullNames) == 0) {
		return out, nil
	}
	op := fmt.Sprintf("find users in realm %d", realmID)
	run := func(ids []int64) error {
		var part []storage.User
		err := applyUserFilter(s.r.NewSelect().Model(&part), realmID, f, ids).OrderExpr("id ASC").Scan(ctx)
		out = append(out, part...)
		return wrapErr(op, err)
	}
	if f.IDs == nil {
		return out, run(nil)
	}
	if err := chunked(f.IDs, run); err != nil {
		return nil, err
	}
	return out, nil
}

// CountUsers counts the realm's users that match f.
func (s *Store) CountUsers(ctx context.Context, realmID int64, f storage.UserFilter) (int, error) {
	if f.IDs != nil || (f.BotOwnerIDs != nil && len(f.BotOwnerIDs) == 0) || (f.FullNames != nil && len(f.FullNames) == 0) {
		users, err := s.FindUsers(ctx, realmID, f)
		return len(users), err
	}
	n, err := applyUserFilter(s.r.NewSelect().Model((*storage.User)(nil)), realmID, f, nil).Count(ctx)
	return n, wrapErr(fmt.Sprintf("count users in realm %d", realmID), err)
}

// EffectiveGroupIDs walks up from the user's direct groups through the
// subgroup relation (UNION drops repeats, so cycles end).
func (s *Store) EffectiveGroupIDs(ctx context.Context, realmID, userID int64) ([]int64, error) {
	ids := []int64{}
	err := s.r.NewRaw(`WITH RECURSIVE eff(id) AS (
	SELECT group_id FROM user_group_members WHERE realm_id = ? AND user_id = ?
	UNION
	SELECT e.group_id FROM user_group_subgroups AS e JOIN eff ON e.realm_id = ? AND e.subgroup_id = eff.id
) SELECT id FROM eff ORDER BY id`, realmID, userID, realmID).Scan(ctx, &ids)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("effective groups of user %d in realm %d", userID, realmID), err)
	}
	return nonNil(ids), nil
}

// GroupClosure walks down from the group through its subgroups.
func (s *Store) GroupClosure(ctx context.Context, realmID, groupID int64) ([]int64, error) {
	ids := []int64{}
	err := s.r.NewRaw(`WITH RECURSIVE down(id) AS (
	SELECT id FROM user_groups WHERE realm_id = ? AND id = ?
	UNION
	SELECT e.subgroup_id FROM user_group_subgroups AS e JOIN down ON e.realm_id = ? AND e.group_id = down.id
) SELECT id FROM down ORDER BY id`, realmID, groupID, realmID).Scan(ctx, &ids)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("subgroups of user group %d in realm %d", groupID, realmID), err)
	}
	return nonNil(ids), nil
}

// SupergroupIDs lists the direct parents of a group.
func (s *Store) SupergroupIDs(ctx context.Context, realmID, groupID int64) ([]int64, error) {
	ids := []int64{}
	err := s.r.NewSelect().Model((*groupSubgroup)(nil)).Column("group_id").
		Where("realm_id = ?", realmID).Where("subgroup_id = ?", groupID).
		OrderExpr("group_id ASC").Scan(ctx, &ids)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("supergroups of user group %d in realm %d", groupID, realmID), err)
	}
	return nonNil(ids), nil
}

// GetGroupsByID returns the groups with these IDs.
func (s *Store) GetGroupsByID(ctx context.Context, realmID int64, ids []int64) ([]storage.UserGroup, error) {
	out := []storage.UserGroup{}
	err := chunked(ids, func(ids []int64) error {
		var part []storage.UserGroup
		err := s.r.NewSelect().Model(&part).Where("realm_id = ?", realmID).
			Where("id IN (?)", bun.List(ids)).OrderExpr("id ASC").Scan(ctx)
		out = append(out, part...)
		return wrapErr(fmt.Sprintf("get user groups in realm %d", realmID), err)
	})
	return out, err
}

// GetGroupsByName reads the named groups through their unique name index.
func (s *Store) GetGroupsByName(ctx context.Context, realmID int64, names []string) ([]storage.UserGroup, error) {
	out := []storage.UserGroup{}
	err := inChunks(names, func(names []string) error {
		var part []storage.UserGroup
		err := s.r.NewSelect().Model(&part).Where("realm_id = ?", realmID).
			Where("name IN (?)", bun.List(names)).Where("name <> ''").Scan(ctx)
		out = append(out, part...)
		return wrapErr(fmt.Sprintf("get user groups by name in realm %d", realmID), err)
	})
	slices.SortFunc(out, func(a, b storage.UserGroup) int { return cmp.Compare(a.ID, b.ID) })
	return out, err
}

// ListGroupMembershipsOf returns the direct memberships of the groups.
func (s *Store) ListGroupMembershipsOf(ctx context.Context, realmID int64, groupIDs []int64) ([]storage.GroupMembership, error) {
	out := []storage.GroupMembership{}
	err := chunked(groupIDs, func(ids []int64) error {
		var rows []groupMember
		err := s.r.NewSelect().Model(&rows).ModelTableExpr("user_group_members AS m").
			ColumnExpr("m.group_id, m.user_id").
			Join("JOIN users AS u ON u.realm_id = m.realm_id AND u.id = m.user_id").
			Where("m.realm_id = ?", realmID).Where("m.group_id IN (?)", bun.List(ids)).
			Where("u.is_active").
			OrderExpr("m.group_id ASC, m.user_id ASC").Scan(ctx)
		for _, r := range rows {
			out = append(out, storage.GroupMembership{GroupID: r.GroupID, UserID: r.UserID})
		}
		return wrapErr(fmt.Sprintf("list memberships of user groups in realm %d", realmID), err)
	})
	return out, err
}

// ListGroupEdgesOf returns the direct subgroup relations of the groups.
func (s *Store) ListGroupEdgesOf(ctx context.Context, realmID int64, groupIDs []int64) ([]storage.GroupEdge, error) {
	out := []storage.GroupEdge{}
	err := chunked(groupIDs, func(ids []int64) error {
		var rows []groupSubgroup
		err := s.r.NewSelect().Model(&rows).Column("group_id", "subgroup_id").
			Where("realm_id = ?", realmID).Where("group_id IN (?)", bun.List(ids)).
			OrderExpr("group_id ASC, subgroup_id ASC").Scan(ctx)
		for _, r := range rows {
			out = append(out, storage.GroupEdge{GroupID: r.GroupID, SubgroupID: r.SubgroupID})
		}
		return wrapErr(fmt.Sprintf("list subgroups of user groups in realm %d", realmID), err)
	})
	return out, err
}

// GetStreamsByID returns the channels with these IDs.
func (s *Store) GetStreamsByID(ctx context.Context, realmID int64, ids []int64) ([]storage.Stream, error) {
	out := []storage.Stream{}
	err := chunked(ids, func(ids []int64) error {
		var part []storage.Stream
		err := s.r.NewSelect().Model(&part).Where("realm_id = ?", realmID).
			Where("id IN (?)", bun.List(ids)).OrderExpr("id ASC").Scan(ctx)
		out = append(out, part...)
		return wrapErr(fmt.Sprintf("get channels in realm %d", realmID), err)
	})
	return out, err
}

// GetStreamsByName reads the channels through their folded name keys.
func (s *Store) GetStreamsByName(ctx context.Context, realmID int64, names []string) ([]storage.Stream, error) {
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = storage.Fold(n)
	}
	out := []storage.Stream{}
	err := inChunks(keys, func(keys []string) error {
		var part []storage.Stream
		err := s.r.NewSelect().Model(&part).Where("realm_id = ?", realmID).
			Where("name_key IN (?)", bun.List(keys)).Scan(ctx)
		out = append(out, part...)
		return wrapErr(fmt.Sprintf("get channels by name in realm %d", realmID), err)
	})
	slices.SortFunc(out, func(a, b storage.Stream) int { return cmp.Compare(a.ID, b.ID) })
	return out, err
}

// ListDefaultStreams returns the realm's default channels.
func (s *Store) ListDefaultStreams(ctx context.Context, realmID int64) ([]storage.Stream, error) {
	out := []storage.Stream{}
	err := s.r.NewSelect().Model(&out).Where("realm_id = ?", realmID).Where("is_default").
		OrderExpr("id ASC").Scan(ctx)
	return nonNil(out), wrapErr(fmt.Sprintf("list default channels of realm %d", realmID), err)
}

var streamGroupColumns = []string{"can_add_subscribers_group_id", "can_remove_subscribers_group_id",
	"can_administer_channel_group_id", "can_send_message_group_id", "can_subscribe_group_id"}

var userGroupGroupColumns = []string{"can_add_members_group_id", "can_join_group_id", "can_leave_group_id",
	"can_manage_group_id", "can_mention_group_id", "can_remove_members_group_id"}

// usingGroups restricts q to rows where one of the columns names a group.
func usingGroups(q *bun.SelectQuery, columns []string, ids []int64) *bun.SelectQuery {
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		for _, c := range columns {
			q = q.WhereOr("? IN (?)", bun.Ident(c), bun.List(ids))
		}
		return q
	})
}

// ListStreamsUsingGroups returns the unarchived channels whose settings name one of the groups.
func (s *Store) ListStreamsUsingGroups(ctx context.Context, realmID int64, groupIDs []int64) ([]storage.Stream, error) {
	out := []storage.Stream{}
	ids := uniqueIDs(groupIDs)
	if len(ids) == 0 {
		return out, nil
	}
	err := usingGroups(s.r.NewSelect().Model(&out).Where("realm_id = ?", realmID).Where("NOT is_archived"),
		streamGroupColumns, ids).OrderExpr("id ASC").Scan(ctx)
	return nonNil(out), wrapErr(fmt.Sprintf("list channels using groups in realm %d", realmID), err)
}

// ListGroupsUsingGroups returns the active named groups whose settings name one of the groups.
func (s *Store) ListGroupsUsingGroups(ctx context.Context, realmID int64, groupIDs []int64) ([]storage.UserGroup, error) {
	out := []storage.UserGroup{}
	ids := uniqueIDs(groupIDs)
	if len(ids) == 0 {
		return out, nil
	}
	err := usingGroups(s.r.NewSelect().Model(&out).Where("realm_id = ?", realmID).
		Where("name <> ''").Where("NOT deactivated"), userGroupGroupColumns, ids).OrderExpr("id ASC").Scan(ctx)
	return nonNil(out), wrapErr(fmt.Sprintf("list user groups using groups in realm %d", realmID), err)
}

// ListActiveSubscribers returns active subscriptions of active users.
func (s *Store) ListActiveSubscribers(ctx context.Context, realmID int64, streamIDs []int64) ([]storage.Subscription, error) {
	out := []storage.Subscription{}
	err := chunked(streamIDs, func(ids []int64) error {
		var part []storage.Subscription
		err := s.r.NewSelect().Model(&part).
			Join("JOIN users AS u ON u.id = subscription.user_id AND u.is_active").
			Where("subscription.realm_id = ?", realmID).
			Where("subscription.stream_id IN (?)", bun.List(ids)).
			Where("subscription.active").
			OrderExpr("subscription.stream_id ASC, subscription.user_id ASC").Scan(ctx)
		out = append(out, part...)
		return wrapErr(fmt.Sprintf("list subscribers in realm %d", realmID), err)
	})
	return out, err
}

// ActiveSubscribersAmong reads the subscriptions of the given users only.
func (s *Store) ActiveSubscribersAmong(ctx context.Context, realmID, streamID int64, userIDs []int64) ([]int64, error) {
	out := []int64{}
	err := chunked(userIDs, func(ids []int64) error {
		var part []int64
		err := s.r.NewSelect().Model((*storage.Subscription)(nil)).Column("subscription.user_id").
			Join("JOIN users AS u ON u.id = subscription.user_id AND u.is_active").
			Where("subscription.realm_id = ?", realmID).
			Where("subscription.stream_id = ?", streamID).
			Where("subscription.user_id IN (?)", bun.List(ids)).
			Where("subscription.active").
			OrderExpr("subscription.user_id ASC").Scan(ctx, &part)
		out = append(out, part...)
		return wrapErr(fmt.Sprintf("subscribers of channel %d among users in realm %d", streamID, realmID), err)
	})
	return out, err
}

// CountActiveSubscribers counts through a LIMIT, so a large channel costs
// no more than limit rows.
func (s *Store) CountActiveSubscribers(ctx context.Context, realmID, streamID int64, limit int) (int, error) {
	var n int
	err := s.r.NewRaw(`SELECT count(*) FROM (SELECT 1 FROM subscriptions AS s
	JOIN users AS u ON u.id = s.user_id AND u.is_active
	WHERE s.realm_id = ? AND s.stream_id = ? AND s.active LIMIT ?) AS capped`, realmID, streamID, max(limit, 0)).Scan(ctx, &n)
	return n, wrapErr(fmt.Sprintf("count subscribers of channel %d in realm %d", streamID, realmID), err)
}

// LockRealm serializes the realm's write transactions: a
// transaction-scoped advisory lock on PostgreSQL; nothing on SQLite, whose
// transactions begin IMMEDIATE on the one writer connection, so writes are
// already one at a time.
func (s *Store) LockRealm(ctx context.Context, realmID int64) error {
	if !s.inTx {
		return fmt.Errorf("bunstore: LockRealm outside a transaction")
	}
	xid, err := s.ops.lockRealm(ctx, s.w, realmID)
	s.noteXid(xid)
	return wrapErr(fmt.Sprintf("lock realm %d", realmID), err)
}

// LockLane holds the realm shared and the lane exclusively until the
// transaction ends: advisory locks on PostgreSQL; nothing on SQLite (see
// LockRealm).
func (s *Store) LockLane(ctx context.Context, realmID int64, lane uint64, newMessages int) ([]int64, error) {
	if !s.inTx {
		return nil, fmt.Errorf("bunstore: LockLane outside a transaction")
	}
	xid, ids, err := s.ops.lockLane(ctx, s.w, realmID, lane, newMessages)
	s.noteXid(xid)
	return ids, wrapErr(fmt.Sprintf("lock lane %d of realm %d", lane, realmID), err)
}

// noteXid remembers the transaction's ID read by a lock statement.
func (s *Store) noteXid(xid string) {
	if xid != "" && s.pending != nil {
		s.pending.xid = xid
	}
}

// RealmsByHostname matches host exactly or as hostname:port, with an
// index-friendly range on lower(host) (':' < ';' in every collation of
// ASCII host names).
func (s *Store) RealmsByHostname(ctx context.Context, hostname string, limit int) ([]storage.Realm, error) {
	out := []storage.Realm{}
	err := s.r.NewSelect().Model(&out).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("lower(host) = lower(?)", hostname).
				WhereOr("(lower(host) >= lower(?) AND lower(host) < lower(?))", hostname+":", hostname+";")
		}).
		OrderExpr("id ASC").Limit(limit).Scan(ctx)
	return nonNil(out), wrapErr(fmt.Sprintf("realms by hostname %q", hostname), err)
}

// FirstRealms returns the first realms by ID.
func (s *Store) FirstRealms(ctx context.Context, limit int) ([]storage.Realm, error) {
	out := []storage.Realm{}
	err := s.r.NewSelect().Model(&out).OrderExpr("id ASC").Limit(limit).Scan(ctx)
	return nonNil(out), wrapErr("first realms", err)
}
