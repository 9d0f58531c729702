package bunstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// The hot statements keep their plans on a PostgreSQL database that was
// never analyzed (see "Plans without statistics" in the package doc): an
// organization of realistic size is written in bulk into a fresh schema
// with autovacuum off on its tables, and each hot operation's statements
// are run again under EXPLAIN (ANALYZE, FORMAT JSON), prepared ones both
// as the custom plan of their values and as the generic plan PostgreSQL
// switches to after five runs, writes inside a transaction rolled back.
// Each plan must use the operation's index, scan no large table whole,
// and read (index entries and rows, those a filter dropped included) no
// more than the operation's bound: what its answer needs, never the
// history of a channel or of the organization. Then the same after
// ANALYZE, so that the shapes hold with statistics too.
func TestPostgresHotPlansWithoutStatistics(t *testing.T) {
	ctx := t.Context()
	s, o := openPlanOrg(t)
	requireNoStatistics(t, ctx, s)
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			requireNoStatistics(t, ctx, s)
			require.NoError(t, s.Analyze(ctx))
		}
		for _, c := range hotPlanCases(o) {
			t.Run(fmt.Sprintf("%s/analyzed=%v", c.name, analyzed), func(t *testing.T) {
				stmts := captureStatements(t, s, func() { c.run(t, ctx, s) })
				require.NotEmpty(t, stmts)
				used := map[string]bool{}
				most := 0.0
				defer func() { t.Logf("at most %g rows read by one statement (bound %g)", most, c.maxRows) }()
				for _, p := range explainAll(t, ctx, s, stmts) {
					most = max(most, p.rowsRead)
					for name := range p.indexes {
						used[name] = true
					}
					// With statistics a small table may be read whole.
					seq := p.seqScans
					if analyzed {
						seq = p.largeSeqScans
					}
					assert.Empty(t, seq, "sequential scans of large tables\n%s", p)
					assert.LessOrEqual(t, p.rowsRead, c.maxRows, "rows read\n%s", p)
				}
				if analyzed {
					return // the planner chooses with statistics; the bounds hold
				}
				for _, want := range c.indexes {
					found := false
					for _, alt := range strings.Split(want, "|") {
						found = found || used[alt]
					}
					assert.True(t, found, "no plan uses %s (used: %v)", want, slices.Sorted(maps.Keys(used)))
				}
			})
		}
	}
}

// planCase is a hot operation: what it runs, the indexes its plans must
// use, and the most rows one of its statements may read.
type planCase struct {
	name    string
	run     func(t *testing.T, ctx context.Context, s *Store)
	indexes []string
	maxRows float64
}

// errRollback ends a write transaction of a plan case without keeping it.
var errRollback = errors.New("roll back")

// rolledBack runs fn in a transaction that is rolled back.
func rolledBack(t *testing.T, ctx context.Context, s *Store, fn func(tx storage.Store) error) {
	t.Helper()
	require.ErrorIs(t, s.InTx(ctx, func(tx storage.Store) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errRollback
	}), errRollback)
}

