// Package presencebuf is the core of the presence buffer: the presence
// times of the users who report to this server, held in memory, which of
// them changed since they were last written, and the flush that writes
// those. What a report does to a user's times (the reference's update
// rule), when it must be written at once, and how a batch is written, are
// its user's: the buffer applies a rule under its lock and hands batches to
// a writer.
package presencebuf

import "sync"

// Times is a user's presence: when they were last active and last
// connected (Unix seconds; nil: never).
type Times struct {
	Active, Connected *int64
}

// later returns the later of two optional times.
func later(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a >= *b:
		return a
	}
	return b
}

// Merge is the later of each time of p and q.
func (p Times) Merge(q Times) Times {
	return Times{Active: later(p.Active, q.Active), Connected: later(p.Connected, q.Connected)}
}

// Equal reports whether p and q hold the same times.
func (p Times) Equal(q Times) bool {
	eq := func(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	return eq(p.Active, q.Active) && eq(p.Connected, q.Connected)
}

// Key names a user of an organization.
type Key struct{ Realm, User int64 }

// Entry is one user's times in a flush.
type Entry struct {
	User int64
	Times
}

// Buffer holds the times. The zero value is not ready: use New.
type Buffer struct {
	mu    sync.Mutex
	known map[Key]Times
	dirty map[Key]bool

	flushMu sync.Mutex // one flush at a time
}

// New returns an empty buffer.
func New() *Buffer {
	return &Buffer{known: map[Key]Times{}, dirty: map[Key]bool{}}
}

// Held returns the times the buffer holds for k.
func (b *Buffer) Held(k Key) (Times, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.known[k]
	return t, ok
}

// Update runs rule under the buffer's lock on k's times: base merged with
// what the buffer holds. When rule answers hold, the buffer holds next
// from then on, to be written by the next flush if changed (else it
// only remembers it).
func (b *Buffer) Update(k Key, base Times, rule func(cur Times) (next Times, changed, hold bool)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := base
	if held, ok := b.known[k]; ok {
		cur = cur.Merge(held)
	}
	next, changed, hold := rule(cur)
	if !hold {
		return
	}
	b.known[k] = next
	if changed {
		b.dirty[k] = true
	}
}

// Settle records that written is stored for k: what the buffer holds is
// clean unless it is newer.
func (b *Buffer) Settle(k Key, written Times) {
	b.mu.Lock()
	defer b.mu.Unlock()
	merged := written
	if held, ok := b.known[k]; ok {
		merged = held.Merge(written)
	}
	b.known[k] = merged
	if merged.Equal(written) {
		delete(b.dirty, k)
	}
}

// Forget drops what the buffer holds for k (it must not be written).
func (b *Buffer) Forget(k Key) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.known, k)
	delete(b.dirty, k)
}

// Flush hands the times changed since the last flush to write, in batches
// of at most batch entries of one organization; the entries of a batch
// whose write fails stay for the next flush. One flush runs at a time.
// write may call Held and Current (a change made meanwhile is newer than
// the batch).
func (b *Buffer) Flush(batch int, write func(realm int64, es []Entry) error) {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	byRealm := map[int64][]Entry{}
	for k := range b.dirty {
		byRealm[k.Realm] = append(byRealm[k.Realm], Entry{User: k.User, Times: b.known[k]})
	}
	clear(b.dirty)
	b.mu.Unlock()
	for realm, es := range byRealm {
		for start := 0; start < len(es); start += batch {
			part := es[start:min(start+batch, len(es))]
			if write(realm, part) == nil {
				continue
			}
			b.mu.Lock()
			for _, e := range part {
				b.dirty[Key{realm, e.User}] = true
			}
			b.mu.Unlock()
		}
	}
}

// Current reports whether the buffer still holds exactly t for k (a flush
// writes an entry only then: otherwise a newer report will be flushed, or
// the entry was forgotten).
func (b *Buffer) Current(k Key, t Times) bool {
	held, ok := b.Held(k)
	return ok && held.Equal(t)
}

// Evict forgets the clean entries of users not connected since before
// (their next report reads their row again), so that the buffer holds
// about the users online on this server.
func (b *Buffer) Evict(before int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, t := range b.known {
		if !b.dirty[k] && (t.Connected == nil || *t.Connected < before) {
			delete(b.known, k)
		}
	}
}

// Dirty counts the entries waiting for a flush.
func (b *Buffer) Dirty() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.dirty)
}
