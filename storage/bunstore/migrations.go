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

// newMigrations registers schemaMigrations with bun's migrate package.
func newMigrations() *migrate.Migrations {
	ms := migrate.NewMigrations()
	for _, m := range schemaMigrations {
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
	migrator := migrate.NewMigrator(db, newMigrations(), migrate.WithMarkAppliedOnSuccess(true))
	if err := migrator.Init(ctx); err != nil {
		return fmt.Errorf("bunstore: migrate: init: %w", err)
	}
	if _, err := migrator.Migrate(ctx); err != nil {
		return fmt.Errorf("bunstore: migrate: %w", err)
	}
	return nil
}
