package bunstore

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/teamchat/chat/storage"
)

// The upgrade tests build a database at an older schema (bun's migrator
// with only the first migrations, as a binary of that version did), fill
// it through plain SQL, since the Go records have outgrown that schema,
// and check that Open applies the later migrations and keeps the data.

func TestSQLiteUpgradeFrom0001(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	testUpgradeFrom0001(t,
		openOldSQLite(t, path),
		func() (*Store, error) { return OpenSQLite(t.Context(), path) })
}

func TestPostgresUpgradeFrom0001(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	testUpgradeFrom0001(t,
		openOldPostgres(t, dsn, schema),
		func() (*Store, error) { return OpenPostgres(t.Context(), dsn, WithSchema(schema)) })
}

// schema0001Rows is what testUpgradeFrom0001 writes at schema 0001.
type schema0001Rows struct {
	realm        storage.Realm
	owner, bot   storage.User
	group        storage.UserGroup
	otherRealmID int64
}

func testUpgradeFrom0001(t *testing.T, openOld func() *bun.DB, open func() (*Store, error)) {
	ctx := t.Context()

	old := openOld()
	require.NoError(t, migrateDBWith(ctx, old, schemaMigrations[:1]))
	require.NoError(t, migrateDBWith(ctx, old, schemaMigrations[:1]), "0001 alone is idempotent too")
	rows := write0001Rows(t, old)
	assert.Equal(t, []string{"0001_initial"}, appliedMigrations(t, old))
	require.NoError(t, old.Close())

	s, err := open()
	require.NoError(t, err, "upgrade")
	check0001Rows(t, s, rows)
	assert.Equal(t, migrationNames(schemaMigrations), appliedMigrations(t, s.writer))
	useNewSchema(t, s, rows)
	require.NoError(t, s.Close())

	// Opening the upgraded database again changes nothing.
	s, err = open()
	require.NoError(t, err, "reopen")
	assert.Equal(t, len(schemaMigrations), migrationCount(t, s))
	realm, err := s.GetRealm(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.True(t, realm.EmailChangesDisabled, "kept across reopen")

	// The upgrade applied 0002 onwards as one group: rolling it back runs
	// their down migrations, newest first, and restores schema 0001 (and
	// its data); opening applies them again.
	migrator := migrate.NewMigrator(s.writer, newMigrations(schemaMigrations), migrate.WithMarkAppliedOnSuccess(true))
	group, err := migrator.Rollback(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrationNames(schemaMigrations[1:]), appliedNames(group.Migrations))
	assert.Equal(t, []string{"0001_initial"}, appliedMigrations(t, s.writer))
	var n int
	require.NoError(t, s.writer.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n))
	assert.Equal(t, 2, n)
	_, err = s.writer.ExecContext(ctx, "SELECT settings FROM users")
	assert.Error(t, err, "column dropped by the down migration of 0002")
	_, err = s.writer.ExecContext(ctx, "SELECT can_manage_group_id FROM user_groups")
	assert.Error(t, err, "column dropped by the down migration of 0003")
	assertNoChannelTables(t, s.writer)
	require.NoError(t, s.Close())

	s, err = open()
	require.NoError(t, err, "upgrade after rollback")
	defer s.Close()
	check0001Rows(t, s, rows)
	assert.Equal(t, len(schemaMigrations), migrationCount(t, s))
}

