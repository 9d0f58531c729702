package bunstore

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// Migration 0031 marks the Notification Bot made before it (on a first
// edit, at notification-bot@<host>, in the role groups) as an internal
// bot: at the internal domain, in no group. A user's own bot that happens
// to be called notification-bot keeps its place.

func TestSQLiteUpgradeSystemBots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	testUpgradeSystemBots(t, openOldSQLite(t, path), func() (*Store, error) { return OpenSQLite(t.Context(), path) })
}

func TestPostgresUpgradeSystemBots(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	testUpgradeSystemBots(t,
		openOldPostgres(t, dsn, schema),
		func() (*Store, error) { return OpenPostgres(t.Context(), dsn, WithSchema(schema)) })
}

// migrationsBefore is every migration older than the named one.
func migrationsBefore(t *testing.T, name string) []schemaMigration {
	i := slices.IndexFunc(schemaMigrations, func(m schemaMigration) bool { return strings.HasPrefix(m.name, name) })
	require.GreaterOrEqual(t, i, 0, name)
	return schemaMigrations[:i]
}

func testUpgradeSystemBots(t *testing.T, openOld func() *bun.DB, open func() (*Store, error)) {
	ctx := t.Context()
	old := openOld()
	require.NoError(t, migrateDBWith(ctx, old, migrationsBefore(t, "0031_")))
	realm := oldInsert(t, old, `INSERT INTO realms (string_id, host) VALUES ('acme', 'acme.example.com')`)
	owner := oldInsert(t, old, `INSERT INTO users (realm_id, email, email_key, full_name, role) VALUES (?, 'boss@acme.example.com', 'boss@acme.example.com', 'Boss', 100)`, realm)
	bot := oldInsert(t, old, `INSERT INTO users (realm_id, email, email_key, full_name, is_bot, bot_type) VALUES (?, 'notification-bot@acme.example.com', 'notification-bot@acme.example.com', 'Notification Bot', TRUE, 1)`, realm)
	// Another realm's user bot with the same local part, owned by someone.
	other := oldInsert(t, old, `INSERT INTO realms (string_id, host) VALUES ('other', 'other.example.com')`)
	otherOwner := oldInsert(t, old, `INSERT INTO users (realm_id, email, email_key, full_name) VALUES (?, 'o@other.example.com', 'o@other.example.com', 'O')`, other)
	userBot := oldInsert(t, old, `INSERT INTO users (realm_id, email, email_key, full_name, is_bot, bot_type, bot_owner_id) VALUES (?, 'notification-bot@other.example.com', 'notification-bot@other.example.com', 'Notification Bot', TRUE, 1, ?)`, other, otherOwner)
	group := oldInsert(t, old, `INSERT INTO user_groups (realm_id, name, is_system_group) VALUES (?, 'role:members', TRUE)`, realm)
	for _, u := range []int64{owner, bot} {
		_, err := old.ExecContext(ctx, `INSERT INTO user_group_members (realm_id, group_id, user_id) VALUES (?, ?, ?)`, realm, group, u)
		require.NoError(t, err)
	}
	require.NoError(t, old.Close())

	s, err := open()
	require.NoError(t, err, "upgrade")
	defer s.Close()
	u, err := s.GetUser(ctx, realm, bot)
	require.NoError(t, err)
	assert.True(t, u.IsSystemBot)
	assert.Equal(t, "notification-bot@teamchat.internal", u.Email)
	byEmail, err := s.GetUserByEmail(ctx, realm, "Notification-Bot@teamchat.internal")
	require.NoError(t, err)
	assert.Equal(t, bot, byEmail.ID)
	members, err := s.GroupMembers(ctx, realm, group)
	require.NoError(t, err)
	assert.Equal(t, []int64{owner}, members)
	kept, err := s.GetUser(ctx, other, userBot)
	require.NoError(t, err)
	assert.False(t, kept.IsSystemBot)
	assert.Equal(t, "notification-bot@other.example.com", kept.Email)
}
