// Package eventq holds a process's event queues: one per registered
// client, fed with the events of committed writes and drained by long
// polls.
//
// The hub is machinery: it knows nothing of what events mean. Its user
// supplies, for each event, a Delivery that says which forms of the event
// a queue's client receives (none, when its user may not see it or did not
// ask for it) and how the event changes the queues' standing (a user's
// role, the channels they receive, a deactivation); the hub keeps the
// queues, their IDs and their bounds, buffers the events that arrive while
// a queue's registration snapshot is being read, wakes and ends long
// polls, merges runs of mergeable events, collects idle queues and counts
// what they hold.
//
// Locking: the hub's maps have one lock and every queue its own (taken
// after the hub's when both are held), so that a delivery touches many
// queues briefly and polls of different queues do not contend. Nothing
// outside this package takes them: a Delivery's Render runs under its
// queue's lock and may only call the queue's accessors.
//
// Time: timestamps (when a queue was last polled, which queues are idle)
// come from the injected clock; only durations that are waited for (a
// long poll's heartbeat, the collection interval) run on timers.
package eventq

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound the queues (every field must be set).
type Limits struct {
	// A queue whose client falls behind by more than MaxEvents events or
	// MaxBytes bytes is dropped; while all queues together hold more than
	// MaxTotalBytes, the largest is dropped.
	MaxEvents     int
	MaxBytes      int
	MaxTotalBytes int64
	// A long poll that sees no event ends with a heartbeat after a random
	// time between HeartbeatMin and HeartbeatMax.
	HeartbeatMin, HeartbeatMax time.Duration
	// CollectEvery is how often idle queues are collected once the hub
	// has started.
	CollectEvery time.Duration
}

// Config describes a Hub.
type Config struct {
	Limits Limits
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives the hub's warnings (dropped queues).
	Log *slog.Logger
	// Heartbeat is the event a long poll that saw nothing ends with.
	Heartbeat []byte
	// RenderRun writes a run of merged items as the event it goes out as.
	RenderRun func(*Run) []byte
	// NewID makes a new queue's ID (default NewQueueID(0)).
	NewID func() string
	// DrainWait is how long a poll waits for events once the hub is
	// draining (default one second).
	DrainWait time.Duration
}

// Item is one form of an event as a queue keeps it: Body, the event's
// JSON object without "id", or Run, a mergeable event.
type Item struct {
	Body []byte
	// Run: an item of a queue's undelivered items with the same Key takes
	// in the IDs (and moves to the end with a new event ID), as the
	// reference's "virtual events" do; it is written with
	// Config.RenderRun when it goes out.
	Run *Run
}

// Run is a mergeable event: a key and the IDs merged under it.
type Run struct {
	Key string
	IDs []int64
}

// Delivery is one event on its way to an organization's queues: what its
// user decides about it. Its methods are called once per queue, under that
// queue's lock; calls for different queues may run concurrently (a queue
// still registering renders the deliveries it buffered when it becomes
// ready, while they go on to other queues), so a Delivery that caches what
// it works out must guard it.
type Delivery[O any] interface {
	// Render appends to out the forms of the event that q's client
	// receives (none when it does not receive it).
	Render(q *Queue[O], out []Item) []Item
	// Change is how the event changes the standing of every queue of the
	// organization (nil: it does not).
	Change() *Change
}

// Snapshot tells which writes a registration's read snapshot includes:
// a delivery of such a write is not queued (storage.Snapshot is one).
type Snapshot interface {
	Includes(token uint64) bool
}

// Errors of Poll.
var (
	// ErrNoQueue: the queue was dropped (or never existed).
	ErrNoQueue = errors.New("eventq: no such queue")
	// ErrPruned: the client acknowledged an event older than one already
	// pruned.
	ErrPruned = errors.New("eventq: an event newer than the last one acknowledged has already been pruned")
	// ErrNotInQueue: the acknowledged ID is not one the queue gave out.
	ErrNotInQueue = errors.New("eventq: the acknowledged event was not in this queue")
	// ErrStopped: the hub was stopped.
	ErrStopped = errors.New("eventq: stopped")
)

