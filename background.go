package chat

import (
	"context"
	"sync"
	"time"
)

// pollLoop is a background loop that works in rounds: at most every
// interval, sooner when a round asks for it or when poked (a write of this
// Service that made work due). Its zero value is ready.
type pollLoop struct {
	every time.Duration
	once  sync.Once
	wake  chan struct{}
}

func (l *pollLoop) wakeups() chan struct{} {
	l.once.Do(func() { l.wake = make(chan struct{}, 1) })
	return l.wake
}

// poke starts a round soon (one pending poke is enough).
func (l *pollLoop) poke() {
	select {
	case l.wakeups() <- struct{}{}:
	default:
	}
}

// noSooner is a round's answer when the next round may wait the whole
// interval.
const noSooner = time.Duration(1<<63 - 1)

// run runs round until ctx ends (then it returns ctx's error). round
// returns how soon the next round is wanted; the loop waits at most the
// interval (def when none is set).
func (l *pollLoop) run(ctx context.Context, def time.Duration, round func(ctx context.Context) time.Duration) error {
	every := l.every
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
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}
