package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/storagetest"
)

func TestSQLite(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return OpenTestSQLite(t) })
}

func TestPostgres(t *testing.T) {
	PostgresTestDSN(t)
	storagetest.Run(t, func(t *testing.T) storage.Store { return OpenTestPostgres(t) })
}

// migrationCount returns the number of applied migrations recorded by bun.
func migrationCount(t *testing.T, s *Store) int {
	t.Helper()
	n, err := s.r.NewSelect().TableExpr("bun_migrations").Count(t.Context())
	require.NoError(t, err)
	return n
}

// testReopen opens a store twice (closing in between) and checks that the
// second open is a no-op that keeps the data.
func testReopen(t *testing.T, open func() (*Store, error)) {
	ctx := t.Context()
	s, err := open()
	require.NoError(t, err)
	r := &storage.Realm{StringID: "acme", Host: "acme.example.com", Deactivated: true, NameChangesDisabled: true}
	require.NoError(t, s.CreateRealm(ctx, r))
	u := &storage.User{RealmID: r.ID, Email: "a@example.com", BotType: ptr(1), CanChangeUserEmails: true, Settings: `{"a":1}`}
	require.NoError(t, s.CreateUser(ctx, u))
	assert.Equal(t, len(schemaMigrations), migrationCount(t, s))
	require.NoError(t, s.Close())

	for range 2 {
		s, err = open()
		require.NoError(t, err, "reopen")
		gotRealm, err := s.GetRealm(ctx, r.ID)
		require.NoError(t, err)
		assert.Equal(t, *r, *gotRealm)
		gotUser, err := s.GetUserByEmail(ctx, r.ID, "A@example.com")
		require.NoError(t, err)
		assert.Equal(t, *u, *gotUser)
		assert.Equal(t, len(schemaMigrations), migrationCount(t, s), "migrations applied once")
		require.NoError(t, s.Close())
	}
}

func ptr[T any](v T) *T { return &v }

func TestSQLiteMigrateTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	testReopen(t, func() (*Store, error) { return OpenSQLite(t.Context(), path) })
}

func TestSQLiteOpenForms(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a file?#%.db")
	cases := []struct {
		name string
		dsn  string
	}{
		{"plain path", path},
		{"plain path again", path},
		{"file URI", "file:" + filepath.Join(dir, "uri.db") + "?cache=private"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(t.Context(), tc.dsn)
			require.NoError(t, err)
			defer s.Close()
			assert.Equal(t, DialectSQLite, s.Dialect())
			_, err = s.ListRealms(t.Context())
			require.NoError(t, err)
			if tc.dsn == path {
				assert.FileExists(t, path, "special characters are kept in the file name")
				assert.FileExists(t, path+"-wal")
			}
		})
	}
}

func TestSQLiteRefusesMemory(t *testing.T) {
	for _, dsn := range []string{"", ":memory:", "file::memory:", "file:x.db?mode=memory&cache=shared", "file:?cache=shared"} {
		_, err := OpenSQLite(t.Context(), dsn)
		assert.ErrorIs(t, err, errInMemory, "%q", dsn)
	}
}

func TestIsPostgresDSN(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://u@h/db":      true,
		"postgresql://u@h/db":    true,
		"POSTGRES://u@h/db":      true,
		"chat.db":                false,
		"file:chat.db?mode=rwc":  false,
		"/var/lib/postgres/x.db": false,
		"postgres.db":            false,
	} {
		assert.Equal(t, want, isPostgresDSN(dsn), dsn)
	}
}

func TestSQLitePragmas(t *testing.T) {
	s := OpenTestSQLite(t)
	ctx := t.Context()
	want := map[string]struct{ writer, reader string }{
		"journal_mode": {"wal", "wal"},
		"foreign_keys": {"1", "1"},
		"busy_timeout": {"5000", "5000"},
		"synchronous":  {"1", "1"}, // NORMAL
		"query_only":   {"0", "1"},
	}
	for name, w := range want {
		var got string
		require.NoError(t, s.writer.QueryRowContext(ctx, "PRAGMA "+name).Scan(&got))
		assert.Equal(t, w.writer, strings.ToLower(got), "writer %s", name)
		require.NoError(t, s.reader.QueryRowContext(ctx, "PRAGMA "+name).Scan(&got))
		assert.Equal(t, w.reader, strings.ToLower(got), "reader %s", name)
	}
	assert.Equal(t, 1, s.writer.Stats().MaxOpenConnections)
	assert.Equal(t, sqliteReaders, s.reader.Stats().MaxOpenConnections)
	assert.Equal(t, DialectSQLite, s.Dialect())
}