// Hub holds the queues of a process. O is the type of a queue's options
// (its client's registration choices), which only Deliveries read.
type Hub[O any] struct {
	cfg Config

	startMu sync.Mutex
	cancel  context.CancelFunc // stops the listener; nil until started
	stopped bool

	mu     sync.RWMutex
	queues map[string]*Queue[O]
	realms map[int64]map[*Queue[O]]struct{}
	users  map[[2]int64]map[*Queue[O]]struct{} // by (realm, user)
	bytes  atomic.Int64                        // the events held by all queues
	// dropped counts the queues dropped, by reason (for Stats).
	dropped struct{ behind, overTotal, idle atomic.Uint64 }
	// draining: polls wait at most DrainWait (see Drain).
	draining atomic.Bool
}

// New returns a hub with no queues.
func New[O any](cfg Config) *Hub[O] {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string { return NewQueueID(0) }
	}
	if cfg.DrainWait <= 0 {
		cfg.DrainWait = time.Second
	}
	return &Hub[O]{cfg: cfg, queues: map[string]*Queue[O]{}, realms: map[int64]map[*Queue[O]]struct{}{},
		users: map[[2]int64]map[*Queue[O]]struct{}{}}
}

// Start calls listen once (the first call that succeeds; later calls do
// nothing) with a context that Stop cancels, and then collects idle queues
// every Limits.CollectEvery until Stop. After Stop it returns ErrStopped.
func (h *Hub[O]) Start(listen func(ctx context.Context) error) error {
	h.startMu.Lock()
	defer h.startMu.Unlock()
	if h.stopped {
		return ErrStopped
	}
	if h.cancel != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := listen(ctx); err != nil {
		cancel()
		return err
	}
	h.cancel = cancel
	go h.collectLoop(ctx)
	return nil
}

// Started reports whether Start has succeeded (and Stop not been
// called).
func (h *Hub[O]) Started() bool {
	h.startMu.Lock()
	defer h.startMu.Unlock()
	return h.cancel != nil && !h.stopped
}

// Stop ends listening, collection and every pending poll, and drops every
// queue. The hub cannot be started again.
func (h *Hub[O]) Stop() {
	h.startMu.Lock()
	h.stopped = true
	if h.cancel != nil {
		h.cancel()
	}
	h.startMu.Unlock()
	h.DropAll()
}

// Open registers a queue of realm's user with the client's options; an
// unpolled queue is collected after lifespan. Until Ready, deliveries
// wait in the queue.
func (h *Hub[O]) Open(realm, user int64, opts O, lifespan time.Duration) *Queue[O] {
	q := newQueue(h.cfg.NewID(), realm, user, opts, lifespan, h.cfg.Now())
	h.mu.Lock()
	defer h.mu.Unlock()
	h.add(q)
	return q
}

func newQueue[O any](id string, realm, user int64, opts O, lifespan time.Duration, now time.Time) *Queue[O] {
	return &Queue[O]{id: id, realm: realm, user: user, opts: opts, lifespan: lifespan,
		touched: now, prunedID: -1, readyCh: make(chan struct{})}
}

// add puts q in the hub's maps (under h.mu).
func (h *Hub[O]) add(q *Queue[O]) {
	h.queues[q.id] = q
	addTo(h.realms, q.realm, q)
	addTo(h.users, [2]int64{q.realm, q.user}, q)
}

func addTo[K comparable, O any](m map[K]map[*Queue[O]]struct{}, k K, q *Queue[O]) {
	set := m[k]
	if set == nil {
		set = map[*Queue[O]]struct{}{}
		m[k] = set
	}
	set[q] = struct{}{}
}

