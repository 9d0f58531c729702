package presencebuf

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func at(v int64) *int64 { return &v }

func TestTimesMergeAndEqual(t *testing.T) {
	cases := []struct {
		p, q, want Times
	}{
		{Times{}, Times{}, Times{}},
		{Times{Active: at(5)}, Times{}, Times{Active: at(5)}},
		{Times{}, Times{Connected: at(7)}, Times{Connected: at(7)}},
		{Times{Active: at(5), Connected: at(9)}, Times{Active: at(6), Connected: at(8)}, Times{Active: at(6), Connected: at(9)}},
	}
	for _, c := range cases {
		got := c.p.Merge(c.q)
		assert.True(t, got.Equal(c.want), "%v merge %v", c.p, c.q)
		assert.True(t, c.q.Merge(c.p).Equal(c.want), "merge is symmetric")
	}
	assert.False(t, Times{Active: at(1)}.Equal(Times{}))
	assert.False(t, Times{Active: at(1)}.Equal(Times{Active: at(2)}))
}

// bump is a rule that moves Connected to now and holds the result.
func bump(now int64) func(Times) (Times, bool, bool) {
	return func(cur Times) (Times, bool, bool) {
		changed := cur.Connected == nil || *cur.Connected < now
		if changed {
			cur.Connected = at(now)
		}
		return cur, changed, true
	}
}

func flushAll(b *Buffer, fail bool) map[int64][]Entry {
	got := map[int64][]Entry{}
	b.Flush(2, func(realm int64, es []Entry) error {
		if fail {
			return errors.New("down")
		}
		got[realm] = append(got[realm], es...)
		return nil
	})
	for _, es := range got {
		slices.SortFunc(es, func(a, b Entry) int { return int(a.User - b.User) })
	}
	return got
}

func TestUpdateHoldsAndFlushWrites(t *testing.T) {
	b := New()
	k := Key{1, 10}
	b.Update(k, Times{Connected: at(100)}, bump(100))
	held, ok := b.Held(k)
	require.True(t, ok)
	assert.Equal(t, int64(100), *held.Connected)
	assert.Equal(t, 0, b.Dirty(), "an unchanged read is remembered, not written")

	b.Update(k, Times{}, bump(160))
	b.Update(Key{1, 11}, Times{}, bump(160))
	b.Update(Key{1, 12}, Times{}, bump(160))
	b.Update(Key{2, 10}, Times{}, bump(170))
	assert.Equal(t, 4, b.Dirty())
	got := flushAll(b, false)
	require.Len(t, got[1], 3, "batches of at most 2, all written")
	assert.Equal(t, []int64{10, 11, 12}, []int64{got[1][0].User, got[1][1].User, got[1][2].User})
	assert.Equal(t, int64(160), *got[1][0].Connected)
	assert.Equal(t, int64(170), *got[2][0].Connected)
	assert.Equal(t, 0, b.Dirty())
	assert.Empty(t, flushAll(b, false), "nothing changed since")

	// A rule that does not hold leaves the buffer as it was.
	b.Update(k, Times{}, func(cur Times) (Times, bool, bool) { return Times{Connected: at(999)}, true, false })
	held, _ = b.Held(k)
	assert.Equal(t, int64(160), *held.Connected)

	// The rule sees the base merged with what is held.
	var seen Times
	b.Update(k, Times{Active: at(50), Connected: at(10)}, func(cur Times) (Times, bool, bool) { seen = cur; return cur, false, true })
	assert.True(t, seen.Equal(Times{Active: at(50), Connected: at(160)}))
}

func TestFailedBatchesStay(t *testing.T) {
	b := New()
	b.Update(Key{1, 10}, Times{}, bump(100))
	assert.Empty(t, flushAll(b, true))
	assert.Equal(t, 1, b.Dirty(), "a failed write is retried by the next flush")
	assert.Len(t, flushAll(b, false)[1], 1)
}

func TestSettleCurrentForgetEvict(t *testing.T) {
	b := New()
	k := Key{1, 10}
	b.Update(k, Times{}, bump(100))
	assert.True(t, b.Current(k, Times{Connected: at(100)}))
	assert.False(t, b.Current(k, Times{Connected: at(99)}))

	b.Settle(k, Times{Connected: at(100)})
	assert.Equal(t, 0, b.Dirty(), "what was written is clean")
	b.Update(k, Times{}, bump(200))
	b.Settle(k, Times{Connected: at(150)})
	assert.Equal(t, 1, b.Dirty(), "a newer held time stays dirty")
	held, _ := b.Held(k)
	assert.Equal(t, int64(200), *held.Connected)

	b.Forget(k)
	_, ok := b.Held(k)
	assert.False(t, ok)
	assert.Equal(t, 0, b.Dirty(), "a forgotten entry is not written")
	assert.False(t, b.Current(k, Times{Connected: at(200)}))

	b.Update(Key{1, 1}, Times{Connected: at(10)}, bump(10))   // clean, old
	b.Update(Key{1, 2}, Times{}, bump(20))                    // dirty, old
	b.Update(Key{1, 3}, Times{Connected: at(500)}, bump(500)) // clean, recent
	b.Evict(300)
	_, ok = b.Held(Key{1, 1})
	assert.False(t, ok, "clean and offline: evicted")
	_, ok = b.Held(Key{1, 2})
	assert.True(t, ok, "dirty entries wait for their flush")
	_, ok = b.Held(Key{1, 3})
	assert.True(t, ok, "online users stay")
}

// A flush writes the entries it took; a change made while it writes is
// newer and is left for the next flush (Current tells the writer).
func TestChangeDuringFlush(t *testing.T) {
	b := New()
	k := Key{1, 10}
	b.Update(k, Times{}, bump(100))
	b.Flush(10, func(realm int64, es []Entry) error {
		b.Update(k, Times{}, bump(200))
		assert.False(t, b.Current(k, es[0].Times), "the batch is stale")
		return nil
	})
	assert.Equal(t, 1, b.Dirty())
	got := flushAll(b, false)
	assert.Equal(t, int64(200), *got[1][0].Connected)
}
