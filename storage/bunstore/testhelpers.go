package bunstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// TB is the part of testing.TB the test helpers use. It is declared here
// so that this package does not import "testing": programs built on it
// (examples/server) do not link the test framework.
type TB interface {
	Helper()
	Cleanup(func())
	TempDir() string
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Environment variables read by the PostgreSQL test helpers.
const (
	// EnvPostgresDSN names a PostgreSQL database for tests, e.g.
	// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable.
	EnvPostgresDSN = "TEAMCHAT_POSTGRES_DSN"
	// EnvRequirePostgres, set to 1 (as in CI), turns the skip of
	// PostgreSQL tests without a DSN into a failure.
	EnvRequirePostgres = "TEAMCHAT_REQUIRE_POSTGRES"
	// EnvPostgresOneConn, set to 1, gives each test store a pool of one
	// connection once it is open: a write transaction or a read snapshot
	// that reads outside itself then waits forever, and the test
	// binary's timeout prints where. An audit, not a CI setting.
	EnvPostgresOneConn = "TEAMCHAT_TEST_POSTGRES_ONE_CONN"
)

// OpenTestSQLite returns a Store on a new SQLite file in a temporary
// directory, closed when the test ends.
func OpenTestSQLite(t TB) *Store {
	t.Helper()
	s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "teamchat.db"))
	if err != nil {
		t.Fatalf("bunstore: open test sqlite: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("bunstore: close test sqlite: %v", err)
		}
	})
	return s
}

// OpenTestPostgres returns a Store on a fresh, empty schema of the
// PostgreSQL database named by $TEAMCHAT_POSTGRES_DSN. The store is closed
// when the test ends, and the schema emptied for the process's next test
// (or dropped, if the test changed more than rows in it). Without the
// variable the test is skipped, or fails when $TEAMCHAT_REQUIRE_POSTGRES
// is 1.
func OpenTestPostgres(t TB) *Store {
	t.Helper()
	dsn := PostgresTestDSN(t)
	schema, err := testSchemas.take(dsn)
	if err != nil {
		t.Fatalf("bunstore: test schema: %v", err)
	}
	// Registered first, so it runs after the store is closed.
	t.Cleanup(func() {
		if err := testSchemas.give(schema); err != nil {
			t.Errorf("bunstore: test schema %s: %v", schema, err)
		}
	})
	s, err := OpenPostgres(context.Background(), dsn, WithSchema(schema))
	if err != nil {
		t.Fatalf("bunstore: open test postgres: %v", err)
	}
	if os.Getenv(EnvPostgresOneConn) == "1" {
		s.writer.SetMaxOpenConns(1)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("bunstore: close test postgres: %v", err)
		}
	})
	return s
}

// testSchemas are the migrated schemas of this test process: migrating a
// new schema costs about half a second on PostgreSQL, and emptying a used
// one (TRUNCATE … RESTART IDENTITY) a few tens of milliseconds, which
// takes minutes off a suite that runs on PostgreSQL. A schema goes back
// to the pool only if its relations are exactly those of a freshly
// migrated one (a test that created a table or an index in it has it
// dropped instead). Each process holds a session advisory lock on its
// own token, which its schemas' names carry; a process that finds a
// pooled schema whose token is not held (its process ended) drops it.
var testSchemas schemaPool

type schemaPool struct {
	mu    sync.Mutex
	admin *sql.DB  // one connection, holding the token's lock
	token string   // this process's, in its schemas' names
	free  []string // emptied schemas, ready
	shape string   // the relations of a freshly migrated schema
}

const testSchemaPrefix = "teamchat_pool_"

// start opens the admin connection, takes the process's token and drops
// the schemas of ended processes (under p.mu).
func (p *schemaPool) start(dsn string) error {
	if p.admin != nil {
		return nil
	}
	admin, err := openPostgresAdmin(dsn)
	if err != nil {
		return err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "SELECT pg_advisory_lock(7413, hashtext($1))", token); err != nil {
		admin.Close()
		return fmt.Errorf("lock the pool's token: %w", err)
	}
	p.admin, p.token = admin, token
	rows, err := admin.QueryContext(ctx, "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)", testSchemaPrefix)
	if err != nil {
		return err
	}
	var stale []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		stale = append(stale, name)
	}
	rows.Close()
	for _, name := range stale {
		owner, _, _ := strings.Cut(strings.TrimPrefix(name, testSchemaPrefix), "_")
		var free bool
		if err := admin.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(7413, hashtext($1))", owner).Scan(&free); err != nil {
			return err
		}
		if !free {
			continue // its process is running
		}
		_, err := admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
		_, uerr := admin.ExecContext(ctx, "SELECT pg_advisory_unlock(7413, hashtext($1))", owner)
		if err = errors.Join(err, uerr); err != nil {
			return fmt.Errorf("drop the schema of an ended test process: %w", err)
		}
	}
	// The first schema, migrated here, is the shape the others must have
	// to go back to the pool.
	schema, err := p.create(ctx)
	if err != nil {
		return err
	}
	s, err := OpenPostgres(ctx, dsn, WithSchema(schema))
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	if p.shape, err = p.shapeOf(ctx, schema); err != nil {
		return err
	}
	p.free = append(p.free, schema)
	return nil
}