func removeFrom[K comparable, O any](m map[K]map[*Queue[O]]struct{}, k K, q *Queue[O]) {
	if set := m[k]; set != nil {
		delete(set, q)
		if len(set) == 0 {
			delete(m, k)
		}
	}
}

// Ready ends q's registration: its standing is st, as of snap, and the
// deliveries that waited are queued unless snap includes their writes
// (as later ones will be).
func (h *Hub[O]) Ready(q *Queue[O], snap Snapshot, st Standing) {
	q.mu.Lock()
	q.snap, q.standing, q.ready = snap, st, true
	q.openReady()
	waiting := q.buffered
	q.buffered = nil
	var items []Item
	for _, b := range waiting {
		if q.dropped {
			break
		}
		if !snap.Includes(b.token) {
			items = h.offer(q, b.d, items[:0])
		}
	}
	h.unlockDelivered(q)
	h.enforceTotal()
}

// Find returns the queue with that ID if it is realm's user's (nil
// otherwise).
func (h *Hub[O]) Find(id string, realm, user int64) *Queue[O] {
	h.mu.RLock()
	q := h.queues[id]
	h.mu.RUnlock()
	if q == nil || q.user != user || q.realm != realm {
		return nil
	}
	return q
}

// HasQueues reports whether the organization has queues (a delivery to
// it is worth preparing).
func (h *Hub[O]) HasQueues(realm int64) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.realms[realm]) > 0
}

// Remove deletes q (DELETE /events): a poll waiting on it ends with the
// events it holds, as the reference finishes it; its events are freed.
func (h *Hub[O]) Remove(q *Queue[O]) {
	q.mu.Lock()
	h.finish(q)
	q.mu.Unlock()
	h.forget(q)
}

// discard drops q without answering its waiting poll's events: its
// client must register again (it may have missed events).
func (h *Hub[O]) discard(q *Queue[O]) {
	q.mu.Lock()
	h.drop(q)
	q.mu.Unlock()
	h.forget(q)
}

// DropAll drops every queue; their clients register again.
func (h *Hub[O]) DropAll() {
	for _, q := range h.list(0) {
		h.discard(q)
	}
}

// finish drops q (under q.mu), giving a waiting poll the events q holds.
func (h *Hub[O]) finish(q *Queue[O]) {
	if q.dropped {
		return
	}
	if p := q.poll; p != nil {
		p.final, p.finished = q.contents(h), true
	}
	h.drop(q)
}

// drop ends q (under q.mu); forget must follow once q.mu is released.
func (h *Hub[O]) drop(q *Queue[O]) {
	if q.dropped {
		return
	}
	q.dropped = true
	h.bytes.Add(-int64(q.bytes))
	q.events, q.bytes, q.buffered = nil, 0, nil
	if q.poll != nil {
		q.poll.signal()
	}
	q.openReady()
}

// forget removes a dropped queue from the hub's maps.
func (h *Hub[O]) forget(q *Queue[O]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.queues[q.id] == q {
		delete(h.queues, q.id)
	}
	removeFrom(h.realms, q.realm, q)
	removeFrom(h.users, [2]int64{q.realm, q.user}, q)
}

// UserHasQueue reports whether realm's user has a live queue whose
// options satisfy accepts (the cost is the user's queues, not the
// organization's).
func (h *Hub[O]) UserHasQueue(realm, user int64, accepts func(opts *O) bool) bool {
	h.mu.RLock()
	qs := make([]*Queue[O], 0, len(h.users[[2]int64{realm, user}]))
	for q := range h.users[[2]int64{realm, user}] {
		qs = append(qs, q)
	}
	h.mu.RUnlock()
	for _, q := range qs {
		if !accepts(&q.opts) {
			continue
		}
		q.mu.Lock()
		live := !q.dropped
		q.mu.Unlock()
		if live {
			return true
		}
	}
	return false
}