// write0001Rows writes a realm with users, a bot, a group and a member
// through the 0001 columns only.
func write0001Rows(t *testing.T, db *bun.DB) schema0001Rows {
	ctx := t.Context()
	var rows schema0001Rows
	insert := func(query string, args ...any) int64 {
		t.Helper()
		var id int64
		require.NoError(t, db.QueryRowContext(ctx, query+" RETURNING id", args...).Scan(&id), query)
		return id
	}
	rows.realm = storage.Realm{
		StringID: "acme", Name: "Acme", Description: "desc", URL: "https://acme.example.com",
		Host: "acme.example.com", DateCreated: 1_700_000_000, Deactivated: true,
		EmailAddressVisibility: 2, WaitingPeriodThreshold: 3,
	}
	messageDefaults(&rows.realm)
	r := rows.realm
	rows.realm.ID = insert(`INSERT INTO realms (string_id, name, description, url, host, date_created,
		deactivated, email_address_visibility, waiting_period_threshold) VALUES (?, ?, ?, ?, ?, ?, TRUE, ?, ?)`,
		r.StringID, r.Name, r.Description, r.URL, r.Host, r.DateCreated, r.EmailAddressVisibility, r.WaitingPeriodThreshold)
	rows.otherRealmID = insert(`INSERT INTO realms (string_id, host) VALUES ('other', 'other.example.com')`)

	rows.owner = storage.User{
		RealmID: rows.realm.ID, Email: "Owner@example.com", FullName: "Owner", Role: 100, IsActive: true,
		Timezone: "UTC", DateJoined: 1_700_000_001, PasswordHash: "hash", APIKey: "key1",
		AvatarSource: "U", AvatarVersion: 2, CanCreateUsers: true,
	}
	o := rows.owner
	rows.owner.ID = insert(`INSERT INTO users (realm_id, email, full_name, role, is_active, timezone,
		date_joined, password_hash, api_key, avatar_source, avatar_version, can_create_users)
		VALUES (?, ?, ?, ?, TRUE, ?, ?, ?, ?, ?, ?, TRUE)`,
		o.RealmID, o.Email, o.FullName, o.Role, o.Timezone, o.DateJoined, o.PasswordHash, o.APIKey, o.AvatarSource, o.AvatarVersion)
	rows.bot = storage.User{
		RealmID: rows.realm.ID, Email: "bot@example.com", Role: 400, IsActive: false, IsBot: true,
		BotType: ptr(1), BotOwnerID: ptr(rows.owner.ID), AvatarSource: "G", AvatarVersion: 1,
	}
	rows.bot.ID = insert(`INSERT INTO users (realm_id, email, is_active, is_bot, bot_type, bot_owner_id)
		VALUES (?, ?, FALSE, TRUE, 1, ?)`, rows.realm.ID, rows.bot.Email, rows.owner.ID)

	rows.group = storage.UserGroup{RealmID: rows.realm.ID, Name: "role:owners", IsSystemGroup: true}
	rows.group.ID = insert(`INSERT INTO user_groups (realm_id, name, is_system_group) VALUES (?, ?, TRUE)`,
		rows.realm.ID, rows.group.Name)
	_, err := db.ExecContext(ctx, `INSERT INTO user_group_members (realm_id, group_id, user_id) VALUES (?, ?, ?)`,
		rows.realm.ID, rows.group.ID, rows.owner.ID)
	require.NoError(t, err)
	return rows
}

// check0001Rows reads the rows back through the Store: the columns added
// later hold their zero values.
func check0001Rows(t *testing.T, s *Store, rows schema0001Rows) {
	t.Helper()
	ctx := t.Context()
	realm, err := s.GetRealmByHost(ctx, "ACME.example.com")
	require.NoError(t, err)
	assert.Equal(t, rows.realm, *realm)
	users, err := s.ListUsers(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.User{rows.owner, rows.bot}, users)
	group, err := s.GetGroupByName(ctx, rows.realm.ID, rows.group.Name)
	require.NoError(t, err)
	assert.Equal(t, rows.group, *group)
	members, err := s.GroupMembers(ctx, rows.realm.ID, rows.group.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{rows.owner.ID}, members)
}

