package storagetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// collector gathers what a listener receives.
type collector struct {
	mu      sync.Mutex
	batches []storage.EventBatch
}

func (c *collector) add(b storage.EventBatch) {
	c.mu.Lock()
	c.batches = append(c.batches, b)
	c.mu.Unlock()
}

// waitFor returns the first n batches, failing after a few seconds.
func (c *collector) waitFor(t *testing.T, n int) []storage.EventBatch {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		got := append([]storage.EventBatch(nil), c.batches...)
		c.mu.Unlock()
		if len(got) >= n {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("waited for %d event batches", n)
	return nil
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.batches)
}

func publish(t *testing.T, s storage.Store, payloads ...string) {
	t.Helper()
	require.NoError(t, s.InTx(t.Context(), func(tx storage.Store) error {
		for _, p := range payloads {
			if err := tx.PublishEvents(t.Context(), []byte(p)); err != nil {
				return err
			}
		}
		return nil
	}))
}

var eventTests = []test{
	{"EventsDeliveredAfterCommitInOrder", func(t *testing.T, s storage.Store) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var c collector
		require.NoError(t, s.ListenEvents(ctx, c.add))

		// Outside a transaction publishing is a mistake.
		require.Error(t, s.PublishEvents(ctx, []byte("x")))

		// A rolled-back transaction delivers nothing.
		boom := errors.New("boom")
		err := s.InTx(ctx, func(tx storage.Store) error {
			require.NoError(t, tx.PublishEvents(ctx, []byte(`"lost"`)))
			return boom
		})
		require.ErrorIs(t, err, boom)

		big := `"` + strings.Repeat("b", 20000) + `"`
		for i := range 20 {
			publish(t, s, `{"n":`+string(rune('a'+i))+`}`)
		}
		publish(t, s, big)
		got := c.waitFor(t, 21)
		var tokens []uint64
		for i, b := range got[:20] {
			require.False(t, b.Gap)
			require.Len(t, b.Payloads, 1)
			assert.Equal(t, `{"n":`+string(rune('a'+i))+`}`, string(b.Payloads[0]))
			tokens = append(tokens, b.Token)
		}
		require.Len(t, got[20].Payloads, 1)
		assert.Equal(t, big, string(got[20].Payloads[0]), "a payload too large for NOTIFY arrives whole")
		for i := 1; i < len(tokens); i++ {
			assert.NotEqual(t, tokens[i-1], tokens[i], "each transaction has its own token")
		}
		time.Sleep(50 * time.Millisecond)
		assert.Equal(t, 21, c.count(), "nothing more: the rolled-back payload never arrives")
	}},
	{"EventsReachEveryListener", func(t *testing.T, s storage.Store) {
		ctx, cancel := context.WithCancel(t.Context())
		var a, b collector
		require.NoError(t, s.ListenEvents(ctx, a.add))
		require.NoError(t, s.ListenEvents(t.Context(), b.add))
		publish(t, s, "1")
		a.waitFor(t, 1)
		b.waitFor(t, 1)
		cancel()
		time.Sleep(20 * time.Millisecond)
		publish(t, s, "2")
		got := b.waitFor(t, 2)
		assert.Equal(t, "2", string(got[1].Payloads[0]))
		time.Sleep(50 * time.Millisecond)
		assert.Equal(t, 1, a.count(), "a stopped listener hears nothing more")
	}},
	{"SnapshotIncludesExactlyEarlierCommits", func(t *testing.T, s storage.Store) {
		ctx := t.Context()
		var c collector
		require.NoError(t, s.ListenEvents(ctx, c.add))
		realm := newRealm(t, s, "snap")
		publish(t, s, "before")
		before := c.waitFor(t, 1)[0]

		err := s.ReadSnapshot(ctx, func(rs storage.Store, snap storage.Snapshot) error {
			assert.True(t, snap.Includes(before.Token), "a commit before the snapshot is in it")
			// A write committed while the snapshot is open is neither
			// visible through it nor included by it.
			require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
				r, err := tx.GetRealm(ctx, realm.ID)
				if err != nil {
					return err
				}
				r.Name = "Renamed"
				if err := tx.UpdateRealm(ctx, r, "name"); err != nil {
					return err
				}
				return tx.PublishEvents(ctx, []byte("during"))
			}))
			during := c.waitFor(t, 2)[1]
			assert.False(t, snap.Includes(during.Token), "a commit after the snapshot is not in it")
			r, err := rs.GetRealm(ctx, realm.ID)
			require.NoError(t, err)
			assert.Equal(t, "Realm snap", r.Name, "the snapshot does not see the later write")
			return nil
		})
		require.NoError(t, err)
		r, err := s.GetRealm(ctx, realm.ID)
		require.NoError(t, err)
		assert.Equal(t, "Renamed", r.Name)
	}},
}