func TestSQLiteReadersAreQueryOnly(t *testing.T) {
	s := OpenTestSQLite(t)
	ctx := t.Context()
	for _, stmt := range []string{
		"INSERT INTO realms (string_id, host) VALUES ('a', 'a.example.com')",
		"CREATE TABLE t (x INTEGER)",
	} {
		_, err := s.reader.ExecContext(ctx, stmt)
		var se sqlite3.Error
		require.ErrorAs(t, err, &se, stmt)
		assert.Equal(t, sqlite3.ErrReadonly, se.Code, stmt)
	}
	_, err := s.reader.NewInsert().Model(&storage.Realm{StringID: "b", Host: "b.example.com"}).Exec(ctx)
	require.Error(t, err)

	// Through the writer the same insert works.
	_, err = s.writer.ExecContext(ctx, "INSERT INTO realms (string_id, host) VALUES ('a', 'a.example.com')")
	require.NoError(t, err)
}

// While a transaction holds the only writer connection, reads outside the
// transaction still run (on the readers) and see the last committed state.
func TestSQLiteReadsDuringWriteTx(t *testing.T) {
	s := OpenTestSQLite(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	committed := &storage.Realm{StringID: "a", Host: "a.example.com"}
	require.NoError(t, s.CreateRealm(ctx, committed))

	err := s.InTx(ctx, func(tx storage.Store) error {
		require.NoError(t, tx.CreateRealm(ctx, &storage.Realm{StringID: "b", Host: "b.example.com"}))
		var wg sync.WaitGroup
		for range sqliteReaders * 2 {
			wg.Go(func() {
				realms, err := s.ListRealms(ctx)
				if assert.NoError(t, err) {
					assert.Equal(t, []storage.Realm{*committed}, realms)
				}
			})
		}
		wg.Wait()
		return nil
	})
	require.NoError(t, err)
	realms, err := s.ListRealms(ctx)
	require.NoError(t, err)
	assert.Len(t, realms, 2)
}

func TestSQLiteErrorTranslation(t *testing.T) {
	cases := []struct {
		err  error
		want error
	}{
		{sqlite3.Error{Code: sqlite3.ErrConstraint, ExtendedCode: sqlite3.ErrConstraintUnique}, storage.ErrConflict},
		{sqlite3.Error{Code: sqlite3.ErrConstraint, ExtendedCode: sqlite3.ErrConstraintPrimaryKey}, storage.ErrConflict},
		{sqlite3.Error{Code: sqlite3.ErrConstraint, ExtendedCode: sqlite3.ErrConstraintForeignKey}, storage.ErrNotFound},
		{sqlite3.Error{Code: sqlite3.ErrConstraint, ExtendedCode: sqlite3.ErrConstraintNotNull}, nil},
		{sqlite3.Error{Code: sqlite3.ErrBusy}, nil},
	}
	for _, tc := range cases {
		err := wrapErr("op", tc.err)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "bunstore: op: "), err.Error())
		if tc.want != nil {
			assert.ErrorIs(t, err, tc.want)
			var se sqlite3.Error
			assert.False(t, errors.As(err, &se), "driver error hidden: %v", err)
		} else {
			assert.NotErrorIs(t, err, storage.ErrConflict)
			assert.NotErrorIs(t, err, storage.ErrNotFound)
			assert.ErrorIs(t, err, tc.err)
		}
	}
	assert.NoError(t, wrapErr("op", nil))
	assert.ErrorIs(t, wrapErr("op", fmt.Errorf("scan: %w", sql.ErrNoRows)), storage.ErrNotFound)
}

func TestPostgresMigrateTwice(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	testReopen(t, func() (*Store, error) { return OpenPostgres(t.Context(), dsn, WithSchema(schema)) })
}

func TestPostgresOpen(t *testing.T) {
	dsn, schema := NewTestPostgresSchema(t)
	ctx := t.Context()

	// Concurrent first opens of one schema: the advisory lock serializes
	// the migrations.
	stores := make([]*Store, 4)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			s, err := OpenPostgres(ctx, dsn, WithSchema(schema))
			if assert.NoError(t, err) {
				stores[i] = s
			}
		})
	}
	wg.Wait()
	for _, s := range stores {
		if s == nil {
			continue
		}
		assert.Equal(t, DialectPostgres, s.Dialect())
		var current string
		require.NoError(t, s.writer.QueryRowContext(ctx, "SELECT current_schema()").Scan(&current))
		assert.Equal(t, schema, current)
		assert.Equal(t, len(schemaMigrations), migrationCount(t, s))
		require.NoError(t, s.Close())
	}

	// Open dispatches on the scheme; search_path given in the DSN.
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	s, err := Open(ctx, dsn+sep+"search_path="+schema)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, DialectPostgres, s.Dialect())
	assert.Equal(t, len(schemaMigrations), migrationCount(t, s))

	_, err = OpenPostgres(ctx, "postgres://%zz")
	assert.Error(t, err)
}
