package bunstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// planOrg is the organization the plan tests read: what the statements
// they check are about.
type planOrg struct {
	realmID int64
	// owner is in every channel and 200 direct conversations; member is
	// in the two largest channels; outsider is in the largest only, with
	// historical rows (starred) in the second.
	owner, member, outsider int64
	channels                []int64 // largest first
	conversation            int64   // one of the owner's
	maxID                   int64
}

// planSeed is the organization, written in bulk (a few statements, about
// a second): 1,000 users; ten channels of 1,000 down to 3 subscribers,
// some unsubscribed, some subscribed twice (two periods); 40,000
// messages, a tenth direct (200 conversations of the owner with one
// other user, 50 groups of three), in 37 topics per channel; the direct
// messages' rows (read but for the newest), mention rows, the owner's
// starred rows, an outsider's historical rows; read ranges for every
// subscription (most read, some with a second range); followed and muted
// topics; 3,000 reactions on recent messages; 20,000 missed-message
// notifications waiting, due one a second. %[1]d is the realm.
const planSeed = `
INSERT INTO users (realm_id, email, email_key, full_name, full_name_key, is_active, api_key)
	SELECT %[1]d, 'u' || g || '@example.com', 'u' || g || '@example.com', 'User ' || g, 'user ' || g, true, 'key' || g
	FROM generate_series(1, 1000) AS g;
INSERT INTO streams (realm_id, name, name_key, history_public_to_subscribers, invite_only)
	SELECT %[1]d, 'c' || g, 'c' || g, g %% 3 <> 0, g %% 4 = 0 FROM generate_series(1, 10) AS g;
CREATE TEMP TABLE plan_sizes ON COMMIT DROP AS
	SELECT s.id AS stream_id, (ARRAY[1000, 600, 300, 150, 80, 40, 20, 10, 5, 3])[row_number() OVER (ORDER BY s.id)] AS size
	FROM streams AS s WHERE s.realm_id = %[1]d;
INSERT INTO subscriptions (realm_id, user_id, stream_id, active)
	SELECT %[1]d, u.id, z.stream_id, u.id %% 17 <> 5
	FROM plan_sizes AS z JOIN users AS u ON u.realm_id = %[1]d AND u.id <= (SELECT min(id) FROM users WHERE realm_id = %[1]d) + z.size - 1;
INSERT INTO subscription_periods (realm_id, user_id, stream_id, start_message_id, end_message_id, started_at, ended_at)
	SELECT %[1]d, s.user_id, s.stream_id, 0,
		CASE WHEN NOT s.active THEN 30000 WHEN s.user_id %% 7 = 3 THEN 20000 END, 0,
		CASE WHEN NOT s.active OR s.user_id %% 7 = 3 THEN 1 END
	FROM subscriptions AS s WHERE s.realm_id = %[1]d;
INSERT INTO subscription_periods (realm_id, user_id, stream_id, start_message_id, started_at)
	SELECT %[1]d, s.user_id, s.stream_id, 25000, 2 FROM subscriptions AS s
	WHERE s.realm_id = %[1]d AND s.active AND s.user_id %% 7 = 3;
INSERT INTO direct_conversations (realm_id, member_key)
	SELECT %[1]d, CASE WHEN g <= 200 THEN (SELECT min(id) FROM users WHERE realm_id = %[1]d) || ',' || (SELECT min(id) FROM users WHERE realm_id = %[1]d) + g
		ELSE 'group' || g END FROM generate_series(1, 250) AS g ORDER BY g;
INSERT INTO direct_conversation_members (realm_id, conversation_id, user_id)
	SELECT %[1]d, c.id, m.user_id FROM direct_conversations AS c
	CROSS JOIN LATERAL (SELECT min(id) AS first FROM users WHERE realm_id = %[1]d) AS u
	CROSS JOIN LATERAL (SELECT unnest(CASE WHEN c.id - (SELECT min(id) FROM direct_conversations) < 200
		THEN ARRAY[u.first, u.first + 1 + c.id - (SELECT min(id) FROM direct_conversations)]
		ELSE ARRAY[u.first + 100 + c.id %% 50, u.first + 400 + c.id %% 50, u.first + 700 + c.id %% 50] END) AS user_id) AS m
	WHERE c.realm_id = %[1]d;
INSERT INTO messages (realm_id, sender_id, stream_id, conversation_id, topic, topic_key, content, rendered_content, date_sent)
	SELECT %[1]d,
		CASE WHEN g %% 10 = 0 THEN (SELECT min(user_id) FROM direct_conversation_members AS d
			WHERE d.conversation_id = (SELECT min(id) FROM direct_conversations WHERE realm_id = %[1]d) + g / 10 %% 250)
		ELSE (SELECT min(id) FROM users WHERE realm_id = %[1]d) + (g * 7919) %% z.size END,
		CASE WHEN g %% 10 <> 0 THEN z.stream_id END,
		CASE WHEN g %% 10 = 0 THEN (SELECT min(id) FROM direct_conversations WHERE realm_id = %[1]d) + g / 10 %% 250 END,
		CASE WHEN g %% 10 <> 0 THEN 'Topic ' || g %% 37 ELSE '' END,
		CASE WHEN g %% 10 <> 0 THEN 'topic ' || g %% 37 ELSE '' END,
		'message ' || g, '<p>message ' || g || '</p>', 1700000000 + g
	FROM generate_series(1, 40000) AS g
	JOIN plan_sizes AS z ON z.stream_id = (SELECT min(stream_id) FROM plan_sizes) + (ARRAY[0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9])[1 + (g * 31) %% 16]
	ORDER BY g;
INSERT INTO user_messages (realm_id, user_id, message_id, flags)
	SELECT %[1]d, d.user_id, m.id, 2048 | CASE WHEN m.id < (SELECT max(id) - 500 FROM messages) THEN 1 ELSE 0 END
	FROM messages AS m JOIN direct_conversation_members AS d ON d.realm_id = m.realm_id AND d.conversation_id = m.conversation_id
	WHERE m.realm_id = %[1]d;
INSERT INTO user_messages (realm_id, user_id, message_id, flags)
	SELECT %[1]d, (SELECT min(id) FROM users WHERE realm_id = %[1]d) + (m.id * 13) %% z.size, m.id, 8
	FROM messages AS m JOIN plan_sizes AS z ON z.stream_id = m.stream_id WHERE m.realm_id = %[1]d AND m.id %% 50 = 3
	ON CONFLICT DO NOTHING;
INSERT INTO user_messages (realm_id, user_id, message_id, flags)
	SELECT %[1]d, (SELECT min(id) FROM users WHERE realm_id = %[1]d), m.id, 2 | 1
	FROM messages AS m WHERE m.realm_id = %[1]d AND m.stream_id IS NOT NULL AND m.id %% 397 = 1
	ON CONFLICT (realm_id, user_id, message_id) DO UPDATE SET flags = user_messages.flags | 2;
INSERT INTO user_messages (realm_id, user_id, message_id, flags)
	SELECT %[1]d, (SELECT min(id) FROM users WHERE realm_id = %[1]d) + 899, m.id, 2 | 1024 | CASE WHEN m.id %% 2 = 0 THEN 1 ELSE 0 END
	FROM messages AS m WHERE m.realm_id = %[1]d AND m.stream_id = (SELECT min(stream_id) FROM plan_sizes) + 1 AND m.id %% 41 = 0;
INSERT INTO read_ranges (realm_id, user_id, stream_id, first_id, last_id)
	SELECT %[1]d, s.user_id, s.stream_id, 1, 36000 + s.user_id %% 1000 FROM subscriptions AS s WHERE s.realm_id = %[1]d;
INSERT INTO read_ranges (realm_id, user_id, stream_id, first_id, last_id)
	SELECT %[1]d, s.user_id, s.stream_id, 38000, 39000 FROM subscriptions AS s WHERE s.realm_id = %[1]d AND s.user_id %% 3 = 0;
INSERT INTO user_topics (realm_id, user_id, stream_id, topic_name, topic_key, visibility_policy, last_updated)
	SELECT %[1]d, s.user_id, s.stream_id, 'Topic ' || t, 'topic ' || t, CASE WHEN t %% 2 = 0 THEN 3 ELSE 1 END, 1
	FROM subscriptions AS s CROSS JOIN generate_series(1, 3) AS t WHERE s.realm_id = %[1]d AND s.user_id %% 5 = 1;
INSERT INTO pending_notifications (realm_id, user_id, message_id, kind, due_at, created_at)
	SELECT %[1]d, (SELECT min(id) FROM users WHERE realm_id = %[1]d) + (m.id * 13) %% 1000, m.id, 1 + m.id %% 2, 1700000000 + m.id, 1700000000
	FROM messages AS m WHERE m.realm_id = %[1]d AND m.id > (SELECT max(id) - 20000 FROM messages);
INSERT INTO reactions (realm_id, message_id, user_id, reaction_type, emoji_code, emoji_name)
	SELECT %[1]d, m.id, (SELECT min(id) FROM users WHERE realm_id = %[1]d) + (m.id * 7) %% 40, 'unicode_emoji', '1f44d', 'thumbs_up'
	FROM messages AS m WHERE m.realm_id = %[1]d AND m.id > (SELECT max(id) - 3000 FROM messages);
`

