package eventq

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type opts struct{ wants string }

// delivery renders a named event for the queues whose options want it
// (every queue when wants is ""), or for subscribers of channel when set.
type delivery struct {
	name    string
	channel int64
	change  *Change
	run     *Run
}

func (d delivery) Render(q *Queue[opts], out []Item) []Item {
	if w := q.Options().wants; w != "" && w != d.name {
		return out
	}
	if d.channel != 0 && !q.Subscribed(d.channel) {
		return out
	}
	if d.run != nil {
		return append(out, Item{Run: d.run})
	}
	return append(out, Item{Body: []byte(`{"type":"` + d.name + `"}`)})
}

func (d delivery) Change() *Change { return d.change }

func ev(names ...string) []Delivery[opts] {
	out := make([]Delivery[opts], len(names))
	for i, n := range names {
		out[i] = delivery{name: n}
	}
	return out
}

type snapshot map[uint64]bool

func (s snapshot) Includes(t uint64) bool { return s[t] }

var testLimits = Limits{MaxEvents: 100, MaxBytes: 1 << 20, MaxTotalBytes: 1 << 30,
	HeartbeatMin: time.Hour, HeartbeatMax: time.Hour, CollectEvery: time.Hour}

// newHub returns a hub and the time its clock reads (tests move it while
// no poll runs).
func newHub(t *testing.T, lim Limits) (*Hub[opts], *time.Time) {
	clk := new(time.Time)
	*clk = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := New[opts](Config{Limits: lim, Now: func() time.Time { return *clk }, Heartbeat: []byte(`{"type":"heartbeat"}`),
		RenderRun: func(r *Run) []byte { return fmt.Appendf(nil, `{"type":"run","key":%q,"ids":%s}`, r.Key, ids(r.IDs)) }})
	t.Cleanup(h.Stop)
	return h, clk
}

func ids(v []int64) string { b, _ := json.Marshal(v); return string(b) }

// open registers and readies a queue of realm 1's user with standing st.
func open(h *Hub[opts], user int64, o opts, st Standing) *Queue[opts] {
	q := h.Open(1, user, o, 10*time.Minute)
	h.Ready(q, snapshot{}, st)
	return q
}

// poll returns the queue's events after last without waiting, as "id:type".
func poll(t *testing.T, h *Hub[opts], q *Queue[opts], last int64) []string {
	t.Helper()
	evs, waited, err := h.Poll(context.Background(), q, last, true)
	require.NoError(t, err)
	assert.False(t, waited)
	return summary(t, evs)
}

func summary(t *testing.T, evs []json.RawMessage) []string {
	t.Helper()
	out := []string{}
	for _, raw := range evs {
		var e struct {
			ID   int64  `json:"id"`
			Type string `json:"type"`
			Key  string `json:"key"`
			IDs  []int64
		}
		require.NoError(t, json.Unmarshal(raw, &e), string(raw))
		s := fmt.Sprintf("%d:%s", e.ID, e.Type)
		if e.Type == "run" {
			s += fmt.Sprintf("%s%v", e.Key, e.IDs)
		}
		out = append(out, s)
	}
	return out
}

func TestDeliverRenderAndAcknowledge(t *testing.T) {
	h, _ := newHub(t, testLimits)
	all := open(h, 10, opts{}, Standing{})
	picky := open(h, 11, opts{wants: "b"}, Standing{})
	other := h.Open(2, 12, opts{}, time.Minute)
	h.Ready(other, snapshot{}, Standing{})

	h.Deliver(1, 1, ev("a", "b"))
	h.Deliver(2, 1, ev("c"))
	assert.Equal(t, []string{"0:a", "1:b", "2:c"}, poll(t, h, all, -1))
	assert.Equal(t, []string{"0:b"}, poll(t, h, picky, -1), "each queue gets the forms Render gives it")
	assert.Equal(t, []string{}, poll(t, h, other, -1), "another organization's queues get nothing")

	assert.Equal(t, []string{"2:c"}, poll(t, h, all, 1), "acknowledged events are pruned")
	assert.Equal(t, []string{"2:c"}, poll(t, h, all, 1), "polling again with the same ID is allowed")
	_, _, err := h.Poll(context.Background(), all, 0, true)
	assert.ErrorIs(t, err, ErrPruned)
	_, _, err = h.Poll(context.Background(), all, 7, true)
	assert.ErrorIs(t, err, ErrNotInQueue)

	assert.Same(t, all, h.Find(all.ID(), 1, 10))
	assert.Nil(t, h.Find(all.ID(), 1, 11), "another user's queue is not found")
	assert.Nil(t, h.Find(all.ID(), 2, 10), "nor in another organization")
	h.Remove(all)
	assert.Nil(t, h.Find(all.ID(), 1, 10))
	_, _, err = h.Poll(context.Background(), all, 2, true)
	assert.ErrorIs(t, err, ErrNoQueue)
	assert.True(t, h.HasQueues(1))
	h.Remove(picky)
	assert.False(t, h.HasQueues(1))
}

