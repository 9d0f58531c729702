package storagetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// Tests of direct memberships, subgroups and the realm-wide listings.

func testGroupMembers(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u1 := newUser(t, s, realm.ID, "u1@example.com").ID
	u2 := newUser(t, s, realm.ID, "u2@example.com").ID
	u3 := newUser(t, s, realm.ID, "u3@example.com").ID
	u4 := newUser(t, s, realm.ID, "u4@example.com").ID
	g := newGroup(t, s, realm.ID, "team").ID
	anon := newGroup(t, s, realm.ID, "").ID
	otherGroup := newGroup(t, s, realm.ID, "other team").ID

	members := func(group int64) []int64 {
		t.Helper()
		ids, err := s.GroupMembers(ctx, realm.ID, group)
		require.NoError(t, err)
		return ids
	}
	groupsOf := func(user int64) []int64 {
		t.Helper()
		ids, err := s.UserGroupIDs(ctx, realm.ID, user)
		require.NoError(t, err)
		return ids
	}

	assert.Empty(t, members(g))
	assert.Empty(t, groupsOf(u1))

	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, g, []int64{u3, u1}))
	assert.Equal(t, []int64{u1, u3}, members(g), "ascending")

	// Idempotent: present members are skipped, duplicates in one call too.
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, g, []int64{u3, u2, u2, u1}))
	assert.Equal(t, []int64{u1, u2, u3}, members(g))
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, g, nil))
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, g, []int64{}))
	assert.Equal(t, []int64{u1, u2, u3}, members(g))

	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, anon, []int64{u2}))
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, otherGroup, []int64{u4, u2}))
	assert.Equal(t, []int64{u2}, members(anon))
	assert.Equal(t, []int64{u2, u4}, members(otherGroup))
	assert.Equal(t, []int64{g, anon, otherGroup}, groupsOf(u2), "ascending")
	assert.Equal(t, []int64{g}, groupsOf(u1))
	assert.Equal(t, []int64{otherGroup}, groupsOf(u4))

	// Removing members and non-members; removing again is a no-op.
	require.NoError(t, s.RemoveGroupMembers(ctx, realm.ID, g, []int64{u2, u4}))
	assert.Equal(t, []int64{u1, u3}, members(g))
	require.NoError(t, s.RemoveGroupMembers(ctx, realm.ID, g, []int64{u2, u4, u2}))
	require.NoError(t, s.RemoveGroupMembers(ctx, realm.ID, g, nil))
	assert.Equal(t, []int64{u1, u3}, members(g))
	assert.Equal(t, []int64{u2}, members(anon), "other groups untouched")
	assert.Equal(t, []int64{u2, u4}, members(otherGroup), "other groups untouched")
	assert.Equal(t, []int64{anon, otherGroup}, groupsOf(u2))

	require.NoError(t, s.RemoveGroupMembers(ctx, realm.ID, g, []int64{u1, u3}))
	assert.Empty(t, members(g))
	assert.Empty(t, groupsOf(u1))
}

