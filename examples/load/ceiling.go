package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// compareCeiling measures the raw database ceiling for a send (go-sqlite3,
// or PostgreSQL through pgdriver when dsn is given), then the target's
// sends, with the same concurrency, and prints the ratio.
func compareCeiling(t target, dsn string, conc int, dur time.Duration, maxReq int64) error {
	if t.channel == "" {
		return fmt.Errorf("-ceiling compares sends: give -send CHANNEL")
	}
	var floor float64
	var err error
	if dsn != "" {
		floor, err = postgresCeiling(dsn, conc, dur)
	} else {
		floor, err = sqliteCeiling(conc, dur)
	}
	if err != nil {
		return err
	}
	fmt.Println("target:")
	got, err := load(t, conc, dur, maxReq)
	if err != nil {
		return err
	}
	fmt.Printf("sends / ceiling: %.0f / %.0f per second = %.1f%%\n", got, floor, 100*got/floor)
	return nil
}

// sqliteCeiling runs, for dur, transactions of one message row and ten
// small per-user rows on a fresh SQLite file with the server's writer
// settings (WAL, synchronous=NORMAL, foreign keys, one writer connection,
// BEGIN IMMEDIATE), prepared statements, and conc goroutines.
func sqliteCeiling(conc int, dur time.Duration) (float64, error) {
	dir, err := os.MkdirTemp("", "teamchat-ceiling")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	dsn := "file:" + filepath.Join(dir, "ceiling.db") +
		"?_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=1&_busy_timeout=5000&_txlock=immediate"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{
		`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, realm_id BIGINT NOT NULL, sender_id BIGINT NOT NULL,
			stream_id BIGINT, topic TEXT NOT NULL, content TEXT NOT NULL, rendered_content TEXT NOT NULL, date_sent BIGINT NOT NULL)`,
		`CREATE INDEX messages_stream_idx ON messages (realm_id, stream_id, id)`,
		`CREATE TABLE user_messages (realm_id BIGINT NOT NULL, user_id BIGINT NOT NULL, message_id BIGINT NOT NULL REFERENCES messages (id),
			flags BIGINT NOT NULL, PRIMARY KEY (realm_id, user_id, message_id))`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			return 0, err
		}
	}
	insMsg, err := db.Prepare(`INSERT INTO messages (realm_id, sender_id, stream_id, topic, content, rendered_content, date_sent) VALUES (1, ?, 1, ?, ?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	insRow, err := db.Prepare(`INSERT INTO user_messages (realm_id, user_id, message_id, flags) VALUES (1, ?, ?, 0)`)
	if err != nil {
		return 0, err
	}
	rate, n, err := runCeiling(conc, dur, func(ctx context.Context, worker, i int) error {
		return ceilingTx(ctx, db, insMsg, insRow, worker, i)
	})
	if err != nil {
		return 0, err
	}
	fmt.Printf("ceiling: raw go-sqlite3, 1 message + 10 rows per transaction, %d goroutines: %d transactions, %.0f per second\n", conc, n, rate)
	return rate, nil
}

// runCeiling runs tx in conc goroutines for dur and returns the
// transactions per second and their number (or the first error).
func runCeiling(conc int, dur time.Duration, tx func(ctx context.Context, worker, i int) error) (float64, int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	deadline, _ := ctx.Deadline()
	var done atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				if err := tx(ctx, w, i); err != nil {
					// A connection's deadline (the context's, set by the
					// driver) can pass a moment before the context ends.
					if ctx.Err() == nil && time.Until(deadline) > 50*time.Millisecond {
						firstErr.CompareAndSwap(nil, err)
					}
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, 0, err
	}
	return float64(done.Load()) / time.Since(start).Seconds(), done.Load(), nil
}

func ceilingTx(ctx context.Context, db *sql.DB, insMsg, insRow *sql.Stmt, worker, i int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	res, err := tx.StmtContext(ctx, insMsg).ExecContext(ctx, worker+1, fmt.Sprintf("load %d", i%10),
		"Load message **x**, sent by examples/load.", "<p>Load message <strong>x</strong>, sent by examples/load.</p>", time.Now().Unix())
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	row := tx.StmtContext(ctx, insRow)
	for u := range 10 {
		if _, err := row.ExecContext(ctx, u+1, id); err != nil {
			return err
		}
	}
	return tx.Commit()
}
