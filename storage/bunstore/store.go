package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Dialect names returned by (*Store).Dialect.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "pg"
)

var (
	_ storage.Store        = (*Store)(nil)
	_ storage.WriteLimiter = (*Store)(nil)
)

// Store implements storage.Store on bun, for SQLite and PostgreSQL.
//
// A Store returned by Open, OpenSQLite or OpenPostgres is safe for
// concurrent use. The Store passed to an InTx callback is bound to that
// transaction and must not be used after the callback returns.
type Store struct {
	ops *dialectOps

	// w runs writes: the writer *bun.DB, or the bun.Tx of a tx-bound Store.
	w bun.IDB
	// r runs reads: the SQLite reader pool, the PostgreSQL pool, or the
	// bun.Tx of a tx-bound Store (so a transaction sees its own writes).
	r bun.IDB

	// writer and reader are the handles owned by a root Store (nil in a
	// tx-bound Store). On PostgreSQL reader is nil and r == w == writer.
	writer *bun.DB
	reader *bun.DB

	// prepared are the hot statements (prepared.go); nil in a tx-bound
	// Store. hooks are the OnQuery functions, shared with transactions.
	prepared *preparedStmts
	stmts    *stmtCache
	// pgTrips counts the simple queries sent to PostgreSQL (pgdefer.go).
	pgTrips *atomic.Int64
	hooks   *queryHooks

	inTx bool

	// bus is the in-process event bus of a SQLite Store (events.go);
	// channel the NOTIFY channel of a PostgreSQL one. pending collects a
	// write transaction's event payloads (nil outside one).
	bus     *localBus
	channel string
	pending *txEvents

	// analyzer analyzes the tables that grew, on PostgreSQL
	// (analyze_postgres.go); nil on SQLite and in a tx-bound Store.
	analyzer *analyzer

	closed atomic.Bool
	// listenDown counts this Store's PostgreSQL listeners whose
	// connection is broken (health.go).
	listenDown atomic.Int32
}

// Open opens the database named by dsn and applies pending migrations.
// A dsn starting with postgres:// or postgresql:// opens PostgreSQL;
// anything else is a SQLite file path or file: URI.
func Open(ctx context.Context, dsn string) (*Store, error) {
	if isPostgresDSN(dsn) {
		return OpenPostgres(ctx, dsn)
	}
	return OpenSQLite(ctx, dsn)
}

func isPostgresDSN(dsn string) bool {
	lower := strings.ToLower(dsn)
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}

// Dialect reports the database behind the Store: "sqlite" or "pg".
func (s *Store) Dialect() string { return s.ops.name }

// Close releases the database handles; closing again does nothing.
// Closing the Store passed to an InTx callback does nothing: the
// transaction ends when the callback returns.
func (s *Store) Close() error {
	if s.inTx || s.closed.Swap(true) {
		return nil
	}
	s.analyzer.stop()
	var errs []error
	if err := s.prepared.close(); err != nil {
		errs = append(errs, fmt.Errorf("bunstore: close statements: %w", err))
	}
	if err := s.stmts.close(); err != nil {
		errs = append(errs, fmt.Errorf("bunstore: close statements: %w", err))
	}
	if s.reader != nil {
		if err := s.reader.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bunstore: close readers: %w", err))
		}
	}
	if s.writer != nil {
		if err := s.writer.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bunstore: close: %w", err))
		}
	}
	return errors.Join(errs...)
}

// MaxConcurrentWrites is half the writer's connection pool (at least
// one), so that transactions never hold every connection: a read made
// outside a transaction while one is open always finds one in time.
func (s *Store) MaxConcurrentWrites() int {
	if s.writer == nil {
		return 0
	}
	n := s.writer.Stats().MaxOpenConnections
	if n == 0 {
		return 0
	}
	return max(1, n/2)
}

// InTx runs fn in one transaction on the writer. fn's error or panic rolls
// the transaction back (a panic is re-raised after the rollback); otherwise
// it is committed. Called on a tx-bound Store, InTx just calls fn with that
// same Store, so nested calls share the outer transaction.
//
// On SQLite the transaction holds the only writer connection until it ends:
// inside fn, use the Store passed to fn, never the outer Store, for writes.
func (s *Store) InTx(ctx context.Context, fn func(storage.Store) error) error {
	return s.withTx(ctx, func(tx *Store) error { return fn(tx) })
}

// withTx is InTx for the store's own methods: fn gets the tx-bound *Store.
// On a tx-bound Store it calls fn with that Store (same transaction).
func (s *Store) withTx(ctx context.Context, fn func(*Store) error) error {
	if s.inTx {
		return fn(s)
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return wrapErr("begin transaction", err)
	}
	done := false
	defer func() {
		if !done {
			// Reached on error and on panic; a panic keeps unwinding
			// after this deferred call returns.
			_ = tx.Rollback()
		}
	}()
	txStore := &Store{ops: s.ops, w: tx, r: tx, hooks: s.hooks, inTx: true,
		bus: s.bus, channel: s.channel, pending: &txEvents{}}
	if err := fn(txStore); err != nil {
		return err
	}
	done = true
	if len(txStore.pending.payloads) > 0 {
		if err := s.commitLocal(tx, txStore.pending); err != nil {
			return wrapErr("commit", err)
		}
		return nil
	}
	if err := tx.Commit(); err != nil {
		return wrapErr("commit", err)
	}
	return nil
}

// nonNil returns s, or an empty slice when s is nil, so that list methods
// never return nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// checkAffected turns an UPDATE or DELETE that matched no row into
// storage.ErrNotFound.
func checkAffected(op string, res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return wrapErr(op, err)
	}
	if n == 0 {
		return notFound(op)
	}
	return nil
}
