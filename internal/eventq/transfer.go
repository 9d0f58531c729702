package eventq

import (
	"encoding/json"
	"slices"
	"time"
)

// Queues move between holders: a process that stops hands its queues to
// another process (or to storage, for its own restart) without losing or
// repeating an event. Every holder sees the same events in the same order
// (the event bus), so a move is a cut in that order:
//
//   - the old holder detaches the queues at the cut (Detach): every event
//     before it is in their State, none after it;
//   - the new holder opens placeholders at the same cut (Adopt), which keep
//     the events after it, as a registering queue keeps the events that
//     arrive while its snapshot is read;
//   - the State arrives (Fill) and the kept events follow it.
//
// A queue restored from storage (Restore) had no events since its State was
// taken: nothing was written while no process held it.

// State is everything a queue holds, to be carried to another holder.
type State[O any] struct {
	ID       string        `json:"id"`
	Realm    int64         `json:"realm"`
	User     int64         `json:"user"`
	Options  O             `json:"options"`
	Lifespan time.Duration `json:"lifespan"`
	Role     int           `json:"role"`
	Channels []int64       `json:"channels"` // the channels the user receives
	Events   []StateEvent  `json:"events"`
	NextID   int64         `json:"next_id"`
	PrunedID int64         `json:"pruned_id"`
	Touched  time.Time     `json:"touched"`
}

// StateEvent is one queued event of a State: its JSON body without "id",
// or a run not yet rendered.
type StateEvent struct {
	ID   int64           `json:"id"`
	Body json.RawMessage `json:"body,omitempty"`
	Run  *Run            `json:"run,omitempty"`
}

// nothing is the snapshot of a queue that continues elsewhere: every
// event delivered after the cut is new to it.
type nothing struct{}

func (nothing) Includes(uint64) bool { return false }

// state copies q's state (under q.mu).
func (q *Queue[O]) state() State[O] {
	st := State[O]{ID: q.id, Realm: q.realm, User: q.user, Options: q.opts, Lifespan: q.lifespan,
		Role: q.standing.Role, NextID: q.nextID, PrunedID: q.prunedID, Touched: q.touched,
		Channels: make([]int64, 0, len(q.standing.Subscribed)), Events: make([]StateEvent, len(q.events))}
	for id := range q.standing.Subscribed {
		st.Channels = append(st.Channels, id)
	}
	slices.Sort(st.Channels)
	for i, e := range q.events {
		st.Events[i] = StateEvent{ID: e.id, Body: e.body, Run: e.run}
	}
	return st
}

// Detach takes the ready queues for which take reports true out of the
// hub and returns their states. Their pending polls end with no events
// (their clients poll again, and find the queues where they went); a
// queue still registering stays.
func (h *Hub[O]) Detach(take func(q *Queue[O]) bool) []State[O] {
	var out []State[O]
	for _, q := range h.list(0) {
		if !take(q) {
			continue
		}
		q.mu.Lock()
		if q.dropped || !q.ready {
			q.mu.Unlock()
			continue
		}
		out = append(out, q.state())
		q.moved = true
		h.drop(q)
		q.mu.Unlock()
		h.forget(q)
	}
	return out
}

// Adopt opens a placeholder for a queue that is coming from another holder
// (nil if a queue of that ID is here already): it keeps the events
// delivered from now on until Fill gives it its state. A placeholder not
// filled within wait is dropped. Polls of it wait until it is filled.
func (h *Hub[O]) Adopt(id string, realm, user int64, wait time.Duration) *Queue[O] {
	var zero O
	q := newQueue(id, realm, user, zero, wait, h.cfg.Now())
	h.mu.Lock()
	if h.queues[id] != nil {
		h.mu.Unlock()
		return nil
	}
	h.add(q)
	h.mu.Unlock()
	time.AfterFunc(wait, func() {
		q.mu.Lock()
		stale := !q.ready && !q.dropped
		if stale {
			h.cfg.Log.Warn("a queue handed over never arrived; dropping its placeholder", "queue", id)
			h.drop(q)
		}
		q.mu.Unlock()
		if stale {
			h.forget(q)
		}
	})
	return q
}

// Fill gives the placeholder of st.ID its state and makes it ready; the
// events it kept since Adopt follow. It reports false when there is no
// such placeholder (never adopted, dropped, or filled already).
func (h *Hub[O]) Fill(st State[O]) bool {
	h.mu.RLock()
	q := h.queues[st.ID]
	h.mu.RUnlock()
	if q == nil || q.realm != st.Realm || q.user != st.User {
		return false
	}
	q.mu.Lock()
	if q.ready || q.dropped {
		q.mu.Unlock()
		return false
	}
	h.load(q, st)
	q.mu.Unlock()
	h.Ready(q, nothing{}, standingOf(st))
	return true
}

// Restore puts back a queue saved by its holder before a restart; it
// reports false when a queue of that ID is here already.
func (h *Hub[O]) Restore(st State[O]) bool {
	q := newQueue(st.ID, st.Realm, st.User, st.Options, st.Lifespan, st.Touched)
	h.mu.Lock()
	if h.queues[st.ID] != nil {
		h.mu.Unlock()
		return false
	}
	h.add(q)
	h.mu.Unlock()
	q.mu.Lock()
	h.load(q, st)
	q.mu.Unlock()
	h.Ready(q, nothing{}, standingOf(st))
	return true
}

// load copies st into q (under q.mu).
func (h *Hub[O]) load(q *Queue[O], st State[O]) {
	q.opts, q.lifespan, q.touched = st.Options, st.Lifespan, st.Touched
	q.nextID, q.prunedID = st.NextID, st.PrunedID
	q.events = make([]queued, 0, len(st.Events))
	for _, e := range st.Events {
		it := queued{id: e.ID, body: e.Body, run: e.Run}
		q.events = append(q.events, it)
		q.account(h, it.size())
	}
}

func standingOf[O any](st State[O]) Standing {
	sub := make(map[int64]struct{}, len(st.Channels))
	for _, id := range st.Channels {
		sub[id] = struct{}{}
	}
	return Standing{Role: st.Role, Subscribed: sub}
}

// Drain ends every pending poll (with the events its queue has, often
// none) and makes later polls wait at most Config.DrainWait: the process
// is about to stop, and its shutdown must not wait for long polls.
func (h *Hub[O]) Drain() {
	h.draining.Store(true)
	for _, q := range h.list(0) {
		q.mu.Lock()
		if q.poll != nil {
			q.poll.signal()
		}
		q.mu.Unlock()
	}
}

// Draining reports whether Drain was called.
func (h *Hub[O]) Draining() bool { return h.draining.Load() }

// Holds reports whether the queue with that ID is here (ready or not).
func (h *Hub[O]) Holds(id string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.queues[id] != nil
}

// Ref names a queue: its ID and whose it is.
type Ref struct {
	ID          string
	Realm, User int64
}

// ReadyQueues lists the ready queues.
func (h *Hub[O]) ReadyQueues() []Ref {
	var out []Ref
	for _, q := range h.list(0) {
		q.mu.Lock()
		if q.ready && !q.dropped {
			out = append(out, Ref{ID: q.id, Realm: q.realm, User: q.user})
		}
		q.mu.Unlock()
	}
	return out
}