func TestRegistrationBuffersUntilReady(t *testing.T) {
	h, _ := newHub(t, testLimits)
	q := h.Open(1, 10, opts{}, time.Minute)
	h.Deliver(1, 1, ev("in-snapshot"))
	h.Deliver(2, 1, ev("after", "after2"))
	h.Deliver(3, 1, ev("late-in-snapshot"))
	h.Ready(q, snapshot{1: true, 3: true}, Standing{})
	h.Deliver(3, 1, ev("late-in-snapshot")) // a write the snapshot saw, arriving late
	h.Deliver(4, 1, ev("next"))
	assert.Equal(t, []string{"0:after", "1:after2", "2:next"}, poll(t, h, q, -1))
}

func TestStandingFollowsChanges(t *testing.T) {
	h, _ := newHub(t, testLimits)
	role := 400
	ten := open(h, 10, opts{}, Standing{Role: 200, Subscribed: map[int64]struct{}{5: {}}})
	eleven := open(h, 11, opts{}, Standing{})
	msg := func(ch int64) []Delivery[opts] {
		return []Delivery[opts]{delivery{name: fmt.Sprint("m", ch), channel: ch}}
	}
	change := func(c Change) []Delivery[opts] { return []Delivery[opts]{delivery{name: "change", change: &c}} }

	h.Deliver(1, 1, msg(5))
	h.Deliver(2, 1, msg(6))
	h.Deliver(3, 1, change(Change{Users: []int64{11}, Subscribed: []int64{6}}))
	h.Deliver(4, 1, msg(6))
	h.Deliver(5, 1, change(Change{Users: []int64{10}, Unsubscribed: []int64{5}, Role: &role}))
	h.Deliver(6, 1, msg(5))
	assert.Equal(t, 400, ten.standing.Role)
	assert.Equal(t, 0, eleven.standing.Role, "a change names its users")
	h.Deliver(7, 1, change(Change{DeletedChannels: []int64{6}}))
	h.Deliver(8, 1, msg(6))

	assert.Equal(t, []string{"0:m5", "1:change", "2:change", "3:change"}, poll(t, h, ten, -1))
	assert.Equal(t, []string{"0:change", "1:m6", "2:change", "3:change"}, poll(t, h, eleven, -1))

	h.Deliver(9, 1, change(Change{Users: []int64{11}, Deactivated: true}))
	_, _, err := h.Poll(context.Background(), eleven, 3, true)
	assert.ErrorIs(t, err, ErrNoQueue, "a deactivated user's queues are dropped")
	assert.Nil(t, h.Find(eleven.ID(), 1, 11))
	assert.Equal(t, []string{"4:change"}, poll(t, h, ten, 3))
}

func TestRunsMergeUntilTheyGoOut(t *testing.T) {
	h, _ := newHub(t, testLimits)
	q := open(h, 10, opts{}, Standing{})
	run := func(key string, ids ...int64) []Delivery[opts] {
		return []Delivery[opts]{delivery{name: "run", run: &Run{Key: key, IDs: ids}}}
	}
	h.Deliver(1, 1, run("read", 1))
	h.Deliver(2, 1, ev("x"))
	h.Deliver(3, 1, run("read", 2, 3))
	h.Deliver(4, 1, run("starred", 4))
	assert.Equal(t, []string{"1:x", "2:runread[1 2 3]", "3:runstarred[4]"}, poll(t, h, q, -1),
		"runs of one key merge and move to the end with a new ID")
	h.Deliver(5, 1, run("read", 5))
	assert.Equal(t, []string{"1:x", "2:runread[1 2 3]", "3:runstarred[4]", "4:runread[5]"}, poll(t, h, q, -1),
		"a run that went out no longer takes others in: the client will acknowledge its ID")
}

