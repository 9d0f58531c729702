package bunstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
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
// and the schema dropped when the test ends. Without the variable the test
// is skipped, or fails when $TEAMCHAT_REQUIRE_POSTGRES is 1.
func OpenTestPostgres(t TB) *Store {
	t.Helper()
	dsn, schema := NewTestPostgresSchema(t)
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
