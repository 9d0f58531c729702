package storagetest

import (
	"errors"
	"fmt"
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
	{"Group/Settings", testGroupSettings},
	{"Group/Update", testGroupUpdate},
	{"Group/UpdateColumns", testGroupUpdateColumns},
	{"Group/UpdateConflict", testGroupUpdateConflict},
	{"Group/UpdateNotFound", testGroupUpdateNotFound},
	{"Group/ListMemberships", testGroupListMemberships},
	{"Group/ListEdges", testGroupListEdges},
	{"Group/ListingsInTx", testGroupListingsInTx},
}

func testGroupRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	creator := newUser(t, s, realm.ID, "creator@example.com")
	var settingGroups [6]int64 // distinct IDs, so that swapped columns show
	for i := range settingGroups {
		name := ""
		if i%2 == 0 {
			name = fmt.Sprintf("setting group %d", i)
		}
		settingGroups[i] = newGroup(t, s, realm.ID, name).ID
	}

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
		{"permission settings", storage.UserGroup{
			Name:                    "with settings",
			CanAddMembersGroupID:    settingGroups[0],
			CanJoinGroupID:          settingGroups[1],
			CanLeaveGroupID:         settingGroups[2],
			CanManageGroupID:        settingGroups[3],
			CanMentionGroupID:       settingGroups[4],
			CanRemoveMembersGroupID: settingGroups[5],
		}},
		{"anonymous group with settings", storage.UserGroup{
			CanManageGroupID:  settingGroups[1],
			CanMentionGroupID: settingGroups[0],
		}},
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

// groupSettingColumns names the permission-setting columns of a group,
// each with a setter of its field.
var groupSettingColumns = []struct {
	column string
	set    func(g *storage.UserGroup, id int64)
}{
	{"can_add_members_group_id", func(g *storage.UserGroup, id int64) { g.CanAddMembersGroupID = id }},
	{"can_join_group_id", func(g *storage.UserGroup, id int64) { g.CanJoinGroupID = id }},
	{"can_leave_group_id", func(g *storage.UserGroup, id int64) { g.CanLeaveGroupID = id }},
	{"can_manage_group_id", func(g *storage.UserGroup, id int64) { g.CanManageGroupID = id }},
	{"can_mention_group_id", func(g *storage.UserGroup, id int64) { g.CanMentionGroupID = id }},
	{"can_remove_members_group_id", func(g *storage.UserGroup, id int64) { g.CanRemoveMembersGroupID = id }},
}

// assertGroup checks that the realm's group want.ID reads back as want.
func assertGroup(t *testing.T, s storage.Store, want storage.UserGroup, msgAndArgs ...any) {
	t.Helper()
	got, err := s.GetGroup(t.Context(), want.RealmID, want.ID)
	require.NoError(t, err, msgAndArgs...)
	assert.Equal(t, want, *got, msgAndArgs...)
}

// testGroupSettings checks that the permission settings are 0 (not set) on
// a new group and are read back by every group read.
func testGroupSettings(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	admins := &storage.UserGroup{RealmID: realm.ID, Name: "role:administrators", IsSystemGroup: true}
	require.NoError(t, s.CreateGroup(ctx, admins))
	assert.Zero(t, admins.CanAddMembersGroupID, "not set")
	assert.Zero(t, admins.CanJoinGroupID, "not set")
	assert.Zero(t, admins.CanLeaveGroupID, "not set")
	assert.Zero(t, admins.CanManageGroupID, "not set")
	assert.Zero(t, admins.CanMentionGroupID, "not set")
	assert.Zero(t, admins.CanRemoveMembersGroupID, "not set")
	assertGroup(t, s, *admins)
	anon := newGroup(t, s, realm.ID, "")

	team := &storage.UserGroup{
		RealmID:                 realm.ID,
		Name:                    "team",
		CanAddMembersGroupID:    admins.ID,
		CanJoinGroupID:          anon.ID,
		CanLeaveGroupID:         admins.ID,
		CanManageGroupID:        anon.ID,
		CanMentionGroupID:       admins.ID,
		CanRemoveMembersGroupID: anon.ID,
	}
	require.NoError(t, s.CreateGroup(ctx, team))
	assertGroup(t, s, *team)
	got, err := s.GetGroupByName(ctx, realm.ID, "team")
	require.NoError(t, err)
	assert.Equal(t, *team, *got)
	groups, err := s.ListGroups(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.UserGroup{*admins, *team}, groups)

	// A group's setting may name the group itself.
	team.CanMentionGroupID = team.ID
	require.NoError(t, s.UpdateGroup(ctx, team, "can_mention_group_id"))
	assertGroup(t, s, *team)
}