// hotPlanCases are the hot operations: GET /messages (the newest of all
// messages and of a channel, a topic, a conversation, around an anchor,
// from the first unread), the send's statements, the register's unread
// state and max_message_id (also GET /users/me's), marking as read, and
// the missed-message notifications' claim.
func hotPlanCases(o *planOrg) []planCase {
	spansOf := func(channels []int64) []storage.ChannelSpan {
		out := make([]storage.ChannelSpan, len(channels))
		for i, c := range channels {
			out[i] = storage.ChannelSpan{StreamID: c}
		}
		return out
	}
	const newest = 10_000_000_000_000_000
	all := storage.MessageScope{Spans: spansOf(o.channels), Direct: true, Historical: true}
	window := func(user int64, sc storage.MessageScope, f storage.MessageFilter, anchor int64, before, after int, idsOnly bool) func(*testing.T, context.Context, *Store) {
		return func(t *testing.T, ctx context.Context, s *Store) {
			older, newer, err := s.ListMessageWindow(ctx, storage.MessageWindow{RealmID: o.realmID, UserID: user, Scope: sc, Filter: f,
				Anchor: anchor, Before: before, After: after, IDsOnly: idsOnly})
			require.NoError(t, err)
			require.NotEmpty(t, append(older, newer...))
		}
	}
	windowState := func(user int64, sc storage.MessageScope, f storage.MessageFilter, anchor int64, before, after int) func(*testing.T, context.Context, *Store) {
		return func(t *testing.T, ctx context.Context, s *Store) {
			older, newer, err := s.ListMessageWindowState(ctx, storage.MessageWindow{RealmID: o.realmID, UserID: user, Scope: sc, Filter: f,
				Anchor: anchor, Before: before, After: after})
			require.NoError(t, err)
			require.NotEmpty(t, append(older, newer...))
		}
	}
	c1, c2 := o.channels[0], o.channels[1]
	topic := "Topic 5"
	recent := make([]int64, 0, 51)
	for id := o.maxID; len(recent) < 51; id-- {
		recent = append(recent, id)
	}
	// The owner's unread channel messages: after the read range of each
	// subscription, [1, 36001].
	var unread []storage.IDSpan
	for _, c := range o.channels {
		unread = append(unread, storage.IDSpan{StreamID: c, First: 36002, Last: 1 << 62})
	}
	// A window of the owner's messages reads about two seeks per channel
	// (10) and per conversation (200), the window itself, and the list of
	// conversations twice (550 rows each when PostgreSQL, knowing how few
	// they are, reads them whole); never the organization's 40,000.
	const perArm = 2*(10+200) + 2*51 + 2*550 + 300
	return []planCase{
		{name: "all messages, newest 50", run: window(o.owner, all, storage.MessageFilter{}, newest, 50, 0, true),
			indexes: []string{"messages_stream_cover_idx", "messages_conversation_idx", "user_messages_historical_idx"}, maxRows: perArm},
		{name: "all messages of a member, newest 50", run: window(o.member, storage.MessageScope{Spans: spansOf(o.channels[:2]), Direct: true, Historical: true},
			storage.MessageFilter{}, newest, 50, 0, true),
			indexes: []string{"messages_stream_cover_idx"}, maxRows: 200},
		{name: "all messages of a user in one channel, newest 50", run: window(o.outsider, storage.MessageScope{Spans: spansOf(o.channels[:1]), Direct: true, Historical: true},
			storage.MessageFilter{}, newest, 50, 0, true),
			indexes: []string{"messages_stream_cover_idx"}, maxRows: 200},
		{name: "a channel, newest 50", run: window(o.owner, storage.MessageScope{FullChannels: []int64{c1}, Spans: all.Spans, Direct: true, Historical: true},
			storage.MessageFilter{StreamID: &c1}, newest, 50, 0, true),
			indexes: []string{"messages_stream_cover_idx"}, maxRows: 100},
		{name: "a topic, newest 50", run: window(o.owner, storage.MessageScope{FullChannels: []int64{c1}, Spans: all.Spans, Direct: true, Historical: true},
			storage.MessageFilter{StreamID: &c1, Topic: &topic}, newest, 50, 0, false),
			indexes: []string{"messages_stream_topic_idx"}, maxRows: 100},
		{name: "a conversation, newest 50", run: window(o.owner, all, storage.MessageFilter{ConversationID: &o.conversation}, newest, 50, 0, false),
			indexes: []string{"messages_conversation_idx"}, maxRows: 100},
		{name: "all messages around an anchor", run: window(o.owner, all, storage.MessageFilter{}, 30000, 25, 25, false),
			indexes: []string{"messages_stream_cover_idx"}, maxRows: perArm},
		{name: "historical messages of an outsider", run: window(o.outsider, storage.MessageScope{Spans: spansOf(o.channels[:1]), Direct: true, Historical: true},
			storage.MessageFilter{StreamID: &c2}, newest, 50, 0, false),
			indexes: []string{"user_messages_historical_idx"}, maxRows: 200},
		{name: "a channel, newest 50, with the reader's state", run: windowState(o.owner, storage.MessageScope{FullChannels: []int64{c1}, Spans: all.Spans, Direct: true, Historical: true},
			storage.MessageFilter{StreamID: &c1}, newest, 50, 0),
			indexes: []string{"messages_stream_cover_idx", "user_messages_pkey", "read_ranges_pkey"}, maxRows: 300},
		{name: "all messages, newest 50, with the reader's state", run: windowState(o.owner, all, storage.MessageFilter{}, newest, 50, 0),
			indexes: []string{"messages_stream_cover_idx", "messages_conversation_idx", "user_messages_pkey", "read_ranges_pkey"}, maxRows: perArm + 200},
		{name: "all messages around an anchor, with the reader's state", run: windowState(o.owner, all, storage.MessageFilter{}, 30000, 25, 25),
			indexes: []string{"messages_stream_cover_idx", "user_messages_pkey", "read_ranges_pkey"}, maxRows: perArm + 200},
		{name: "first unread", run: func(t *testing.T, ctx context.Context, s *Store) {
			id, err := s.FirstUnreadMessage(ctx, storage.MessageWindow{RealmID: o.realmID, UserID: o.owner, Scope: all, Anchor: newest})
			require.NoError(t, err)
			require.NotZero(t, id)
		}, indexes: []string{"messages_stream_cover_idx", "read_ranges_pkey"}, maxRows: 100},
		{name: "does a new topic start (send)", run: func(t *testing.T, ctx context.Context, s *Store) {
			fresh := "a topic never used"
			older, _, err := s.ListMessageWindow(ctx, storage.MessageWindow{RealmID: o.realmID, UserID: o.owner, Scope: storage.MessageScope{FullChannels: []int64{c1}},
				Filter: storage.MessageFilter{StreamID: &c1, Topic: &fresh}, Anchor: newest, IDsOnly: true})
			require.NoError(t, err)
			require.Empty(t, older)
		}, indexes: []string{"messages_stream_topic_idx"}, maxRows: 10},
		{name: "messages, rows, reactions and read ranges of a window", run: func(t *testing.T, ctx context.Context, s *Store) {
			msgs, err := s.GetMessagesByID(ctx, o.realmID, recent)
			require.NoError(t, err)
			require.Len(t, msgs, len(recent))
			_, err = s.ListUserMessages(ctx, o.realmID, o.owner, recent)
			require.NoError(t, err)
			_, err = s.ListReactions(ctx, o.realmID, recent)
			require.NoError(t, err)
			_, err = s.ListReadRangesOf(ctx, o.realmID, o.owner, o.channels, recent[len(recent)-1], recent[0])
			require.NoError(t, err)
		}, indexes: []string{"messages_realm_id_id_key|messages_pkey", "user_messages_pkey|user_messages_message_idx", "reactions_one_key",
			"read_ranges_pkey"}, maxRows: 100},
		{name: "max_message_id (register, users/me)", run: func(t *testing.T, ctx context.Context, s *Store) {
			id, err := s.NewestReceivedMessage(ctx, o.realmID, o.owner, all.Spans)
			require.NoError(t, err)
			require.Equal(t, o.maxID, id)
		}, indexes: []string{"user_messages_pkey", "messages_sender_idx", "messages_stream_cover_idx"}, maxRows: 50},
		{name: "unread channel messages (register)", run: func(t *testing.T, ctx context.Context, s *Store) {
			msgs, err := s.ListUnreadChannelMessages(ctx, o.realmID, unread, nil, 50000)
			require.NoError(t, err)
			require.NotEmpty(t, msgs)
		}, indexes: []string{"messages_stream_cover_idx"}, maxRows: 4000}, // the answer: 3,600 unread
		{name: "unread channel messages in two rounds (register)", run: func(t *testing.T, ctx context.Context, s *Store) {
			// The newest 1,000 of the 3,600: 200 of each span first, then
			// the rest of each span above the 1,000th newest read.
			msgs, err := s.ListUnreadChannelMessages(ctx, o.realmID, unread, nil, 1000)
			require.NoError(t, err)
			require.Len(t, msgs.Messages, 1000)
		}, indexes: []string{"messages_stream_cover_idx"}, maxRows: 4000},
		{name: "unread and mention rows (register)", run: func(t *testing.T, ctx context.Context, s *Store) {
			_, err := s.ListUnreadRows(ctx, o.realmID, o.owner, nil, 50000)
			require.NoError(t, err)
			_, err = s.ListMentionRows(ctx, o.realmID, o.owner, 1)
			require.NoError(t, err)
		}, indexes: []string{"user_messages_unread_private_idx", "user_messages_mentioned_idx"}, maxRows: 100},
		{name: "starred, recent conversations, subscriptions and policies (register)", run: func(t *testing.T, ctx context.Context, s *Store) {
			starred, err := s.ListFlaggedMessageIDs(ctx, o.realmID, o.owner, storage.FlagStarred)
			require.NoError(t, err)
			require.NotEmpty(t, starred)
			recent, err := s.ListRecentDirectMessages(ctx, o.realmID, o.owner, 1000)
			require.NoError(t, err)
			require.Len(t, recent, 1000)
			_, err = s.ListUserSubscriptions(ctx, o.realmID, o.owner)
			require.NoError(t, err)
			_, err = s.ListUserPeriods(ctx, o.realmID, o.owner)
			require.NoError(t, err)
			_, err = s.ListUserTopics(ctx, o.realmID, o.owner)
			require.NoError(t, err)
			// 1,000 of the owner's 3,200 direct messages: looked up one by
			// one, or, with statistics, the two sides hashed.
		}, indexes: []string{"user_messages_starred_idx", "user_messages_private_idx"}, maxRows: 3200 + 4000 + 100},
		{name: "send to a channel", run: func(t *testing.T, ctx context.Context, s *Store) {
			_, err := s.GetUserTopic(ctx, o.realmID, o.owner, c1, topic)
			if !errors.Is(err, storage.ErrNotFound) {
				require.NoError(t, err)
			}
			_, err = s.GetSubscription(ctx, o.realmID, o.owner, c1)
			require.NoError(t, err)
			_, err = s.ChannelNotificationCandidates(ctx, o.realmID, c1, topic)
			require.NoError(t, err)
			rolledBack(t, ctx, s, func(tx storage.Store) error {
				ids, err := tx.LockLane(ctx, o.realmID, 7, 1)
				require.NoError(t, err)
				m := &storage.Message{ID: ids[0], RealmID: o.realmID, SenderID: o.owner, StreamID: &c1, Topic: topic,
					Content: "hello @**User 3**", RenderedContent: "<p>hello</p>", DateSent: 1800000000}
				require.NoError(t, tx.CreateMessage(ctx, m, []storage.UserMessage{{UserID: o.owner + 2, Flags: storage.FlagMentioned}}))
				return tx.ExtendReadRange(ctx, o.realmID, o.owner, c1, m.ID)
			})
		}, indexes: []string{"messages_stream_cover_idx", "read_ranges_pkey|read_ranges_stream_user_idx",
			"user_topics_user_stream_topic_key|user_topics_topic_idx"}, maxRows: 20},
		{name: "send a direct message", run: func(t *testing.T, ctx context.Context, s *Store) {
			rolledBack(t, ctx, s, func(tx storage.Store) error {
				conv, err := tx.FindDirectConversation(ctx, o.realmID, []int64{o.owner, o.owner + 1})
				require.NoError(t, err)
				ids, err := tx.LockLane(ctx, o.realmID, 8, 1)
				require.NoError(t, err)
				m := &storage.Message{ID: ids[0], RealmID: o.realmID, SenderID: o.owner, ConversationID: &conv,
					Content: "hi", RenderedContent: "<p>hi</p>", DateSent: 1800000000}
				return tx.CreateMessage(ctx, m, []storage.UserMessage{{UserID: o.owner, Flags: storage.FlagPrivate | storage.FlagRead},
					{UserID: o.owner + 1, Flags: storage.FlagPrivate}})
			})
		}, indexes: []string{"direct_conversations_realm_members_key"}, maxRows: 300}, // 250 conversations, read whole with statistics
		{name: "mark direct messages read", run: func(t *testing.T, ctx context.Context, s *Store) {
			rolledBack(t, ctx, s, func(tx storage.Store) error {
				rows, err := tx.ListUnreadRows(ctx, o.realmID, o.owner, nil, 2000)
				require.NoError(t, err)
				require.NotEmpty(t, rows)
				ids := make([]int64, len(rows))
				for i, r := range rows {
					ids[i] = r.ID
				}
				return tx.UpdateUserMessageFlags(ctx, o.realmID, o.owner, ids, storage.FlagRead, 0)
			})
		}, indexes: []string{"user_messages_pkey|user_messages_message_idx"}, maxRows: 50},
		{name: "topics of a channel", run: func(t *testing.T, ctx context.Context, s *Store) {
			topics, err := s.ListChannelTopics(ctx, o.realmID, c1, nil)
			require.NoError(t, err)
			require.Len(t, topics, 37)
			through := int64(20000)
			topics, err = s.ListChannelTopics(ctx, o.realmID, c1, []storage.ChannelSpan{{StreamID: c1, Through: &through}, {StreamID: c1, After: 25000}})
			require.NoError(t, err)
			require.Len(t, topics, 37)
		}, indexes: []string{"messages_stream_topic_idx"}, maxRows: 200}, // a few seeks per topic
		{name: "claim missed-message notifications", run: func(t *testing.T, ctx context.Context, s *Store) {
			rolledBack(t, ctx, s, func(tx storage.Store) error {
				rows, err := tx.ClaimNotifications(ctx, storage.NotificationEmail, 1700000000+int64(o.maxID)-10000, 1900000000, "c", 20)
				require.NoError(t, err)
				require.NotEmpty(t, rows)
				return nil
			})
			_, _, err := s.NextNotificationAt(ctx, 1700000000)
			require.NoError(t, err)
		}, indexes: []string{"pending_notifications_kind_due_idx"}, maxRows: 1500}, // the claim: the 20 users' rows, 400
		{name: "caller and profile (users/me)", run: func(t *testing.T, ctx context.Context, s *Store) {
			_, _, err := s.GetRealmUser(ctx, o.realmID, o.owner)
			require.NoError(t, err)
			_, err = s.ListProfileFieldValues(ctx, o.realmID, []int64{o.owner})
			require.NoError(t, err)
		}, maxRows: 5},
	}
}

