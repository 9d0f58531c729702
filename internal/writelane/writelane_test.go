package writelane

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a Runner that records its batches and checks the lock
// rules while each runs.
type recorder struct {
	mu      sync.Mutex
	batches [][]int
	keys    []Key
	// open transactions per realm: lanes and whole.
	lanes map[int64]int
	whole map[int64]int
	perKy map[Key]int
	open  int
	most  int
	bad   []string
	delay time.Duration
	fail  func(op int) error
	// hold, when set, is waited on by a transaction that takes op 0.
	hold chan struct{}
}

// started reports whether a transaction took op.
func (r *recorder) started(op int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.batches {
		if slices.Contains(b, op) {
			return true
		}
	}
	return false
}

func newRecorder(delay time.Duration) *recorder {
	return &recorder{lanes: map[int64]int{}, whole: map[int64]int{}, perKy: map[Key]int{}, delay: delay}
}

func (r *recorder) run(_ context.Context, key Key, b *Batch[int]) []error {
	ops := b.Ops()
	r.mu.Lock()
	r.batches = append(r.batches, append([]int(nil), ops...))
	r.keys = append(r.keys, key)
	if r.perKy[key] > 0 {
		r.bad = append(r.bad, "two transactions of one lane at once")
	}
	if key.Lane == 0 && (r.lanes[key.Realm] > 0 || r.whole[key.Realm] > 0) ||
		key.Lane != 0 && r.whole[key.Realm] > 0 {
		r.bad = append(r.bad, "lane 0 beside another transaction of its organization")
	}
	r.perKy[key]++
	if key.Lane == 0 {
		r.whole[key.Realm]++
	} else {
		r.lanes[key.Realm]++
	}
	r.open++
	r.most = max(r.most, r.open)
	r.mu.Unlock()
	time.Sleep(r.delay)
	if r.hold != nil && slices.Contains(ops, 0) {
		<-r.hold
	}
	r.mu.Lock()
	r.perKy[key]--
	if key.Lane == 0 {
		r.whole[key.Realm]--
	} else {
		r.lanes[key.Realm]--
	}
	r.open--
	r.mu.Unlock()
	return answers(ops, r.fail)
}

// Concurrent writes of one lane share transactions, each op runs once,
// in arrival order within and across batches.
func TestBatchesKeepArrivalOrder(t *testing.T) {
	rec := newRecorder(2 * time.Millisecond)
	g := New(rec.run, nil, 8, 0)
	key := Key{Realm: 1, Lane: 5}
	var next atomic.Int64
	var mu sync.Mutex // makes arrival order (the op number) the queue order
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				mu.Lock()
				op := int(next.Add(1))
				done := make(chan error, 1)
				go func() { done <- g.Do(context.Background(), key, op, true) }()
				// Wait until the op is queued (or running) before numbering
				// the next.
				assert.Eventually(t, func() bool { return queued(g, key, op) || rec.started(op) }, 10*time.Second, 10*time.Microsecond)
				mu.Unlock()
				assert.NoError(t, waitDone(done))
			}
		})
	}
	wg.Wait()
	assert.Empty(t, rec.bad)
	var seen []int
	shared := 0
	for _, b := range rec.batches {
		assert.LessOrEqual(t, len(b), 8)
		if len(b) > 1 {
			shared++
		}
		seen = append(seen, b...)
	}
	require.Len(t, seen, 320)
	for i, op := range seen {
		assert.Equal(t, i+1, op, "ops in arrival order")
	}
	assert.Positive(t, shared, "some transactions were shared")
	assert.True(t, g.Idle())
}

// queued reports whether op waits in key's queue or was taken.
func queued(g *Gate[int], key Key, op int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.realms[key.Realm]
	if r == nil || r.lanes[key.Lane] == nil {
		return false
	}
	for _, e := range r.lanes[key.Lane].pending {
		if e.op == op {
			return true
		}
	}
	return false
}

func waitDone(done chan error) error { return <-done }

