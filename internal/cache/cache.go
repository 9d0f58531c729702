// Package cache is the one in-memory cache mechanism of the Service:
// entries that belong to a scope (an organization), are read at one of the
// scope's generations, and expire a while after they were stored.
//
// Invalidation has one entry point per kind of change. A change of what a
// scope's entries were read from bumps the scope's generation
// (Generations.Invalidate), and every Cache built on the same Generations
// ignores that scope's older entries from then on. A change of a few known
// entries forgets them by key (Cache.Forget). Expiry (Config.TTL, read from
// the injected clock) bounds how long a change the process was not told of
// (another server's, or one written to the store directly) can go unseen.
//
// A load races with the changes it may miss: take Generation before reading
// from the source and Put under it, and a change that commits in between
// (and bumps the generation) makes the Put a no-op. Load does both.
//
// A Cache is bounded by its number of entries, by the bytes its entries
// hold (as Config.Size measures them), or both. When an entry does not fit,
// the stale entries (expired, or of an older generation) are dropped; if
// that leaves less than a quarter of the cache free, it starts again
// empty: a burst of distinct keys misses for a while, and a full cache is
// not scanned on every store.
//
// A nil *Cache is a cache that holds nothing (a disabled cache).
package cache

import (
	"sync"
	"sync/atomic"
	"time"
)

// Generations counts each scope's invalidations. Caches that share a
// Generations are invalidated together. The zero value is ready to use.
type Generations struct {
	m sync.Map // scope -> *atomic.Uint64
	// bumps counts the invalidations of every scope (for metrics).
	bumps atomic.Uint64
}

// Invalidations counts the calls of Invalidate so far.
func (g *Generations) Invalidations() uint64 { return g.bumps.Load() }

// Current is the scope's generation.
func (g *Generations) Current(scope int64) uint64 {
	if g == nil {
		return 0
	}
	if v, ok := g.m.Load(scope); ok {
		return v.(*atomic.Uint64).Load()
	}
	return 0
}

// Invalidate makes every entry of the scope stale, in every Cache built on
// g.
func (g *Generations) Invalidate(scope int64) {
	v, ok := g.m.Load(scope)
	if !ok {
		v, _ = g.m.LoadOrStore(scope, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Add(1)
	g.bumps.Add(1)
}

// Config describes a Cache.
type Config[V any] struct {
	// TTL: an entry expires this long after it was stored (0: never).
	TTL time.Duration
	// MaxEntries bounds the number of entries (0: no bound).
	MaxEntries int
	// MaxBytes bounds the sum of Size over the entries (0: no bound; Size
	// is then not called). An entry larger than MaxBytes is not kept.
	MaxBytes int
	Size     func(V) int
	// Now is the clock expiry reads (default time.Now).
	Now func() time.Time
	// Generations, when set, invalidates the cache's scopes (see the
	// package comment); without it, entries are only forgotten or expire.
	Generations *Generations
}

// Cache holds values of type V under keys of type K. It is safe for
// concurrent use.
type Cache[K comparable, V any] struct {
	cfg Config[V]

	mu      sync.RWMutex
	entries map[K]entry[V]
	bytes   int

	stats struct{ hits, misses, forgotten atomic.Uint64 }
}

// Stats count a Cache's lookups and explicit forgets since it was made.
type Stats struct {
	Hits, Misses uint64
	// Forgotten counts the entries dropped by Forget.
	Forgotten uint64
}

// Stats reads the cache's counters (zero for a nil Cache).
func (c *Cache[K, V]) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	return Stats{Hits: c.stats.hits.Load(), Misses: c.stats.misses.Load(), Forgotten: c.stats.forgotten.Load()}
}

// count records one lookup's outcome.
func (c *Cache[K, V]) count(hit bool) {
	if hit {
		c.stats.hits.Add(1)
	} else {
		c.stats.misses.Add(1)
	}
}

type entry[V any] struct {
	val     V
	scope   int64
	gen     uint64
	expires time.Time // zero: never
	size    int
}

// New returns an empty cache.
func New[K comparable, V any](cfg Config[V]) *Cache[K, V] {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Cache[K, V]{cfg: cfg, entries: map[K]entry[V]{}}
}

// Generation is the scope's current generation: take it before reading
// what will be stored, and pass it to Put.
func (c *Cache[K, V]) Generation(scope int64) uint64 {
	if c == nil {
		return 0
	}
	return c.cfg.Generations.Current(scope)
}

// live reports whether e is usable for scope at generation gen and time
// now.
func (e *entry[V]) live(scope int64, gen uint64, now time.Time) bool {
	return e.scope == scope && e.gen == gen && (e.expires.IsZero() || now.Before(e.expires))
}

// Get returns the live entry of the scope under k.
func (c *Cache[K, V]) Get(scope int64, k K) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	gen, now := c.Generation(scope), c.cfg.Now()
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || !e.live(scope, gen, now) {
		c.count(false)
		return zero, false
	}
	c.count(true)
	return e.val, true
}

