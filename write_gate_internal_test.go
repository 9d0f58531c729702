package chat

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

// One writer per organization at a time, organizations side by side up
// to the limit, and nothing left behind.
func TestRealmGate(t *testing.T) {
	g := newRealmGate(2)
	var inside [3]atomic.Int32
	var open, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			realm := int64(i % 3)
			leave, err := g.enter(context.Background(), realm)
			if !assert.NoError(t, err) {
				return
			}
			n := inside[realm].Add(1)
			assert.EqualValues(t, 1, n, "one writer per organization")
			o := open.Add(1)
			for m := most.Load(); o > m && !most.CompareAndSwap(m, o); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			open.Add(-1)
			inside[realm].Add(-1)
			leave()
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, most.Load(), int32(2), "no more open than the limit")
	assert.Empty(t, g.slots, "slots forgotten when unused")
	assert.Empty(t, g.open)
}

// A writer waiting for its turn gives up when its context ends, for the
// organization and for the limit alike, and leaves no trace.
func TestRealmGateContext(t *testing.T) {
	g := newRealmGate(1)
	leave, err := g.enter(context.Background(), 1)
	require.NoError(t, err)
	for _, realm := range []int64{1, 2} { // the same organization; the limit
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := g.enter(ctx, realm)
		cancel()
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	}
	leave()
	assert.Empty(t, g.slots)
	leave2, err := g.enter(context.Background(), 2)
	require.NoError(t, err)
	leave2()
	// No limit.
	g = newRealmGate(0)
	l1, err := g.enter(context.Background(), 1)
	require.NoError(t, err)
	l2, err := g.enter(context.Background(), 2)
	require.NoError(t, err)
	l1()
	l2()
	assert.Empty(t, g.slots)
}

// The write path's promise on a small PostgreSQL pool: a burst of
// transactions of one organization, each reading outside its transaction
// while it holds the organization's lock, all get through. Without the
// gate, the writers in line held both connections waiting for the lock,
// and the holder waited for a connection: all stood still until the
// driver's read timeout failed them.
func TestWriteBurstReadingOutsideTransaction(t *testing.T) {
	dsn, schema := bunstore.NewTestPostgresSchema(t)
	st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema), bunstore.WithMaxConns(2))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	s := New(st)
	realm := &storage.Realm{StringID: "burst", Name: "Burst", URL: "http://burst.test", Host: "burst.test", DateCreated: 1}
	require.NoError(t, st.CreateRealm(context.Background(), realm))
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.write(ctx, realm.ID, func(w *writeTx) error {
				w.keepCallers()
				_, err := s.store.GetRealm(ctx, realm.ID) // outside the transaction
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