// list returns the queues of one organization, or all for realm 0.
func (h *Hub[O]) list(realm int64) []*Queue[O] {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if realm != 0 {
		out := make([]*Queue[O], 0, len(h.realms[realm]))
		for q := range h.realms[realm] {
			out = append(out, q)
		}
		return out
	}
	out := make([]*Queue[O], 0, len(h.queues))
	for _, q := range h.queues {
		out = append(out, q)
	}
	return out
}

// Deliver hands one committed write's events (ds, in order) to the
// organization's queues. token identifies the write for the snapshots of
// registrations under way.
func (h *Hub[O]) Deliver(token uint64, realm int64, ds []Delivery[O]) {
	var items []Item
	for _, q := range h.list(realm) {
		q.mu.Lock()
		switch {
		case q.dropped:
			q.mu.Unlock()
			continue
		case !q.ready:
			for _, d := range ds {
				q.buffered = append(q.buffered, buffered[O]{token, d})
			}
			q.mu.Unlock()
			continue
		case q.snap.Includes(token):
			q.mu.Unlock()
			continue
		}
		for _, d := range ds {
			if !q.dropped {
				items = h.offer(q, d, items[:0])
			}
		}
		h.unlockDelivered(q)
	}
	h.enforceTotal()
}

// offer gives one event to one ready queue (under q.mu): the forms its
// client receives are queued, and then the event changes its standing.
func (h *Hub[O]) offer(q *Queue[O], d Delivery[O], buf []Item) []Item {
	buf = d.Render(q, buf)
	for _, it := range buf {
		q.push(h, it)
	}
	if c := d.Change(); c != nil && q.standing.apply(c, q.user) {
		h.finish(q) // deactivated: the events up to it go out
	}
	return buf
}

// unlockDelivered ends a delivery to q: it wakes q's poll (or drops q if
// it is over its bound), releases q.mu, and forgets q if it was dropped.
func (h *Hub[O]) unlockDelivered(q *Queue[O]) {
	lim := h.cfg.Limits
	if !q.dropped && (len(q.events) > lim.MaxEvents || q.bytes > lim.MaxBytes) {
		h.cfg.Log.Warn("event queue fell behind; dropping it", "queue", q.id, "user", q.user, "events", len(q.events), "bytes", q.bytes)
		h.drop(q)
		h.dropped.behind.Add(1)
	}
	if !q.dropped && q.poll != nil && len(q.events) > 0 {
		q.poll.signal()
	}
	dropped := q.dropped
	q.mu.Unlock()
	if dropped {
		h.forget(q)
	}
}

// enforceTotal drops the largest queues while all of them together hold
// more than the total bound.
func (h *Hub[O]) enforceTotal() {
	for h.bytes.Load() > h.cfg.Limits.MaxTotalBytes {
		var largest *Queue[O]
		size := 0
		for _, q := range h.list(0) {
			q.mu.Lock()
			if q.bytes > size {
				largest, size = q, q.bytes
			}
			q.mu.Unlock()
		}
		if largest == nil {
			return
		}
		h.cfg.Log.Warn("event queues over their memory bound; dropping the largest", "queue", largest.id, "bytes", size)
		h.discard(largest)
		h.dropped.overTotal.Add(1)
	}
}

// Collect drops the queues that nobody polled within their lifespan as
// of now; it returns how many.
func (h *Hub[O]) Collect(now time.Time) int {
	n := 0
	for _, q := range h.list(0) {
		q.mu.Lock()
		idle := !q.dropped && q.poll == nil && now.Sub(q.touched) > q.lifespan
		if idle {
			h.drop(q)
		}
		q.mu.Unlock()
		if idle {
			h.forget(q)
			n++
		}
	}
	h.dropped.idle.Add(uint64(n))
	return n
}

// collectLoop collects idle queues until ctx ends.
func (h *Hub[O]) collectLoop(ctx context.Context) {
	t := time.NewTicker(h.cfg.Limits.CollectEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.Collect(h.cfg.Now())
		}
	}
}

