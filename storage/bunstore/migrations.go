package bunstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

// Migrations are SQL text written for this schema version, never generated
// from the Go models: the models will change, an applied migration must not.
// Each migration is a list of statements; {{NAME}} tokens are replaced per
// dialect by ddlTokens. Add a migration by appending to schemaMigrations
// with the next number; never edit one that has shipped.
var schemaMigrations = []schemaMigration{
	{name: "0001_initial", up: migration0001Up, down: migration0001Down},
	{name: "0002_users_settings_drafts_profile_fields", up: migration0002Up, down: migration0002Down},
	{name: "0003_user_group_settings", up: migration0003Up, down: migration0003Down},
	{name: "0004_channels", up: migration0004Up, down: migration0004Down},
}

type schemaMigration struct {
	name     string // sorted lexically by bun: keep the zero-padded prefix
	up, down []string
}

// ddlTokens is the whole of the per-dialect DDL difference.
var ddlTokens = map[dialect.Name]*strings.Replacer{
	dialect.SQLite: strings.NewReplacer(
		"{{ID}}", "INTEGER PRIMARY KEY AUTOINCREMENT",
	),
	dialect.PG: strings.NewReplacer(
		"{{ID}}", "BIGSERIAL PRIMARY KEY",
	),
}

// Every table carries realm_id. (realm_id, id) is unique in users and
// user_groups so that references from rows of the same realm are composite
// foreign keys: a row can never point at another realm's user or group.
var migration0001Up = []string{
	`CREATE TABLE realms (
	id {{ID}},
	string_id TEXT NOT NULL,
	name TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	url TEXT NOT NULL DEFAULT '',
	host TEXT NOT NULL,
	date_created BIGINT NOT NULL DEFAULT 0,
	deactivated BOOLEAN NOT NULL DEFAULT FALSE,
	email_address_visibility INTEGER NOT NULL DEFAULT 1,
	waiting_period_threshold INTEGER NOT NULL DEFAULT 0,
	CONSTRAINT realms_string_id_key UNIQUE (string_id)
)`,
	`CREATE UNIQUE INDEX realms_host_lower_key ON realms (lower(host))`,

	`CREATE TABLE users (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	email TEXT NOT NULL,
	full_name TEXT NOT NULL DEFAULT '',
	role INTEGER NOT NULL DEFAULT 400,
	is_active BOOLEAN NOT NULL DEFAULT TRUE,
	is_bot BOOLEAN NOT NULL DEFAULT FALSE,
	bot_type INTEGER,
	bot_owner_id BIGINT,
	timezone TEXT NOT NULL DEFAULT '',
	date_joined BIGINT NOT NULL DEFAULT 0,
	password_hash TEXT NOT NULL DEFAULT '',
	api_key TEXT NOT NULL DEFAULT '',
	avatar_source TEXT NOT NULL DEFAULT 'G',
	avatar_version INTEGER NOT NULL DEFAULT 1,
	can_create_users BOOLEAN NOT NULL DEFAULT FALSE,
	CONSTRAINT users_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT users_bot_owner_fkey FOREIGN KEY (realm_id, bot_owner_id)
		REFERENCES users (realm_id, id)
)`,
	`CREATE UNIQUE INDEX users_realm_email_lower_key ON users (realm_id, lower(email))`,
	`CREATE INDEX users_bot_owner_idx ON users (realm_id, bot_owner_id) WHERE bot_owner_id IS NOT NULL`,

	`CREATE TABLE user_groups (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	name TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	is_system_group BOOLEAN NOT NULL DEFAULT FALSE,
	creator_id BIGINT,
	date_created BIGINT,
	deactivated BOOLEAN NOT NULL DEFAULT FALSE,
	CONSTRAINT user_groups_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT user_groups_creator_fkey FOREIGN KEY (realm_id, creator_id)
		REFERENCES users (realm_id, id)
)`,
	// Anonymous groups (name '') are exempt from name uniqueness.
	`CREATE UNIQUE INDEX user_groups_realm_name_key ON user_groups (realm_id, name) WHERE name <> ''`,
	`CREATE INDEX user_groups_creator_idx ON user_groups (realm_id, creator_id) WHERE creator_id IS NOT NULL`,

	`CREATE TABLE user_group_members (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	group_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	PRIMARY KEY (group_id, user_id),
	CONSTRAINT user_group_members_group_fkey FOREIGN KEY (realm_id, group_id)
		REFERENCES user_groups (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT user_group_members_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
)`,
	`CREATE INDEX user_group_members_user_idx ON user_group_members (realm_id, user_id, group_id)`,

	`CREATE TABLE user_group_subgroups (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	group_id BIGINT NOT NULL,
	subgroup_id BIGINT NOT NULL,
	PRIMARY KEY (group_id, subgroup_id),
	CONSTRAINT user_group_subgroups_group_fkey FOREIGN KEY (realm_id, group_id)
		REFERENCES user_groups (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT user_group_subgroups_subgroup_fkey FOREIGN KEY (realm_id, subgroup_id)
		REFERENCES user_groups (realm_id, id) ON DELETE CASCADE
)`,
	`CREATE INDEX user_group_subgroups_subgroup_idx ON user_group_subgroups (realm_id, subgroup_id, group_id)`,
}

