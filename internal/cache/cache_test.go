package cache

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// start is the tests' clock's first time; each test's clock is a variable
// its Now reads.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestGetPutExpiry(t *testing.T) {
	now := start
	c := New[int64, string](Config[string]{TTL: 5 * time.Second, Now: func() time.Time { return now }})
	_, ok := c.Get(1, 10)
	assert.False(t, ok, "empty")
	c.Put(1, c.Generation(1), 10, "ten")
	v, ok := c.Get(1, 10)
	assert.True(t, ok)
	assert.Equal(t, "ten", v)
	_, ok = c.Get(2, 10)
	assert.False(t, ok, "an entry belongs to its scope")

	now = now.Add(4 * time.Second)
	_, ok = c.Get(1, 10)
	assert.True(t, ok, "live before its TTL")
	now = now.Add(time.Second)
	_, ok = c.Get(1, 10)
	assert.False(t, ok, "expired at its TTL, by the injected clock")
}

func TestGenerationsInvalidateEveryCacheOfTheScope(t *testing.T) {
	gens := &Generations{}
	a := New[int64, int](Config[int]{Generations: gens})
	b := New[string, int](Config[int]{Generations: gens})
	a.Put(1, a.Generation(1), 7, 70)
	b.Put(1, b.Generation(1), "x", 1)
	a.Put(2, a.Generation(2), 8, 80)

	gens.Invalidate(1)
	_, ok := a.Get(1, 7)
	assert.False(t, ok)
	_, ok = b.Get(1, "x")
	assert.False(t, ok, "one call invalidates every cache on the generations")
	v, ok := a.Get(2, 8)
	assert.True(t, ok, "other scopes keep their entries")
	assert.Equal(t, 80, v)

	// A value read before an invalidation is not stored after it.
	gen := a.Generation(1)
	gens.Invalidate(1)
	a.Put(1, gen, 7, 71)
	_, ok = a.Get(1, 7)
	assert.False(t, ok, "a put under an old generation is dropped")
	a.Put(1, a.Generation(1), 7, 72)
	v, _ = a.Get(1, 7)
	assert.Equal(t, 72, v)
	assert.Equal(t, uint64(2), gens.Invalidations())
	assert.Equal(t, Stats{Hits: 2, Misses: 2}, a.Stats())
}

func TestLoad(t *testing.T) {
	gens := &Generations{}
	c := New[int64, int](Config[int]{Generations: gens})
	calls := 0
	load := func() (int, error) { calls++; return 5, nil }
	for range 3 {
		v, err := c.Load(1, 1, load)
		require.NoError(t, err)
		assert.Equal(t, 5, v)
	}
	assert.Equal(t, 1, calls, "loaded once, then served")

	boom := errors.New("boom")
	_, err := c.Load(1, 2, func() (int, error) { return 0, boom })
	assert.ErrorIs(t, err, boom)
	_, ok := c.Get(1, 2)
	assert.False(t, ok, "a failed load stores nothing")

	// An invalidation while loading: the loaded value is returned, not kept.
	v, err := c.Load(1, 3, func() (int, error) { gens.Invalidate(1); return 9, nil })
	require.NoError(t, err)
	assert.Equal(t, 9, v)
	_, ok = c.Get(1, 3)
	assert.False(t, ok)
}

func TestForgetAndGetMany(t *testing.T) {
	c := New[int64, string](Config[string]{MaxBytes: 100, Size: func(s string) int { return len(s) }})
	for i, s := range []string{"a", "bb", "ccc"} {
		c.Put(1, 0, int64(i), s)
	}
	assert.Equal(t, 6, c.Bytes())
	c.Forget(1, 99)
	assert.Equal(t, 4, c.Bytes())
	got := map[int64]string{}
	c.GetMany(1, []int64{0, 1, 2, 3}, func(k int64, v string) { got[k] = v })
	assert.Equal(t, map[int64]string{0: "a", 2: "ccc"}, got)
	got = map[int64]string{}
	c.GetMany(2, []int64{0, 2}, func(k int64, v string) { got[k] = v })
	assert.Empty(t, got, "another scope's entries are not returned")
	assert.Equal(t, Stats{Hits: 2, Misses: 4, Forgotten: 1}, c.Stats(), "each key looked up counts; forgetting a missing key does not")
	// Replacing an entry counts its new size only.
	c.Put(1, 0, 0, "aaaa")
	assert.Equal(t, 7, c.Bytes())
}

