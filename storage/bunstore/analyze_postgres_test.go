package bunstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// When a table is due an ANALYZE: never analyzed and holding
// analyzeMinRows rows, or changed by as many rows as it held (at least
// analyzeMinRows) since; never when the operator turned its autovacuum
// off.
func TestAnalyzeDue(t *testing.T) {
	for _, c := range []struct {
		name string
		t    tableCounts
		want bool
	}{
		{"never analyzed, small", tableCounts{Tuples: -1, Live: 999, Modified: 999, Never: true}, false},
		{"never analyzed, grown", tableCounts{Tuples: -1, Live: 1000, Modified: 1000, Never: true}, true},
		{"vacuumed but never analyzed", tableCounts{Tuples: 5000, Live: 5000, Never: true}, true},
		{"analyzed, changed by less than it held", tableCounts{Tuples: 40000, Live: 70000, Modified: 39999}, false},
		{"analyzed, doubled", tableCounts{Tuples: 40000, Live: 80000, Modified: 40000}, true},
		{"analyzed empty, a few rows since", tableCounts{Tuples: 0, Live: 500, Modified: 500}, false},
		{"analyzed empty, grown", tableCounts{Tuples: 0, Live: 1000, Modified: 1000}, true},
		{"autovacuum off", tableCounts{Tuples: -1, Live: 9000, Never: true, Options: []string{"fillfactor=90", "autovacuum_enabled=false"}}, false},
		{"autovacuum off, spelled off", tableCounts{Tuples: -1, Live: 9000, Never: true, Options: []string{"autovacuum_enabled=off"}}, false},
		{"autovacuum on", tableCounts{Tuples: -1, Live: 9000, Never: true, Options: []string{"autovacuum_enabled=on"}}, true},
	} {
		assert.Equal(t, c.want, c.t.needsAnalyze(), c.name)
	}
}

// A PostgreSQL Store analyzes a table of its schema that grew, in the
// background: here messages, filled with 2,000 rows it was never
// analyzed with (autovacuum kept away by a threshold it cannot reach),
// gets its first ANALYZE (last_analyze: by hand, which autovacuum never
// sets) from the store's analyzer, and a pass finds nothing more due.
func TestPostgresAnalyzesGrownTables(t *testing.T) {
	s := OpenTestPostgres(t)
	ctx := t.Context()
	r, _, _ := scheduledFixture(t, s)
	_, err := s.writer.ExecContext(ctx, "ALTER TABLE messages SET (autovacuum_analyze_threshold = 2000000000)")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := s.writer.ExecContext(context.Background(), "ALTER TABLE messages RESET (autovacuum_analyze_threshold)")
		assert.NoError(t, err)
	})
	conn, err := s.writer.DB.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `INSERT INTO streams (realm_id, name, name_key) VALUES ($1, 'c', 'c')`, r)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `INSERT INTO messages (realm_id, sender_id, stream_id, content, rendered_content, date_sent)
		SELECT $1, u.id, st.id, 'x', 'x', 1 FROM users AS u, streams AS st, generate_series(1, 2000)
		WHERE u.realm_id = $1 AND st.realm_id = $1`, r)
	require.NoError(t, err)
	// The counts reach the statistics PostgreSQL shares once the session
	// flushes them.
	_, err = conn.ExecContext(ctx, "SELECT pg_stat_force_next_flush()")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "SELECT 1")
	require.NoError(t, err)

	lastAnalyze := func() *time.Time {
		var at *time.Time
		require.NoError(t, s.writer.NewRaw(`SELECT last_analyze FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND relname = 'messages'`).Scan(ctx, &at))
		return at
	}
	require.Nil(t, lastAnalyze())
	a := startAnalyzer(s.writer, 0, time.Hour)
	defer a.stop()
	require.Eventually(t, func() bool { return lastAnalyze() != nil }, 10*time.Second, 20*time.Millisecond)
	a.stop()

	due, err := analyzeGrown(context.Background(), s.writer)
	require.NoError(t, err)
	assert.Empty(t, due, "analyzed already")
}
