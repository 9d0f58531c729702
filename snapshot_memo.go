package chat

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/teamchat/chat/storage"
)

// snapshotMemo is a registration's read snapshot, which does not change
// while it is read, remembering the answers that several parts of the
// initial state ask for alike (the user's subscriptions, groups, periods,
// mutes and topic policies, the organization's channels): each is read
// once per registration instead of once per part (on PostgreSQL each
// read is a round trip). Every caller gets its own copy of the slice.
type snapshotMemo struct {
	storage.Store
	mu    sync.Mutex
	memos map[memoKey]any
}

// memoKey names one remembered answer: the method and its arguments.
type memoKey struct {
	method          string
	realmID, userID int64
}

func newSnapshotMemo(st storage.Store) *snapshotMemo {
	return &snapshotMemo{Store: st, memos: map[memoKey]any{}}
}

// remember returns the remembered answer of key, or reads, keeps and
// returns it; the answer is a copy either way. Reads of different keys
// may run at once; a key read twice at once is read twice.
func remember[T any](m *snapshotMemo, key memoKey, read func() ([]T, error)) ([]T, error) {
	m.mu.Lock()
	v, ok := m.memos[key]
	m.mu.Unlock()
	if ok {
		return slices.Clone(v.([]T)), nil
	}
	out, err := read()
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.memos[key] = out
	m.mu.Unlock()
	return slices.Clone(out), nil
}

func (m *snapshotMemo) ListUserSubscriptions(ctx context.Context, realmID, userID int64) ([]storage.Subscription, error) {
	return remember(m, memoKey{"subscriptions", realmID, userID}, func() ([]storage.Subscription, error) {
		return m.Store.ListUserSubscriptions(ctx, realmID, userID)
	})
}

func (m *snapshotMemo) EffectiveGroupIDs(ctx context.Context, realmID, userID int64) ([]int64, error) {
	return remember(m, memoKey{"groups", realmID, userID}, func() ([]int64, error) {
		return m.Store.EffectiveGroupIDs(ctx, realmID, userID)
	})
}

func (m *snapshotMemo) ListUserPeriods(ctx context.Context, realmID, userID int64) ([]storage.SubscriptionPeriod, error) {
	return remember(m, memoKey{"periods", realmID, userID}, func() ([]storage.SubscriptionPeriod, error) {
		return m.Store.ListUserPeriods(ctx, realmID, userID)
	})
}

func (m *snapshotMemo) ListUserMutes(ctx context.Context, realmID, userID int64) ([]storage.UserMute, error) {
	return remember(m, memoKey{"mutes", realmID, userID}, func() ([]storage.UserMute, error) {
		return m.Store.ListUserMutes(ctx, realmID, userID)
	})
}

func (m *snapshotMemo) ListUserTopics(ctx context.Context, realmID, userID int64) ([]storage.UserTopic, error) {
	return remember(m, memoKey{"topics", realmID, userID}, func() ([]storage.UserTopic, error) {
		return m.Store.ListUserTopics(ctx, realmID, userID)
	})
}

func (m *snapshotMemo) ListStreams(ctx context.Context, realmID int64) ([]storage.Stream, error) {
	return remember(m, memoKey{"channels", realmID, 0}, func() ([]storage.Stream, error) {
		return m.Store.ListStreams(ctx, realmID)
	})
}

func (m *snapshotMemo) ListGroups(ctx context.Context, realmID int64) ([]storage.UserGroup, error) {
	return remember(m, memoKey{"named groups", realmID, 0}, func() ([]storage.UserGroup, error) {
		return m.Store.ListGroups(ctx, realmID)
	})
}

// namedGroups are the organization's named groups if ListGroups read
// them already (a registration that shows the groups reads them all;
// one that does not should not read them for the few it names).
func (m *snapshotMemo) namedGroups(realmID int64) ([]storage.UserGroup, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.memos[memoKey{"named groups", realmID, 0}]
	if !ok {
		return nil, false
	}
	return v.([]storage.UserGroup), true
}

// GetGroupByName answers from the named groups when they were read.
func (m *snapshotMemo) GetGroupByName(ctx context.Context, realmID int64, name string) (*storage.UserGroup, error) {
	if named, ok := m.namedGroups(realmID); ok {
		for _, g := range named {
			if g.Name == name {
				return &g, nil
			}
		}
	}
	return m.Store.GetGroupByName(ctx, realmID, name)
}

