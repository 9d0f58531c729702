//go:build !nosqlite

package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mattn/go-sqlite3" // registers the "sqlite3" database/sql driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
)

// sqliteReaders is the size of the SQLite reader pool.
const sqliteReaders = 4

// sqliteBusyTimeoutMS is how long a connection waits for a lock (PRAGMA busy_timeout).
const sqliteBusyTimeoutMS = "5000"

// OpenSQLite opens (creating if needed) the SQLite database file at path,
// which may also be a file: URI, and applies pending migrations.
//
// It opens one writer connection (WAL journal, foreign keys on,
// synchronous=NORMAL, BEGIN IMMEDIATE transactions) and, once migrations
// have created the file and its WAL, a pool of query-only reader connections.
// In-memory databases are refused: the readers could not see the writer's data.
func OpenSQLite(ctx context.Context, path string) (*Store, error) {
	writerDSN, err := sqliteDSN(path, url.Values{
		"_journal_mode": {"WAL"},
		"_foreign_keys": {"1"},
		"_busy_timeout": {sqliteBusyTimeoutMS},
		"_synchronous":  {"NORMAL"},
		"_txlock":       {"immediate"},
	})
	if err != nil {
		return nil, err
	}
	readerDSN, err := sqliteDSN(path, url.Values{
		"_foreign_keys": {"1"},
		"_busy_timeout": {sqliteBusyTimeoutMS},
		"_query_only":   {"1"},
	})
	if err != nil {
		return nil, err
	}

	writerSQL, err := sql.Open("sqlite3", writerDSN)
	if err != nil {
		return nil, fmt.Errorf("bunstore: open sqlite writer: %w", err)
	}
	// One writer: SQLite allows one writing transaction at a time, so
	// writers queue in database/sql instead of failing with SQLITE_BUSY.
	writerSQL.SetMaxOpenConns(1)
	writerSQL.SetMaxIdleConns(1)
	writerSQL.SetConnMaxLifetime(0)
	writerSQL.SetConnMaxIdleTime(0)
	writer := bun.NewDB(writerSQL, sqlitedialect.New())

	if err := writer.PingContext(ctx); err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("bunstore: open sqlite %q: %w", path, err)
	}
	if err := migrateDB(ctx, writer); err != nil {
		_ = writer.Close()
		return nil, err
	}

	readerSQL, err := sql.Open("sqlite3", readerDSN)
	if err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("bunstore: open sqlite readers: %w", err)
	}
	readerSQL.SetMaxOpenConns(sqliteReaders)
	readerSQL.SetMaxIdleConns(sqliteReaders)
	reader := bun.NewDB(readerSQL, sqlitedialect.New())
	if err := reader.PingContext(ctx); err != nil {
		_ = reader.Close()
		_ = writer.Close()
		return nil, fmt.Errorf("bunstore: open sqlite readers: %w", err)
	}

	prepared, err := prepareStmts(ctx, reader, sqliteOps)
	if err != nil {
		_ = reader.Close()
		_ = writer.Close()
		return nil, err
	}
	return &Store{
		ops:      sqliteOps,
		w:        writer,
		r:        reader,
		writer:   writer,
		reader:   reader,
		prepared: prepared, stmts: newStmtCache(),
		hooks: newQueryHooks(writer, reader),
		bus:   &localBus{},
	}, nil
}

// sqliteDSN builds a go-sqlite3 file: URI for path with params added
// (params override the same keys given in a file: URI).
func sqliteDSN(path string, params url.Values) (string, error) {
	var base string
	query := url.Values{}
	if rest, ok := strings.CutPrefix(path, "file:"); ok {
		p, rawQuery, _ := strings.Cut(rest, "?")
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return "", fmt.Errorf("bunstore: sqlite dsn %q: %w", path, err)
		}
		if strings.EqualFold(q.Get("mode"), "memory") {
			return "", errInMemory
		}
		base, query = "file:"+p, q
		path = p
	} else {
		// A plain file name: escape it so '?', '#' and '%' in the name are
		// not read as URI syntax.
		base = "file:" + (&url.URL{Path: path}).EscapedPath()
	}
	if path == "" || path == ":memory:" {
		return "", errInMemory
	}
	for k, v := range params {
		query[k] = v
	}
	return base + "?" + query.Encode(), nil
}

var errInMemory = errors.New("bunstore: SQLite needs a database file (in-memory and temporary databases are not supported)")

func init() {
	dialectClassifiers = append(dialectClassifiers, classifySQLite)
}

// classifySQLite translates go-sqlite3's constraint errors.
func classifySQLite(err error) (errKind, bool) {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return kindOther, false
	}
	switch se.ExtendedCode {
	case sqlite3.ErrConstraintUnique, sqlite3.ErrConstraintPrimaryKey:
		return kindConflict, true
	case sqlite3.ErrConstraintForeignKey:
		return kindNotFound, true
	}
	return kindOther, true
}