// answers are ops' errors as fail says (nil: none fails).
func answers(ops []int, fail func(op int) error) []error {
	errs := make([]error, len(ops))
	for i, op := range ops {
		if fail != nil {
			errs[i] = fail(op)
		}
	}
	return errs
}

// Lanes of one organization run side by side; lane 0 runs alone; other
// organizations are not held up; a stream of lane writes does not starve
// lane 0.
func TestLanesAndWholeOrganization(t *testing.T) {
	rec := newRecorder(time.Millisecond)
	g := New(rec.run, nil, 4, 0)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for lane := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				assert.NoError(t, g.Do(context.Background(), Key{Realm: 1, Lane: uint64(lane + 1)}, i, true))
			}
		})
	}
	// The lanes are under way, side by side, before lane 0 asks.
	require.Eventually(t, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return rec.most >= 2 }, 5*time.Second, time.Millisecond)
	for range 10 {
		require.NoError(t, g.Do(context.Background(), Org(1), -1, false), "lane 0 gets its turn")
		require.NoError(t, g.Do(context.Background(), Org(2), -2, false))
	}
	stop()
	wg.Wait()
	assert.Empty(t, rec.bad)
	assert.GreaterOrEqual(t, rec.most, 2, "lanes ran side by side")
	assert.True(t, g.Idle())
}

// An op that is not batchable runs alone; batchable ones around it do not
// cross it.
func TestUnbatchableRunsAlone(t *testing.T) {
	rec := newRecorder(0)
	rec.hold = make(chan struct{})
	g := New(rec.run, nil, 10, 0)
	key := Org(1)
	// Hold the lane with a first op until 3 batchable, 1 alone and 3
	// batchable are queued behind it.
	first := make(chan error, 1)
	go func() { first <- g.Do(context.Background(), key, 0, true) }()
	require.Eventually(t, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.batches) == 1 }, time.Second, time.Millisecond)
	var wg sync.WaitGroup
	for op := 1; op <= 7; op++ {
		wg.Go(func() { assert.NoError(t, g.Do(context.Background(), key, op, op != 4)) })
		require.Eventually(t, func() bool { return queued(g, key, op) }, 10*time.Second, 10*time.Microsecond)
	}
	assert.Equal(t, 7, g.Queued(key), "seven wait behind the first")
	close(rec.hold)
	wg.Wait()
	assert.Zero(t, g.Queued(key))
	require.NoError(t, <-first)
	assert.Equal(t, [][]int{{0}, {1, 2, 3}, {4}, {5, 6, 7}}, rec.batches)
}