// stmt is a statement a case ran: its SQL and, when prepared, its
// placeholders' values.
type stmt struct {
	text string
	args []any
}

// captureStatements returns the statements fn runs on s.
func captureStatements(t *testing.T, s *Store, fn func()) []stmt {
	t.Helper()
	var mu sync.Mutex
	var out []stmt
	on := true
	s.onStatement(func(q string, args []any) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			out = append(out, stmt{q, slices.Clone(args)})
		}
	})
	fn()
	mu.Lock()
	defer mu.Unlock()
	on = false
	var kept []stmt
	for _, st := range out {
		head := strings.ToUpper(strings.TrimSpace(st.text))
		for _, verb := range []string{"SELECT", "WITH", "INSERT", "UPDATE", "DELETE"} {
			if strings.HasPrefix(head, verb) {
				kept = append(kept, st)
				break
			}
		}
	}
	return kept
}

// largeTables are the tables that grow with an organization's use.
var largeTables = []string{"messages", "user_messages", "read_ranges", "subscriptions", "subscription_periods", "users",
	"direct_conversations", "direct_conversation_members", "reactions", "user_topics", "pending_notifications"}

// plan is what one EXPLAIN (ANALYZE) of a statement found.
type plan struct {
	text    string
	mode    string
	indexes map[string]bool
	// seqScans are the large tables read sequentially, largeSeqScans
	// those of them read for more than 1,000 rows.
	seqScans, largeSeqScans []string
	rowsRead                float64
	tree                    strings.Builder
}

