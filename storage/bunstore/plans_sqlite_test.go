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