var migration0001Down = []string{
	`DROP TABLE user_group_subgroups`,
	`DROP TABLE user_group_members`,
	`DROP TABLE user_groups`,
	`DROP TABLE users`,
	`DROP TABLE realms`,
}

// Migration 0002 adds realm and user settings, drafts, custom profile
// fields and pending email changes.
//
// Existing tables grow with ALTER TABLE ... ADD COLUMN, one column per
// statement (SQLite accepts no more). SQLite only adds a column whose
// default is a constant, and a NOT NULL column only with a non-NULL
// default; it cannot add a table constraint (a composite foreign key)
// at all, and a column REFERENCES clause only with a NULL default. So
// every added column is NOT NULL with a constant default and no
// constraint; existing rows take the default, which is also the zero
// value of the Go field, so rows written before the upgrade read back as
// if written with the zero value.
//
// The realm's bot-creation group settings are BIGINT NOT NULL DEFAULT 0
// without a foreign key: the contract spells "not set" as 0, which bun
// writes as 0 (the record tags have no nullzero), and a reference from
// realms to user_groups would have to be the composite
// (id, group) -> user_groups (realm_id, id) to keep realms apart, which
// SQLite can only add by rebuilding the realms table (other tables refer
// to it, so that needs foreign keys off, impossible inside the migration's
// transaction). The store therefore does not check these IDs: the caller
// must write only 0 or the ID of a group of the same realm.
//
// users.settings defaults to the empty string, not '{}', so that the
// column round-trips exactly what was written (the contract reads an empty
// string as {}).
//
// The new tables follow 0001: realm_id on every row, (realm_id, id)
// unique where other rows refer to the table, composite foreign keys on
// (realm_id, ...) so no row can point into another realm, ON DELETE
// CASCADE from a user or field to the rows that belong to it, and an
// index on every referencing column list (SQLite scans the child table
// on a parent delete otherwise; PostgreSQL does not index them itself).
var migration0002Up = []string{
	`ALTER TABLE realms ADD COLUMN name_changes_disabled BOOLEAN NOT NULL DEFAULT FALSE`,
	`ALTER TABLE realms ADD COLUMN email_changes_disabled BOOLEAN NOT NULL DEFAULT FALSE`,
	`ALTER TABLE realms ADD COLUMN can_create_bots_group_id BIGINT NOT NULL DEFAULT 0`,
	`ALTER TABLE realms ADD COLUMN can_create_write_only_bots_group_id BIGINT NOT NULL DEFAULT 0`,

	`ALTER TABLE users ADD COLUMN can_change_user_emails BOOLEAN NOT NULL DEFAULT FALSE`,
	`ALTER TABLE users ADD COLUMN settings TEXT NOT NULL DEFAULT ''`,

	// "type" and "timestamp" are quoted: both are keywords in PostgreSQL.
	`CREATE TABLE drafts (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	"type" TEXT NOT NULL DEFAULT '',
	recipients TEXT NOT NULL DEFAULT '',
	topic TEXT NOT NULL DEFAULT '',
	content TEXT NOT NULL DEFAULT '',
	"timestamp" BIGINT NOT NULL DEFAULT 0,
	CONSTRAINT drafts_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
)`,
	`CREATE INDEX drafts_user_timestamp_idx ON drafts (realm_id, user_id, "timestamp")`,

	`CREATE TABLE custom_profile_fields (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	name TEXT NOT NULL,
	hint TEXT NOT NULL DEFAULT '',
	field_type INTEGER NOT NULL,
	field_data TEXT NOT NULL DEFAULT '',
	field_order INTEGER NOT NULL DEFAULT 0,
	display_in_profile_summary BOOLEAN NOT NULL DEFAULT FALSE,
	required BOOLEAN NOT NULL DEFAULT FALSE,
	editable_by_user BOOLEAN NOT NULL DEFAULT TRUE,
	CONSTRAINT custom_profile_fields_realm_id_id_key UNIQUE (realm_id, id)
)`,
	`CREATE UNIQUE INDEX custom_profile_fields_realm_name_lower_key ON custom_profile_fields (realm_id, lower(name))`,

	`CREATE TABLE custom_profile_field_values (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	field_id BIGINT NOT NULL,
	value TEXT NOT NULL DEFAULT '',
	rendered_value TEXT,
	PRIMARY KEY (user_id, field_id),
	CONSTRAINT custom_profile_field_values_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT custom_profile_field_values_field_fkey FOREIGN KEY (realm_id, field_id)
		REFERENCES custom_profile_fields (realm_id, id) ON DELETE CASCADE
)`,
	`CREATE INDEX custom_profile_field_values_user_idx ON custom_profile_field_values (realm_id, user_id, field_id)`,
	`CREATE INDEX custom_profile_field_values_field_idx ON custom_profile_field_values (realm_id, field_id)`,

	// One pending change per user; keys are unique per realm.
	`CREATE TABLE email_changes (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	new_email TEXT NOT NULL,
	confirmation_key TEXT NOT NULL,
	date_created BIGINT NOT NULL DEFAULT 0,
	CONSTRAINT email_changes_realm_key_key UNIQUE (realm_id, confirmation_key),
	CONSTRAINT email_changes_realm_user_key UNIQUE (realm_id, user_id),
	CONSTRAINT email_changes_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
)`,
}