// Stats describe the queues.
type Stats struct {
	Queues int
	// Waiting counts the queues with a long poll waiting for events.
	Waiting int
	Events  int
	Bytes   int64
	// Dropped counts the queues dropped since the hub was made, by
	// reason: their client fell behind (DroppedBehind), all queues
	// together held too much (DroppedOverTotal), or nobody polled them
	// within their lifespan (DroppedIdle).
	DroppedBehind, DroppedOverTotal, DroppedIdle uint64
}

// Stats counts the queues and what they hold.
func (h *Hub[O]) Stats() Stats {
	st := Stats{Bytes: h.bytes.Load(), DroppedBehind: h.dropped.behind.Load(),
		DroppedOverTotal: h.dropped.overTotal.Load(), DroppedIdle: h.dropped.idle.Load()}
	for _, q := range h.list(0) {
		q.mu.Lock()
		if !q.dropped {
			st.Queues++
			st.Events += len(q.events)
			if q.poll != nil {
				st.Waiting++
			}
		}
		q.mu.Unlock()
	}
	return st
}

// Poll returns q's events newer than last, dropping the older ones. When
// there are none and dontBlock is false it waits: until an event arrives,
// until a newer Poll of q takes over (then it returns no events), until
// ctx ends (then it returns ctx's error), or until the heartbeat time,
// when it returns the heartbeat event. waited reports that it waited.
func (h *Hub[O]) Poll(ctx context.Context, q *Queue[O], last int64, dontBlock bool) (events []json.RawMessage, waited bool, err error) {
	q.mu.Lock()
	if !q.ready && !q.dropped {
		// Being adopted from another holder (transfer.go): wait until it
		// is ready.
		q.mu.Unlock()
		select {
		case <-q.readyCh:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		q.mu.Lock()
	}
	switch {
	case q.moved:
		q.mu.Unlock()
		return []json.RawMessage{}, false, nil
	case q.dropped:
		q.mu.Unlock()
		return nil, false, ErrNoQueue
	case last < q.prunedID:
		q.mu.Unlock()
		return nil, false, ErrPruned
	}
	q.prune(h, last)
	if last != q.prunedID {
		q.mu.Unlock()
		return nil, false, ErrNotInQueue
	}
	q.touched = h.cfg.Now()
	if len(q.events) > 0 || dontBlock {
		out := q.contents(h)
		q.mu.Unlock()
		return out, false, nil
	}
	if q.poll != nil {
		q.poll.superseded = true
		q.poll.signal()
	}
	p := &pendingPoll{wake: make(chan struct{})}
	q.poll = p
	q.mu.Unlock()

	wait, draining := h.heartbeatAfter(), h.draining.Load()
	if draining {
		wait = h.cfg.DrainWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	heartbeat := false
	select {
	case <-p.wake:
	case <-timer.C:
		heartbeat = !draining
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.poll == p {
		q.poll = nil
		q.touched = h.cfg.Now()
	}
	switch {
	case q.moved:
		return []json.RawMessage{}, true, nil
	case p.finished:
		return p.final, true, nil
	case q.dropped:
		return nil, true, ErrNoQueue
	case p.superseded:
		return []json.RawMessage{}, true, nil
	case ctx.Err() != nil && len(q.events) == 0:
		return nil, true, ctx.Err()
	}
	if heartbeat && len(q.events) == 0 {
		q.push(h, Item{Body: h.cfg.Heartbeat})
	}
	return q.contents(h), true, nil
}

// heartbeatAfter picks a long poll's random heartbeat delay.
func (h *Hub[O]) heartbeatAfter() time.Duration {
	lim := h.cfg.Limits
	spread := lim.HeartbeatMax - lim.HeartbeatMin
	if spread <= 0 {
		return lim.HeartbeatMin
	}
	return lim.HeartbeatMin + time.Duration(mrand.Int64N(int64(spread)))
}