func (p *plan) String() string {
	return fmt.Sprintf("%s plan of\n%s\n%s", p.mode, p.text, p.tree.String())
}

// explainAll runs the statements again, in order, under EXPLAIN (ANALYZE)
// in one transaction that it rolls back: prepared ones as their custom
// and their generic plan.
func explainAll(t *testing.T, ctx context.Context, s *Store, stmts []stmt) []*plan {
	t.Helper()
	conn, err := s.writer.DB.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	var out []*plan
	explain := func(mode, text, query string) {
		var raw string
		require.NoError(t, tx.QueryRowContext(ctx, query).Scan(&raw), query)
		var doc []struct {
			Plan json.RawMessage `json:"Plan"`
		}
		require.NoError(t, json.Unmarshal([]byte(raw), &doc))
		p := &plan{text: text, mode: mode, indexes: map[string]bool{}}
		var node planNode
		require.NoError(t, json.Unmarshal(doc[0].Plan, &node))
		p.walk(&node, 0)
		out = append(out, p)
	}
	for i, st := range stmts {
		if st.args == nil {
			explain("inline", st.text, "EXPLAIN (ANALYZE, FORMAT JSON) "+st.text)
			continue
		}
		name := fmt.Sprintf("plan_case_%d", i)
		_, err := tx.ExecContext(ctx, "PREPARE "+name+" AS "+st.text)
		require.NoError(t, err, st.text)
		lits := make([]string, len(st.args))
		for j, a := range st.args {
			lits[j] = sqlLiteral(t, a)
		}
		for _, mode := range []string{"custom", "generic"} {
			_, err := tx.ExecContext(ctx, "SET LOCAL plan_cache_mode = force_"+mode+"_plan")
			require.NoError(t, err)
			explain(mode, st.text, "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE "+name+"("+strings.Join(lits, ", ")+")")
		}
		// Left to choose, PostgreSQL keeps the generic plan after five
		// runs when it costs no more than the custom ones: else the
		// statement is planned again on every run, which costs more than
		// running it.
		_, err = tx.ExecContext(ctx, "SET LOCAL plan_cache_mode = auto")
		require.NoError(t, err)
		for range 6 {
			_, err := tx.ExecContext(ctx, "EXECUTE "+name+"("+strings.Join(lits, ", ")+")")
			require.NoError(t, err)
		}
		var generic int
		require.NoError(t, tx.QueryRowContext(ctx, "SELECT generic_plans FROM pg_prepared_statements WHERE name = $1", name).Scan(&generic))
		assert.Positive(t, generic, "planned again on every run:\n%s", st.text)
		_, err = tx.ExecContext(ctx, "DEALLOCATE "+name)
		require.NoError(t, err)
	}
	return out
}

