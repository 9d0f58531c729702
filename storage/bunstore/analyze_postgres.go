package bunstore

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// Statistics for the tables the store grows, on PostgreSQL.
//
// The hot statements are written to keep their plans without planner
// statistics (window_postgres.go); the others (searches, narrows few
// messages match, administration) are planned with them. PostgreSQL's
// autovacuum analyzes a table once a tenth of it has changed, but on its
// own schedule: its workers visit one database a minute at most and may
// be busy elsewhere, and a database created minutes ago, an organization
// just imported, can wait for minutes with its largest tables never
// analyzed. So a PostgreSQL Store looks, every analyzeEvery and in the
// background (never on a request's path), at the row counts PostgreSQL
// keeps for the tables of its schema (pg_stat_user_tables, one catalog
// read), and analyzes a table that was never analyzed once it holds
// analyzeMinRows rows, or that has changed by as many rows as it held
// at its last analysis (at least analyzeMinRows): a backstop for when
// autovacuum lags, not a second autovacuum. Several servers on one
// database take turns through an advisory lock, and the one that holds
// it reads the counts again, so a table is analyzed once. A table whose
// autovacuum the operator turned off (autovacuum_enabled = false) is left
// alone: they decide when it is analyzed.

// Defaults of the analyzer.
const (
	analyzeEvery   = 30 * time.Second
	analyzeFirst   = 2 * time.Second
	analyzeMinRows = 1000
	// analyzeLockSpace is the first key of the advisory lock the servers
	// of a schema take turns on (the second is the schema's name hashed).
	analyzeLockSpace = 7415
)

// tableCounts are PostgreSQL's counts of one table.
type tableCounts struct {
	Name string `bun:"relname"`
	// Tuples is the row count of the last VACUUM or ANALYZE (-1: none).
	Tuples   float64 `bun:"reltuples"`
	Live     int64   `bun:"n_live_tup"`
	Modified int64   `bun:"n_mod_since_analyze"`
	// Never: no ANALYZE ever ran on the table (by hand or autovacuum).
	Never bool `bun:"never"`
	// Options are the table's storage parameters.
	Options []string `bun:"reloptions,array"`
}

// needsAnalyze reports whether the table is due an ANALYZE.
func (c tableCounts) needsAnalyze() bool {
	for _, o := range c.Options {
		name, value, _ := strings.Cut(o, "=")
		if name == "autovacuum_enabled" && isFalse(value) {
			return false
		}
	}
	if c.Never {
		return c.Live >= analyzeMinRows
	}
	return c.Modified >= max(analyzeMinRows, int64(c.Tuples))
}

// isFalse reads a boolean storage parameter as PostgreSQL does (any
// unambiguous prefix of false, off, no, or 0).
func isFalse(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return false
	}
	if v == "0" {
		return true
	}
	for _, word := range []string{"false", "no"} {
		if strings.HasPrefix(word, v) {
			return true
		}
	}
	return len(v) >= 2 && strings.HasPrefix("off", v)
}

// analyzer runs analyzeGrown in the background until stopped.
type analyzer struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// startAnalyzer checks db's tables first after first, then every every.
func startAnalyzer(db *bun.DB, first, every time.Duration) *analyzer {
	ctx, cancel := context.WithCancel(context.Background())
	a := &analyzer{cancel: cancel}
	a.done.Add(1)
	go func() {
		defer a.done.Done()
		t := time.NewTimer(first)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// An error (the database away, a lock timeout) waits for the
			// next turn; nothing depends on one pass.
			_, _ = analyzeGrown(ctx, db)
			t.Reset(every)
		}
	}()
	return a
}

// stop ends the analyzer and waits for a pass under way.
func (a *analyzer) stop() {
	if a == nil {
		return
	}
	a.cancel()
	a.done.Wait()
}

// analyzeGrown analyzes the tables of the schema that are due, under the
// servers' advisory lock (another server's pass under way: nothing), and
// returns their names.
func analyzeGrown(ctx context.Context, db *bun.DB) ([]string, error) {
	var due []string
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var mine bool
		if err := tx.NewRaw("SELECT pg_try_advisory_xact_lock(?, hashtext(coalesce(current_schema(), '')))", analyzeLockSpace).Scan(ctx, &mine); err != nil || !mine {
			return err
		}
		var tables []tableCounts
		err := tx.NewRaw(`SELECT s.relname, c.reltuples, s.n_live_tup, s.n_mod_since_analyze,
				s.last_analyze IS NULL AND s.last_autoanalyze IS NULL AS never, c.reloptions
			FROM pg_stat_user_tables AS s JOIN pg_class AS c ON c.oid = s.relid
			WHERE s.schemaname = current_schema() ORDER BY s.relname`).Scan(ctx, &tables)
		if err != nil {
			return err
		}
		for _, t := range tables {
			if !t.needsAnalyze() {
				continue
			}
			if _, err := tx.ExecContext(ctx, "ANALYZE ?", bun.Ident(t.Name)); err != nil {
				return err
			}
			due = append(due, t.Name)
		}
		return nil
	})
	return due, err
}
