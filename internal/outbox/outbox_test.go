package outbox

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

// queue is a deliverer of ints kept in memory. A leased queue's claim
// takes its items away (a handling that fails puts nothing back: its
// lease would run out later); an unleased one's items stay due until
// handled, and its claims read on after the last item.
type queue struct {
	leased bool
	fail   map[int]bool   // items whose handling fails
	then   func(item int) // called by each handling
	gate   chan struct{}  // when not nil, each handling waits for it
	mu     sync.Mutex
	due    []int        // ascending
	afters []int        // each claim's after (-1: nil)
	order  []int        // handled, in order
	claimE error        // the claims' error
	run    atomic.Int64 // handlings running
	peak   atomic.Int64 // most at once
}

func (q *queue) add(items ...int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.due = append(q.due, items...)
	slices.Sort(q.due)
}

func (q *queue) Claim(_ context.Context, _ time.Time, after *int, limit int) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	a := -1
	if after != nil {
		a = *after
	}
	q.afters = append(q.afters, a)
	if q.claimE != nil {
		return nil, q.claimE
	}
	var out []int
	for _, it := range q.due {
		if it > a && len(out) < limit {
			out = append(out, it)
		}
	}
	if q.leased {
		q.due = slices.DeleteFunc(q.due, func(it int) bool { return slices.Contains(out, it) })
	}
	return out, nil
}

func (q *queue) Handle(_ context.Context, item int) (int, error) {
	n := q.run.Add(1)
	defer q.run.Add(-1)
	for p := q.peak.Load(); n > p && !q.peak.CompareAndSwap(p, n); p = q.peak.Load() {
	}
	if q.gate != nil {
		<-q.gate
	}
	if q.then != nil {
		q.then(item)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.order = append(q.order, item)
	if q.fail[item] {
		return 0, errors.New("failed")
	}
	if !q.leased {
		q.due = slices.DeleteFunc(q.due, func(it int) bool { return it == item })
	}
	return 1, nil
}

func (q *queue) handled() []int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.order)
}

func config(batch, workers int) Config {
	return Config{Batch: batch, Workers: workers, Interval: time.Hour, Retry: time.Millisecond, Now: time.Now,
		NextDue: func(context.Context, time.Time) (time.Time, bool) { return time.Time{}, false }}
}

func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// A pass claims one batch and handles it with at most Workers at once.
func TestPassBoundsItsWorkers(t *testing.T) {
	q := &queue{leased: true, gate: make(chan struct{})}
	q.add(upTo(25)...)
	r := New[int](config(10, 3), q)
	done := make(chan Result)
	go func() { done <- r.Pass(context.Background()) }()
	require.Eventually(t, func() bool { return q.run.Load() >= 3 }, 10*time.Second, time.Millisecond)
	close(q.gate)
	res := <-done
	assert.Equal(t, Result{Claimed: 10, Done: 10}, res)
	assert.EqualValues(t, 3, q.peak.Load(), "three at once, never more")
	assert.ElementsMatch(t, upTo(10), q.handled())
	assert.Len(t, q.due, 15, "one batch per pass")
}

// With one worker the items are handled one after another, in the claim's
// order.
func TestOneWorkerKeepsTheOrder(t *testing.T) {
	q := &queue{leased: true}
	q.add(5, 3, 9, 1, 7)
	res := New[int](config(10, 1), q).Pass(context.Background())
	assert.Equal(t, Result{Claimed: 5, Done: 5}, res)
	assert.Equal(t, []int{1, 3, 5, 7, 9}, q.handled())
	assert.EqualValues(t, 1, q.peak.Load())
}

// A drain over items that stay due while handled reads on after each
// batch: every item is tried once, failures included, and the first
// error is returned after the others were handled.
func TestDrainReadsOnAfterTheLastItem(t *testing.T) {
	q := &queue{fail: map[int]bool{2: true, 6: true}}
	q.add(upTo(7)...)
	res := New[int](config(3, 1), q).Drain(context.Background())
	assert.Equal(t, upTo(7), q.handled(), "each once, in order")
	assert.Equal(t, 7, res.Claimed)
	assert.Equal(t, 5, res.Done)
	assert.EqualError(t, res.Err, "failed")
	assert.Equal(t, []int{-1, 3, 6, 7}, q.afters, "each claim after the last item of the previous one, until one is empty")
	assert.Equal(t, []int{2, 6}, q.due, "the failed ones stay due")
}