// sqlLiteral writes a placeholder's value as SQL.
func sqlLiteral(t *testing.T, v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	t.Fatalf("no literal for %T", v)
	return ""
}

// planNode is a node of EXPLAIN's JSON.
type planNode struct {
	NodeType       string     `json:"Node Type"`
	Relation       string     `json:"Relation Name"`
	Index          string     `json:"Index Name"`
	ActualRows     float64    `json:"Actual Rows"`
	ActualLoops    float64    `json:"Actual Loops"`
	RemovedFilter  float64    `json:"Rows Removed by Filter"`
	RemovedRecheck float64    `json:"Rows Removed by Index Recheck"`
	Plans          []planNode `json:"Plans"`
}

// walk adds up what the node and its children read.
func (p *plan) walk(n *planNode, depth int) {
	fmt.Fprintf(&p.tree, "%s%s %s %s rows=%g loops=%g removed=%g\n", strings.Repeat("  ", depth), n.NodeType, n.Relation, n.Index,
		n.ActualRows, n.ActualLoops, n.RemovedFilter+n.RemovedRecheck)
	if n.Index != "" {
		p.indexes[n.Index] = true
	}
	switch n.NodeType {
	case "Seq Scan":
		if slices.Contains(largeTables, n.Relation) {
			p.seqScans = append(p.seqScans, n.Relation)
			if (n.ActualRows+n.RemovedFilter)*n.ActualLoops > 1000 {
				p.largeSeqScans = append(p.largeSeqScans, n.Relation)
			}
		}
		fallthrough
	case "Index Scan", "Index Only Scan", "Bitmap Index Scan":
		p.rowsRead += (n.ActualRows + n.RemovedFilter) * n.ActualLoops
	case "Bitmap Heap Scan":
		p.rowsRead += (n.RemovedFilter + n.RemovedRecheck) * n.ActualLoops
	}
	for i := range n.Plans {
		p.walk(&n.Plans[i], depth+1)
	}
}