// DROP COLUMN needs SQLite 3.35 or later (go-sqlite3 bundles a newer one).
var migration0002Down = []string{
	`DROP TABLE email_changes`,
	`DROP TABLE custom_profile_field_values`,
	`DROP TABLE custom_profile_fields`,
	`DROP TABLE drafts`,
	`ALTER TABLE users DROP COLUMN settings`,
	`ALTER TABLE users DROP COLUMN can_change_user_emails`,
	`ALTER TABLE realms DROP COLUMN can_create_write_only_bots_group_id`,
	`ALTER TABLE realms DROP COLUMN can_create_bots_group_id`,
	`ALTER TABLE realms DROP COLUMN email_changes_disabled`,
	`ALTER TABLE realms DROP COLUMN name_changes_disabled`,
}

// Migration 0003 adds the user groups' permission settings: for each, the
// ID of the group (named, or anonymous) whose members may add members,
// join, leave, manage, mention the group, or remove members.
//
// The columns are added as in 0002 (one ALTER TABLE per column, NOT NULL
// with a constant default, no constraint), and for the same reasons as the
// realm's group settings they are BIGINT NOT NULL DEFAULT 0 without a
// foreign key: the contract spells "not set" as 0, which no foreign key
// would accept; a realm-safe reference would be the composite
// (realm_id, can_..._group_id) -> user_groups (realm_id, id), a table
// constraint that SQLite cannot add to an existing table without
// rebuilding user_groups (which other tables refer to, so foreign keys
// would have to be off, impossible inside the migration's transaction);
// and SQLite accepts a column REFERENCES clause on an added column only
// with a NULL default. Existing groups read back with every setting 0
// (not set). The store does not check these IDs: the caller must write
// only 0 or the ID of a group of the same realm.
var migration0003Up = []string{
	`ALTER TABLE user_groups ADD COLUMN can_add_members_group_id BIGINT NOT NULL DEFAULT 0`,
	`ALTER TABLE user_groups ADD COLUMN can_join_group_id BIGINT NOT NULL DEFAULT 0`,
	`ALTER TABLE user_groups ADD COLUMN can_leave_group_id BIGINT NOT NULL DEFAULT 0`,
	`ALTER TABLE user_groups ADD COLUMN can_manage_group_id BIGINT NOT NULL DEFAULT 0`,
	`ALTER TABLE user_groups ADD COLUMN can_mention_group_id BIGINT NOT NULL DEFAULT 0`,
	`ALTER TABLE user_groups ADD COLUMN can_remove_members_group_id BIGINT NOT NULL DEFAULT 0`,
}