// A pass serves its stages in order, each batch handled before the next
// stage claims: work a stage makes for a later one goes out in the same
// pass. A drain goes on while passes claim anything.
func TestStagesInOrder(t *testing.T) {
	later := &queue{leased: true}
	first := &queue{leased: true, then: func(item int) { later.add(item * 10) }}
	first.add(1, 2)
	r := New[int](config(10, 4), first, later)
	res := r.Pass(context.Background())
	assert.Equal(t, Result{Claimed: 4, Done: 4}, res)
	assert.ElementsMatch(t, []int{10, 20}, later.handled())

	first.add(upTo(25)...)
	res = r.Drain(context.Background())
	assert.Equal(t, Result{Claimed: 50, Done: 50}, res)
	assert.Empty(t, first.due)
	assert.Empty(t, later.due)
}

// A failed claim is reported, and the other stages are served.
func TestClaimErrorLeavesTheOtherStages(t *testing.T) {
	broken := &queue{leased: true, claimE: errors.New("database down")}
	ok := &queue{leased: true}
	ok.add(1, 2, 3)
	res := New[int](config(10, 2), broken, ok).Pass(context.Background())
	assert.EqualError(t, res.Err, "database down")
	assert.Equal(t, 3, res.Done)
}

// Items not started when the context ends are left alone.
func TestEndedContextStartsNothing(t *testing.T) {
	for _, workers := range []int{1, 4} {
		q := &queue{leased: true}
		q.add(1, 2, 3)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res := New[int](config(10, workers), q).Drain(ctx)
		assert.ErrorIs(t, res.Err, context.Canceled)
		assert.Empty(t, q.handled())
	}
}

// runFor starts r.Run and returns a function that stops it and returns
// its error.
func runFor(r *Runner[int]) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return func() error { cancel(); return <-done }
}

func waitRounds(t *testing.T, r *Runner[int], n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return r.Rounds() >= n }, 10*time.Second, time.Millisecond)
}

// Run drains at once, then sleeps (here the hour) until poked.
func TestRunDrainsAtOnceAndWhenPoked(t *testing.T) {
	q := &queue{leased: true}
	q.add(upTo(12)...)
	r := New[int](config(5, 2), q)
	stop := runFor(r)
	waitRounds(t, r, 1)
	assert.Len(t, q.handled(), 12, "the first round drains every due item")
	q.add(100)
	r.Poke()
	waitRounds(t, r, 2)
	assert.Contains(t, q.handled(), 100)
	assert.ErrorIs(t, stop(), context.Canceled)
	assert.EqualValues(t, 2, r.Rounds(), "no round without a poke within the hour")
}

// Run sleeps until the next item is due, and looks again soon (Retry)
// when it is due already; Every bounds the wait.
func TestRunWaitsForTheNextDue(t *testing.T) {
	var looks atomic.Int64
	cfg := config(5, 1)
	cfg.NextDue = func(_ context.Context, now time.Time) (time.Time, bool) {
		switch looks.Add(1) {
		case 1:
			return now.Add(20 * time.Millisecond), true // the second round comes then, unpoked
		case 2:
			return now.Add(-time.Second), true // due already: again after Retry
		}
		return time.Time{}, false // then nothing: the hour
	}
	r := New[int](cfg, &queue{leased: true})
	stop := runFor(r)
	waitRounds(t, r, 3)
	require.ErrorIs(t, stop(), context.Canceled)
	assert.EqualValues(t, 3, r.Rounds())

	r = New[int](config(5, 1), &queue{leased: true})
	r.Every = time.Millisecond
	stop = runFor(r)
	waitRounds(t, r, 3) // nothing pending: Every, not the hour, applies
	require.ErrorIs(t, stop(), context.Canceled)
}
