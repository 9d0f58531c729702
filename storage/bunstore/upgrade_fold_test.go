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

	"github.com/teamchat/chat/storage"
)

// Migration 0005 folds the existing names into their key columns.

func TestSQLiteUpgradeFrom0004(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	testUpgradeFrom0004(t, openOldSQLite(t, path), func() (*Store, error) { return OpenSQLite(t.Context(), path) })
}

func TestPostgresUpgradeFrom0004(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	testUpgradeFrom0004(t,
		openOldPostgres(t, dsn, schema),
		func() (*Store, error) { return OpenPostgres(t.Context(), dsn, WithSchema(schema)) })
}

func openOldSQLite(t *testing.T, path string) func() *bun.DB {
	return func() *bun.DB {
		sqldb, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=1&_journal_mode=WAL")
		require.NoError(t, err)
		sqldb.SetMaxOpenConns(1)
		return bun.NewDB(sqldb, sqlitedialect.New())
	}
}

func openOldPostgres(t *testing.T, dsn, schema string) func() *bun.DB {
	return func() *bun.DB {
		connector, err := newPostgresConnector(dsn, postgresConfig{schema: schema})
		require.NoError(t, err)
		return bun.NewDB(sql.OpenDB(connector), pgdialect.New())
	}
}

// oldInsert runs an INSERT ... RETURNING id on an old-schema database.
func oldInsert(t *testing.T, db *bun.DB, query string, args ...any) int64 {
	t.Helper()
	var id int64
	require.NoError(t, db.QueryRowContext(t.Context(), query+" RETURNING id", args...).Scan(&id), query)
	return id
}

func testUpgradeFrom0004(t *testing.T, openOld func() *bun.DB, open func() (*Store, error)) {
	ctx := t.Context()
	old := openOld()
	require.NoError(t, migrateDBWith(ctx, old, schemaMigrations[:4]))
	realm := oldInsert(t, old, `INSERT INTO realms (string_id, host) VALUES ('acme', 'acme.example.com')`)
	user := oldInsert(t, old, `INSERT INTO users (realm_id, email, full_name) VALUES (?, 'Élodie@Exämple.com', 'Élodie Ürban')`, realm)
	stream := oldInsert(t, old, `INSERT INTO streams (realm_id, name) VALUES (?, 'Équipe')`, realm)
	field := oldInsert(t, old, `INSERT INTO custom_profile_fields (realm_id, name, field_type) VALUES (?, 'Développeur', 1)`, realm)
	_, err := old.ExecContext(ctx, `INSERT INTO user_topics (realm_id, user_id, stream_id, topic_name, visibility_policy, last_updated) VALUES (?, ?, ?, 'Été', 1, 5)`,
		realm, user, stream)
	require.NoError(t, err)
	require.NoError(t, old.Close())

	s, err := open()
	require.NoError(t, err, "upgrade")
	defer s.Close()
	assert.Equal(t, migrationNames(schemaMigrations), appliedMigrations(t, s.writer))

	got, err := s.GetUserByEmail(ctx, realm, "ÉLODIE@EXÄMPLE.COM")
	require.NoError(t, err, "found by the folded key")
	assert.Equal(t, user, got.ID)
	assert.ErrorIs(t, s.CreateUser(ctx, &storage.User{RealmID: realm, Email: "élodie@exämple.com"}), storage.ErrConflict)
	// Migration 0010 folds full names too.
	byName, err := s.FindUsers(ctx, realm, storage.UserFilter{FullNames: []string{"ÉLODIE üRBAN"}})
	require.NoError(t, err)
	require.Len(t, byName, 1)
	assert.Equal(t, user, byName[0].ID)

	ch, err := s.GetStreamByName(ctx, realm, "ÉQUIPE")
	require.NoError(t, err)
	assert.Equal(t, stream, ch.ID)
	assert.ErrorIs(t, s.CreateStream(ctx, &storage.Stream{RealmID: realm, Name: "équipe"}), storage.ErrConflict)

	assert.ErrorIs(t, s.CreateProfileField(ctx, &storage.ProfileField{RealmID: realm, Name: "DÉVELOPPEUR", FieldType: 1}), storage.ErrConflict)
	fields, err := s.ListProfileFields(ctx, realm)
	require.NoError(t, err)
	require.Len(t, fields, 1)
	assert.Equal(t, field, fields[0].ID)

	require.NoError(t, s.SetUserTopic(ctx, &storage.UserTopic{RealmID: realm, UserID: user, StreamID: stream, TopicName: "ÉTÉ", VisibilityPolicy: 2, LastUpdated: 6}))
	topics, err := s.ListUserTopics(ctx, realm, user)
	require.NoError(t, err)
	require.Len(t, topics, 1, "the old row was matched by its folded key and replaced")
	assert.Equal(t, "ÉTÉ", topics[0].TopicName)
}