type pollResult struct {
	evs    []json.RawMessage
	waited bool
	err    error
}

// startPoll starts a blocking Poll of q and returns once it waits (or
// has returned).
func startPoll(t *testing.T, h *Hub[opts], q *Queue[opts], ctx context.Context, last int64) chan pollResult {
	t.Helper()
	ch := make(chan pollResult, 1)
	pending := func() *pendingPoll { q.mu.Lock(); defer q.mu.Unlock(); return q.poll }
	before := pending()
	go func() {
		evs, waited, err := h.Poll(ctx, q, last, false)
		ch <- pollResult{evs, waited, err}
	}()
	require.Eventually(t, func() bool { p := pending(); return p != nil && p != before || len(ch) > 0 }, 5*time.Second, time.Millisecond)
	return ch
}

func TestLongPoll(t *testing.T) {
	h, _ := newHub(t, testLimits) // heartbeats after an hour
	q := open(h, 10, opts{}, Standing{})
	bg := context.Background()

	// A delivery wakes the waiting poll.
	p := startPoll(t, h, q, bg, -1)
	h.Deliver(1, 1, ev("a"))
	r := <-p
	require.NoError(t, r.err)
	assert.True(t, r.waited)
	assert.Equal(t, []string{"0:a"}, summary(t, r.evs))

	// A newer poll ends the older one, empty.
	older := startPoll(t, h, q, bg, 0)
	ctx, cancel := context.WithCancel(bg)
	newer := startPoll(t, h, q, ctx, 0)
	r = <-older
	require.NoError(t, r.err)
	assert.True(t, r.waited)
	assert.Empty(t, r.evs)
	assert.Equal(t, 1, h.Stats().Waiting)

	// A poll whose context ends returns its error.
	cancel()
	r = <-newer
	assert.ErrorIs(t, r.err, context.Canceled)

	// Deleting the queue ends its poll as the reference does: with the
	// events it holds (none here), not an error; later polls get the error.
	p = startPoll(t, h, q, bg, 0)
	h.Remove(q)
	r = <-p
	require.NoError(t, r.err)
	assert.True(t, r.waited)
	assert.Empty(t, r.evs)
	assert.Equal(t, Stats{}, h.Stats())
	_, _, err := h.Poll(bg, q, 0, false)
	assert.ErrorIs(t, err, ErrNoQueue)

	// Dropping every queue (the bus lost events) ends a poll with the
	// error: its client must register again.
	q = open(h, 10, opts{}, Standing{})
	p = startPoll(t, h, q, bg, -1)
	require.Eventually(t, func() bool { return h.Stats().Waiting == 1 }, 5*time.Second, time.Millisecond)
	h.DropAll()
	r = <-p
	assert.ErrorIs(t, r.err, ErrNoQueue)
}

func TestHeartbeat(t *testing.T) {
	lim := testLimits
	lim.HeartbeatMin, lim.HeartbeatMax = 10*time.Millisecond, 20*time.Millisecond
	h, _ := newHub(t, lim)
	q := open(h, 10, opts{}, Standing{})
	evs, waited, err := h.Poll(context.Background(), q, -1, false)
	require.NoError(t, err)
	assert.True(t, waited)
	assert.Equal(t, []string{"0:heartbeat"}, summary(t, evs), "a poll that sees nothing ends with a heartbeat")
}

func TestBounds(t *testing.T) {
	lim := testLimits
	lim.MaxEvents = 3
	h, _ := newHub(t, lim)
	q := open(h, 10, opts{}, Standing{})
	h.Deliver(1, 1, ev("a", "b", "c"))
	assert.Equal(t, 3, h.Stats().Events)
	h.Deliver(2, 1, ev("d"))
	_, _, err := h.Poll(context.Background(), q, -1, true)
	assert.ErrorIs(t, err, ErrNoQueue, "a queue over its event bound is dropped")
	assert.Equal(t, Stats{DroppedBehind: 1}, h.Stats(), "and its events freed, and the drop counted")

	lim = testLimits
	lim.MaxTotalBytes = 300 // a few events
	h, _ = newHub(t, lim)
	big := open(h, 10, opts{}, Standing{})
	small := open(h, 11, opts{wants: "x"}, Standing{})
	h.Deliver(1, 1, ev("x", "y", "z"))
	h.Deliver(2, 1, ev("y", "z"))
	assert.Nil(t, h.Find(big.ID(), 1, 10), "over the total bound the largest queue goes")
	assert.Equal(t, []string{"0:x"}, poll(t, h, small, -1))
	assert.LessOrEqual(t, h.Stats().Bytes, lim.MaxTotalBytes)
	assert.Equal(t, uint64(1), h.Stats().DroppedOverTotal)
	assert.Zero(t, h.Stats().DroppedBehind)
}