var migration0003Down = []string{
	`ALTER TABLE user_groups DROP COLUMN can_remove_members_group_id`,
	`ALTER TABLE user_groups DROP COLUMN can_mention_group_id`,
	`ALTER TABLE user_groups DROP COLUMN can_manage_group_id`,
	`ALTER TABLE user_groups DROP COLUMN can_leave_group_id`,
	`ALTER TABLE user_groups DROP COLUMN can_join_group_id`,
	`ALTER TABLE user_groups DROP COLUMN can_add_members_group_id`,
}

// Migration 0004 adds channels (streams), subscriptions with their
// history (subscription_periods), and per-topic visibility policies
// (user_topics). All four tables are new, so they follow 0001 and 0002:
// realm_id on every row, composite foreign keys on (realm_id, ...) so that
// no row can point into another realm, ON DELETE CASCADE from a user or
// channel to the rows that belong to it, and an index on every
// referencing column list.
//
// streams: the name is unique per realm case-insensitively (a unique index
// on (realm_id, lower(name)); names are stored as given), and
// (realm_id, id) is unique so that subscriptions and user topics refer to
// a channel of their own realm. The creator is a composite reference to
// users, NULL when unknown. first_message_id and message_retention_days
// are plain nullable columns (there is no messages table yet). The five
// permission settings (can_..._group_id) are BIGINT NOT NULL DEFAULT 0
// without a foreign key, like the realm's and the groups' settings of
// 0002 and 0003: the record holds them as int64 with 0 meaning not set
// (which no foreign key would accept), and keeping every group setting of
// the schema alike keeps one rule for callers: the store does not check
// these IDs, the caller writes 0 or a group of the same realm.
//
// subscriptions: one row per (user, channel), kept when the user
// unsubscribes (active FALSE) so that the settings come back. The primary
// key is (user_id, stream_id); the unique (realm_id, stream_id, user_id)
// is both the index that lists a channel's subscribers and the target of
// the periods' composite foreign key. The notification settings are
// nullable (NULL inherits the user's default).
//
// subscription_periods: one row per span of an active subscription,
// referring to its subscription by (realm_id, stream_id, user_id) (so a
// period is of the realm of its subscription) with ON DELETE CASCADE. A
// partial unique index allows at most one open period (ended_at NULL)
// per subscription; (realm_id, user_id, stream_id, id) lists a user's
// periods in a channel oldest first and serves the foreign key.
//
// user_topics: one row per (user, channel, topic) compared
// case-insensitively: the unique index on
// (user_id, stream_id, lower(topic_name)) is the target of the upsert of
// SetUserTopic (ON CONFLICT on an expression index, supported by both
// PostgreSQL and SQLite) and orders a user's list.
var migration0004Up = []string{
	`CREATE TABLE streams (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	rendered_description TEXT NOT NULL DEFAULT '',
	invite_only BOOLEAN NOT NULL DEFAULT FALSE,
	is_web_public BOOLEAN NOT NULL DEFAULT FALSE,
	history_public_to_subscribers BOOLEAN NOT NULL DEFAULT FALSE,
	message_retention_days INTEGER,
	date_created BIGINT NOT NULL DEFAULT 0,
	creator_id BIGINT,
	is_archived BOOLEAN NOT NULL DEFAULT FALSE,
	is_default BOOLEAN NOT NULL DEFAULT FALSE,
	first_message_id BIGINT,
	can_add_subscribers_group_id BIGINT NOT NULL DEFAULT 0,
	can_remove_subscribers_group_id BIGINT NOT NULL DEFAULT 0,
	can_administer_channel_group_id BIGINT NOT NULL DEFAULT 0,
	can_send_message_group_id BIGINT NOT NULL DEFAULT 0,
	can_subscribe_group_id BIGINT NOT NULL DEFAULT 0,
	CONSTRAINT streams_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT streams_creator_fkey FOREIGN KEY (realm_id, creator_id)
		REFERENCES users (realm_id, id)
)`,
	`CREATE UNIQUE INDEX streams_realm_name_lower_key ON streams (realm_id, lower(name))`,
	`CREATE INDEX streams_creator_idx ON streams (realm_id, creator_id) WHERE creator_id IS NOT NULL`,

	`CREATE TABLE subscriptions (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	stream_id BIGINT NOT NULL,
	active BOOLEAN NOT NULL DEFAULT TRUE,
	color TEXT NOT NULL DEFAULT '',
	is_muted BOOLEAN NOT NULL DEFAULT FALSE,
	pin_to_top BOOLEAN NOT NULL DEFAULT FALSE,
	desktop_notifications BOOLEAN,
	email_notifications BOOLEAN,
	push_notifications BOOLEAN,
	audible_notifications BOOLEAN,
	wildcard_mentions_notify BOOLEAN,
	PRIMARY KEY (user_id, stream_id),
	CONSTRAINT subscriptions_realm_stream_user_key UNIQUE (realm_id, stream_id, user_id),
	CONSTRAINT subscriptions_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT subscriptions_stream_fkey FOREIGN KEY (realm_id, stream_id)
		REFERENCES streams (realm_id, id) ON DELETE CASCADE
)`,

	`CREATE TABLE subscription_periods (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	stream_id BIGINT NOT NULL,
	start_message_id BIGINT NOT NULL DEFAULT 0,
	end_message_id BIGINT,
	started_at BIGINT NOT NULL DEFAULT 0,
	ended_at BIGINT,
	CONSTRAINT subscription_periods_subscription_fkey FOREIGN KEY (realm_id, stream_id, user_id)
		REFERENCES subscriptions (realm_id, stream_id, user_id) ON DELETE CASCADE
)`,
	`CREATE INDEX subscription_periods_user_stream_idx ON subscription_periods (realm_id, user_id, stream_id, id)`,
	`CREATE UNIQUE INDEX subscription_periods_open_key ON subscription_periods (user_id, stream_id) WHERE ended_at IS NULL`,

	`CREATE TABLE user_topics (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	stream_id BIGINT NOT NULL,
	topic_name TEXT NOT NULL,
	visibility_policy INTEGER NOT NULL DEFAULT 0,
	last_updated BIGINT NOT NULL DEFAULT 0,
	CONSTRAINT user_topics_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT user_topics_stream_fkey FOREIGN KEY (realm_id, stream_id)
		REFERENCES streams (realm_id, id) ON DELETE CASCADE
)`,
	`CREATE UNIQUE INDEX user_topics_user_stream_topic_lower_key ON user_topics (user_id, stream_id, lower(topic_name))`,
	`CREATE INDEX user_topics_stream_idx ON user_topics (realm_id, stream_id)`,
}