// useNewSchema writes the new columns of the upgraded rows and new records
// referring to them.
func useNewSchema(t *testing.T, s *Store, rows schema0001Rows) {
	t.Helper()
	ctx := t.Context()

	realm := rows.realm
	realm.EmailChangesDisabled = true
	realm.CanCreateBotsGroupID = rows.group.ID
	require.NoError(t, s.UpdateRealm(ctx, &realm))
	got, err := s.GetRealm(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, realm, *got)

	owner := rows.owner
	owner.Settings = `{"a":1}`
	owner.CanChangeUserEmails = true
	require.NoError(t, s.UpdateUser(ctx, &owner, "settings", "can_change_user_emails"))
	gotUser, err := s.GetUser(ctx, owner.RealmID, owner.ID)
	require.NoError(t, err)
	assert.Equal(t, owner, *gotUser)

	d := &storage.Draft{RealmID: realm.ID, UserID: rows.bot.ID, Content: "x"}
	require.NoError(t, s.CreateDraft(ctx, d))
	f := &storage.ProfileField{RealmID: realm.ID, Name: "Phone", FieldType: 1}
	require.NoError(t, s.CreateProfileField(ctx, f))
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{
		{RealmID: realm.ID, UserID: owner.ID, FieldID: f.ID, Value: "1"},
	}))
	require.NoError(t, s.CreateEmailChange(ctx, &storage.EmailChange{RealmID: realm.ID, UserID: owner.ID, NewEmail: "n@example.org", Key: "k"}))
	err = s.CreateDraft(ctx, &storage.Draft{RealmID: rows.otherRealmID, UserID: rows.bot.ID})
	assert.ErrorIs(t, err, storage.ErrNotFound, "composite foreign keys on upgraded rows")
}

// appliedMigrations lists the migration names recorded by bun, by name.
func appliedMigrations(t *testing.T, db bun.IDB) []string {
	t.Helper()
	var names []string
	err := db.NewSelect().TableExpr("bun_migrations").Column("name").OrderExpr("name ASC").Scan(t.Context(), &names)
	require.NoError(t, err)
	return names
}

// migrationNames lists the names of ms, in order.
func migrationNames(ms []schemaMigration) []string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.name
	}
	return names
}

// appliedNames lists the names of bun's migrations ms, in order.
func appliedNames(ms migrate.MigrationSlice) []string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return names
}

func TestSQLiteUpgradeFrom0002(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	testUpgradeFrom0002(t,
		openOldSQLite(t, path),
		func() (*Store, error) { return OpenSQLite(t.Context(), path) })
}

func TestPostgresUpgradeFrom0002(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	testUpgradeFrom0002(t,
		openOldPostgres(t, dsn, schema),
		func() (*Store, error) { return OpenPostgres(t.Context(), dsn, WithSchema(schema)) })
}

// schema0002Rows is what testUpgradeFrom0002 writes at schema 0002.
type schema0002Rows struct {
	realm       storage.Realm
	creator     storage.User
	member      storage.User
	groups      []storage.UserGroup // ordered by ID: named, system, anonymous, other realm's
	memberships []storage.GroupMembership
	edges       []storage.GroupEdge
	otherRealm  int64
}

