package bunstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// On SQLite, a channel's neighbours of a range (marking it read) are two
// seeks of messages_stream_cover_idx, written as ORDER BY ... LIMIT 1
// for PostgreSQL's sake: SQLite reads them from the index too, without
// sorting.
func TestSQLiteChannelNeighboursPlan(t *testing.T) {
	s := OpenTestSQLite(t)
	ctx := t.Context()
	r := &storage.Realm{StringID: "acme", Host: "acme.example.com"}
	require.NoError(t, s.CreateRealm(ctx, r))
	u := &storage.User{RealmID: r.ID, Email: "a@example.com", IsActive: true}
	require.NoError(t, s.CreateUser(ctx, u))
	c := &storage.Stream{RealmID: r.ID, Name: "c"}
	require.NoError(t, s.CreateStream(ctx, c))
	var queries []string
	s.OnQuery(func(q string) {
		if strings.Contains(q, "ORDER BY id DESC LIMIT 1") {
			queries = append(queries, q)
		}
	})
	_, _, err := s.ChannelNeighbours(ctx, r.ID, c.ID, 10, 20)
	require.NoError(t, err)
	require.Len(t, queries, 1)
	plan := explain(t, s, queries[0])
	assert.Equal(t, 2, strings.Count(plan, "messages_stream_cover_idx"), plan)
	assert.NotContains(t, plan, "TEMP B-TREE", plan)
}

// On SQLite, a channel's window with its reader's state walks the
// channel's index backwards from the anchor (no list of the reader's
// conversations or historical rows: the filter's channel is in the scope
// whole), then seeks the reader's rows of its messages and reads the
// read ranges of its channel, each by its primary key, none sorting.
func TestSQLiteWindowStatePlan(t *testing.T) {
	s := OpenTestSQLite(t)
	ctx := t.Context()
	r := &storage.Realm{StringID: "acme", Host: "acme.example.com"}
	require.NoError(t, s.CreateRealm(ctx, r))
	u := &storage.User{RealmID: r.ID, Email: "a@example.com", IsActive: true}
	require.NoError(t, s.CreateUser(ctx, u))
	c := &storage.Stream{RealmID: r.ID, Name: "c"}
	require.NoError(t, s.CreateStream(ctx, c))
	m := &storage.Message{RealmID: r.ID, SenderID: u.ID, StreamID: &c.ID, Content: "x", RenderedContent: "x"}
	require.NoError(t, s.CreateMessage(ctx, m, nil))
	type stmt struct {
		text string
		args []any
	}
	var stmts []stmt
	addHook(&s.hooks.withArgs, func(q string, a []any) { stmts = append(stmts, stmt{q, a}) })
	_, _, err := s.ListMessageWindowState(ctx, storage.MessageWindow{RealmID: r.ID, UserID: u.ID,
		Scope:  storage.MessageScope{FullChannels: []int64{c.ID}, Spans: []storage.ChannelSpan{{StreamID: 99}}, Direct: true, Historical: true},
		Filter: storage.MessageFilter{StreamID: &c.ID}, Anchor: 1 << 50, Before: 100})
	require.NoError(t, err)
	require.Len(t, stmts, 3, "the window, the rows, the ranges")
	var plans []string
	for _, st := range stmts {
		plans = append(plans, explain(t, s, st.text, st.args...))
	}
	for i, want := range []string{"COVERING INDEX messages_stream_cover_idx (realm_id=? AND stream_id=? AND id<?)",
		"sqlite_autoindex_user_messages_1 (realm_id=? AND user_id=? AND message_id=?)",
		"sqlite_autoindex_read_ranges_1 (realm_id=? AND user_id=? AND stream_id=? AND first_id<?)"} {
		assert.Contains(t, plans[i], want)
	}
	for _, plan := range plans {
		for _, not := range []string{"TEMP B-TREE", "direct_conversation_members", "user_messages_historical_idx"} {
			assert.NotContains(t, plan, not)
		}
	}
}
