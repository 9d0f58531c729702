package bunstore

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/migrate"

	"github.com/teamchat/chat/storage"
)

// The upgrade tests build a database at schema 0001 (bun's migrator with
// only the first migration, as a binary of that version did), fill it
// through plain SQL, since the Go records have outgrown that schema, and
// check that Open applies the later migrations and keeps the data.

func TestSQLiteUpgradeFrom0001(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	testUpgradeFrom0001(t,
		func() *bun.DB {
			sqldb, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=1&_journal_mode=WAL")
			require.NoError(t, err)
			sqldb.SetMaxOpenConns(1)
			return bun.NewDB(sqldb, sqlitedialect.New())
		},
		func() (*Store, error) { return OpenSQLite(t.Context(), path) })
}

func TestPostgresUpgradeFrom0001(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	testUpgradeFrom0001(t,
		func() *bun.DB {
			connector, err := newPostgresConnector(dsn, postgresConfig{schema: schema})
			require.NoError(t, err)
			return bun.NewDB(sql.OpenDB(connector), pgdialect.New())
		},
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
	assert.Equal(t, []string{"0001_initial", "0002_users_settings_drafts_profile_fields"}, appliedMigrations(t, s.writer))
	useNewSchema(t, s, rows)
	require.NoError(t, s.Close())

	// Opening the upgraded database again changes nothing.
	s, err = open()
	require.NoError(t, err, "reopen")
	assert.Equal(t, len(schemaMigrations), migrationCount(t, s))
	realm, err := s.GetRealm(ctx, rows.realm.ID)
	require.NoError(t, err)
	assert.True(t, realm.EmailChangesDisabled, "kept across reopen")

	// 0002's down migration restores schema 0001 (and its data); opening
	// applies 0002 again.
	migrator := migrate.NewMigrator(s.writer, newMigrations(schemaMigrations), migrate.WithMarkAppliedOnSuccess(true))
	group, err := migrator.Rollback(ctx)
	require.NoError(t, err)
	require.Len(t, group.Migrations, 1)
	assert.Equal(t, "0002_users_settings_drafts_profile_fields", group.Migrations[0].Name)
	var n int
	require.NoError(t, s.writer.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n))
	assert.Equal(t, 2, n)
	_, err = s.writer.ExecContext(ctx, "SELECT settings FROM users")
	assert.Error(t, err, "column dropped by the down migration")
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