func testUpgradeFrom0002(t *testing.T, openOld func() *bun.DB, open func() (*Store, error)) {
	ctx := t.Context()

	old := openOld()
	require.NoError(t, migrateDBWith(ctx, old, schemaMigrations[:2]))
	rows := write0002Rows(t, old)
	assert.Equal(t, migrationNames(schemaMigrations[:2]), appliedMigrations(t, old))
	_, err := old.ExecContext(ctx, "SELECT can_manage_group_id FROM user_groups")
	require.Error(t, err, "no group settings at 0002")
	require.NoError(t, old.Close())

	s, err := open()
	require.NoError(t, err, "upgrade")
	assert.Equal(t, migrationNames(schemaMigrations), appliedMigrations(t, s.writer))
	check0002Rows(t, s, rows)

	// The new columns are written and read like any other.
	g := rows.groups[0]
	g.CanAddMembersGroupID = rows.groups[1].ID
	g.CanJoinGroupID = rows.groups[2].ID
	g.CanLeaveGroupID = g.ID
	g.CanManageGroupID = rows.groups[1].ID
	g.CanMentionGroupID = rows.groups[2].ID
	g.CanRemoveMembersGroupID = rows.groups[1].ID
	require.NoError(t, s.UpdateGroup(ctx, &g))
	got, err := s.GetGroup(ctx, g.RealmID, g.ID)
	require.NoError(t, err)
	assert.Equal(t, g, *got)
	anon := storage.UserGroup{RealmID: rows.realm.ID, CanManageGroupID: g.ID}
	require.NoError(t, s.CreateGroup(ctx, &anon))
	got, err = s.GetGroup(ctx, anon.RealmID, anon.ID)
	require.NoError(t, err)
	assert.Equal(t, anon, *got)
	require.NoError(t, s.Close())

	// Opening again changes nothing.
	s, err = open()
	require.NoError(t, err, "reopen")
	assert.Equal(t, len(schemaMigrations), migrationCount(t, s))
	got, err = s.GetGroup(ctx, g.RealmID, g.ID)
	require.NoError(t, err)
	assert.Equal(t, g, *got, "kept across reopen")

	// The upgrade applied 0003 onwards as one group: their down migrations
	// restore schema 0002, keeping the groups; opening applies them
	// again, settings 0.
	migrator := migrate.NewMigrator(s.writer, newMigrations(schemaMigrations), migrate.WithMarkAppliedOnSuccess(true))
	group, err := migrator.Rollback(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrationNames(schemaMigrations[2:]), appliedNames(group.Migrations))
	assert.Equal(t, migrationNames(schemaMigrations[:2]), appliedMigrations(t, s.writer))
	var n int
	require.NoError(t, s.writer.QueryRowContext(ctx, "SELECT count(*) FROM user_groups").Scan(&n))
	assert.Equal(t, len(rows.groups)+1, n)
	for _, c := range []string{"can_add_members_group_id", "can_join_group_id", "can_leave_group_id",
		"can_manage_group_id", "can_mention_group_id", "can_remove_members_group_id"} {
		_, err = s.writer.ExecContext(ctx, "SELECT "+c+" FROM user_groups")
		assert.Error(t, err, "%s dropped by the down migration", c)
	}
	assertNoChannelTables(t, s.writer)
	require.NoError(t, s.Close())

	s, err = open()
	require.NoError(t, err, "upgrade after rollback")
	defer s.Close()
	check0002Rows(t, s, rows)
	assert.Equal(t, len(schemaMigrations), migrationCount(t, s))
}

