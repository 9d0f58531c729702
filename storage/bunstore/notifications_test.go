package bunstore

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// Migration 0028 fills users.stream_notifications from the settings
// documents written before it.

func TestSQLiteUpgradeFrom0027(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	testUpgradeFrom0027(t, openOldSQLite(t, path), func() (*Store, error) { return OpenSQLite(t.Context(), path) })
}

func TestPostgresUpgradeFrom0027(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	testUpgradeFrom0027(t,
		openOldPostgres(t, dsn, schema),
		func() (*Store, error) { return OpenPostgres(t.Context(), dsn, WithSchema(schema)) })
}

func testUpgradeFrom0027(t *testing.T, openOld func() *bun.DB, open func() (*Store, error)) {
	ctx := t.Context()
	old := openOld()
	require.NoError(t, migrateDBWith(ctx, old, schemaMigrations[:27]))
	realm := oldInsert(t, old, `INSERT INTO realms (string_id, host) VALUES ('acme', 'acme.example.com')`)
	stream := oldInsert(t, old, `INSERT INTO streams (realm_id, name) VALUES (?, 'general')`, realm)
	users := map[string]int64{}
	for name, settings := range map[string]string{
		"email":   `{"enable_stream_email_notifications":true}`,
		"push":    `{"emojiset":"text","enable_stream_push_notifications":true}`,
		"off":     `{"enable_stream_email_notifications":false}`,
		"default": ``,
		"other":   `{"enable_stream_audible_notifications":true}`,
	} {
		id := oldInsert(t, old, `INSERT INTO users (realm_id, email, email_key, full_name, is_active, settings) VALUES (?, ?, ?, ?, TRUE, ?)`,
			realm, name+"@example.com", name+"@example.com", name, settings)
		_, err := old.ExecContext(ctx, `INSERT INTO subscriptions (realm_id, user_id, stream_id) VALUES (?, ?, ?)`, realm, id, stream)
		require.NoError(t, err)
		users[name] = id
	}
	require.NoError(t, old.Close())

	s, err := open()
	require.NoError(t, err, "upgrade")
	defer s.Close()
	assert.Equal(t, migrationNames(schemaMigrations), appliedMigrations(t, s.writer))
	got, err := s.ChannelNotificationCandidates(ctx, realm, stream, "any")
	require.NoError(t, err)
	assert.ElementsMatch(t, []int64{users["email"], users["push"]}, got)
}
