package bunstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// Migrations are SQL files written for their schema version, never
// generated from the Go models (the models will change, an applied
// migration must not), embedded from migrations/: NNNN_name.up.sql and
// NNNN_name.down.sql. Statements are separated by a line --bun:split;
// {{NAME}} tokens are replaced per dialect by ddlTokens. A line
// --step:NAME alone between two splits runs the Go step goSteps[NAME] at
// that point, in the same transaction (for data that SQL cannot compute
// the same way on both dialects, such as Unicode case folding). Add a
// migration as the next number; never edit one that has shipped.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// goSteps are the Go parts of migrations, run where a migration file says
// --step:NAME, inside its transaction.
var goSteps = map[string]func(ctx context.Context, tx bun.Tx) error{
	"fold_keys":                    foldKeys,                   // 0005 (fold.go)
	"index_messages":               indexExistingMessages,      // 0007 (search.go)
	"full_name_keys":               fullNameKeys,               // 0010 (fold.go)
	"stream_notification_defaults": streamNotificationDefaults, // 0028 (notifications.go)
}

// schemaMigrations is every migration, in name order.
var schemaMigrations = mustLoadMigrations(migrationFiles)

type schemaMigration struct {
	name     string // sorted lexically by bun: keep the zero-padded prefix
	up, down []string
}

// mustLoadMigrations reads the up and down files of fsys's migrations
// directory into schemaMigrations; a malformed set is a build mistake and
// panics (at init, so every test catches it).
func mustLoadMigrations(fsys fs.FS) []schemaMigration {
	ms, err := loadMigrations(fsys)
	if err != nil {
		panic(fmt.Sprintf("bunstore: migrations: %v", err))
	}
	return ms
}

func loadMigrations(fsys fs.FS) ([]schemaMigration, error) {
	files, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	byName := map[string]*schemaMigration{}
	var names []string
	for _, file := range files {
		base := path.Base(file)
		name, kind, ok := strings.Cut(strings.TrimSuffix(base, ".sql"), ".")
		if !ok || (kind != "up" && kind != "down") {
			return nil, fmt.Errorf("%s: want NNNN_name.up.sql or NNNN_name.down.sql", file)
		}
		text, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		stmts, err := splitStatements(string(text))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		m := byName[name]
		if m == nil {
			m = &schemaMigration{name: name}
			byName[name] = m
			names = append(names, name)
		}
		if kind == "up" {
			m.up = stmts
		} else {
			m.down = stmts
		}
	}
	sort.Strings(names)
	out := make([]schemaMigration, 0, len(names))
	for _, name := range names {
		m := byName[name]
		if m.up == nil || m.down == nil {
			return nil, fmt.Errorf("%s: needs both an up and a down file", name)
		}
		out = append(out, *m)
	}
	return out, nil
}

// splitStatements cuts a migration file at its --bun:split lines and drops
// the pieces that hold only comments.
func splitStatements(text string) ([]string, error) {
	var stmts []string
	for _, piece := range strings.Split(text, "\n--bun:split\n") {
		piece = strings.TrimSpace(piece)
		if step, ok := strings.CutPrefix(piece, "--step:"); ok {
			if _, known := goSteps[step]; !known {
				return nil, fmt.Errorf("unknown step %q", step)
			}
			stmts = append(stmts, piece)
			continue
		}
		if onlyComments(piece) {
			continue
		}
		stmts = append(stmts, piece)
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("no statements")
	}
	return stmts, nil
}

func onlyComments(piece string) bool {
	for line := range strings.SplitSeq(piece, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "--") {
			return false
		}
	}
	return true
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
		ops, ok := dialects[db.Dialect().Name()]
		if !ok {
			return fmt.Errorf("unsupported dialect %s", db.Dialect().Name())
		}
		repl := ops.ddl
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, stmt := range stmts {
				if step, ok := strings.CutPrefix(stmt, "--step:"); ok {
					if err := goSteps[step](ctx, tx); err != nil {
						return fmt.Errorf("step %s: %w", step, err)
					}
					continue
				}
				if strings.TrimSpace(repl.Replace(stmt)) == "" {
					continue // a statement this dialect does not need
				}
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
