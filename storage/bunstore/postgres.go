package bunstore

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"runtime"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// PostgresOption configures OpenPostgres.
type PostgresOption func(*postgresConfig)

type postgresConfig struct {
	schema   string
	maxConns int
}

// WithMaxConns sets the size of the connection pool (the default is four
// per CPU, the least is two). The Service keeps its write transactions
// to half of it (MaxConcurrentWrites), so reads always find a connection.
func WithMaxConns(n int) PostgresOption {
	return func(c *postgresConfig) { c.maxConns = n }
}

// WithSchema sets the search_path of every connection to schema, so that
// the Store's tables (and bun's migration tables) live in that schema. The
// schema must already exist.
func WithSchema(name string) PostgresOption {
	return func(c *postgresConfig) { c.schema = name }
}

// OpenPostgres connects to the PostgreSQL database named by dsn
// (postgres://user:pass@host:port/db?sslmode=disable) and applies pending
// migrations. Migrations of concurrent openers are serialized with an
// advisory lock keyed by the current schema.
func OpenPostgres(ctx context.Context, dsn string, opts ...PostgresOption) (*Store, error) {
	var cfg postgresConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	connector, err := newPostgresConnector(dsn, cfg)
	if err != nil {
		return nil, err
	}
	dc := &deferConnector{inner: connector}
	sqldb := sql.OpenDB(dc)
	maxConns := 4 * runtime.GOMAXPROCS(0)
	if cfg.maxConns > 0 {
		maxConns = max(2, cfg.maxConns) // migrations hold one and run on another
	}
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns)
	db := bun.NewDB(sqldb, pgdialect.New())

	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("bunstore: connect to postgres: %w", err)
	}
	if err := migratePostgres(ctx, db); err != nil {
		_ = db.Close()
		return nil, err
	}
	prepared, err := prepareStmts(ctx, db, postgresOps)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	var schema string
	if err := db.QueryRowContext(ctx, "SELECT coalesce(current_schema(), '')").Scan(&schema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("bunstore: current schema: %w", err)
	}
	hooks := newQueryHooks(db)
	return &Store{ops: postgresOps, w: db, r: db, writer: db, prepared: prepared, stmts: newStmtCache(), hooks: hooks, pgTrips: &dc.trips,
		channel: eventChannel(schema), analyzer: startAnalyzer(db, analyzeFirst, analyzeEvery)}, nil
}

// newPostgresConnector parses dsn (pgdriver.WithDSN panics on a bad DSN;
// that becomes an error here) and adds the search_path connection
// parameter to the ones given in the DSN.
func newPostgresConnector(dsn string, cfg postgresConfig) (c *pgdriver.Connector, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("bunstore: postgres dsn: %v", r)
		}
	}()
	c = pgdriver.NewConnector(pgdriver.WithDSN(dsn))
	params := maps.Clone(c.Config().ConnParams)
	if params == nil {
		params = map[string]any{}
	}
	if cfg.schema != "" {
		params["search_path"] = cfg.schema
	}
	// No JIT compilation: the store's statements run in milliseconds,
	// and PostgreSQL compiles a statement whose estimated cost passes
	// jit_above_cost, which an estimate made without statistics, or a
	// LATERAL subquery costed once per row, easily does; the compiling
	// then takes hundreds of milliseconds to seconds. (A DSN that sets
	// jit keeps its value.)
	if _, ok := params["jit"]; !ok {
		params["jit"] = "off"
	}
	return pgdriver.NewConnector(pgdriver.WithDSN(dsn), pgdriver.WithConnParams(params)), nil
}

// migratePostgres runs migrateDB while holding a session advisory lock on a
// dedicated connection, so that two processes opening the same schema at
// once do not both try to create it.
func migratePostgres(ctx context.Context, db *bun.DB) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("bunstore: migrate: %w", err)
	}
	defer conn.Close()
	const lockKey = "SELECT pg_advisory_lock(7411, hashtext(coalesce(current_schema(), '')))"
	if _, err := conn.ExecContext(ctx, lockKey); err != nil {
		return fmt.Errorf("bunstore: migrate: lock: %w", err)
	}
	defer func() {
		_, uerr := conn.ExecContext(context.WithoutCancel(ctx),
			"SELECT pg_advisory_unlock(7411, hashtext(coalesce(current_schema(), '')))")
		if uerr != nil && err == nil {
			err = fmt.Errorf("bunstore: migrate: unlock: %w", uerr)
		}
	}()
	return migrateDB(ctx, db)
}