// Each caller gets its own op's error.
func TestErrorsGoToTheirCallers(t *testing.T) {
	rec := newRecorder(2 * time.Millisecond)
	rec.fail = func(op int) error {
		if op%3 == 0 {
			return errors.New("refused")
		}
		return nil
	}
	g := New(rec.run, nil, 10, 0)
	var wg sync.WaitGroup
	for op := range 30 {
		wg.Go(func() {
			err := g.Do(context.Background(), Org(1), op, true)
			if op%3 == 0 {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
}

// A caller whose context ends while queued is withdrawn and never runs;
// one whose context ends while it waits to lead hands the lead on.
func TestContextEndsWhileQueued(t *testing.T) {
	block := make(chan struct{})
	var ran sync.Map
	g := New(func(_ context.Context, key Key, b *Batch[int]) []error {
		ops := b.Ops()
		for _, op := range ops {
			ran.Store(op, true)
			if op == 0 {
				<-block
			}
		}
		return make([]error, len(ops))
	}, nil, 10, 0)
	first := make(chan error, 1)
	go func() { first <- g.Do(context.Background(), Org(1), 0, false) }()
	require.Eventually(t, func() bool { _, ok := ran.Load(0); return ok }, time.Second, time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { gone <- g.Do(ctx, Org(1), 1, true) }()
	require.Eventually(t, func() bool { return queued(g, Org(1), 1) }, time.Second, time.Millisecond)
	later := make(chan error, 1)
	go func() { later <- g.Do(context.Background(), Org(1), 2, true) }()
	require.Eventually(t, func() bool { return queued(g, Org(1), 2) }, time.Second, time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-gone, context.Canceled)
	close(block)
	require.NoError(t, <-first)
	require.NoError(t, <-later)
	_, ran1 := ran.Load(1)
	assert.False(t, ran1, "a withdrawn op never runs")
	assert.True(t, g.Idle())

	// A lane-0 leader waiting behind a lane transaction gives up: the
	// lane's next caller leads.
	hold := make(chan struct{})
	g2 := New(func(_ context.Context, key Key, b *Batch[int]) []error {
		if key.Lane != 0 {
			<-hold
		}
		return make([]error, len(b.Ops()))
	}, nil, 10, 0)
	laneDone := make(chan error, 1)
	go func() { laneDone <- g2.Do(context.Background(), Key{Realm: 1, Lane: 9}, 0, true) }()
	require.Eventually(t, func() bool {
		g2.mu.Lock()
		defer g2.mu.Unlock()
		return g2.realms[1] != nil && g2.realms[1].running == 1
	}, time.Second, time.Millisecond)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	assert.ErrorIs(t, g2.Do(ctx2, Org(1), 1, false), context.DeadlineExceeded)
	next := make(chan error, 1)
	go func() { next <- g2.Do(context.Background(), Org(1), 2, false) }()
	close(hold)
	require.NoError(t, <-laneDone)
	require.NoError(t, <-next)
	assert.True(t, g2.Idle())
}

// No more transactions open at once than the limit.
func TestOpenLimit(t *testing.T) {
	rec := newRecorder(time.Millisecond)
	g := New(rec.run, nil, 1, 2)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() { assert.NoError(t, g.Do(context.Background(), Org(int64(i%5)), i, false)) })
	}
	wg.Wait()
	assert.LessOrEqual(t, rec.most, 2)
	assert.True(t, g.Idle())
}

// joinRecorder is a Runner that, for a batch led by an op with a release
// channel, waits on it (as a transaction waits for the database's lock),
// then takes in what Expect says, and records each batch and its Expect.
type joinRecorder struct {
	mu      sync.Mutex
	batches [][]int
	expects []int
	release map[int]chan struct{}
	fail    func(op int) error
}

func (r *joinRecorder) run(_ context.Context, _ Key, b *Batch[int]) []error {
	if ch := r.release[b.Ops()[0]]; ch != nil {
		<-ch
	}
	b.Join(b.Expect())
	ops := b.Ops()
	r.mu.Lock()
	r.batches = append(r.batches, slices.Clone(ops))
	r.expects = append(r.expects, b.Expect())
	r.mu.Unlock()
	return answers(ops, r.fail)
}

// Writes queued while a transaction waits for its lock join it, as many
// as the lane's previous transaction saw arrive, in arrival order, never
// past one that is not batchable; each caller gets its own op's error.
func TestJoinTakesWritesThatArrivedWhileWaiting(t *testing.T) {
	refused := errors.New("refused")
	rec := &joinRecorder{release: map[int]chan struct{}{0: make(chan struct{}), 10: make(chan struct{})},
		fail: func(op int) error {
			if op == 11 {
				return refused
			}
			return nil
		}}
	g := New(rec.run, nil, 8, 0)
	key := Key{Realm: 1, Lane: 3}
	// round leads with op lead, queues ops behind it while it waits (the
	// ones in alone are not batchable), then lets it go.
	round := func(lead int, ops []int, alone ...int) map[int]error {
		errs := map[int]error{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		wg.Go(func() {
			err := g.Do(context.Background(), key, lead, true)
			mu.Lock()
			errs[lead] = err
			mu.Unlock()
		})
		require.Eventually(t, func() bool { return !g.Idle() && g.Queued(key) == 0 }, time.Second, time.Millisecond)
		for i, op := range ops {
			wg.Go(func() {
				err := g.Do(context.Background(), key, op, !slices.Contains(alone, op))
				mu.Lock()
				errs[op] = err
				mu.Unlock()
			})
			require.Eventually(t, func() bool { return g.Queued(key) == i+1 }, 10*time.Second, 10*time.Microsecond)
		}
		close(rec.release[lead])
		wg.Wait()
		return errs
	}

	// The lane's first transaction expects no one: it takes no one in,
	// and counts the three that arrived.
	errs := round(0, []int{1, 2, 3})
	for op, err := range errs {
		assert.NoError(t, err, "op %d", op)
	}
	assert.Equal(t, [][]int{{0}, {1, 2, 3}}, rec.batches)
	assert.Equal(t, []int{0, 3}, rec.expects)
	// [1 2 3] found no one waiting: the lane expects half of three.
	errs = round(10, []int{11, 12, 13, 14}, 13)
	assert.Equal(t, [][]int{{0}, {1, 2, 3}, {10, 11}, {12}, {13}, {14}}, rec.batches,
		"10 takes in one (11), then 12 leads, 13 runs alone, then 14")
	assert.Equal(t, []int{0, 3, 1, 2, 0, 1}, rec.expects,
		"10 found two waiting (it took one): 12 expects two; 13 cannot grow; 12 found 13 at the head, so 14 expects half")
	assert.ErrorIs(t, errs[11], refused, "a write taken in gets its own error")
	for _, op := range []int{10, 12, 13, 14} {
		assert.NoError(t, errs[op], "op %d", op)
	}
	assert.True(t, g.Idle())
	g.mu.Lock()
	assert.Empty(t, g.arrivals, "14 found no one and expected one: the lane is forgotten")
	g.mu.Unlock()
}

// Join never grows a batch past the Gate's batch size, takes nothing for
// a limit of zero or less, and cannot be called once the transaction has
// ended; a caller that gave up while queued is not taken in.
func TestJoinBounds(t *testing.T) {
	release := make(chan struct{})
	var took [][]int
	var late *Batch[int]
	g := New(func(_ context.Context, _ Key, b *Batch[int]) []error {
		if b.Ops()[0] == 0 {
			<-release
			took = append(took, b.Join(-1), b.Join(0), b.Join(100))
			late = b
		}
		return make([]error, len(b.Ops()))
	}, nil, 3, 0)
	key := Key{Realm: 1, Lane: 1}
	first := make(chan error, 1)
	go func() { first <- g.Do(context.Background(), key, 0, true) }()
	require.Eventually(t, func() bool { return !g.Idle() && g.Queued(key) == 0 }, time.Second, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { gone <- g.Do(ctx, key, 1, true) }()
	require.Eventually(t, func() bool { return g.Queued(key) == 1 }, time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-gone, context.Canceled)
	var wg sync.WaitGroup
	for op := 2; op <= 5; op++ {
		wg.Go(func() { assert.NoError(t, g.Do(context.Background(), key, op, true)) })
		require.Eventually(t, func() bool { return g.Queued(key) == op-1 }, time.Second, time.Millisecond)
	}
	close(release)
	wg.Wait()
	require.NoError(t, <-first)
	assert.Equal(t, [][]int{{}, {}, {2, 3}}, took, "two make the batch of three; the withdrawn op 1 is not taken")
	assert.Panics(t, func() { late.Join(1) })
	assert.True(t, g.Idle())
}

// The Gate remembers arrivals for a bounded number of lanes.
func TestArrivalsBounded(t *testing.T) {
	g := New(func(_ context.Context, _ Key, b *Batch[int]) []error { return make([]error, len(b.Ops())) }, nil, 4, 0)
	for i := range maxArrivals {
		g.arrivals[Key{Realm: 2, Lane: uint64(i + 1)}] = 1
	}
	b := &Batch[int]{g: g, key: Key{Realm: 1, Lane: 1}, joined: true, took: 2}
	g.mu.Lock()
	b.remember()
	g.mu.Unlock()
	assert.Equal(t, map[Key]int{{Realm: 1, Lane: 1}: 2}, g.arrivals, "past the bound every lane is forgotten")
}
