package storagetest

import (
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
