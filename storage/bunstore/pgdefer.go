package bunstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/uptrace/bun/driver/pgdriver"
)

// Fewer round trips inside PostgreSQL transactions.
//
// pgdriver sends every statement as a simple query and waits for its
// answer, so a transaction of a lock, two inserts and a notification
// costs BEGIN, four statements and COMMIT: six round trips, during most of
// which the transaction holds its locks. With the database a millisecond
// away that is what bounds an organization's writes.
//
// A simple query may carry several statements, run in order, stopping at
// the first error; the connection wrapper below uses that. Inside a
// transaction, a statement whose result nobody reads (it returns no rows
// and its caller ignores the count: an insert with a known key, a lock
// taken by a procedure, a notification) is not sent when issued but kept,
// and goes out ahead of the next statement that needs an answer, or ahead
// of COMMIT; BEGIN itself waits the same way. A write transaction that
// only writes thus costs one round trip for all its statements and its
// commit. Its statements still run in the order they were issued, so it
// means what it would have meant one statement at a time; only an error
// surfaces later, at the statement (or the commit) that carried it, and
// fails the transaction all the same.
//
// A statement is kept only when its context says so (deferrable), only
// inside a transaction, and only when it has no arguments (bun writes
// them into the text).

type deferKey struct{}

// deferrable marks ctx for a statement whose result its caller ignores
// and which returns no rows.
func deferrable(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferKey{}, true)
}

func isDeferrable(ctx context.Context) bool {
	v, _ := ctx.Value(deferKey{}).(bool)
	return v
}

// deferConnector wraps pgdriver's connector.
type deferConnector struct {
	inner *pgdriver.Connector
	// trips counts the simple queries its connections sent (for tests).
	trips atomic.Int64
}

func (c *deferConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &deferConn{Conn: cn.(*pgdriver.Conn), trips: &c.trips}, nil
}

// Driver is pgdriver's, so that pgdriver.NewListener finds its connector.
func (c *deferConnector) Driver() driver.Driver { return c.inner.Driver() }

// deferConn is a pgdriver connection that keeps deferrable statements of
// a transaction until the next one that must be answered.
type deferConn struct {
	*pgdriver.Conn
	trips *atomic.Int64
	// pending are kept statements (each ending with ";"), BEGIN first
	// while the transaction has not been opened on the server.
	pending strings.Builder
	inTx    bool
	// begun: the server has opened the transaction (BEGIN was sent).
	begun bool
	// failed: a statement of the transaction failed; it can only roll back.
	failed error
}

var (
	_ driver.ConnBeginTx        = (*deferConn)(nil)
	_ driver.ExecerContext      = (*deferConn)(nil)
	_ driver.QueryerContext     = (*deferConn)(nil)
	_ driver.ConnPrepareContext = (*deferConn)(nil)
	_ driver.SessionResetter    = (*deferConn)(nil)
	_ driver.Validator          = (*deferConn)(nil)
	_ driver.Pinger             = (*deferConn)(nil)
)