// openPlanOrg opens a store on a fresh schema (never analyzed: not one
// of the pool's) and fills it with planSeed.
func openPlanOrg(t *testing.T) (*Store, *planOrg) {
	t.Helper()
	dsn, schema := NewTestPostgresSchema(t)
	s, err := OpenPostgres(t.Context(), dsn, WithSchema(schema))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	// The store's analyzer would leave these tables alone (autovacuum is
	// off on them), but its catalog read, on its own timer, would be
	// taken for one of the statements a case captures.
	s.analyzer.stop()
	return s, seedPlanOrg(t, s)
}

// seedPlanOrg fills a fresh schema with planSeed, with autovacuum off on
// every table first, so that nothing analyzes them.
func seedPlanOrg(t *testing.T, s *Store) *planOrg {
	t.Helper()
	ctx := t.Context()
	var tables []string
	require.NoError(t, s.writer.NewRaw("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1").Scan(ctx, &tables))
	for _, name := range tables {
		_, err := s.writer.ExecContext(ctx, "ALTER TABLE "+name+" SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)")
		require.NoError(t, err)
	}
	r := &storage.Realm{StringID: "plans", Host: "plans.example.com"}
	require.NoError(t, s.CreateRealm(ctx, r))
	tx, err := s.writer.BeginTx(ctx, nil)
	require.NoError(t, err)
	for stmt := range strings.SplitSeq(fmt.Sprintf(planSeed, r.ID), ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		_, err := tx.ExecContext(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	require.NoError(t, tx.Commit())
	o := &planOrg{realmID: r.ID}
	q := func(dest any, query string) {
		require.NoError(t, s.writer.NewRaw(query, r.ID).Scan(ctx, dest), query)
	}
	q(&o.owner, "SELECT min(id) FROM users WHERE realm_id = ?")
	o.member, o.outsider = o.owner+499, o.owner+899
	q(&o.channels, "SELECT id FROM streams WHERE realm_id = ? ORDER BY id")
	q(&o.conversation, "SELECT min(conversation_id) FROM direct_conversation_members WHERE realm_id = ?")
	q(&o.maxID, "SELECT max(id) FROM messages WHERE realm_id = ?")
	return o
}

// requireNoStatistics fails unless no table of the schema was ever
// analyzed: no planner statistics, no row count from a VACUUM or ANALYZE.
func requireNoStatistics(t *testing.T, ctx context.Context, s *Store) {
	t.Helper()
	var n, analyzed int
	require.NoError(t, s.writer.NewRaw(`SELECT count(*) FROM pg_statistic AS st
		JOIN pg_class AS c ON c.oid = st.starelid JOIN pg_namespace AS n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema()`).Scan(ctx, &n))
	require.NoError(t, s.writer.NewRaw(`SELECT count(*) FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.reltuples >= 0`).Scan(ctx, &analyzed))
	require.Zero(t, n, "planner statistics in the schema")
	require.Zero(t, analyzed, "tables of the schema with a row count from VACUUM or ANALYZE")
}
