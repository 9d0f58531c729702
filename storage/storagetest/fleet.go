package storagetest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var fleetTests = []test{
	{"Fleet/ServersBeatListForget", testFleetServers},
	{"Fleet/Secret", testFleetSecret},
	{"Fleet/QueueMoves", testFleetQueueMoves},
	{"Fleet/SavedQueues", testFleetSavedQueues},
}

func testFleetServers(t *testing.T, s storage.Store) {
	ctx := context.Background()
	a := &storage.Server{Address: "10.0.0.1:9992", StartedAt: 100, SeenAt: 100}
	b := &storage.Server{Address: "10.0.0.2:9992", StartedAt: 100, SeenAt: 100}
	require.NoError(t, s.RegisterServer(ctx, a))
	require.NoError(t, s.RegisterServer(ctx, b))
	require.NotZero(t, a.ID)
	require.Greater(t, b.ID, a.ID)

	require.NoError(t, s.BeatServer(ctx, a.ID, 130, true))
	live, err := s.ListServers(ctx, 120)
	require.NoError(t, err)
	require.Len(t, live, 1)
	assert.Equal(t, storage.Server{ID: a.ID, Address: "10.0.0.1:9992", StartedAt: 100, SeenAt: 130, Draining: true}, live[0])
	all, err := s.ListServers(ctx, 0)
	require.NoError(t, err)
	assert.Len(t, all, 2)

	require.NoError(t, s.RecordQueueMoves(ctx, b.ID, []string{"q1"}, 120))
	require.NoError(t, s.ForgetServers(ctx, 120)) // b was last seen at 100
	all, err = s.ListServers(ctx, 0)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, a.ID, all[0].ID)
	_, err = s.GetQueueMove(ctx, "q1")
	assert.True(t, errors.Is(err, storage.ErrNotFound), "a move to a forgotten server goes with it: %v", err)

	require.NoError(t, s.RecordQueueMoves(ctx, a.ID, []string{"q2"}, 130))
	require.NoError(t, s.RemoveServer(ctx, a.ID))
	all, err = s.ListServers(ctx, 0)
	require.NoError(t, err)
	assert.Empty(t, all)
	_, err = s.GetQueueMove(ctx, "q2")
	assert.True(t, errors.Is(err, storage.ErrNotFound), "a move to a removed server goes with it: %v", err)
	assert.True(t, errors.Is(s.BeatServer(ctx, a.ID, 140, false), storage.ErrNotFound))
}

func testFleetSecret(t *testing.T, s storage.Store) {
	ctx := context.Background()
	first, err := s.FleetSecret(ctx, "one")
	require.NoError(t, err)
	assert.Equal(t, "one", first)
	again, err := s.FleetSecret(ctx, "two")
	require.NoError(t, err)
	assert.Equal(t, "one", again, "the first secret stays")
}

func testFleetQueueMoves(t *testing.T, s storage.Store) {
	ctx := context.Background()
	a := &storage.Server{Address: "a:1", StartedAt: 1, SeenAt: 1}
	b := &storage.Server{Address: "b:1", StartedAt: 1, SeenAt: 1}
	require.NoError(t, s.RegisterServer(ctx, a))
	require.NoError(t, s.RegisterServer(ctx, b))
	require.NoError(t, s.RecordQueueMoves(ctx, a.ID, []string{"q1", "q2"}, 10))
	require.NoError(t, s.RecordQueueMoves(ctx, b.ID, []string{"q2"}, 20))
	require.NoError(t, s.RecordQueueMoves(ctx, b.ID, nil, 20))
	m, err := s.GetQueueMove(ctx, "q2")
	require.NoError(t, err)
	assert.Equal(t, storage.QueueMove{QueueID: "q2", ServerID: b.ID, MovedAt: 20}, *m)
	all, err := s.ListQueueMoves(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []storage.QueueMove{{QueueID: "q1", ServerID: a.ID, MovedAt: 10}, {QueueID: "q2", ServerID: b.ID, MovedAt: 20}}, all)
	_, err = s.GetQueueMove(ctx, "q3")
	assert.True(t, errors.Is(err, storage.ErrNotFound))
}

func testFleetSavedQueues(t *testing.T, s storage.Store) {
	ctx := context.Background()
	none, err := s.TakeSavedEventQueues(ctx)
	require.NoError(t, err)
	assert.Empty(t, none)
	qs := make([]storage.SavedEventQueue, 450)
	for i := range qs {
		qs[i] = storage.SavedEventQueue{QueueID: string(rune('a'+i%26)) + string(rune(0x100+i)), RealmID: 1, UserID: int64(i), SavedAt: 5, State: `{"n":1}`}
	}
	require.NoError(t, s.SaveEventQueues(ctx, qs))
	qs[0].State = `{"n":2}`
	require.NoError(t, s.SaveEventQueues(ctx, qs[:1]))
	got, err := s.TakeSavedEventQueues(ctx)
	require.NoError(t, err)
	require.Len(t, got, 450)
	byID := map[string]storage.SavedEventQueue{}
	for _, q := range got {
		byID[q.QueueID] = q
	}
	assert.Equal(t, `{"n":2}`, byID[qs[0].QueueID].State)
	assert.Equal(t, qs[449], byID[qs[449].QueueID])
	again, err := s.TakeSavedEventQueues(ctx)
	require.NoError(t, err)
	assert.Empty(t, again, "taking them empties the table")
}