func (cn *deferConn) Begin() (driver.Tx, error) {
	return cn.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx keeps BEGIN for the transaction's first statement.
func (cn *deferConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if cn.inTx {
		return nil, errors.New("bunstore: nested transaction")
	}
	cn.pending.Reset()
	cn.pending.WriteString("BEGIN")
	switch level := sql.IsolationLevel(opts.Isolation); level {
	case sql.LevelDefault:
	case sql.LevelReadUncommitted, sql.LevelReadCommitted, sql.LevelRepeatableRead, sql.LevelSerializable:
		cn.pending.WriteString(" ISOLATION LEVEL " + strings.ToUpper(level.String()))
	default:
		return nil, fmt.Errorf("bunstore: unsupported isolation level %s", level)
	}
	if opts.ReadOnly {
		cn.pending.WriteString(" READ ONLY")
	}
	cn.pending.WriteString(";")
	cn.inTx, cn.begun, cn.failed = true, false, nil
	return &deferTx{cn: cn}, nil
}

// take returns the kept statements followed by query, and forgets them;
// the caller sends the result.
func (cn *deferConn) take(query string) string {
	cn.trips.Add(1)
	if cn.pending.Len() == 0 {
		return query
	}
	if strings.HasPrefix(cn.pending.String(), "BEGIN") {
		cn.begun = true
	}
	q := cn.pending.String() + "\n" + query
	cn.pending.Reset()
	return q
}

func (cn *deferConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if cn.inTx && cn.failed != nil {
		return nil, cn.failed
	}
	if cn.inTx && len(args) == 0 && isDeferrable(ctx) {
		cn.pending.WriteString(query)
		cn.pending.WriteString(";")
		return driver.RowsAffected(0), nil
	}
	if len(args) > 0 {
		// The driver would replace $n in the kept statements' text too:
		// send them on their own first.
		if err := cn.flush(ctx); err != nil {
			return nil, err
		}
	}
	res, err := cn.Conn.ExecContext(ctx, cn.take(query), args)
	return res, cn.note(err)
}

func (cn *deferConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if cn.inTx && cn.failed != nil {
		return nil, cn.failed
	}
	if len(args) > 0 {
		if err := cn.flush(ctx); err != nil {
			return nil, err
		}
	}
	rows, err := cn.Conn.QueryContext(ctx, cn.take(query), args)
	return rows, cn.note(err)
}

// PrepareContext sends what is kept first: a prepared statement travels
// apart from simple queries.
func (cn *deferConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := cn.flush(ctx); err != nil {
		return nil, err
	}
	st, err := cn.Conn.PrepareContext(ctx, query)
	if err != nil {
		guardConn(cn.Conn, err)
		return nil, err
	}
	return &guardedStmt{Stmt: st, cn: cn.Conn}, nil
}

// guardedStmt closes its connection when a run fails other than by the
// server's answer (a timeout, a broken connection): pgdriver does so for
// simple queries but not for preparing or running prepared statements, and
// would hand the connection back to the pool with the rest of the old
// answer still unread, for the next query to trip over ("unexpected
// message").
type guardedStmt struct {
	driver.Stmt
	cn *pgdriver.Conn
}

func (s *guardedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	res, err := s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	s.guard(err)
	return res, err
}

func (s *guardedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	s.guard(err)
	return rows, err
}

func (s *guardedStmt) guard(err error) { guardConn(s.cn, err) }

// guardConn closes cn after an error that was not the server's answer.
func guardConn(cn *pgdriver.Conn, err error) {
	var pe pgdriver.Error
	if err != nil && !errors.As(err, &pe) {
		_ = cn.Close()
	}
}

func (cn *deferConn) Prepare(query string) (driver.Stmt, error) {
	return cn.PrepareContext(context.Background(), query)
}

// flush sends the kept statements on their own.
func (cn *deferConn) flush(ctx context.Context) error {
	if cn.inTx && cn.failed != nil {
		return cn.failed
	}
	if cn.pending.Len() == 0 {
		return nil
	}
	_, err := cn.Conn.ExecContext(ctx, cn.take(""), nil)
	return cn.note(err)
}

// note remembers that the transaction failed.
func (cn *deferConn) note(err error) error {
	if err != nil && cn.inTx && cn.failed == nil {
		cn.failed = err
	}
	return err
}

func (cn *deferConn) ResetSession(ctx context.Context) error {
	if cn.inTx || cn.pending.Len() > 0 {
		return driver.ErrBadConn // a transaction left open: never reuse
	}
	return cn.Conn.ResetSession(ctx)
}

func (cn *deferConn) IsValid() bool { return !cn.inTx && cn.pending.Len() == 0 && cn.Conn.IsValid() }

// deferTx commits with the kept statements in the same round trip.
type deferTx struct {
	cn *deferConn
}

func (t *deferTx) Commit() error {
	cn := t.cn
	defer t.end()
	if cn.failed != nil {
		_ = t.rollback()
		return fmt.Errorf("bunstore: commit after a failed statement: %w", cn.failed)
	}
	if !cn.begun && cn.pending.String() == "BEGIN;" {
		cn.pending.Reset()
		return nil // nothing was done
	}
	_, err := cn.Conn.ExecContext(context.Background(), cn.take("COMMIT"), nil)
	if err != nil {
		// A kept statement failed before COMMIT ran, leaving the
		// transaction open: end it. (After a failed COMMIT there is no
		// transaction; PostgreSQL only warns.)
		_, _ = cn.Conn.ExecContext(context.Background(), "ROLLBACK", nil)
	}
	return err
}

func (t *deferTx) Rollback() error {
	defer t.end()
	return t.rollback()
}

func (t *deferTx) rollback() error {
	cn := t.cn
	cn.pending.Reset()
	if !cn.begun {
		return nil // the server never saw the transaction
	}
	cn.trips.Add(1)
	_, err := cn.Conn.ExecContext(context.Background(), "ROLLBACK", nil)
	cn.begun = false
	return err
}

func (t *deferTx) end() {
	t.cn.inTx, t.cn.begun, t.cn.failed = false, false, nil
	t.cn.pending.Reset()
}
