package eventq

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Queue is one client's queue of events. Its identity and options never
// change; the rest is guarded by its lock, which the hub takes.
type Queue[O any] struct {
	id       string
	realm    int64
	user     int64
	opts     O
	lifespan time.Duration

	mu       sync.Mutex
	standing Standing

	// Until ready, the registration snapshot is being read: deliveries
	// wait in buffered, and those the snapshot turns out to include are
	// dropped (snap stays to drop late arrivals).
	ready    bool
	buffered []buffered[O]
	snap     Snapshot

	events   []queued
	nextID   int64 // the ID the next event gets
	prunedID int64 // the newest pruned event's ID (-1: none)
	bytes    int

	touched time.Time // the last poll's end (or the creation)
	poll    *pendingPoll
	dropped bool
	// moved: the queue was handed to another holder (transfer.go); a poll
	// that finds it so ends with no events, and its client polls again.
	moved bool
	// readyCh is closed once the queue is ready or dropped: a poll of a
	// queue being adopted waits for it.
	readyCh chan struct{}
}

// ID is the queue's ID (a UUID, the reference's form).
func (q *Queue[O]) ID() string { return q.id }

// UserID is the ID of the queue's user.
func (q *Queue[O]) UserID() int64 { return q.user }

// Options are the client's registration choices (read only).
func (q *Queue[O]) Options() *O { return &q.opts }

// Role is the user's role as the queue knows it. Like Subscribed, it may
// be called only by a Delivery's Render (which runs under the queue's
// lock).
func (q *Queue[O]) Role() int { return q.standing.Role }

// Subscribed reports whether the user receives the channel's messages, as
// the queue knows it (see Role).
func (q *Queue[O]) Subscribed(channel int64) bool {
	_, ok := q.standing.Subscribed[channel]
	return ok
}

type buffered[O any] struct {
	token uint64
	d     Delivery[O]
}

// queued is an event waiting in a queue: its JSON without "id" (shared
// with other queues that show it the same way), or a mergeable run.
type queued struct {
	id   int64
	body []byte
	run  *Run
}

// size estimates the memory a queued event holds.
func (e *queued) size() int {
	if e.run != nil {
		return 64 + len(e.run.Key) + 8*len(e.run.IDs)
	}
	return 48 + len(e.body)
}

type pendingPoll struct {
	wake chan struct{} // closed when the poll should look again
	// superseded: a newer poll took over; this one ends empty.
	superseded bool
	// finished: the queue was deleted while the poll waited; it ends with
	// final, the events the queue held.
	finished bool
	final    []json.RawMessage
}

// openReady closes readyCh (under q.mu), once.
func (q *Queue[O]) openReady() {
	select {
	case <-q.readyCh:
	default:
		close(q.readyCh)
	}
}

func (p *pendingPoll) signal() {
	select {
	case <-p.wake:
	default:
		close(p.wake)
	}
}

// push appends an item (under q.mu). A run merges into an undelivered
// run of the same key, which moves to the end with a new ID.
func (q *Queue[O]) push(h *Hub[O], it Item) {
	if r := it.Run; r != nil {
		for i := range q.events {
			old := q.events[i].run
			if old != nil && old.Key == r.Key {
				before := q.events[i].size()
				merged := &Run{Key: r.Key, IDs: append(slices.Clip(old.IDs), r.IDs...)}
				q.events = slices.Delete(q.events, i, i+1)
				e := queued{id: q.nextID, run: merged}
				q.nextID++
				q.events = append(q.events, e)
				q.account(h, e.size()-before)
				return
			}
		}
	}
	e := queued{id: q.nextID, body: it.Body, run: it.Run}
	q.nextID++
	q.events = append(q.events, e)
	q.account(h, e.size())
}

func (q *Queue[O]) account(h *Hub[O], delta int) {
	q.bytes += delta
	h.bytes.Add(int64(delta))
}

// prune drops the events up to and including id (under q.mu).
func (q *Queue[O]) prune(h *Hub[O], id int64) {
	n := 0
	for n < len(q.events) && q.events[n].id <= id {
		q.prunedID = q.events[n].id
		q.account(h, -q.events[n].size())
		n++
	}
	if n > 0 {
		q.events = slices.Delete(q.events, 0, n)
	}
}

// contents is the queue's events as JSON objects with their IDs (under
// q.mu). A run that goes out becomes an ordinary event: the client will
// acknowledge its ID with its next poll, so later runs must not merge
// into it (and take that ID away).
func (q *Queue[O]) contents(h *Hub[O]) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(q.events))
	for i := range q.events {
		e := &q.events[i]
		if e.run != nil {
			before := e.size()
			e.body, e.run = h.cfg.RenderRun(e.run), nil
			q.account(h, e.size()-before)
		}
		out = append(out, withEventID(e.id, e.body))
	}
	return out
}

// withEventID writes {"id":N,...body} for body {...}.
func withEventID(id int64, body []byte) json.RawMessage {
	out := make([]byte, 0, len(body)+24)
	out = append(out, `{"id":`...)
	out = strconv.AppendInt(out, id, 10)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...)
}

// NewQueueID returns a UUID4 string, the reference's queue ID form. A
// non-zero holder (below 2^32) takes the place of its first eight hex
// digits, so that the ID names the process that holds the queue
// (HolderOf reads it back).
func NewQueueID(holder uint32) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	if holder != 0 {
		b[0], b[1], b[2], b[3] = byte(holder>>24), byte(holder>>16), byte(holder>>8), byte(holder)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// HolderOf returns the holder named by a queue ID made by NewQueueID
// (0 when the ID is not of that form).
func HolderOf(id string) uint32 {
	if len(id) != 36 || id[8] != '-' {
		return 0
	}
	n, err := strconv.ParseUint(id[:8], 16, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// Standing is a queue's replica of its user's standing, which the
// audiences of events are checked against: their role and the channels
// whose messages they receive. It starts as the registration snapshot has
// it and follows the Changes of the events delivered after.
type Standing struct {
	Role       int
	Subscribed map[int64]struct{}
}

// Change is how an event changes the standing of the queues of its
// organization (whether or not they receive the event). It travels on the
// event bus as JSON.
type Change struct {
	// Users are the users whose standing the fields below change.
	Users        []int64 `json:"u,omitempty"`
	Subscribed   []int64 `json:"+,omitempty"`
	Unsubscribed []int64 `json:"-,omitempty"`
	Role         *int    `json:"r,omitempty"`
	// Deactivated: the users' queues are dropped.
	Deactivated bool `json:"d,omitempty"`
	// DeletedChannels are gone for everyone.
	DeletedChannels []int64 `json:"dc,omitempty"`
}

// apply changes the standing of user's queue; it reports whether the
// user was deactivated.
func (st *Standing) apply(c *Change, user int64) (deactivated bool) {
	for _, id := range c.DeletedChannels {
		delete(st.Subscribed, id)
	}
	if !slices.Contains(c.Users, user) {
		return false
	}
	if c.Deactivated {
		return true
	}
	if c.Role != nil {
		st.Role = *c.Role
	}
	if st.Subscribed == nil && len(c.Subscribed) > 0 {
		st.Subscribed = map[int64]struct{}{}
	}
	for _, id := range c.Subscribed {
		st.Subscribed[id] = struct{}{}
	}
	for _, id := range c.Unsubscribed {
		delete(st.Subscribed, id)
	}
	return false
}
