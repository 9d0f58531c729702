package loop

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run starts l with round counting its rounds into n and answering next;
// it returns a function that stops the loop and returns Run's error.
func run(l *Loop, def time.Duration, n *atomic.Int64, next func(round int64) time.Duration) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- l.Run(ctx, def, func(context.Context) time.Duration { return next(n.Add(1)) })
	}()
	return func() error { cancel(); return <-done }
}

func waitRounds(t *testing.T, n *atomic.Int64, want int64) {
	t.Helper()
	require.Eventually(t, func() bool { return n.Load() >= want }, 10*time.Second, time.Millisecond)
}

func TestFirstRoundAtOnceThenPokes(t *testing.T) {
	var l Loop
	var n atomic.Int64
	stop := run(&l, time.Hour, &n, func(int64) time.Duration { return NoSooner })
	waitRounds(t, &n, 1)
	l.Poke()
	waitRounds(t, &n, 2)
	l.Poke()
	waitRounds(t, &n, 3)
	assert.ErrorIs(t, stop(), context.Canceled)
	assert.Equal(t, int64(3), n.Load(), "no round without a poke within the hour")
}

func TestRoundAsksForTheNextSooner(t *testing.T) {
	var l Loop
	var n atomic.Int64
	// Rounds 1 to 4 ask for the next at once; later ones wait the hour.
	stop := run(&l, time.Hour, &n, func(round int64) time.Duration {
		if round < 5 {
			return 0
		}
		return NoSooner
	})
	waitRounds(t, &n, 5)
	require.NoError(t, ignoreCanceled(stop()))
	assert.Equal(t, int64(5), n.Load())
}

func TestEveryBoundsTheWait(t *testing.T) {
	l := Loop{Every: time.Millisecond}
	var n atomic.Int64
	stop := run(&l, time.Hour, &n, func(int64) time.Duration { return NoSooner })
	waitRounds(t, &n, 3) // Every, not the hour-long default, applies
	require.NoError(t, ignoreCanceled(stop()))
}

func TestPokeWithoutRunDoesNotBlock(t *testing.T) {
	var l Loop
	for range 3 {
		l.Poke() // one pending poke is kept; the others are dropped
	}
	assert.Len(t, l.wakeups(), 1)
}

func ignoreCanceled(err error) error {
	if err == context.Canceled {
		return nil
	}
	return err
}
