package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/uptrace/bun"
)

// Queries of a stable shape.
//
// bun writes every value into the SQL text, so each query is new SQL to
// the database, compiled again every time: on the most read request (a
// window of history: the window's IDs, the reader's rows, the reactions,
// the read ranges) compiling was a sixth of the server's time. The reads
// of that path are written with placeholders instead (params), and a list
// of IDs is one value (a JSON array that SQLite's json_each opens, a
// PostgreSQL array), so that their text depends only on their shape; the
// Store prepares each text once (stmtCache) and reuses the statement.
// Inside a transaction the values are written inline as before: prepared
// statements belong to the pool, not to a transaction's connection.

// params collects a query's values; ph nil writes them inline.
type params struct {
	ph   func(int) bun.Safe
	pg   bool
	args []any
}

// params starts the values of one query of s.
func (s *Store) params() *params {
	if s.inTx || s.stmts == nil {
		return &params{}
	}
	return &params{ph: s.ops.placeholder, pg: s.ops.name == DialectPostgres}
}

// v is x, as a placeholder (or x itself, inline).
func (p *params) v(x any) any {
	if p.ph == nil {
		return x
	}
	p.args = append(p.args, x)
	return p.ph(len(p.args))
}

// in is the condition "col is one of ids", for Where.
func (p *params) in(col string, ids []int64) (string, any) { return p.list(col, ids, false) }

// notIn is the condition "col is none of ids", for Where.
func (p *params) notIn(col string, ids []int64) (string, any) { return p.list(col, ids, true) }

func (p *params) list(col string, ids []int64, not bool) (string, any) {
	if p.ph == nil {
		if not {
			return col + " NOT IN (?)", bun.List(ids)
		}
		return col + " IN (?)", bun.List(ids)
	}
	var b strings.Builder
	if p.pg {
		b.WriteByte('{')
	} else {
		b.WriteByte('[')
	}
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	if p.pg {
		b.WriteByte('}')
		if not {
			return col + " <> ALL(?::bigint[])", p.v(b.String())
		}
		return col + " = ANY(?::bigint[])", p.v(b.String())
	}
	b.WriteByte(']')
	if not {
		return col + " NOT IN (SELECT value FROM json_each(?))", p.v(b.String())
	}
	return col + " IN (SELECT value FROM json_each(?))", p.v(b.String())
}

// stableQuery is a query scan can prepare: a SELECT or a raw query.
type stableQuery interface {
	String() string
	Scan(ctx context.Context, dest ...any) error
}

// scan runs q (built with p) and scans its rows into dest.
func (s *Store) scan(ctx context.Context, q stableQuery, p *params, dest ...any) error {
	if p.ph == nil {
		return q.Scan(ctx, dest...)
	}
	rows, err := s.queryStable(ctx, q.String(), p)
	if err != nil {
		return err
	}
	return s.readerDB().ScanRows(ctx, rows, dest...)
}

// queryStable runs text, written with p's placeholders, through its
// prepared statement (or directly when the cache is full), and tells the
// hooks.
func (s *Store) queryStable(ctx context.Context, text string, p *params) (*sql.Rows, error) {
	db := s.readerDB()
	stmt, err := s.stmts.get(ctx, db, text)
	if err != nil {
		return nil, err
	}
	var rows *sql.Rows
	if stmt != nil {
		rows, err = stmt.QueryContext(ctx, p.args...)
	} else {
		rows, err = db.DB.QueryContext(ctx, text, p.args...)
	}
	s.hooks.ran(text, text, p.args)
	return rows, err
}

// scanRows runs the query text (built with p) and calls fn on each of
// its rows: for the hottest reads, whose few columns cost less to scan by
// hand than through bun's models.
func (s *Store) scanRows(ctx context.Context, text string, p *params, fn func(*sql.Rows) error) error {
	var rows *sql.Rows
	var err error
	if p.ph == nil {
		// Values inline (in a transaction, through it): through bun,
		// whose hooks see it.
		rows, err = s.r.QueryContext(ctx, "?", bun.Safe(text))
	} else {
		rows, err = s.queryStable(ctx, text, p)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// stmtCache keeps the prepared statements of a root Store by text.
type stmtCache struct {
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// maxCachedStmts bounds the statements kept; past it, queries of new
// shapes run unprepared (shapes are few: the bound is for the
// unexpected).
const maxCachedStmts = 512

func newStmtCache() *stmtCache { return &stmtCache{stmts: map[string]*sql.Stmt{}} }

// get returns the prepared statement of text, or nil when the cache is
// full.
func (c *stmtCache) get(ctx context.Context, db *bun.DB, text string) (*sql.Stmt, error) {
	c.mu.RLock()
	stmt := c.stmts[text]
	c.mu.RUnlock()
	if stmt != nil {
		return stmt, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if stmt := c.stmts[text]; stmt != nil {
		return stmt, nil
	}
	if len(c.stmts) >= maxCachedStmts {
		return nil, nil
	}
	stmt, err := db.DB.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	c.stmts[text] = stmt
	return stmt, nil
}

// close closes the statements (the Store is closing).
func (c *stmtCache) close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for text, stmt := range c.stmts {
		errs = append(errs, stmt.Close())
		delete(c.stmts, text)
	}
	return errors.Join(errs...)
}