func testGroupMembersRealmScope(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "u@example.com").ID
	foreignUser := newUser(t, s, other.ID, "f@example.com").ID
	g := newGroup(t, s, realm.ID, "team").ID
	foreignGroup := newGroup(t, s, other.ID, "team").ID
	require.NoError(t, s.AddGroupMembers(ctx, other.ID, foreignGroup, []int64{foreignUser}))

	groups := []struct {
		name  string
		group int64
	}{
		{"other realm's group", foreignGroup},
		{"missing group", foreignGroup + 1000},
	}
	for _, tc := range groups {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorIs(t, s.AddGroupMembers(ctx, realm.ID, tc.group, []int64{u}), storage.ErrNotFound)
			assert.ErrorIs(t, s.AddGroupMembers(ctx, realm.ID, tc.group, nil), storage.ErrNotFound)
			assert.ErrorIs(t, s.RemoveGroupMembers(ctx, realm.ID, tc.group, []int64{foreignUser}), storage.ErrNotFound)
			assert.ErrorIs(t, s.RemoveGroupMembers(ctx, realm.ID, tc.group, nil), storage.ErrNotFound)
			_, err := s.GroupMembers(ctx, realm.ID, tc.group)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
	users := []struct {
		name string
		user int64
	}{
		{"other realm's user", foreignUser},
		{"missing user", foreignUser + 1000},
	}
	for _, tc := range users {
		t.Run(tc.name, func(t *testing.T) {
			// The whole call fails: the valid user u is not added either.
			assert.ErrorIs(t, s.AddGroupMembers(ctx, realm.ID, g, []int64{u, tc.user}), storage.ErrNotFound)
			ids, err := s.GroupMembers(ctx, realm.ID, g)
			require.NoError(t, err)
			assert.Empty(t, ids)
			_, err = s.UserGroupIDs(ctx, realm.ID, tc.user)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}

	ids, err := s.GroupMembers(ctx, other.ID, foreignGroup)
	require.NoError(t, err)
	assert.Equal(t, []int64{foreignUser}, ids, "other realm untouched")
	ids, err = s.UserGroupIDs(ctx, other.ID, foreignUser)
	require.NoError(t, err)
	assert.Equal(t, []int64{foreignGroup}, ids)
}

func testGroupSubgroups(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	parent := newGroup(t, s, realm.ID, "parent").ID
	other := newGroup(t, s, realm.ID, "other").ID
	a := newGroup(t, s, realm.ID, "a").ID
	b := newGroup(t, s, realm.ID, "").ID
	c := newGroup(t, s, realm.ID, "c").ID

	subgroups := func(group int64) []int64 {
		t.Helper()
		ids, err := s.Subgroups(ctx, realm.ID, group)
		require.NoError(t, err)
		return ids
	}

	assert.Empty(t, subgroups(parent))
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, parent, []int64{c, a}))
	assert.Equal(t, []int64{a, c}, subgroups(parent), "ascending")
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, parent, []int64{c, b, b, a}))
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, parent, nil))
	assert.Equal(t, []int64{a, b, c}, subgroups(parent))
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, other, []int64{b}))

	require.NoError(t, s.RemoveSubgroups(ctx, realm.ID, parent, []int64{b, other}))
	assert.Equal(t, []int64{a, c}, subgroups(parent))
	require.NoError(t, s.RemoveSubgroups(ctx, realm.ID, parent, []int64{b}))
	require.NoError(t, s.RemoveSubgroups(ctx, realm.ID, parent, nil))
	assert.Equal(t, []int64{a, c}, subgroups(parent))
	assert.Equal(t, []int64{b}, subgroups(other), "other groups untouched")
	assert.Empty(t, subgroups(a))

	// Subgroups are not members.
	ids, err := s.GroupMembers(ctx, realm.ID, parent)
	require.NoError(t, err)
	assert.Empty(t, ids)
}

func testGroupSubgroupsRealmScope(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	g := newGroup(t, s, realm.ID, "team").ID
	sub := newGroup(t, s, realm.ID, "sub").ID
	foreign := newGroup(t, s, other.ID, "team").ID
	foreignSub := newGroup(t, s, other.ID, "sub").ID
	require.NoError(t, s.AddSubgroups(ctx, other.ID, foreign, []int64{foreignSub}))

	for name, group := range map[string]int64{"other realm's group": foreign, "missing group": foreignSub + 1000} {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, s.AddSubgroups(ctx, realm.ID, group, []int64{sub}), storage.ErrNotFound)
			assert.ErrorIs(t, s.AddSubgroups(ctx, realm.ID, group, nil), storage.ErrNotFound)
			assert.ErrorIs(t, s.RemoveSubgroups(ctx, realm.ID, group, []int64{foreignSub}), storage.ErrNotFound)
			_, err := s.Subgroups(ctx, realm.ID, group)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
	for name, subgroup := range map[string]int64{"other realm's subgroup": foreignSub, "missing subgroup": foreignSub + 1000} {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, s.AddSubgroups(ctx, realm.ID, g, []int64{sub, subgroup}), storage.ErrNotFound)
			ids, err := s.Subgroups(ctx, realm.ID, g)
			require.NoError(t, err)
			assert.Empty(t, ids)
		})
	}
	ids, err := s.Subgroups(ctx, other.ID, foreign)
	require.NoError(t, err)
	assert.Equal(t, []int64{foreignSub}, ids, "other realm untouched")
}