// write0002Rows writes, through the 0002 columns only, a realm whose bot
// setting names one of its groups, users, named, system and anonymous
// groups with members and subgroups, and another realm's group.
func write0002Rows(t *testing.T, db *bun.DB) schema0002Rows {
	ctx := t.Context()
	var rows schema0002Rows
	insert := func(query string, args ...any) int64 {
		t.Helper()
		var id int64
		require.NoError(t, db.QueryRowContext(ctx, query+" RETURNING id", args...).Scan(&id), query)
		return id
	}
	exec := func(query string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, query, args...)
		require.NoError(t, err, query)
	}

	rows.realm = storage.Realm{
		StringID: "acme", Name: "Acme", Host: "acme.example.com", EmailAddressVisibility: 1,
		NameChangesDisabled: true,
	}
	rows.realm.ID = insert(`INSERT INTO realms (string_id, name, host, name_changes_disabled) VALUES (?, ?, ?, TRUE)`,
		rows.realm.StringID, rows.realm.Name, rows.realm.Host)
	rows.otherRealm = insert(`INSERT INTO realms (string_id, host) VALUES ('other', 'other.example.com')`)

	rows.creator = storage.User{
		RealmID: rows.realm.ID, Email: "creator@example.com", Role: 400, IsActive: true,
		AvatarSource: "G", AvatarVersion: 1, Settings: `{"x":1}`,
	}
	rows.creator.ID = insert(`INSERT INTO users (realm_id, email, settings) VALUES (?, ?, ?)`,
		rows.realm.ID, rows.creator.Email, rows.creator.Settings)
	rows.member = storage.User{
		RealmID: rows.realm.ID, Email: "member@example.com", Role: 400, IsActive: true,
		AvatarSource: "G", AvatarVersion: 1,
	}
	rows.member.ID = insert(`INSERT INTO users (realm_id, email) VALUES (?, ?)`, rows.realm.ID, rows.member.Email)
	foreignUser := insert(`INSERT INTO users (realm_id, email) VALUES (?, 'f@example.com')`, rows.otherRealm)

	team := storage.UserGroup{
		RealmID: rows.realm.ID, Name: "team", Description: "the team",
		CreatorID: ptr(rows.creator.ID), DateCreated: ptr(int64(1_700_000_000)),
	}
	team.ID = insert(`INSERT INTO user_groups (realm_id, name, description, creator_id, date_created) VALUES (?, ?, ?, ?, ?)`,
		team.RealmID, team.Name, team.Description, *team.CreatorID, *team.DateCreated)
	sys := storage.UserGroup{RealmID: rows.realm.ID, Name: "role:members", IsSystemGroup: true, Deactivated: true}
	sys.ID = insert(`INSERT INTO user_groups (realm_id, name, is_system_group, deactivated) VALUES (?, ?, TRUE, TRUE)`,
		sys.RealmID, sys.Name)
	anon := storage.UserGroup{RealmID: rows.realm.ID}
	anon.ID = insert(`INSERT INTO user_groups (realm_id) VALUES (?)`, anon.RealmID)
	foreign := storage.UserGroup{RealmID: rows.otherRealm, Name: "team"}
	foreign.ID = insert(`INSERT INTO user_groups (realm_id, name) VALUES (?, ?)`, foreign.RealmID, foreign.Name)
	rows.groups = []storage.UserGroup{team, sys, anon, foreign}

	rows.realm.CanCreateBotsGroupID = anon.ID
	exec(`UPDATE realms SET can_create_bots_group_id = ? WHERE id = ?`, anon.ID, rows.realm.ID)
	// Migration 0013's defaults: role:members where the reference has it.
	messageDefaults(&rows.realm)
	rows.realm.CanAddCustomEmojiGroupID, rows.realm.CanMoveMessagesBetweenChannelsGroupID = sys.ID, sys.ID
	// Migration 0022's: role:members may send email invitations.
	rows.realm.CanInviteUsersGroupID = sys.ID

	member := func(realmID, groupID, userID int64) {
		exec(`INSERT INTO user_group_members (realm_id, group_id, user_id) VALUES (?, ?, ?)`, realmID, groupID, userID)
	}
	member(rows.realm.ID, anon.ID, rows.member.ID)
	member(rows.realm.ID, team.ID, rows.member.ID)
	member(rows.realm.ID, team.ID, rows.creator.ID)
	member(rows.otherRealm, foreign.ID, foreignUser)
	rows.memberships = []storage.GroupMembership{
		{GroupID: team.ID, UserID: rows.creator.ID},
		{GroupID: team.ID, UserID: rows.member.ID},
		{GroupID: anon.ID, UserID: rows.member.ID},
	}
	subgroup := func(realmID, groupID, subgroupID int64) {
		exec(`INSERT INTO user_group_subgroups (realm_id, group_id, subgroup_id) VALUES (?, ?, ?)`, realmID, groupID, subgroupID)
	}
	subgroup(rows.realm.ID, sys.ID, team.ID)
	subgroup(rows.realm.ID, anon.ID, sys.ID)
	subgroup(rows.realm.ID, anon.ID, team.ID)
	rows.edges = []storage.GroupEdge{
		{GroupID: sys.ID, SubgroupID: team.ID},
		{GroupID: anon.ID, SubgroupID: team.ID},
		{GroupID: anon.ID, SubgroupID: sys.ID},
	}
	return rows
}

