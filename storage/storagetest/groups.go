package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var groupTests = []test{
	{"Group/RoundTrip", testGroupRoundTrip},
	{"Group/NotFound", testGroupNotFound},
	{"Group/Conflict", testGroupConflict},
	{"Group/MissingCreator", testGroupMissingCreator},
	{"Group/List", testGroupList},
	{"Group/Members", testGroupMembers},
	{"Group/MembersRealmScope", testGroupMembersRealmScope},
	{"Group/Subgroups", testGroupSubgroups},
	{"Group/SubgroupsRealmScope", testGroupSubgroupsRealmScope},
}

func testGroupRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	creator := newUser(t, s, realm.ID, "creator@example.com")

	cases := []struct {
		name  string
		group storage.UserGroup
	}{
		{"system group", storage.UserGroup{
			Name:          "role:owners",
			Description:   "Owners of this organization",
			IsSystemGroup: true,
		}},
		{"user group with all fields", storage.UserGroup{
			Name:        "Ünïcødé 'team' \"x\"",
			Description: "line1\nline2",
			CreatorID:   ptr(creator.ID),
			DateCreated: ptr(int64(1_700_000_500)),
			Deactivated: true,
		}},
		{"non-nil pointer to zero", storage.UserGroup{Name: "zero", DateCreated: ptr(int64(0))}},
		{"anonymous group", storage.UserGroup{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.group
			g.RealmID = realm.ID
			require.NoError(t, s.CreateGroup(ctx, &g))
			require.NotZero(t, g.ID)
			want := tc.group
			want.ID, want.RealmID = g.ID, realm.ID

			got, err := s.GetGroup(ctx, realm.ID, g.ID)
			require.NoError(t, err)
			assert.Equal(t, want, *got)

			if g.Name != "" {
				got, err = s.GetGroupByName(ctx, realm.ID, g.Name)
				require.NoError(t, err)
				assert.Equal(t, want, *got)
			}
		})
	}
}

func testGroupNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	newGroup(t, s, realm.ID, "")
	foreign := newGroup(t, s, other.ID, "foreign")
	own := newGroup(t, s, realm.ID, "own")

	byID := []struct {
		name    string
		realmID int64
		id      int64
	}{
		{"missing ID", realm.ID, foreign.ID + 1000},
		{"other realm's group", realm.ID, foreign.ID},
		{"missing realm", other.ID + 1000, own.ID},
	}
	for _, tc := range byID {
		t.Run("by ID/"+tc.name, func(t *testing.T) {
			_, err := s.GetGroup(ctx, tc.realmID, tc.id)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
	byName := []struct {
		name      string
		groupName string
	}{
		{"missing name", "missing"},
		{"other realm's name", foreign.Name},
		{"empty name with anonymous groups present", ""},
		{"different case", "OWN"},
	}
	for _, tc := range byName {
		t.Run("by name/"+tc.name, func(t *testing.T) {
			_, err := s.GetGroupByName(ctx, realm.ID, tc.groupName)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
}

func testGroupConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	first := newGroup(t, s, realm.ID, "support")

	cases := []struct {
		name    string
		group   storage.UserGroup
		wantErr error
	}{
		{"same name same realm", storage.UserGroup{RealmID: realm.ID, Name: "support"}, storage.ErrConflict},
		{"same name as system group", storage.UserGroup{RealmID: realm.ID, Name: "support", IsSystemGroup: true}, storage.ErrConflict},
		{"same name other realm", storage.UserGroup{RealmID: other.ID, Name: "support"}, nil},
		{"anonymous 1", storage.UserGroup{RealmID: realm.ID}, nil},
		{"anonymous 2", storage.UserGroup{RealmID: realm.ID}, nil},
		{"anonymous 3", storage.UserGroup{RealmID: realm.ID, Description: "x"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.group
			err := s.CreateGroup(ctx, &g)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
				assert.NotZero(t, g.ID)
			}
		})
	}
	groups, err := s.ListGroups(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.UserGroup{*first}, groups)
}

func testGroupMissingCreator(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	foreign := newUser(t, s, other.ID, "foreign@example.com")

	for name, g := range map[string]storage.UserGroup{
		"missing realm":            {RealmID: other.ID + 1000, Name: "a"},
		"missing creator":          {RealmID: realm.ID, Name: "b", CreatorID: ptr(foreign.ID + 1000)},
		"creator in another realm": {RealmID: realm.ID, Name: "c", CreatorID: ptr(foreign.ID)},
	} {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, s.CreateGroup(ctx, &g), storage.ErrNotFound)
		})
	}
	groups, err := s.ListGroups(ctx, realm.ID)
	require.NoError(t, err)
	assert.Empty(t, groups)
}

func testGroupList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	empty := newRealm(t, s, "empty")

	b := newGroup(t, s, realm.ID, "b")
	newGroup(t, s, realm.ID, "")
	newGroup(t, s, other.ID, "x")
	a := newGroup(t, s, realm.ID, "a")
	sys := &storage.UserGroup{RealmID: realm.ID, Name: "role:members", IsSystemGroup: true}
	require.NoError(t, s.CreateGroup(ctx, sys))

	groups, err := s.ListGroups(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.UserGroup{*b, *a, *sys}, groups, "named groups only, ordered by ID")

	groups, err = s.ListGroups(ctx, empty.ID)
	require.NoError(t, err)
	assert.Empty(t, groups)
}

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
