// Package outbox runs a process's background deliveries: work kept as
// rows that fall due at a time, are claimed (for a lease, or in the
// transaction that does the work) and handled a few at a time. A Runner
// does the rounds, the bounded pool of workers, the wait until the next
// row is due (at most an interval), and the wake-ups; what a row is, how
// it is claimed and what handling it means stay with its Deliverer.
//
// A round claims a batch from each of the runner's stages in turn,
// handles it, and goes on until the claims come back empty; then Run
// sleeps until the next item falls due, at most the interval, or until
// it is poked (a write that queued work).
package outbox

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teamchat/chat/internal/loop"
)

// A Deliverer is one kind of delivery: items that fall due, are claimed
// a batch at a time, and are handled one by one.
type Deliverer[T any] interface {
	// Claim takes up to limit items due at now, each with what it needs
	// to be handled within its lease. after is the last item the round
	// claimed before from this deliverer (nil at first): a deliverer
	// whose items stay due while they are handled (claimed only by the
	// transaction that delivers them) reads on after it, so that a round
	// takes each once; one that leases its items may ignore it.
	Claim(ctx context.Context, now time.Time, after *T, limit int) ([]T, error)
	// Handle delivers one claimed item and returns how many deliveries
	// it made. An error leaves the item to a later round (its lease runs
	// out, or it stays due); the others are handled all the same.
	Handle(ctx context.Context, item T) (int, error)
}

// Config is what a Runner needs besides its deliverers.
type Config struct {
	// Batch is the limit of each claim.
	Batch int
	// Workers is how many items of a claim are handled at once; with 1
	// they are handled one after another, in the claim's order, on the
	// caller's goroutine.
	Workers int
	// Interval is Run's longest wait between rounds when Runner.Every is
	// not set.
	Interval time.Duration
	// Retry is how soon Run looks again when the next item is due
	// already but was not delivered (another server holds it, or its
	// delivery failed).
	Retry time.Duration
	// Now is the clock due times are read against.
	Now func() time.Time
	// NextDue is when the next item falls due; ok is false when none is
	// pending (or it could not be read: NextDue reports why), and Run
	// then waits the whole interval.
	NextDue func(ctx context.Context, now time.Time) (at time.Time, ok bool)
}

// Runner serves the deliverers of one kind of background work. Every may
// be set before Run; the rest is given to New.
type Runner[T any] struct {
	// Every is the longest wait between Run's rounds (Config.Interval
	// when 0).
	Every  time.Duration
	cfg    Config
	stages []Deliverer[T]
	loop   loop.Loop
	rounds atomic.Int64
}

// New returns a runner of stages: each pass claims from them in this
// order, and handles a stage's batch before it claims from the next.
func New[T any](cfg Config, stages ...Deliverer[T]) *Runner[T] {
	return &Runner[T]{cfg: cfg, stages: stages}
}

// Result is what a pass or a drain did.
type Result struct {
	// Claimed counts the items claimed.
	Claimed int
	// Done sums what their handling returned.
	Done int
	// Err is the first error of a claim or a handling (ctx's when it
	// ended first); the other items were handled all the same.
	Err error
}

func (r *Result) add(o Result) {
	r.Claimed += o.Claimed
	r.Done += o.Done
	r.note(o.Err)
}

func (r *Result) note(err error) {
	if err != nil && r.Err == nil {
		r.Err = err
	}
}

// Poke starts a round of Run soon: at once if it is waiting, else right
// after the running round.
func (r *Runner[T]) Poke() { r.loop.Poke() }

// Rounds counts the rounds Run has completed (including the look at the
// next due time that ends each): tests wait on it.
func (r *Runner[T]) Rounds() int64 { return r.rounds.Load() }

// Pass claims one batch from each stage and handles it.
func (r *Runner[T]) Pass(ctx context.Context) Result {
	return r.pass(ctx, make([]*T, len(r.stages)))
}

// Drain makes passes until one claims nothing, each stage's claims
// reading on after its previous batch.
func (r *Runner[T]) Drain(ctx context.Context) Result {
	var res Result
	after := make([]*T, len(r.stages))
	for {
		p := r.pass(ctx, after)
		res.add(p)
		if p.Claimed == 0 || ctx.Err() != nil {
			return res
		}
	}
}

func (r *Runner[T]) pass(ctx context.Context, after []*T) Result {
	var res Result
	for i, d := range r.stages {
		if ctx.Err() != nil {
			res.note(ctx.Err())
			return res
		}
		items, err := d.Claim(ctx, r.cfg.Now(), after[i], r.cfg.Batch)
		if err != nil {
			res.note(err)
			continue
		}
		if len(items) == 0 {
			continue
		}
		after[i] = &items[len(items)-1]
		res.Claimed += len(items)
		res.add(r.handle(ctx, d, items))
	}
	return res
}

// handle runs the items through at most Workers goroutines and waits
// for them; items not started when ctx ends are left to their lease.
func (r *Runner[T]) handle(ctx context.Context, d Deliverer[T], items []T) Result {
	var res Result
	var mu sync.Mutex
	one := func(it T) {
		n, err := d.Handle(ctx, it)
		mu.Lock()
		defer mu.Unlock()
		res.Done += n
		res.note(err)
	}
	var wg sync.WaitGroup
	free := make(chan struct{}, max(r.cfg.Workers, 1))
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		if r.cfg.Workers <= 1 {
			one(it)
			continue
		}
		free <- struct{}{}
		wg.Go(func() {
			defer func() { <-free }()
			one(it)
		})
	}
	wg.Wait()
	res.note(ctx.Err())
	return res
}

// Run drains the deliverers at once and then again whenever the next item
// falls due (at most Every apart, sooner when poked), until ctx ends;
// then it returns ctx's error. Several Runs, in this process or others
// sharing the database, may serve the same work: the claims keep each
// item to one of them.
func (r *Runner[T]) Run(ctx context.Context) error {
	every := r.Every
	if every <= 0 {
		every = r.cfg.Interval
	}
	return r.loop.Run(ctx, every, func(ctx context.Context) time.Duration {
		r.Drain(ctx) // failures are reported where they happen
		wait := r.untilNext(ctx)
		r.rounds.Add(1)
		return wait
	})
}

// untilNext is how long Run may sleep before the next item falls due.
func (r *Runner[T]) untilNext(ctx context.Context) time.Duration {
	if ctx.Err() != nil {
		return loop.NoSooner
	}
	now := r.cfg.Now()
	at, ok := r.cfg.NextDue(ctx, now)
	if !ok {
		return loop.NoSooner
	}
	if d := at.Sub(now); d > 0 {
		return d
	}
	return r.cfg.Retry
}