func testGroupUpdate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	creator := newUser(t, s, realm.ID, "creator@example.com")
	other := newUser(t, s, realm.ID, "other@example.com")
	admins := newGroup(t, s, realm.ID, "role:administrators")
	anon := newGroup(t, s, realm.ID, "")
	g := &storage.UserGroup{
		RealmID:     realm.ID,
		Name:        "team",
		Description: "old",
		CreatorID:   ptr(creator.ID),
		DateCreated: ptr(int64(1_700_000_000)),
	}
	require.NoError(t, s.CreateGroup(ctx, g))
	untouched := newGroup(t, s, realm.ID, "untouched")

	// Every field changes, booleans and pointers both ways.
	g.Name = "Ünïcødé 'renamed' \"team\""
	g.Description = "line1\nline2"
	g.IsSystemGroup = true
	g.CreatorID = ptr(other.ID)
	g.DateCreated = nil
	g.Deactivated = true
	g.CanAddMembersGroupID = admins.ID
	g.CanJoinGroupID = anon.ID
	g.CanLeaveGroupID = g.ID
	g.CanManageGroupID = untouched.ID
	g.CanMentionGroupID = anon.ID
	g.CanRemoveMembersGroupID = admins.ID
	require.NoError(t, s.UpdateGroup(ctx, g))
	assertGroup(t, s, *g)
	got, err := s.GetGroupByName(ctx, realm.ID, g.Name)
	require.NoError(t, err)
	assert.Equal(t, *g, *got)
	_, err = s.GetGroupByName(ctx, realm.ID, "team")
	assert.ErrorIs(t, err, storage.ErrNotFound, "old name")

	// Back to zero values (the name stays: it is what makes it named).
	g.Description = ""
	g.IsSystemGroup = false
	g.CreatorID = nil
	g.DateCreated = ptr(int64(0))
	g.Deactivated = false
	for _, c := range groupSettingColumns {
		c.set(g, 0)
	}
	require.NoError(t, s.UpdateGroup(ctx, g))
	assertGroup(t, s, *g)

	// An anonymous group is updated like any other and stays anonymous.
	anon.Description = "backs a setting"
	anon.CanManageGroupID = admins.ID
	require.NoError(t, s.UpdateGroup(ctx, anon))
	assertGroup(t, s, *anon)

	assertGroup(t, s, *untouched, "other groups untouched")
	assertGroup(t, s, *admins, "other groups untouched")
	groups, err := s.ListGroups(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.UserGroup{*admins, *g, *untouched}, groups)
}

func testGroupUpdateColumns(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	creator := newUser(t, s, realm.ID, "creator@example.com")
	g := newGroup(t, s, realm.ID, "team")
	want := *g

	changed := *g
	changed.Name = "renamed"
	changed.Description = "not written"
	changed.Deactivated = true
	changed.CreatorID = ptr(creator.ID)
	changed.CanJoinGroupID = g.ID // not written
	require.NoError(t, s.UpdateGroup(ctx, &changed, "name", "deactivated", "creator_id"))
	want.Name = "renamed"
	want.Deactivated = true
	want.CreatorID = ptr(creator.ID)
	assertGroup(t, s, want)

	// Each setting written alone, by name; the others keep their values.
	for i, c := range groupSettingColumns {
		setting := newGroup(t, s, realm.ID, "")
		changed := want
		c.set(&changed, setting.ID)
		for _, other := range groupSettingColumns[i+1:] {
			other.set(&changed, g.ID) // not written
		}
		require.NoError(t, s.UpdateGroup(ctx, &changed, c.column), c.column)
		c.set(&want, setting.ID)
		assertGroup(t, s, want, c.column)
	}

	// Named columns set back to zero values are written.
	changed = want
	var columns []string
	for _, c := range groupSettingColumns {
		c.set(&changed, 0)
		c.set(&want, 0)
		columns = append(columns, c.column)
	}
	changed.Deactivated, want.Deactivated = false, false
	changed.CreatorID, want.CreatorID = nil, nil
	require.NoError(t, s.UpdateGroup(ctx, &changed, append(columns, "deactivated", "creator_id")...))
	assertGroup(t, s, want)
}

func testGroupUpdateConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	support := newGroup(t, s, realm.ID, "support")
	team := newGroup(t, s, realm.ID, "team")
	sys := &storage.UserGroup{RealmID: realm.ID, Name: "role:members", IsSystemGroup: true}
	require.NoError(t, s.CreateGroup(ctx, sys))
	anon1 := newGroup(t, s, realm.ID, "")
	anon2 := newGroup(t, s, realm.ID, "")
	newGroup(t, s, other.ID, "elsewhere")

	conflicts := []struct {
		name    string
		newName string
		columns []string
	}{
		{"named column", "support", []string{"name"}},
		{"all columns", "support", nil},
		{"name with settings", "support", []string{"name", "can_manage_group_id"}},
		{"system group's name", "role:members", []string{"name"}},
	}
	for _, tc := range conflicts {
		t.Run(tc.name, func(t *testing.T) {
			changed := *team
			changed.Name = tc.newName
			changed.Description = "not written"
			changed.CanManageGroupID = anon1.ID
			assert.ErrorIs(t, s.UpdateGroup(ctx, &changed, tc.columns...), storage.ErrConflict)
			assertGroup(t, s, *team, "unchanged after a conflict")
		})
	}

	// Not conflicts: anonymous groups keep their empty names, the name is
	// taken only in another realm, or by the group itself.
	anon1.Description = "first"
	require.NoError(t, s.UpdateGroup(ctx, anon1))
	require.NoError(t, s.UpdateGroup(ctx, anon2, "name", "description"))
	require.NoError(t, s.UpdateGroup(ctx, support))
	require.NoError(t, s.UpdateGroup(ctx, support, "name"))
	team.Name = "elsewhere"
	require.NoError(t, s.UpdateGroup(ctx, team, "name"))
	assertGroup(t, s, *anon1)
	assertGroup(t, s, *anon2)

	// The old name is free again.
	support.Name = "team"
	require.NoError(t, s.UpdateGroup(ctx, support, "name"))

	groups, err := s.ListGroups(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.UserGroup{*support, *team, *sys}, groups)
}

func testGroupUpdateNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	own := newGroup(t, s, realm.ID, "own")
	foreign := newGroup(t, s, other.ID, "foreign")
	foreignUser := newUser(t, s, other.ID, "foreign@example.com")

	cases := []struct {
		name  string
		group storage.UserGroup
	}{
		{"missing ID", storage.UserGroup{ID: foreign.ID + 1000, RealmID: realm.ID, Name: "x"}},
		{"other realm's group", storage.UserGroup{ID: foreign.ID, RealmID: realm.ID, Name: "x", Description: "hijacked"}},
		{"missing realm", storage.UserGroup{ID: own.ID, RealmID: other.ID + 1000, Name: "x"}},
		{"missing creator", storage.UserGroup{ID: own.ID, RealmID: realm.ID, Name: "own", CreatorID: ptr(foreignUser.ID + 1000)}},
		{"creator in another realm", storage.UserGroup{ID: own.ID, RealmID: realm.ID, Name: "own", CreatorID: ptr(foreignUser.ID)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.group
			assert.ErrorIs(t, s.UpdateGroup(ctx, &g), storage.ErrNotFound, "all columns")
			g = tc.group
			assert.ErrorIs(t, s.UpdateGroup(ctx, &g, "name", "description", "creator_id"), storage.ErrNotFound, "named columns")
		})
	}
	// Changing only columns that exist does not touch the other realm either.
	g := storage.UserGroup{ID: foreign.ID, RealmID: realm.ID, CanJoinGroupID: own.ID}
	assert.ErrorIs(t, s.UpdateGroup(ctx, &g, "can_join_group_id"), storage.ErrNotFound)

	assertGroup(t, s, *own, "unchanged")
	assertGroup(t, s, *foreign, "other realm untouched")
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