// GetMany calls found for each key among keys that has a live entry of
// the scope.
func (c *Cache[K, V]) GetMany(scope int64, keys []K, found func(K, V)) {
	if c == nil || len(keys) == 0 {
		return
	}
	gen, now := c.Generation(scope), c.cfg.Now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	hits := 0
	for _, k := range keys {
		if e, ok := c.entries[k]; ok && e.live(scope, gen, now) {
			found(k, e.val)
			hits++
		}
	}
	c.stats.hits.Add(uint64(hits))
	c.stats.misses.Add(uint64(len(keys) - hits))
}

// Put stores v under k for the scope, read at generation gen; it does
// nothing if the scope's generation moved since.
func (c *Cache[K, V]) Put(scope int64, gen uint64, k K, v V) {
	if c == nil || gen != c.Generation(scope) {
		return
	}
	size := 0
	if c.cfg.MaxBytes > 0 {
		size = c.cfg.Size(v)
		if size > c.cfg.MaxBytes {
			return
		}
	}
	now := c.cfg.Now()
	e := entry[V]{val: v, scope: scope, gen: gen, size: size}
	if c.cfg.TTL > 0 {
		e.expires = now.Add(c.cfg.TTL)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, replacing := c.entries[k]
	if replacing {
		c.bytes -= old.size
		delete(c.entries, k)
	}
	if !c.fits(size) {
		c.makeRoom(size, now)
	}
	c.entries[k] = e
	c.bytes += size
}

// fits reports whether one more entry of size fits (under c.mu).
func (c *Cache[K, V]) fits(size int) bool {
	return (c.cfg.MaxEntries <= 0 || len(c.entries) < c.cfg.MaxEntries) &&
		(c.cfg.MaxBytes <= 0 || c.bytes+size <= c.cfg.MaxBytes)
}

// makeRoom drops the stale entries, and all of them when that leaves
// less than a quarter of the cache free (under c.mu): a full cache is
// swept at most once per quarter of its size.
func (c *Cache[K, V]) makeRoom(size int, now time.Time) {
	for k, e := range c.entries {
		if !e.live(e.scope, c.cfg.Generations.Current(e.scope), now) {
			c.bytes -= e.size
			delete(c.entries, k)
		}
	}
	roomy := (c.cfg.MaxEntries <= 0 || len(c.entries) <= c.cfg.MaxEntries*3/4) &&
		(c.cfg.MaxBytes <= 0 || c.bytes+size <= c.cfg.MaxBytes*3/4)
	if !roomy {
		clear(c.entries)
		c.bytes = 0
	}
}

// Update replaces the scope's live entry under k with what change makes
// of it, keeping its expiry, and reports whether it did. It does nothing
// without a live entry (so a value read before a Forget of k is not
// attached to what replaced it), when change declines (ok false), or
// when the new value does not fit beside the others.
func (c *Cache[K, V]) Update(scope int64, k K, change func(V) (v V, ok bool)) bool {
	if c == nil {
		return false
	}
	gen, now := c.Generation(scope), c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || !e.live(scope, gen, now) {
		return false
	}
	v, ok := change(e.val)
	if !ok {
		return false
	}
	size := 0
	if c.cfg.MaxBytes > 0 {
		size = c.cfg.Size(v)
		if c.bytes-e.size+size > c.cfg.MaxBytes {
			return false
		}
	}
	c.bytes += size - e.size
	e.val, e.size = v, size
	c.entries[k] = e
	return true
}

// Forget drops the entries under keys (of any scope).
func (c *Cache[K, V]) Forget(keys ...K) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if e, ok := c.entries[k]; ok {
			c.bytes -= e.size
			delete(c.entries, k)
			c.stats.forgotten.Add(1)
		}
	}
}

// Load returns the scope's live entry under k, or calls load, stores what
// it returns (unless the scope was invalidated meanwhile) and returns it.
// Concurrent misses of one key each call load.
func (c *Cache[K, V]) Load(scope int64, k K, load func() (V, error)) (V, error) {
	if v, ok := c.Get(scope, k); ok {
		return v, nil
	}
	gen := c.Generation(scope)
	v, err := load()
	if err != nil {
		return v, err
	}
	c.Put(scope, gen, k, v)
	return v, nil
}

// Len is the number of entries held (live or not yet dropped).
func (c *Cache[K, V]) Len() int {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

// Bytes is the sum of the entries' sizes (0 without MaxBytes).
func (c *Cache[K, V]) Bytes() int {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bytes
}
