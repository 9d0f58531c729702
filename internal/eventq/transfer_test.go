package eventq

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A queue moved at a cut of the delivery order keeps every event once:
// those before the cut travel in its state, those after wait in the new
// holder's placeholder; its standing and options travel with it.
func TestMoveAtACut(t *testing.T) {
	from, _ := newHub(t, testLimits)
	to, _ := newHub(t, testLimits)
	q := open(from, 10, opts{wants: ""}, Standing{Role: 400, Subscribed: map[int64]struct{}{7: {}}})
	stay := open(from, 11, opts{}, Standing{})
	for _, h := range []*Hub[opts]{from, to} {
		h.Deliver(1, 1, ev("a", "b"))
	}
	assert.Equal(t, []string{"0:a", "1:b"}, poll(t, from, q, -1))
	poll(t, from, q, 0) // acknowledges a

	// The cut: the old holder detaches, the new one adopts.
	states := from.Detach(func(x *Queue[opts]) bool { return x == q })
	require.Len(t, states, 1)
	st := states[0]
	assert.Equal(t, int64(0), st.PrunedID)
	assert.Equal(t, []int64{7}, st.Channels)
	assert.Nil(t, from.Find(q.ID(), 1, 10))
	assert.NotNil(t, from.Find(stay.ID(), 1, 11), "the others stay")
	ph := to.Adopt(st.ID, 1, 10, time.Minute)
	require.NotNil(t, ph)
	assert.Nil(t, to.Adopt(st.ID, 1, 10, time.Minute), "once")

	// Events after the cut reach the new holder only; a poll there waits
	// for the state.
	to.Deliver(2, 1, []Delivery[opts]{delivery{name: "c", channel: 7}, delivery{name: "d", channel: 8}})
	got := make(chan []string, 1)
	go func() {
		evs, _, err := to.Poll(context.Background(), to.Find(st.ID, 1, 10), 1, false)
		assert.NoError(t, err)
		got <- summary(t, evs)
	}()
	assert.False(t, to.Fill(State[opts]{ID: st.ID, Realm: 1, User: 99}), "not another user's")
	require.True(t, to.Fill(st))
	assert.False(t, to.Fill(st), "filled once")
	select {
	case evs := <-got:
		assert.Equal(t, []string{"2:c"}, evs, "b acknowledged on the new holder; c after it (d is not for this channel)")
	case <-time.After(5 * time.Second):
		t.Fatal("the poll of the adopted queue did not end")
	}
}

// A poll waiting on a queue that is detached ends with no events, not an
// error; later polls of the detached queue too.
func TestDetachEndsPollEmpty(t *testing.T) {
	h, _ := newHub(t, testLimits)
	q := open(h, 10, opts{}, Standing{})
	done := make(chan []string, 1)
	go func() {
		evs, waited, err := h.Poll(context.Background(), q, -1, false)
		assert.NoError(t, err)
		assert.True(t, waited)
		done <- summary(t, evs)
	}()
	require.Eventually(t, func() bool { return h.Stats().Waiting == 1 }, 5*time.Second, time.Millisecond)
	h.Detach(func(*Queue[opts]) bool { return true })
	assert.Equal(t, []string{}, <-done)
	evs, _, err := h.Poll(context.Background(), q, -1, true)
	require.NoError(t, err)
	assert.Empty(t, evs)
}

// A placeholder whose state never comes is dropped; its polls end.
func TestPlaceholderExpires(t *testing.T) {
	h, _ := newHub(t, testLimits)
	q := h.Adopt("00000001-0000-4000-8000-000000000000", 1, 10, 50*time.Millisecond)
	_, _, err := h.Poll(context.Background(), q, -1, false)
	assert.ErrorIs(t, err, ErrNoQueue)
	assert.Nil(t, h.Find(q.ID(), 1, 10))
}

// Restore puts a saved queue back as it was.
func TestRestore(t *testing.T) {
	h, _ := newHub(t, testLimits)
	q := open(h, 10, opts{wants: "b"}, Standing{})
	h.Deliver(1, 1, ev("a", "b", "b"))
	st := h.Detach(func(*Queue[opts]) bool { return true })[0]
	other, _ := newHub(t, testLimits)
	require.True(t, other.Restore(st))
	assert.False(t, other.Restore(st))
	r := other.Find(q.ID(), 1, 10)
	require.NotNil(t, r)
	other.Deliver(1, 1, ev("a", "b"))
	assert.Equal(t, []string{"0:b", "1:b", "2:b"}, poll(t, other, r, -1), "tokens of the old process do not matter")
}

// Draining ends waiting polls and makes later ones short.
func TestDrain(t *testing.T) {
	h, _ := newHub(t, testLimits)
	q := open(h, 10, opts{}, Standing{})
	done := make(chan error, 1)
	go func() {
		_, _, err := h.Poll(context.Background(), q, -1, false)
		done <- err
	}()
	require.Eventually(t, func() bool { return h.Stats().Waiting == 1 }, 5*time.Second, time.Millisecond)
	h.Drain()
	require.NoError(t, <-done)
	assert.True(t, h.Draining())
	start := time.Now()
	evs, waited, err := h.Poll(context.Background(), q, -1, false)
	require.NoError(t, err)
	assert.True(t, waited)
	assert.Empty(t, evs, "no heartbeat while draining")
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestQueueIDNamesHolder(t *testing.T) {
	id := NewQueueID(0x2a)
	assert.Equal(t, uint32(0x2a), HolderOf(id))
	assert.Regexp(t, `^0000002a-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, id)
	assert.Equal(t, uint32(0), HolderOf("not-a-queue"))
	assert.Len(t, NewQueueID(0), 36)
}
