// Package loop runs a process's background work in rounds: at most an
// interval apart, sooner when a round asks for it or when something pokes
// the loop (a write that made work due).
package loop

import (
	"context"
	"sync"
	"time"
)

// NoSooner is a round's answer when the next round may wait the whole
// interval.
const NoSooner = time.Duration(1<<63 - 1)

// Loop is a background loop. Its zero value is ready; Every may be set
// before Run.
type Loop struct {
	// Every is the longest wait between rounds (Run's default when 0).
	Every time.Duration
	once  sync.Once
	wake  chan struct{}
}

func (l *Loop) wakeups() chan struct{} {
	l.once.Do(func() { l.wake = make(chan struct{}, 1) })
	return l.wake
}

// Poke starts a round soon: at once if the loop is waiting, else right
// after the running round (one pending poke is enough).
func (l *Loop) Poke() {
	select {
	case l.wakeups() <- struct{}{}:
	default:
	}
}

// Run runs round at once and then again and again until ctx ends, when
// it returns ctx's error. round returns how soon the next round is wanted;
// the loop waits at most Every (def when Every is 0).
func (l *Loop) Run(ctx context.Context, def time.Duration, round func(ctx context.Context) time.Duration) error {
	every := l.Every
	if every <= 0 {
		every = def
	}
	wake := l.wakeups()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		case <-wake:
		}
		wait := min(max(round(ctx), 0), every)
		timer.Reset(wait)
	}
}
