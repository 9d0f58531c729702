package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// bun writes every value into the SQL text, so to the database each bun
// query is new SQL, parsed and planned on every call; on the hottest
// request (GET /users/me served from the caller cache, one query) that
// was a third of the CPU. The few statements on the hot path are
// therefore prepared: their text has placeholders, database/sql prepares
// it once per connection and reuses it (a server-side prepared statement
// on PostgreSQL, a compiled statement on SQLite), and bun still writes the
// text and scans the rows, so the columns follow the models.
//
// Prepared statements run outside transactions only; inside one, the
// methods use their ordinary bun query (the statements belong to the pool
// of the readers, which a SQLite transaction does not use).

// preparedStmts are the hot statements of a root Store.
type preparedStmts struct {
	// profileValuesOfUser(realm_id, user_id): one user's profile field
	// values, in no order: the caller sorts the few rows. On SQLite an
	// ORDER BY with bound parameters, even one the index satisfies (the
	// plan has no sorter), cost as much as not preparing at all (27 µs
	// against 7.7 µs with no ORDER BY, or with literal values): the
	// statement behaves as if compiled again on every run.
	profileValuesOfUser *sql.Stmt
	// realmUserByID(realm_id, user_id): a user with their realm, which
	// authenticating a caller the caller cache does not hold needs (a
	// client that reports presence once a minute is never in the cache).
	realmUserByID *sql.Stmt

	all []*sql.Stmt
	// texts are the statements' SQL, for the hooks that want it.
	texts map[*sql.Stmt]string
}

// placeholder returns the dialect's placeholder of argument i (from 1).
func (d *dialectOps) placeholder(i int) bun.Safe {
	if d.name == DialectPostgres {
		return bun.Safe("$" + strconv.Itoa(i))
	}
	return bun.Safe("?")
}

// prepareStmts prepares the hot statements on db, the pool that serves
// reads.
func prepareStmts(ctx context.Context, db *bun.DB, ops *dialectOps) (*preparedStmts, error) {
	p := &preparedStmts{texts: map[*sql.Stmt]string{}}
	prepare := func(q fmt.Stringer) (*sql.Stmt, error) {
		stmt, err := db.DB.PrepareContext(ctx, q.String())
		if err != nil {
			return nil, errors.Join(fmt.Errorf("bunstore: prepare %s: %w", q, err), p.close())
		}
		p.all = append(p.all, stmt)
		p.texts[stmt] = q.String()
		return stmt, nil
	}
	var err error
	p.profileValuesOfUser, err = prepare(db.NewSelect().Model((*profileFieldValueRow)(nil)).
		Where("realm_id = ?", ops.placeholder(1)).
		Where("user_id = ?", ops.placeholder(2)))
	if err != nil {
		return nil, err
	}
	p.realmUserByID, err = prepare(db.NewSelect().Model((*realmUserRow)(nil)).Relation("Realm").
		Where("u.realm_id = ?", ops.placeholder(1)).
		Where("u.id = ?", ops.placeholder(2)))
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (p *preparedStmts) close() error {
	if p == nil {
		return nil
	}
	var errs []error
	for _, s := range p.all {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// queryHooks are the OnQuery functions, shared by a root Store and its
// transactions, told about prepared statements too (bun's hooks see only
// bun's queries).
type queryHooks struct {
	fns atomic.Pointer[[]func(string)]
	// withArgs are told the SQL and the arguments of every statement run
	// outside bun (prepared ones, with placeholders), for the plan tests.
	withArgs atomic.Pointer[[]func(string, []any)]
	// tracer, when set (Instrument), traces the prepared statements.
	tracer trace.Tracer
}

func (h *queryHooks) add(fn func(string)) { addHook(&h.fns, fn) }

// addHook appends fn to the list in p.
func addHook[F any](p *atomic.Pointer[[]F], fn F) {
	for {
		old := p.Load()
		var next []F
		if old != nil {
			next = append(next, *old...)
		}
		next = append(next, fn)
		if p.CompareAndSwap(old, &next) {
			return
		}
	}
}

// ran tells the hooks about a statement: name for OnQuery, text and args
// for the withArgs hooks (a prepared statement's name, text and
// arguments; a bun query's text twice and no arguments).
func (h *queryHooks) ran(name, text string, args []any) {
	if h == nil {
		return
	}
	if fns := h.fns.Load(); fns != nil {
		for _, fn := range *fns {
			fn(name)
		}
	}
	if fns := h.withArgs.Load(); fns != nil {
		for _, fn := range *fns {
			fn(text, args)
		}
	}
}

// queryPrepared runs a prepared statement and scans its rows into dest
// with the reader's models.
func (s *Store) queryPrepared(ctx context.Context, stmt *sql.Stmt, name string, dest any, args ...any) (err error) {
	if s.hooks != nil && s.hooks.tracer != nil && !unrecordedParent(ctx) {
		var sp trace.Span
		ctx, sp = s.hooks.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
		defer func() {
			if err != nil {
				sp.RecordError(err)
				sp.SetStatus(codes.Error, "")
			}
			sp.End()
		}()
	}
	rows, err := stmt.QueryContext(ctx, args...)
	s.hooks.ran(name, s.prepared.texts[stmt], args)
	if err != nil {
		return err
	}
	return s.readerDB().ScanRows(ctx, rows, dest)
}

// readerDB is the bun.DB whose pool serves reads.
func (s *Store) readerDB() *bun.DB {
	if s.reader != nil {
		return s.reader
	}
	return s.writer
}
