// Package writelane orders a process's write transactions and lets
// concurrent writes share one (group commit).
//
// A write names its lane: an organization's lane 0 stands for the whole
// organization, any other lane for one part of it (a channel, a direct
// conversation). Writes of one lane run one transaction at a time, in the
// order they arrived; writes of different lanes of an organization run side
// by side; a lane-0 write runs alone in its organization, with no other
// lane's transaction open (a readers-writer lock with the organization as
// the writer, which new lane transactions wait behind so it is never
// starved). Different organizations never wait for each other, except for
// the limit on open transactions.
//
// Writes queued behind a running transaction of their lane are taken
// together by the next transaction: one of the waiting callers leads it
// (runs the Gate's Runner with every batchable operation queued at that
// moment, in arrival order, up to a batch size), and each caller gets its
// own operation's error. An operation that is not batchable runs alone.
// The Runner decides what a shared transaction means (one commit for all,
// and what to do when one of them fails); this package only decides who
// runs with whom and when.
//
// A transaction may also take in writes that arrived after it started
// (Batch.Join): the Runner calls Join once it holds the database's lock,
// so that writes queued while it waited for that lock (held by another
// process, or simply a round trip away) share it instead of waiting for
// the next transaction. How many it may take is the Runner's choice (a
// transaction may have to reserve something for each write before it
// knows them); Batch.Expect says how many the lane's previous transaction
// saw arrive, which is the Runner's best guess.
//
// The package knows nothing of databases: the caller's Runner takes the
// database's own locks inside the transaction, so that several processes
// sharing a database are ordered the same way. The gate here keeps a
// process's waiting writers from holding pooled connections while they
// wait for the database's lock.
package writelane

import (
	"context"
	"sync"
)

// Key names a lane: Lane 0 is the whole organization.
type Key struct {
	Realm int64
	Lane  uint64
}

// Org is the key of an organization's lane 0.
func Org(realm int64) Key { return Key{Realm: realm} }

// Runner runs b's operations in one transaction of lane key and returns
// each op's error, in the order of b.Ops() as it stands when the Runner
// returns (after any Join). ctx is the leading caller's context without
// its cancellation: a batch is not abandoned because the caller that
// happened to lead it went away.
type Runner[T any] func(ctx context.Context, key Key, b *Batch[T]) []error

// After finishes a batch once its lane is free for the next transaction
// (so that it may itself queue writes), before the callers get their
// errors: the batch's leader calls it even for ops whose callers have
// stopped waiting.
type After[T any] func(ctx context.Context, ops []T, errs []error)

// Gate queues and runs the writes of a process.
type Gate[T any] struct {
	run      Runner[T]
	after    After[T]
	maxBatch int
	// open has a token per running transaction; nil: no limit.
	open chan struct{}

	mu     sync.Mutex
	realms map[int64]*realm[T]
	// arrivals are, by lane, how many writes arrived while the lane's
	// last transaction that called Join waited for it, or half the number
	// before if that is more (so that one quiet transaction does not
	// make a busy lane forget; a quiet lane forgets in a few); none:
	// forgotten.
	arrivals map[Key]int
}

// maxArrivals bounds the lanes whose arrivals the Gate remembers: past
// it they are all forgotten, which costs each busy lane one transaction
// that takes no one in (Expect 0) and learns its number again.
const maxArrivals = 4096

// New returns a Gate that runs batches of at most maxBatch operations
// (at least 1) with run, then after (which may be nil), and keeps at most
// limit transactions running at once (0: no limit).
func New[T any](run Runner[T], after After[T], maxBatch, limit int) *Gate[T] {
	g := &Gate[T]{run: run, after: after, maxBatch: max(1, maxBatch), realms: map[int64]*realm[T]{}, arrivals: map[Key]int{}}
	if limit > 0 {
		g.open = make(chan struct{}, limit)
	}
	return g
}

// realm is an organization's state: its lanes' queues and the
// readers-writer lock between lane 0 and the others.
type realm[T any] struct {
	lanes map[uint64]*lane[T]
	// running counts the lane transactions open (lane != 0); whole is
	// true while a lane-0 transaction is open; wholeWaiting counts lane-0
	// leaders waiting to open one.
	running      int
	whole        bool
	wholeWaiting int
	// changed is closed (and replaced) whenever the lock is released.
	changed chan struct{}
}

// lane is one lane's queue; leading is true while a caller leads it.
type lane[T any] struct {
	pending []*entry[T]
	leading bool
}

type entry[T any] struct {
	op        T
	batchable bool
	ctx       context.Context
	// taken: a leader took the op into a transaction (it can no longer
	// be withdrawn).
	taken bool
	done  chan error    // the op's result
	lead  chan struct{} // this caller leads the lane's next transaction
}