var migration0004Down = []string{
	`DROP TABLE user_topics`,
	`DROP TABLE subscription_periods`,
	`DROP TABLE subscriptions`,
	`DROP TABLE streams`,
}

// newMigrations registers the given migrations (schemaMigrations, or a
// prefix of it in tests) with bun's migrate package.
func newMigrations(migrations []schemaMigration) *migrate.Migrations {
	ms := migrate.NewMigrations()
	for _, m := range migrations {
		ms.Add(migrate.Migration{
			Name: m.name,
			Up:   runDDL(m.up),
			Down: runDDL(m.down),
		})
	}
	return ms
}

// runDDL returns a migration function that runs stmts, after token
// substitution, in one transaction (DDL is transactional on both
// SQLite and PostgreSQL). It has the signature of migrate.Migration.Up.
func runDDL(stmts []string) func(context.Context, *migrate.Migrator, *migrate.Migration) error {
	return func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
		db := m.DB()
		repl, ok := ddlTokens[db.Dialect().Name()]
		if !ok {
			return fmt.Errorf("unsupported dialect %s", db.Dialect().Name())
		}
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, stmt := range stmts {
				if _, err := tx.ExecContext(ctx, repl.Replace(stmt)); err != nil {
					return fmt.Errorf("%w\n%s", err, repl.Replace(stmt))
				}
			}
			return nil
		})
	}
}

// migrateDB creates bun's migration tables if needed and applies the
// migrations not yet recorded there, in name order. A migration is
// recorded only after its statements committed.
func migrateDB(ctx context.Context, db *bun.DB) error {
	return migrateDBWith(ctx, db, schemaMigrations)
}

// migrateDBWith is migrateDB with an explicit list of migrations; tests
// use a prefix of schemaMigrations to build an older schema.
func migrateDBWith(ctx context.Context, db *bun.DB, migrations []schemaMigration) error {
	migrator := migrate.NewMigrator(db, newMigrations(migrations), migrate.WithMarkAppliedOnSuccess(true))
	if err := migrator.Init(ctx); err != nil {
		return fmt.Errorf("bunstore: migrate: init: %w", err)
	}
	if _, err := migrator.Migrate(ctx); err != nil {
		return fmt.Errorf("bunstore: migrate: %w", err)
	}
	return nil
}