// GetGroupsByID reads only the groups not read before, and none that
// the named groups, when they were read, hold.
func (m *snapshotMemo) GetGroupsByID(ctx context.Context, realmID int64, ids []int64) ([]storage.UserGroup, error) {
	return rememberEach(m, "group", realmID, ids, func(g storage.UserGroup) int64 { return g.ID },
		func(missing []int64) ([]storage.UserGroup, error) {
			named, _ := m.namedGroups(realmID)
			want := make(map[int64]bool, len(missing))
			for _, id := range missing {
				want[id] = true
			}
			var out []storage.UserGroup
			for _, g := range named {
				if want[g.ID] {
					out = append(out, g)
					delete(want, g.ID)
				}
			}
			if len(want) == 0 {
				return out, nil
			}
			rest, err := m.Store.GetGroupsByID(ctx, realmID, slices.Sorted(maps.Keys(want)))
			return append(out, rest...), err
		})
}

// ConversationMembersOf reads only the conversations not read before
// (the unread state and the recent conversations name the same ones).
func (m *snapshotMemo) ConversationMembersOf(ctx context.Context, realmID int64, ids []int64) (map[int64][]int64, error) {
	type member struct{ conv, user int64 }
	rows, err := rememberEach(m, "conversation", realmID, ids, func(r member) int64 { return r.conv },
		func(missing []int64) ([]member, error) {
			found, err := m.Store.ConversationMembersOf(ctx, realmID, missing)
			var out []member
			for conv, users := range found {
				for _, u := range users {
					out = append(out, member{conv, u})
				}
			}
			return out, err
		})
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]int64, len(ids))
	for _, r := range rows {
		out[r.conv] = append(out[r.conv], r.user)
	}
	return out, nil
}

// ListGroupMembershipsOf reads only the groups whose members were not
// read before (the channels, the subscriptions and the organization name
// the same anonymous groups).
func (m *snapshotMemo) ListGroupMembershipsOf(ctx context.Context, realmID int64, ids []int64) ([]storage.GroupMembership, error) {
	return rememberEach(m, "group members", realmID, ids, func(r storage.GroupMembership) int64 { return r.GroupID },
		func(missing []int64) ([]storage.GroupMembership, error) {
			return m.Store.ListGroupMembershipsOf(ctx, realmID, missing)
		})
}

// ListGroupEdgesOf is ListGroupMembershipsOf for subgroups.
func (m *snapshotMemo) ListGroupEdgesOf(ctx context.Context, realmID int64, ids []int64) ([]storage.GroupEdge, error) {
	return rememberEach(m, "group subgroups", realmID, ids, func(r storage.GroupEdge) int64 { return r.GroupID },
		func(missing []int64) ([]storage.GroupEdge, error) {
			return m.Store.ListGroupEdgesOf(ctx, realmID, missing)
		})
}

// rememberEach answers a read of rows of several keys (ordered by key,
// as the store orders them) from the rows remembered per key, reading the
// keys not read before in one call.
func rememberEach[T any](m *snapshotMemo, kind string, realmID int64, ids []int64, keyOf func(T) int64, read func(missing []int64) ([]T, error)) ([]T, error) {
	ids = uniqueSorted(ids)
	var missing []int64
	m.mu.Lock()
	for _, id := range ids {
		if _, ok := m.memos[memoKey{kind, realmID, id}]; !ok {
			missing = append(missing, id)
		}
	}
	m.mu.Unlock()
	if len(missing) > 0 {
		found, err := read(missing)
		if err != nil {
			return nil, err
		}
		byKey := make(map[int64][]T, len(missing))
		for _, r := range found {
			byKey[keyOf(r)] = append(byKey[keyOf(r)], r)
		}
		m.mu.Lock()
		for _, id := range missing {
			m.memos[memoKey{kind, realmID, id}] = byKey[id]
		}
		m.mu.Unlock()
	}
	out := make([]T, 0, len(ids))
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		out = append(out, m.memos[memoKey{kind, realmID, id}].([]T)...)
	}
	return out, nil
}