// check0002Rows reads the rows back through the Store: the groups'
// settings added by 0003 are 0 (not set), everything else is kept.
func check0002Rows(t *testing.T, s *Store, rows schema0002Rows) {
	t.Helper()
	ctx := t.Context()
	realm, err := s.GetRealm(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.Equal(t, rows.realm, *realm)
	users, err := s.ListUsers(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.User{rows.creator, rows.member}, users)
	for _, want := range rows.groups {
		got, err := s.GetGroup(ctx, want.RealmID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, want, *got)
	}
	groups, err := s.ListGroups(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.Equal(t, rows.groups[:2], groups)
	memberships, err := s.ListGroupMemberships(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.Equal(t, rows.memberships, memberships)
	edges, err := s.ListGroupEdges(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.Equal(t, rows.edges, edges)
}

// assertNoChannelTables checks that the tables of 0004 do not exist.
func assertNoChannelTables(t *testing.T, db bun.IDB) {
	t.Helper()
	for _, table := range []string{"streams", "subscriptions", "subscription_periods", "user_topics"} {
		_, err := db.ExecContext(t.Context(), "SELECT count(*) FROM "+table)
		assert.Error(t, err, "no table %s", table)
	}
}

func TestSQLiteUpgradeFrom0003(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	testUpgradeFrom0003(t,
		openOldSQLite(t, path),
		func() (*Store, error) { return OpenSQLite(t.Context(), path) })
}

func TestPostgresUpgradeFrom0003(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	testUpgradeFrom0003(t,
		openOldPostgres(t, dsn, schema),
		func() (*Store, error) { return OpenPostgres(t.Context(), dsn, WithSchema(schema)) })
}

// schema0003Rows is what testUpgradeFrom0003 writes at schema 0003.
type schema0003Rows struct {
	realm        storage.Realm
	creator      storage.User
	member       storage.User
	group        storage.UserGroup
	otherRealm   int64
	foreignUser  int64
	foreignGroup int64
}

// channelRows is what useChannels writes through the upgraded Store.
type channelRows struct {
	stream  storage.Stream
	sub     storage.Subscription
	periods []storage.SubscriptionPeriod
	topics  []storage.UserTopic
}

func testUpgradeFrom0003(t *testing.T, openOld func() *bun.DB, open func() (*Store, error)) {
	ctx := t.Context()

	old := openOld()
	require.NoError(t, migrateDBWith(ctx, old, schemaMigrations[:3]))
	rows := write0003Rows(t, old)
	assert.Equal(t, migrationNames(schemaMigrations[:3]), appliedMigrations(t, old))
	assertNoChannelTables(t, old)
	require.NoError(t, old.Close())

	s, err := open()
	require.NoError(t, err, "upgrade")
	assert.Equal(t, migrationNames(schemaMigrations), appliedMigrations(t, s.writer))
	check0003Rows(t, s, rows)
	channels := useChannels(t, s, rows)
	require.NoError(t, s.Close())

	// Opening again changes nothing.
	s, err = open()
	require.NoError(t, err, "reopen")
	assert.Equal(t, len(schemaMigrations), migrationCount(t, s))
	check0003Rows(t, s, rows)
	checkChannels(t, s, channels)

	// 0004 and 0005 were the last group: their down migrations drop the
	// key columns and the four tables and keep the rest; opening creates
	// them again, empty.
	migrator := migrate.NewMigrator(s.writer, newMigrations(schemaMigrations), migrate.WithMarkAppliedOnSuccess(true))
	group, err := migrator.Rollback(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrationNames(schemaMigrations[3:]), appliedNames(group.Migrations))
	assert.Equal(t, migrationNames(schemaMigrations[:3]), appliedMigrations(t, s.writer))
	assertNoChannelTables(t, s.writer)
	var n int
	require.NoError(t, s.writer.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n))
	assert.Equal(t, 3, n)
	require.NoError(t, s.Close())

	s, err = open()
	require.NoError(t, err, "upgrade after rollback")
	defer s.Close()
	assert.Equal(t, len(schemaMigrations), migrationCount(t, s))
	check0003Rows(t, s, rows)
	streams, err := s.ListStreams(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.Empty(t, streams)
	useChannels(t, s, rows)
}

// write0003Rows writes, through the 0003 columns only, a realm with two
// users and a group with settings, and another realm with a user and a
// group.
func write0003Rows(t *testing.T, db *bun.DB) schema0003Rows {
	ctx := t.Context()
	var rows schema0003Rows
	insert := func(query string, args ...any) int64 {
		t.Helper()
		var id int64
		require.NoError(t, db.QueryRowContext(ctx, query+" RETURNING id", args...).Scan(&id), query)
		return id
	}

	rows.realm = storage.Realm{StringID: "acme", Name: "Acme", Host: "acme.example.com", EmailAddressVisibility: 1}
	rows.realm.ID = insert(`INSERT INTO realms (string_id, name, host) VALUES (?, ?, ?)`,
		rows.realm.StringID, rows.realm.Name, rows.realm.Host)
	rows.otherRealm = insert(`INSERT INTO realms (string_id, host) VALUES ('other', 'other.example.com')`)

	rows.creator = storage.User{
		RealmID: rows.realm.ID, Email: "creator@example.com", Role: 200, IsActive: true,
		AvatarSource: "G", AvatarVersion: 1, Settings: `{"x":1}`,
	}
	rows.creator.ID = insert(`INSERT INTO users (realm_id, email, role, settings) VALUES (?, ?, ?, ?)`,
		rows.realm.ID, rows.creator.Email, rows.creator.Role, rows.creator.Settings)
	rows.member = storage.User{
		RealmID: rows.realm.ID, Email: "member@example.com", Role: 400, IsActive: true,
		AvatarSource: "G", AvatarVersion: 1,
	}
	rows.member.ID = insert(`INSERT INTO users (realm_id, email) VALUES (?, ?)`, rows.realm.ID, rows.member.Email)
	rows.foreignUser = insert(`INSERT INTO users (realm_id, email) VALUES (?, 'f@example.com')`, rows.otherRealm)

	rows.group = storage.UserGroup{RealmID: rows.realm.ID, Name: "role:administrators", IsSystemGroup: true}
	rows.group.ID = insert(`INSERT INTO user_groups (realm_id, name, is_system_group) VALUES (?, ?, TRUE)`,
		rows.group.RealmID, rows.group.Name)
	rows.group.CanManageGroupID = rows.group.ID
	// Migration 0010 gives the realm its role:administrators group as
	// can_mention_many_users_group.
	rows.realm.CanMentionManyUsersGroupID = rows.group.ID
	// Migration 0013 gives it the reference's message-action defaults
	// (the groups other than role:administrators do not exist here).
	rows.realm.CanDeleteAnyMessageGroupID = rows.group.ID
	// Migration 0022 makes it create_multiuse_invite_group (role:members,
	// the default of can_invite_users_group, does not exist here).
	rows.realm.CreateMultiuseInviteGroupID = rows.group.ID
	messageDefaults(&rows.realm)
	_, err := db.ExecContext(ctx, `UPDATE user_groups SET can_manage_group_id = ? WHERE id = ?`, rows.group.ID, rows.group.ID)
	require.NoError(t, err)
	rows.foreignGroup = insert(`INSERT INTO user_groups (realm_id, name) VALUES (?, 'team')`, rows.otherRealm)
	return rows
}

// check0003Rows reads the rows of write0003Rows back through the Store.
func check0003Rows(t *testing.T, s *Store, rows schema0003Rows) {
	t.Helper()
	ctx := t.Context()
	realm, err := s.GetRealm(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.Equal(t, rows.realm, *realm)
	users, err := s.ListUsers(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.User{rows.creator, rows.member}, users)
	group, err := s.GetGroup(ctx, rows.group.RealmID, rows.group.ID)
	require.NoError(t, err)
	assert.Equal(t, rows.group, *group)
}

// useChannels writes a channel created by an upgraded user, a
// subscription with two periods and topic policies, and checks that the
// new tables' foreign keys refer to the upgraded rows of the realm only.
func useChannels(t *testing.T, s *Store, rows schema0003Rows) channelRows {
	t.Helper()
	ctx := t.Context()
	var ch channelRows
	realmID := rows.realm.ID

	ch.stream = storage.Stream{
		RealmID: realmID, Name: "General", CreatorID: ptr(rows.creator.ID), DateCreated: 1_700_000_000,
		MessageRetentionDays: ptr(-1), HistoryPublicToSubscribers: true,
		CanAdministerChannelGroupID: rows.group.ID, CanSubscribeGroupID: rows.group.ID,
	}
	require.NoError(t, s.CreateStream(ctx, &ch.stream))
	ch.stream.FirstMessageID = ptr(int64(7))
	require.NoError(t, s.UpdateStream(ctx, &ch.stream, "first_message_id"))
	err := s.CreateStream(ctx, &storage.Stream{RealmID: realmID, Name: "general"})
	assert.ErrorIs(t, err, storage.ErrConflict, "case-insensitive name index")
	err = s.CreateStream(ctx, &storage.Stream{RealmID: realmID, Name: "x", CreatorID: ptr(rows.foreignUser)})
	assert.ErrorIs(t, err, storage.ErrNotFound, "creator of another realm")

	ch.sub = storage.Subscription{RealmID: realmID, UserID: rows.member.ID, StreamID: ch.stream.ID, Color: "#aaaaaa", EmailNotifications: ptr(false)}
	require.NoError(t, s.Subscribe(ctx, &ch.sub, 100))
	require.NoError(t, s.Unsubscribe(ctx, realmID, rows.member.ID, ch.stream.ID, 200))
	require.NoError(t, s.Subscribe(ctx, &storage.Subscription{RealmID: realmID, UserID: rows.member.ID, StreamID: ch.stream.ID}, 300))
	err = s.Subscribe(ctx, &storage.Subscription{RealmID: realmID, UserID: rows.foreignUser, StreamID: ch.stream.ID}, 1)
	assert.ErrorIs(t, err, storage.ErrNotFound, "subscriber of another realm")
	ch.periods, err = s.ListSubscriptionPeriods(ctx, realmID, rows.member.ID, ch.stream.ID)
	require.NoError(t, err)
	require.Len(t, ch.periods, 2)

	for _, topic := range []string{"lunch", "LUNCH", "Agenda"} {
		require.NoError(t, s.SetUserTopic(ctx, &storage.UserTopic{RealmID: realmID, UserID: rows.creator.ID, StreamID: ch.stream.ID, TopicName: topic, VisibilityPolicy: 1, LastUpdated: 5}))
	}
	err = s.SetUserTopic(ctx, &storage.UserTopic{RealmID: realmID, UserID: rows.foreignUser, StreamID: ch.stream.ID, TopicName: "x"})
	assert.ErrorIs(t, err, storage.ErrNotFound, "user of another realm")
	ch.topics, err = s.ListUserTopics(ctx, realmID, rows.creator.ID)
	require.NoError(t, err)
	require.Len(t, ch.topics, 2)
	assert.Equal(t, "LUNCH", ch.topics[1].TopicName)

	checkChannels(t, s, ch)
	return ch
}

// checkChannels reads the rows of useChannels back.
func checkChannels(t *testing.T, s *Store, ch channelRows) {
	t.Helper()
	ctx := t.Context()
	got, err := s.GetStreamByName(ctx, ch.stream.RealmID, "GENERAL")
	require.NoError(t, err)
	assert.Equal(t, ch.stream, *got)
	subs, err := s.ListRealmSubscriptions(ctx, ch.stream.RealmID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Subscription{ch.sub}, subs)
	periods, err := s.ListSubscriptionPeriods(ctx, ch.sub.RealmID, ch.sub.UserID, ch.sub.StreamID)
	require.NoError(t, err)
	assert.Equal(t, ch.periods, periods)
	topics, err := s.ListUserTopics(ctx, ch.stream.RealmID, ch.topics[0].UserID)
	require.NoError(t, err)
	assert.Equal(t, ch.topics, topics)
}

// messageDefaults sets the values migration 0013 gives an existing
// organization's message-action settings.
func messageDefaults(r *storage.Realm) {
	r.AllowMessageEditing, r.EnableReadReceipts = true, true
	r.MessageContentEditLimitSeconds = new(int64(600))
	r.MoveMessagesWithinStreamLimitSeconds = new(int64(604800))
	r.MoveMessagesBetweenStreamsLimitSeconds = new(int64(604800))
	r.MessageEditHistoryVisibilityPolicy = 1
}