// create makes a new, empty schema of the pool's.
func (p *schemaPool) create(ctx context.Context) (string, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := testSchemaPrefix + p.token + "_" + hex.EncodeToString(b[:])
	_, err := p.admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	return schema, err
}

// shapeOf lists the schema's relations and their kinds.
func (p *schemaPool) shapeOf(ctx context.Context, schema string) (string, error) {
	var shape string
	err := p.admin.QueryRowContext(ctx, `SELECT coalesce(string_agg(c.relname || ':' || c.relkind::text, ',' ORDER BY c.relname), '')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1`, schema).Scan(&shape)
	return shape, err
}

// take returns an emptied schema of the pool, or a new one (migrated by
// the store that opens it).
func (p *schemaPool) take(dsn string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.start(dsn); err != nil {
		return "", err
	}
	if n := len(p.free); n > 0 {
		schema := p.free[n-1]
		p.free = p.free[:n-1]
		return schema, nil
	}
	return p.create(context.Background())
}

// give empties a schema whose test ended and keeps it for the next, or
// drops it if the test changed its shape.
func (p *schemaPool) give(schema string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	ctx := context.Background()
	shape, err := p.shapeOf(ctx, schema)
	if err != nil {
		return err
	}
	if shape == p.shape {
		var tables string
		err = p.admin.QueryRowContext(ctx, `SELECT coalesce(string_agg(quote_ident($1) || '.' || quote_ident(tablename), ', '), '')
			FROM pg_tables WHERE schemaname = $1 AND tablename NOT IN ('bun_migrations', 'bun_migration_locks')`, schema).Scan(&tables)
		if err == nil && tables != "" {
			_, err = p.admin.ExecContext(ctx, "TRUNCATE "+tables+" RESTART IDENTITY CASCADE")
		}
		if err == nil {
			p.free = append(p.free, schema)
			return nil
		}
	}
	_, derr := p.admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
	return derr
}

// NewTestPostgresSchema creates an empty schema with a random name in the
// database named by $TEAMCHAT_POSTGRES_DSN and returns the DSN and the
// schema, to be opened with OpenPostgres(ctx, dsn, WithSchema(schema)),
// possibly several times. The schema is dropped (CASCADE) when the test
// ends; register closing of the stores after calling this so that they
// close first. Skip or fail without a DSN as OpenTestPostgres does.
func NewTestPostgresSchema(t TB) (dsn, schema string) {
	t.Helper()
	dsn = PostgresTestDSN(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema = "teamchat_test_" + hex.EncodeToString(b[:])

	admin, err := openPostgresAdmin(dsn)
	if err != nil {
		t.Fatalf("bunstore: postgres admin connection: %v", err)
	}
	defer admin.Close()
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("bunstore: create test schema: %v", err)
	}
	t.Cleanup(func() {
		admin, err := openPostgresAdmin(dsn)
		if err != nil {
			t.Errorf("bunstore: postgres admin connection: %v", err)
			return
		}
		defer admin.Close()
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("bunstore: drop test schema %s: %v", schema, err)
		}
	})
	return dsn, schema
}

// PostgresTestDSN returns $TEAMCHAT_POSTGRES_DSN. Without it the test is
// skipped, or fails when $TEAMCHAT_REQUIRE_POSTGRES is 1. Call it first in
// a test whose subtests all need PostgreSQL, to skip them once.
func PostgresTestDSN(t TB) string {
	t.Helper()
	dsn := os.Getenv(EnvPostgresDSN)
	if dsn == "" {
		if os.Getenv(EnvRequirePostgres) == "1" {
			t.Fatalf("PostgreSQL tests required (%s=1) but %s is not set", EnvRequirePostgres, EnvPostgresDSN)
		}
		t.Skipf("PostgreSQL tests skipped: set %s to a PostgreSQL DSN to run them", EnvPostgresDSN)
	}
	return dsn
}

// openPostgresAdmin opens a plain database/sql handle (one connection) on
// dsn, outside any test schema.
func openPostgresAdmin(dsn string) (db *sql.DB, err error) {
	connector, err := newPostgresConnector(dsn, postgresConfig{})
	if err != nil {
		return nil, err
	}
	db = sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	return db, nil
}