func TestBounds(t *testing.T) {
	size := func(s string) int { return len(s) }
	cases := []struct {
		name string
		cfg  Config[string]
		// puts in order, each of scope 1 at generation 0; expire moves
		// the clock past the TTL before the last put
		puts   []string
		expire bool
		want   []string // the values held afterwards
	}{
		{name: "under the entry bound", cfg: Config[string]{MaxEntries: 3}, puts: []string{"a", "b", "c"}, want: []string{"a", "b", "c"}},
		{name: "full of live entries starts again", cfg: Config[string]{MaxEntries: 3}, puts: []string{"a", "b", "c", "d"}, want: []string{"d"}},
		{name: "full of expired entries drops them", cfg: Config[string]{MaxEntries: 3, TTL: time.Second},
			puts: []string{"a", "b", "c", "d"}, expire: true, want: []string{"d"}},
		{name: "under the byte bound", cfg: Config[string]{MaxBytes: 6, Size: size}, puts: []string{"aa", "bb", "cc"}, want: []string{"aa", "bb", "cc"}},
		{name: "over the byte bound starts again", cfg: Config[string]{MaxBytes: 6, Size: size}, puts: []string{"aa", "bb", "ccc"}, want: []string{"ccc"}},
		{name: "larger than the whole cache is not kept", cfg: Config[string]{MaxBytes: 6, Size: size}, puts: []string{"aa", "1234567"}, want: []string{"aa"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := start
			tc.cfg.Now = func() time.Time { return now }
			c := New[string, string](tc.cfg)
			for i, v := range tc.puts {
				if tc.expire && i == len(tc.puts)-1 {
					now = now.Add(time.Hour)
				}
				c.Put(1, 0, v, v)
			}
			var held []string
			for _, v := range tc.puts {
				if _, ok := c.Get(1, v); ok {
					held = append(held, v)
				}
			}
			assert.Equal(t, tc.want, held)
			assert.Equal(t, len(tc.want), c.Len())
		})
	}
}

func TestSweepKeepsLiveEntriesWhenStaleOnesMakeRoom(t *testing.T) {
	gens := &Generations{}
	c := New[int64, int](Config[int]{MaxEntries: 8, Generations: gens})
	for i := range int64(6) {
		c.Put(1, c.Generation(1), i, int(i)) // scope 1: invalidated below
	}
	c.Put(2, c.Generation(2), 100, 100)
	c.Put(2, c.Generation(2), 101, 101)
	gens.Invalidate(1)
	c.Put(2, c.Generation(2), 102, 102) // full: the six stale entries go
	assert.Equal(t, 3, c.Len())
	for _, k := range []int64{100, 101, 102} {
		_, ok := c.Get(2, k)
		assert.True(t, ok, "live entry %d kept", k)
	}
}

func TestNilCacheHoldsNothing(t *testing.T) {
	var c *Cache[int, int]
	c.Put(1, 0, 1, 1)
	_, ok := c.Get(1, 1)
	assert.False(t, ok)
	v, err := c.Load(1, 1, func() (int, error) { return 3, nil })
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	c.Forget(1)
	c.GetMany(1, []int{1}, func(int, int) { t.Fatal("a nil cache found something") })
	assert.Zero(t, c.Len())
	assert.Zero(t, c.Bytes())
}

func TestConcurrentUse(t *testing.T) {
	gens := &Generations{}
	c := New[int64, int](Config[int]{MaxEntries: 50, TTL: time.Minute, Generations: gens})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := int64(i % 97)
				_, _ = c.Load(int64(g%2), k, func() (int, error) { return i, nil })
				if i%101 == 0 {
					gens.Invalidate(int64(g % 2))
				}
				if i%53 == 0 {
					c.Forget(k)
				}
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, c.Len(), 50)
}

func TestUpdate(t *testing.T) {
	now := start
	size := func(s string) int { return len(s) }
	c := New[int64, string](Config[string]{TTL: 5 * time.Second, MaxBytes: 8, Size: size, Now: func() time.Time { return now }})
	grow := func(s string) (string, bool) { return s + "+", true }
	assert.False(t, c.Update(1, 10, grow), "no entry")
	c.Put(1, 0, 10, "ten")
	assert.False(t, c.Update(2, 10, grow), "another scope's entry")
	assert.False(t, c.Update(1, 10, func(string) (string, bool) { return "", false }), "declined")
	require.True(t, c.Update(1, 10, grow))
	v, _ := c.Get(1, 10)
	assert.Equal(t, "ten+", v)
	assert.Equal(t, 4, c.Bytes(), "the size follows the value")
	assert.False(t, c.Update(1, 10, func(s string) (string, bool) { return "123456789", true }), "does not fit")
	v, _ = c.Get(1, 10)
	assert.Equal(t, "ten+", v, "unchanged when it does not fit")

	c.Forget(10)
	assert.False(t, c.Update(1, 10, grow), "forgotten: nothing to attach to")
	c.Put(1, 0, 10, "ten")
	now = now.Add(4 * time.Second)
	require.True(t, c.Update(1, 10, grow))
	now = now.Add(time.Second)
	_, ok := c.Get(1, 10)
	assert.False(t, ok, "an update keeps the entry's expiry")
}