// On SQLite (and on PostgreSQL databases whose locale folds only ASCII),
// lower() kept "É..." and "é..." apart, so both could exist before 0005.
// The migration then stops, names them, and leaves the database as it was.
func TestSQLiteUpgradeFrom0004RefusesFoldedDuplicates(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "chat.db")
	old := openOldSQLite(t, path)()
	require.NoError(t, migrateDBWith(ctx, old, schemaMigrations[:4]))
	realm := oldInsert(t, old, `INSERT INTO realms (string_id, host) VALUES ('acme', 'acme.example.com')`)
	oldInsert(t, old, `INSERT INTO streams (realm_id, name) VALUES (?, 'Équipe')`, realm)
	oldInsert(t, old, `INSERT INTO streams (realm_id, name) VALUES (?, 'équipe')`, realm)
	require.NoError(t, old.Close())

	_, err := OpenSQLite(ctx, path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `streams: name values that differ only in the case of non-ASCII letters`)
	assert.Contains(t, err.Error(), `"Équipe" and "équipe"`)

	old = openOldSQLite(t, path)()
	defer old.Close()
	assert.Equal(t, migrationNames(schemaMigrations[:4]), appliedMigrations(t, old), "0005 rolled back")
	_, err = old.ExecContext(ctx, "UPDATE streams SET name = 'Équipe 2' WHERE name = 'équipe'")
	require.NoError(t, err)
	require.NoError(t, old.Close())
	s, err := OpenSQLite(ctx, path)
	require.NoError(t, err, "upgrades once the names differ")
	require.NoError(t, s.Close())
}

// Migration 0007 indexes the messages already there.
func TestSQLiteUpgradeFrom0006(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	testUpgradeFrom0006(t, openOldSQLite(t, path), func() (*Store, error) { return OpenSQLite(t.Context(), path) })
}

func TestPostgresUpgradeFrom0006(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	testUpgradeFrom0006(t, openOldPostgres(t, dsn, schema),
		func() (*Store, error) { return OpenPostgres(t.Context(), dsn, WithSchema(schema)) })
}

func testUpgradeFrom0006(t *testing.T, openOld func() *bun.DB, open func() (*Store, error)) {
	ctx := t.Context()
	old := openOld()
	require.NoError(t, migrateDBWith(ctx, old, schemaMigrations[:6]))
	realm := oldInsert(t, old, `INSERT INTO realms (string_id, host) VALUES ('acme', 'acme.example.com')`)
	user := oldInsert(t, old, `INSERT INTO users (realm_id, email, email_key) VALUES (?, 'a@example.com', 'a@example.com')`, realm)
	stream := oldInsert(t, old, `INSERT INTO streams (realm_id, name, name_key) VALUES (?, 'general', 'general')`, realm)
	msg := oldInsert(t, old, `INSERT INTO messages (realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent)
		VALUES (?, ?, ?, 'Été', 'été', 'x', '<p>Old <em>news</em></p>', 1)`, realm, user, stream)
	everyone := oldInsert(t, old, `INSERT INTO user_groups (realm_id, name, is_system_group) VALUES (?, 'role:everyone', TRUE)`, realm)
	require.NoError(t, old.Close())

	s, err := open()
	require.NoError(t, err, "upgrade")
	defer s.Close()
	r, err := s.GetRealm(ctx, realm)
	require.NoError(t, err)
	assert.Equal(t, everyone, r.DirectMessagePermissionGroupID, "0009: the reference's default, role:everyone")
	assert.Equal(t, everyone, r.DirectMessageInitiatorGroupID)
	for _, q := range []string{"news", "ÉTÉ old"} {
		older, _, err := s.ListMessageWindow(ctx, storage.MessageWindow{RealmID: realm, UserID: user,
			Scope: storage.MessageScope{FullChannels: []int64{stream}}, Filter: storage.MessageFilter{Search: q}, Anchor: 1 << 62, Before: 10})
		require.NoError(t, err)
		require.Len(t, older, 1, q)
		assert.Equal(t, msg, older[0].ID)
	}
}