func testGroupListMemberships(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	empty := newRealm(t, s, "empty")
	groupsOnly := newRealm(t, s, "groups-only")
	newGroup(t, s, groupsOnly.ID, "lonely")
	newGroup(t, s, groupsOnly.ID, "")

	list := func(realmID int64) []storage.GroupMembership {
		t.Helper()
		ms, err := s.ListGroupMemberships(ctx, realmID)
		require.NoError(t, err)
		return ms
	}
	assert.Empty(t, list(realm.ID), "no groups yet")

	u1 := newUser(t, s, realm.ID, "u1@example.com").ID
	foreignUser := newUser(t, s, other.ID, "f@example.com").ID
	u2 := newUser(t, s, realm.ID, "u2@example.com").ID
	u3 := newUser(t, s, realm.ID, "u3@example.com").ID
	sys := &storage.UserGroup{RealmID: realm.ID, Name: "role:members", IsSystemGroup: true}
	require.NoError(t, s.CreateGroup(ctx, sys))
	foreign := newGroup(t, s, other.ID, "foreign").ID // IDs interleave across realms
	team := newGroup(t, s, realm.ID, "team").ID
	anon := newGroup(t, s, realm.ID, "").ID
	noMembers := newGroup(t, s, realm.ID, "no members").ID
	closed := &storage.UserGroup{RealmID: realm.ID, Name: "closed", Deactivated: true}
	require.NoError(t, s.CreateGroup(ctx, closed))
	anon2 := newGroup(t, s, realm.ID, "").ID
	assert.Empty(t, list(realm.ID), "groups without members")

	// Added out of order, across realms, with subgroups that are not members.
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, anon2, []int64{u2}))
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, anon, []int64{u3, u1}))
	require.NoError(t, s.AddGroupMembers(ctx, other.ID, foreign, []int64{foreignUser}))
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, closed.ID, []int64{u1}))
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, team, []int64{u3, u2}))
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, sys.ID, []int64{u3, u1, u2}))
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, team, []int64{anon, noMembers}))
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, sys.ID, []int64{team}))

	want := []storage.GroupMembership{
		membership(sys.ID, u1), membership(sys.ID, u2), membership(sys.ID, u3),
		membership(team, u2), membership(team, u3),
		membership(anon, u1), membership(anon, u3),
		membership(closed.ID, u1),
		membership(anon2, u2),
	}
	assert.Equal(t, want, list(realm.ID), "direct memberships only, by group then user")
	assert.Equal(t, []storage.GroupMembership{membership(foreign, foreignUser)}, list(other.ID), "realm isolation")
	assert.Empty(t, list(empty.ID))
	assert.Empty(t, list(groupsOnly.ID))

	// The listing follows removals.
	require.NoError(t, s.RemoveGroupMembers(ctx, realm.ID, sys.ID, []int64{u2}))
	require.NoError(t, s.RemoveGroupMembers(ctx, realm.ID, anon2, []int64{u2}))
	want = []storage.GroupMembership{
		membership(sys.ID, u1), membership(sys.ID, u3),
		membership(team, u2), membership(team, u3),
		membership(anon, u1), membership(anon, u3),
		membership(closed.ID, u1),
	}
	assert.Equal(t, want, list(realm.ID))
	assert.Equal(t, []storage.GroupMembership{membership(foreign, foreignUser)}, list(other.ID))

	// Agrees with the per-group and per-user reads.
	for _, group := range []int64{sys.ID, team, anon, noMembers, closed.ID, anon2} {
		members, err := s.GroupMembers(ctx, realm.ID, group)
		require.NoError(t, err)
		var fromList []int64
		for _, m := range want {
			if m.GroupID == group {
				fromList = append(fromList, m.UserID)
			}
		}
		assert.ElementsMatch(t, members, fromList, "group %d", group)
	}
}