// Do runs op in lane key, alone or (when batchable) in a transaction
// shared with other batchable operations of the lane queued at the same
// time, and returns its error. If ctx ends before op is taken into a
// transaction, op is withdrawn and ctx's error returned; if it ends while
// op's transaction runs, Do returns ctx's error without waiting, and op
// may still commit.
func (g *Gate[T]) Do(ctx context.Context, key Key, op T, batchable bool) error {
	e := &entry[T]{op: op, batchable: batchable, ctx: ctx, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	g.mu.Lock()
	r := g.realms[key.Realm]
	if r == nil {
		r = &realm[T]{lanes: map[uint64]*lane[T]{}, changed: make(chan struct{})}
		g.realms[key.Realm] = r
	}
	l := r.lanes[key.Lane]
	if l == nil {
		l = &lane[T]{}
		r.lanes[key.Lane] = l
	}
	l.pending = append(l.pending, e)
	leadNow := !l.leading
	l.leading = true
	g.mu.Unlock()
	if !leadNow {
		select {
		case err := <-e.done:
			return err
		case <-e.lead:
		case <-ctx.Done():
			g.mu.Lock()
			if !e.taken {
				g.withdraw(key, l, e, false)
				g.mu.Unlock()
				return ctx.Err()
			}
			g.mu.Unlock()
			select {
			case err := <-e.done:
				return err
			default:
				return ctx.Err()
			}
		}
	}
	return g.lead(ctx, key, r, l, e)
}

// lead runs the lane's next transaction, whose first operation is e's,
// then hands the lane to the next waiting caller.
func (g *Gate[T]) lead(ctx context.Context, key Key, r *realm[T], l *lane[T], e *entry[T]) error {
	if err := g.enter(ctx, key, r); err != nil {
		g.mu.Lock()
		g.withdraw(key, l, e, true)
		g.mu.Unlock()
		return err
	}
	g.mu.Lock()
	b := &Batch[T]{g: g, key: key, l: l, entries: []*entry[T]{l.pending[0]}}
	if b.entries[0].batchable {
		for _, next := range l.pending[1:] {
			if !next.batchable || len(b.entries) == g.maxBatch {
				break
			}
			b.entries = append(b.entries, next)
		}
		b.expect = min(g.arrivals[key], g.maxBatch-len(b.entries))
	}
	l.pending = l.pending[len(b.entries):]
	b.ops = make([]T, len(b.entries))
	for i, e := range b.entries {
		e.taken = true
		b.ops[i] = e.op
	}
	g.mu.Unlock()

	bctx := context.WithoutCancel(ctx)
	errs := g.run(bctx, key, b)
	if len(errs) != len(b.ops) {
		panic("writelane: the Runner answered the wrong number of errors")
	}
	g.leave(key, r)
	g.mu.Lock()
	b.done = true
	b.remember()
	g.handOn(key, l)
	g.mu.Unlock()
	if g.after != nil {
		g.after(bctx, b.ops, errs)
	}
	for i, be := range b.entries {
		be.done <- errs[i]
	}
	return <-e.done
}

// Batch is the operations of one transaction: those queued in its lane
// when it started and those it took in later (Join), in arrival order.
// Its methods are for the Runner, while it runs.
type Batch[T any] struct {
	g       *Gate[T]
	key     Key
	l       *lane[T]
	entries []*entry[T]
	ops     []T
	expect  int
	// joined: Join was called; took counts the writes it took in, left
	// those it found queued at its last call and left there (together:
	// the writes that arrived while the transaction waited); done: the
	// transaction has ended.
	joined     bool
	took, left int
	done       bool
}

// Ops are the batch's operations so far, in arrival order.
func (b *Batch[T]) Ops() []T { return b.ops }

// Expect is how many writes arrived while the lane's previous transaction
// waited for its lock (as Join counted them; or half what the lane
// expected before, if that is more), at most what the batch still has
// room for; 0 when the batch cannot grow (its first operation is not
// batchable) or the lane has no recent count.
func (b *Batch[T]) Expect() int { return b.expect }

// Join takes into the batch up to limit batchable operations queued in
// its lane since it started (in arrival order, stopping at one that is
// not batchable, never beyond the Gate's batch size) and returns them,
// now also at the end of Ops. It counts every write found queued, taken or
// not, for the lane's next Expect. The Runner calls it once it holds the
// database's lock, and may call it again; a batch whose first operation is
// not batchable takes nothing.
func (b *Batch[T]) Join(limit int) []T {
	g := b.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if b.done {
		panic("writelane: Join after the transaction ended")
	}
	if !b.entries[0].batchable {
		return nil
	}
	waiting := 0
	for _, e := range b.l.pending {
		if !e.batchable {
			break
		}
		waiting++
	}
	n := min(waiting, max(limit, 0), g.maxBatch-len(b.entries))
	b.joined = true
	b.took += n
	b.left = waiting - n
	taken := b.l.pending[:n]
	b.l.pending = b.l.pending[n:]
	start := len(b.ops)
	for _, e := range taken {
		e.taken = true
		b.entries = append(b.entries, e)
		b.ops = append(b.ops, e.op)
	}
	return b.ops[start:]
}

// remember keeps what Join counted as the lane's arrivals, for its next
// batch's Expect. g.mu is held.
func (b *Batch[T]) remember() {
	g := b.g
	if !b.joined {
		return
	}
	arrived := max(b.took+b.left, g.arrivals[b.key]/2)
	if arrived == 0 {
		delete(g.arrivals, b.key)
		return
	}
	if _, ok := g.arrivals[b.key]; !ok && len(g.arrivals) >= maxArrivals {
		clear(g.arrivals)
	}
	g.arrivals[b.key] = arrived
}

// withdraw removes e, which no transaction took, from the lane's queue.
// If e's caller was leading the lane (or was just asked to), the next
// caller leads instead. g.mu is held.
func (g *Gate[T]) withdraw(key Key, l *lane[T], e *entry[T], leading bool) {
	for i, p := range l.pending {
		if p == e {
			l.pending = append(l.pending[:i], l.pending[i+1:]...)
			break
		}
	}
	select {
	case <-e.lead: // asked to lead after its context ended
		leading = true
	default:
	}
	if leading {
		g.handOn(key, l)
	}
}

// handOn wakes the caller of the lane's first queued op to lead its next
// transaction, or marks the lane idle (and forgets it). g.mu is held.
func (g *Gate[T]) handOn(key Key, l *lane[T]) {
	if len(l.pending) > 0 {
		l.pending[0].lead <- struct{}{}
		return
	}
	l.leading = false
	r := g.realms[key.Realm]
	delete(r.lanes, key.Lane)
	if len(r.lanes) == 0 && r.running == 0 && !r.whole && r.wholeWaiting == 0 {
		delete(g.realms, key.Realm)
	}
}

// enter waits until key's transaction may open: no lane-0 transaction of
// the organization open or waiting (for a lane), or nothing open at all
// (for lane 0); then for a free transaction slot.
func (g *Gate[T]) enter(ctx context.Context, key Key, r *realm[T]) error {
	g.mu.Lock()
	if key.Lane == 0 {
		r.wholeWaiting++
	}
	for {
		if key.Lane == 0 && !r.whole && r.running == 0 {
			r.wholeWaiting--
			r.whole = true
			break
		}
		if key.Lane != 0 && !r.whole && r.wholeWaiting == 0 {
			r.running++
			break
		}
		changed := r.changed
		g.mu.Unlock()
		select {
		case <-changed:
			g.mu.Lock()
		case <-ctx.Done():
			g.mu.Lock()
			if key.Lane == 0 {
				r.wholeWaiting--
				g.broadcast(r) // lanes waiting behind this one may go
			}
			g.mu.Unlock()
			return ctx.Err()
		}
	}
	g.mu.Unlock()
	if g.open != nil {
		select {
		case g.open <- struct{}{}:
		case <-ctx.Done():
			g.unlock(key, r)
			return ctx.Err()
		}
	}
	return nil
}

// leave ends key's transaction and frees its slot.
func (g *Gate[T]) leave(key Key, r *realm[T]) {
	if g.open != nil {
		<-g.open
	}
	g.unlock(key, r)
}

// unlock releases the organization's lock that enter took for key.
func (g *Gate[T]) unlock(key Key, r *realm[T]) {
	g.mu.Lock()
	if key.Lane == 0 {
		r.whole = false
	} else {
		r.running--
	}
	g.broadcast(r)
	g.mu.Unlock()
}

// broadcast wakes everyone waiting on the organization's lock. g.mu is held.
func (g *Gate[T]) broadcast(r *realm[T]) {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Idle reports whether nothing is queued or running (for tests).
func (g *Gate[T]) Idle() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.realms) == 0 && (g.open == nil || len(g.open) == 0)
}

// Queued is the number of operations waiting in key's lane, not yet
// taken into a transaction (for tests that queue in a known order).
func (g *Gate[T]) Queued(key Key) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.realms[key.Realm]
	if r == nil || r.lanes[key.Lane] == nil {
		return 0
	}
	n := 0
	for _, e := range r.lanes[key.Lane].pending {
		if !e.taken {
			n++
		}
	}
	return n
}