func TestCollectReadsTheInjectedClock(t *testing.T) {
	h, clk := newHub(t, testLimits)
	short := h.Open(1, 10, opts{}, 10*time.Minute)
	h.Ready(short, snapshot{}, Standing{})
	long := h.Open(1, 11, opts{}, time.Hour)
	h.Ready(long, snapshot{}, Standing{})
	now := *clk
	assert.Equal(t, 0, h.Collect(now.Add(9*time.Minute)))
	*clk = clk.Add(5 * time.Minute)
	poll(t, h, short, -1) // touched at the clock's time
	assert.Equal(t, 0, h.Collect(now.Add(14*time.Minute)))
	assert.Equal(t, 1, h.Collect(now.Add(16*time.Minute)))
	assert.Nil(t, h.Find(short.ID(), 1, 10))
	assert.Equal(t, 1, h.Collect(now.Add(61*time.Minute)))
	assert.Equal(t, 0, h.Stats().Queues)
	assert.Equal(t, uint64(2), h.Stats().DroppedIdle)
}

func TestStartStop(t *testing.T) {
	h, _ := newHub(t, testLimits)
	calls := 0
	var listenCtx context.Context
	listen := func(ctx context.Context) error { calls++; listenCtx = ctx; return nil }
	fail := func(context.Context) error { calls++; return fmt.Errorf("no database") }
	assert.Error(t, h.Start(fail))
	require.NoError(t, h.Start(listen))
	require.NoError(t, h.Start(listen))
	assert.Equal(t, 2, calls, "a failed start is retried; a successful one is not repeated")
	q := open(h, 10, opts{}, Standing{})
	h.Stop()
	assert.Error(t, listenCtx.Err(), "Stop ends listening")
	assert.ErrorIs(t, h.Start(listen), ErrStopped)
	assert.Nil(t, h.Find(q.ID(), 1, 10), "Stop drops every queue")
}

func TestQueueIDsAreUUIDs(t *testing.T) {
	h, _ := newHub(t, testLimits)
	seen := map[string]bool{}
	for range 50 {
		id := h.Open(1, 1, opts{}, time.Minute).ID()
		parts := strings.Split(id, "-")
		require.Len(t, parts, 5, id)
		assert.Equal(t, []int{8, 4, 4, 4, 12}, []int{len(parts[0]), len(parts[1]), len(parts[2]), len(parts[3]), len(parts[4])})
		assert.Equal(t, byte('4'), parts[2][0], "version 4")
		assert.False(t, seen[id])
		seen[id] = true
	}
}

// TestConcurrentDeliveriesAndPolls runs deliveries, registrations and
// polls side by side (for the race detector): every ready queue gets
// every event delivered after it was ready, in order.
func TestConcurrentDeliveriesAndPolls(t *testing.T) {
	lim := testLimits
	lim.MaxEvents = 1000
	h, _ := newHub(t, lim)
	const events = 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int][]string{}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := open(h, int64(i), opts{}, Standing{})
			last := int64(-1)
			var names []string
			for !slices.Contains(names, "end") {
				evs, _, err := h.Poll(context.Background(), q, last, false)
				if err != nil {
					t.Error(err)
					return
				}
				for _, raw := range evs {
					var e struct {
						ID   int64
						Type string
					}
					_ = json.Unmarshal(raw, &e)
					last = e.ID
					names = append(names, e.Type)
				}
			}
			mu.Lock()
			got[i] = names
			mu.Unlock()
		}()
	}
	require.Eventually(t, func() bool { return h.Stats().Queues == 8 }, 5*time.Second, time.Millisecond)
	for i := range events {
		h.Deliver(uint64(i+1), 1, ev(fmt.Sprint("e", i)))
	}
	h.Deliver(events+1, 1, ev("end"))
	wg.Wait()
	want := make([]string, 0, events+1)
	for i := range events {
		want = append(want, fmt.Sprint("e", i))
	}
	want = append(want, "end")
	for i := range 8 {
		assert.Equal(t, want, got[i], "queue %d", i)
	}
}