func testGroupListEdges(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	empty := newRealm(t, s, "empty")

	list := func(realmID int64) []storage.GroupEdge {
		t.Helper()
		es, err := s.ListGroupEdges(ctx, realmID)
		require.NoError(t, err)
		return es
	}
	assert.Empty(t, list(realm.ID), "no groups yet")

	u := newUser(t, s, realm.ID, "u@example.com").ID
	owners := &storage.UserGroup{RealmID: realm.ID, Name: "role:owners", IsSystemGroup: true}
	require.NoError(t, s.CreateGroup(ctx, owners))
	admins := &storage.UserGroup{RealmID: realm.ID, Name: "role:administrators", IsSystemGroup: true}
	require.NoError(t, s.CreateGroup(ctx, admins))
	foreign := newGroup(t, s, other.ID, "foreign").ID // IDs interleave across realms
	foreignSub := newGroup(t, s, other.ID, "").ID
	members := &storage.UserGroup{RealmID: realm.ID, Name: "role:members", IsSystemGroup: true}
	require.NoError(t, s.CreateGroup(ctx, members))
	team := newGroup(t, s, realm.ID, "team").ID
	anon := newGroup(t, s, realm.ID, "").ID
	anon2 := newGroup(t, s, realm.ID, "").ID
	require.NoError(t, s.AddGroupMembers(ctx, realm.ID, team, []int64{u}))
	assert.Empty(t, list(realm.ID), "members are not subgroups")

	// Added out of order, across realms.
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, anon2, []int64{admins.ID, owners.ID}))
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, members.ID, []int64{team, admins.ID}))
	require.NoError(t, s.AddSubgroups(ctx, other.ID, foreign, []int64{foreignSub}))
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, admins.ID, []int64{owners.ID}))
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, anon, []int64{anon2}))
	require.NoError(t, s.AddSubgroups(ctx, realm.ID, team, []int64{anon2, anon}))

	want := []storage.GroupEdge{
		edge(admins.ID, owners.ID),
		edge(members.ID, admins.ID), edge(members.ID, team),
		edge(team, anon), edge(team, anon2),
		edge(anon, anon2),
		edge(anon2, owners.ID), edge(anon2, admins.ID),
	}
	assert.Equal(t, want, list(realm.ID), "direct subgroups only, by group then subgroup")
	assert.Equal(t, []storage.GroupEdge{edge(foreign, foreignSub)}, list(other.ID), "realm isolation")
	assert.Empty(t, list(empty.ID))

	require.NoError(t, s.RemoveSubgroups(ctx, realm.ID, members.ID, []int64{team}))
	require.NoError(t, s.RemoveSubgroups(ctx, realm.ID, anon2, []int64{admins.ID, team}))
	want = []storage.GroupEdge{
		edge(admins.ID, owners.ID),
		edge(members.ID, admins.ID),
		edge(team, anon), edge(team, anon2),
		edge(anon, anon2),
		edge(anon2, owners.ID),
	}
	assert.Equal(t, want, list(realm.ID), "the listing follows removals")
	assert.Equal(t, []storage.GroupEdge{edge(foreign, foreignSub)}, list(other.ID))
}

// testGroupListingsInTx checks UpdateGroup and the realm-wide listings
// inside a transaction: they see its writes, and a rollback undoes them.
func testGroupListingsInTx(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "u@example.com").ID
	team := newGroup(t, s, realm.ID, "team")
	anon := newGroup(t, s, realm.ID, "")

	write := func(tx storage.Store) error {
		changed := *team
		changed.Description = "in tx"
		changed.CanJoinGroupID = anon.ID
		require.NoError(t, tx.UpdateGroup(ctx, &changed))
		require.NoError(t, tx.AddGroupMembers(ctx, realm.ID, anon.ID, []int64{u}))
		require.NoError(t, tx.AddSubgroups(ctx, realm.ID, team.ID, []int64{anon.ID}))

		got, err := tx.GetGroup(ctx, realm.ID, team.ID)
		require.NoError(t, err)
		assert.Equal(t, changed, *got)
		ms, err := tx.ListGroupMemberships(ctx, realm.ID)
		require.NoError(t, err)
		assert.Equal(t, []storage.GroupMembership{membership(anon.ID, u)}, ms)
		es, err := tx.ListGroupEdges(ctx, realm.ID)
		require.NoError(t, err)
		assert.Equal(t, []storage.GroupEdge{edge(team.ID, anon.ID)}, es)
		return nil
	}

	errRollback := errors.New("roll back")
	err := s.InTx(ctx, func(tx storage.Store) error {
		require.NoError(t, write(tx))
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)
	assertGroup(t, s, *team, "rolled back")
	ms, err := s.ListGroupMemberships(ctx, realm.ID)
	require.NoError(t, err)
	assert.Empty(t, ms)
	es, err := s.ListGroupEdges(ctx, realm.ID)
	require.NoError(t, err)
	assert.Empty(t, es)

	require.NoError(t, s.InTx(ctx, write))
	got, err := s.GetGroup(ctx, realm.ID, team.ID)
	require.NoError(t, err)
	assert.Equal(t, "in tx", got.Description)
	assert.Equal(t, anon.ID, got.CanJoinGroupID)
	ms, err = s.ListGroupMemberships(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.GroupMembership{membership(anon.ID, u)}, ms)
	es, err = s.ListGroupEdges(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.GroupEdge{edge(team.ID, anon.ID)}, es)
}

func membership(groupID, userID int64) storage.GroupMembership {
	return storage.GroupMembership{GroupID: groupID, UserID: userID}
}

func edge(groupID, subgroupID int64) storage.GroupEdge {
	return storage.GroupEdge{GroupID: groupID, SubgroupID: subgroupID}
}
