package bunstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// scheduledFixture makes a realm, a sender and a pending message due at 5.
func scheduledFixture(t *testing.T, s *Store) (realmID, senderID int64, m *storage.ScheduledMessage) {
	t.Helper()
	ctx := t.Context()
	r := &storage.Realm{StringID: "acme", Host: "acme.example.com"}
	require.NoError(t, s.CreateRealm(ctx, r))
	u := &storage.User{RealmID: r.ID, Email: "a@example.com", IsActive: true}
	require.NoError(t, s.CreateUser(ctx, u))
	m = &storage.ScheduledMessage{RealmID: r.ID, SenderID: u.ID, Recipients: "[1]", Content: "x", ScheduledTimestamp: 5}
	require.NoError(t, s.CreateScheduledMessage(ctx, m))
	return r.ID, u.ID, m
}

// On PostgreSQL a claim never waits for another transaction's claim of
// the same row: it skips the locked row and reports it not claimable.
func TestPostgresScheduledClaimSkipsLockedRow(t *testing.T) {
	s := OpenTestPostgres(t)
	ctx := t.Context()
	realmID, _, m := scheduledFixture(t, s)
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.InTx(ctx, func(tx storage.Store) error {
			err := tx.ClaimScheduledMessage(ctx, realmID, m.ID, 1, 1)
			close(holding)
			<-release
			return err
		})
	}()
	<-holding
	second := make(chan error, 1)
	start := time.Now()
	go func() { second <- s.ClaimScheduledMessage(ctx, realmID, m.ID, 1, 2) }()
	select {
	case err := <-second:
		assert.ErrorIs(t, err, storage.ErrNotFound)
		assert.Less(t, time.Since(start), 5*time.Second)
	case <-time.After(5 * time.Second):
		t.Error("the second claim waited for the first")
	}
	close(release)
	require.NoError(t, <-first)
	if t.Failed() {
		<-second
	}
}

// The scheduler's queries read the partial indexes, so a tick costs the
// same however many messages wait for later or were sent: the plans name
// the indexes (PostgreSQL is told not to prefer a scan of the small test
// table).
func TestScheduledQueriesUseIndexes(t *testing.T) {
	for _, name := range []string{DialectSQLite, DialectPostgres} {
		t.Run(name, func(t *testing.T) {
			var s *Store
			if name == DialectSQLite {
				s = OpenTestSQLite(t)
			} else {
				s = OpenTestPostgres(t)
			}
			realmID, senderID, _ := scheduledFixture(t, s)
			ctx := t.Context()
			// Many messages for later, and as many sent, as the planner
			// sees them after ANALYZE.
			require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
				for i := range 2000 {
					m := &storage.ScheduledMessage{RealmID: realmID, SenderID: senderID, Recipients: "[1]", ScheduledTimestamp: int64(1_000_000 + i)}
					if err := tx.CreateScheduledMessage(ctx, m); err != nil {
						return err
					}
					if i%2 == 0 {
						if err := tx.ClaimScheduledMessage(ctx, realmID, m.ID, 1, int64(i)); err != nil {
							return err
						}
					}
				}
				return nil
			}))
			require.NoError(t, s.Analyze(ctx))
			var plans []string
			s.OnQuery(func(q string) {
				if strings.Contains(q, `"scheduled_messages"`) && strings.HasPrefix(q, "SELECT") {
					plans = append(plans, q)
				}
			})
			_, err := s.ListDueScheduledMessages(ctx, 100, storage.ScheduledCursor{Timestamp: 1, ID: 1}, 10)
			require.NoError(t, err)
			_, _, err = s.NextScheduledDelivery(ctx)
			require.NoError(t, err)
			_, err = s.ListScheduledMessages(ctx, realmID, senderID)
			require.NoError(t, err)
			require.Len(t, plans, 3)
			for i, want := range []string{"scheduled_messages_due_idx", "scheduled_messages_due_idx", "scheduled_messages_sender_idx"} {
				assert.Contains(t, explain(t, s, plans[i]), want, plans[i])
			}
		})
	}
}

// explain returns the query plan of q, as text.
func explain(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	var out []string
	if s.Dialect() == DialectSQLite {
		rows, err := s.reader.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			out = append(out, detail)
		}
		require.NoError(t, rows.Err())
		return strings.Join(out, "\n")
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off")
	require.NoError(t, err)
	rows, err := tx.QueryContext(ctx, "EXPLAIN "+q, args...)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		out = append(out, line)
	}
	require.NoError(t, rows.Err())
	return strings.Join(out, "\n")
}
