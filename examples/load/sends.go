package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"
)

// postgresCeiling runs, for dur, transactions of one message row and ten
// small per-user rows on PostgreSQL through pgdriver, the server's driver,
// with the server's default pool (four connections per CPU) and conc
// goroutines: BEGIN, the message with RETURNING id, the ten rows in one
// multi-row INSERT, COMMIT. Its tables live in a schema of their own,
// dropped afterwards.
func postgresCeiling(dsn string, conc int, dur time.Duration) (float64, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Hostname() == "" {
		return 0, fmt.Errorf("-ceiling-db: not a postgres:// DSN")
	}
	if err := checkLoopback("http://" + u.Host); err != nil {
		return 0, err
	}
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
	defer db.Close()
	pool := 4 * runtime.GOMAXPROCS(0)
	db.SetMaxOpenConns(pool)
	db.SetMaxIdleConns(pool)
	ctx := context.Background()
	schema := fmt.Sprintf("teamchat_ceiling_%d", time.Now().UnixNano())
	for _, stmt := range []string{
		"CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + `.messages (id BIGSERIAL PRIMARY KEY, realm_id BIGINT NOT NULL, sender_id BIGINT NOT NULL,
			stream_id BIGINT, topic TEXT NOT NULL, content TEXT NOT NULL, rendered_content TEXT NOT NULL, date_sent BIGINT NOT NULL)`,
		"CREATE INDEX ON " + schema + ".messages (realm_id, stream_id, id)",
		"CREATE TABLE " + schema + `.user_messages (realm_id BIGINT NOT NULL, user_id BIGINT NOT NULL,
			message_id BIGINT NOT NULL REFERENCES ` + schema + `.messages (id), flags BIGINT NOT NULL, PRIMARY KEY (realm_id, user_id, message_id))`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return 0, fmt.Errorf("ceiling: %w", err)
		}
	}
	defer db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") //nolint:errcheck // best effort
	rate, n, err := runCeiling(conc, dur, func(ctx context.Context, worker, i int) error {
		return postgresCeilingTx(ctx, db, schema, worker, i)
	})
	if err != nil {
		return 0, err
	}
	fmt.Printf("ceiling: raw PostgreSQL through pgdriver (%d connections), 1 message + 10 rows per transaction, %d goroutines: %d transactions, %.0f per second\n",
		pool, conc, n, rate)
	return rate, nil
}

func postgresCeilingTx(ctx context.Context, db *sql.DB, schema string, worker, i int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var id int64
	err = tx.QueryRowContext(ctx, "INSERT INTO "+schema+`.messages (realm_id, sender_id, stream_id, topic, content, rendered_content, date_sent)
		VALUES (1, $1, 1, $2, $3, $4, $5) RETURNING id`, worker+1, fmt.Sprintf("load %d", i%10),
		"Load message **x**, sent by examples/load.", "<p>Load message <strong>x</strong>, sent by examples/load.</p>", time.Now().Unix()).Scan(&id)
	if err != nil {
		return err
	}
	var rows strings.Builder
	for u := range 10 {
		if u > 0 {
			rows.WriteString(", ")
		}
		fmt.Fprintf(&rows, "(1, %d, %d, 0)", u+1, id)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+schema+".user_messages (realm_id, user_id, message_id, flags) VALUES "+rows.String()); err != nil {
		return err
	}
	return tx.Commit()
}

// sendsBesideReads loads the sends alone, then the same sends beside
// readers clients GETting t.path, and prints both rates and their ratio.
func sendsBesideReads(t target, senders, readers int, dur time.Duration, maxReq int64) error {
	fmt.Println("sends alone:")
	alone, err := loadStats(t, senders, dur, maxReq)
	if err != nil {
		return err
	}
	fmt.Printf("sends beside %d readers:\n", readers)
	reads := t
	reads.channel = ""
	var wg sync.WaitGroup
	var readStats stats
	var readErr error
	wg.Go(func() { readStats, readErr = loadStats(reads, readers, dur, maxReq) })
	mixed, err := loadStats(t, senders, dur, maxReq)
	wg.Wait()
	if err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	fmt.Printf("sends beside reads / alone: %.0f / %.0f per second = %.1f%% (p99 %v); reads %.0f per second (p99 %v)\n",
		mixed.rps, alone.rps, 100*mixed.rps/alone.rps, mixed.p99, readStats.rps, readStats.p99)
	return nil
}

// ensureChannel makes t's channel, if missing, with the owner (t's
// credentials) and members-1 other users loadN@example.com (made if
// missing) subscribed, through the REST API of the first server.
func ensureChannel(t target, members int) error {
	base := t.bases[0]
	if err := checkLoopback(base); err != nil {
		return err
	}
	call := func(method, path string, form url.Values, out any) error {
		req, err := http.NewRequest(method, base+"/api/v1"+path, strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(t.email, t.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s %s: %s", method, path, body)
		}
		if out != nil {
			return json.Unmarshal(body, out)
		}
		return nil
	}
	var users struct {
		Members []struct {
			UserID int64  `json:"user_id"`
			Email  string `json:"email"`
		} `json:"members"`
	}
	if err := call("GET", "/users", nil, &users); err != nil {
		return err
	}
	have := map[string]int64{}
	for _, u := range users.Members {
		have[u.Email] = u.UserID
	}
	ids := []int64{have[t.email]}
	for i := 1; i < members; i++ {
		email := fmt.Sprintf("load%d@example.com", i)
		id, ok := have[email]
		if !ok {
			var made struct {
				UserID int64 `json:"user_id"`
			}
			if err := call("POST", "/users", url.Values{"email": {email}, "password": {"load test password " + email},
				"full_name": {fmt.Sprintf("Load %d", i)}}, &made); err != nil {
				return err
			}
			id = made.UserID
		}
		ids = append(ids, id)
	}
	subs, _ := json.Marshal([]map[string]string{{"name": t.channel}})
	principals, _ := json.Marshal(ids)
	if err := call("POST", "/users/me/subscriptions", url.Values{"subscriptions": {string(subs)},
		"principals": {string(principals)}}, nil); err != nil {
		return err
	}
	fmt.Printf("channel %q: the owner and %d other users subscribed\n", t.channel, members-1)
	return nil
}
