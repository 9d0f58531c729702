package storagetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var scheduledTests = []test{
	{"Scheduled/CreateGetList", testScheduledCreateGetList},
	{"Scheduled/References", testScheduledReferences},
	{"Scheduled/Update", testScheduledUpdate},
	{"Scheduled/Delete", testScheduledDelete},
	{"Scheduled/Due", testScheduledDue},
	{"Scheduled/ClaimAndFail", testScheduledClaimAndFail},
	{"Scheduled/ClaimRolledBack", testScheduledClaimRolledBack},
	{"Concurrency/ScheduledClaims", testScheduledConcurrentClaims},
	{"Concurrency/ScheduledClaimWhileClaiming", testScheduledClaimWhileClaiming},
}

// schedule stores a pending channel message of sender due at ts.
func schedule(t *testing.T, s storage.Store, realmID, senderID, streamID, ts int64, content string) *storage.ScheduledMessage {
	t.Helper()
	m := &storage.ScheduledMessage{RealmID: realmID, SenderID: senderID, StreamID: &streamID, Topic: "t",
		Content: content, RenderedContent: "<p>" + content + "</p>", ScheduledTimestamp: ts, SendingClient: "test"}
	require.NoError(t, s.CreateScheduledMessage(t.Context(), m))
	require.NotZero(t, m.ID)
	return m
}

func scheduledIDs(list []storage.ScheduledMessage) []int64 {
	ids := []int64{}
	for _, m := range list {
		ids = append(ids, m.ID)
	}
	return ids
}

// Every field round-trips; a sender's list holds their undelivered
// messages (failed ones too) by delivery time, then ID; another sender's
// or realm's messages are not found.
func testScheduledCreateGetList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	carol := newUser(t, s, other.ID, "carol@example.com")
	c := newStream(t, s, realm.ID, "general")

	empty, err := s.ListScheduledMessages(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.ScheduledMessage{}, empty)

	dm := &storage.ScheduledMessage{RealmID: realm.ID, SenderID: alice.ID, Recipients: fmt.Sprintf("[%d]", bob.ID),
		Content: "Ünïcødé 'hi' \"x\"", RenderedContent: "<p>hi</p>", ScheduledTimestamp: 2000, ReadBySender: true,
		SendingClient: "ZulipMobile", Version: 7, Delivered: true, DeliveredMessageID: ptr(int64(5)), Failed: false}
	require.NoError(t, s.CreateScheduledMessage(ctx, dm))
	assert.Equal(t, int64(1), dm.Version, "created at version 1")
	assert.False(t, dm.Delivered, "created pending")
	assert.Nil(t, dm.DeliveredMessageID)
	got, err := s.GetScheduledMessage(ctx, realm.ID, alice.ID, dm.ID)
	require.NoError(t, err)
	assert.Equal(t, *dm, *got)

	later := schedule(t, s, realm.ID, alice.ID, c.ID, 3000, "later")
	sameTime := schedule(t, s, realm.ID, alice.ID, c.ID, 2000, "same time, larger ID")
	first := schedule(t, s, realm.ID, alice.ID, c.ID, 1000, "first")
	got, err = s.GetScheduledMessage(ctx, realm.ID, alice.ID, later.ID)
	require.NoError(t, err)
	assert.Equal(t, *later, *got)
	assert.Equal(t, c.ID, *got.StreamID)
	bobs := schedule(t, s, realm.ID, bob.ID, c.ID, 500, "bob's")
	c2 := newStream(t, s, other.ID, "general")
	theirs := schedule(t, s, other.ID, carol.ID, c2.ID, 100, "theirs")

	list, err := s.ListScheduledMessages(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{first.ID, dm.ID, sameTime.ID, later.ID}, scheduledIDs(list))
	assert.Equal(t, *first, list[0])

	// Failed ones are listed, delivered ones are not (but are found).
	require.NoError(t, s.FailScheduledMessage(ctx, realm.ID, first.ID, 1, "boom"))
	require.NoError(t, s.ClaimScheduledMessage(ctx, realm.ID, later.ID, 1, 99))
	list, err = s.ListScheduledMessages(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{first.ID, dm.ID, sameTime.ID}, scheduledIDs(list))
	assert.True(t, list[0].Failed)
	assert.Equal(t, "boom", *list[0].FailureMessage)
	got, err = s.GetScheduledMessage(ctx, realm.ID, alice.ID, later.ID)
	require.NoError(t, err)
	assert.True(t, got.Delivered)
	assert.Equal(t, int64(99), *got.DeliveredMessageID)

	for _, key := range [][3]int64{
		{realm.ID, bob.ID, dm.ID},       // another sender's
		{other.ID, alice.ID, dm.ID},     // another realm
		{realm.ID, alice.ID, bobs.ID},   // bob's, asked as alice
		{realm.ID, alice.ID, theirs.ID}, // another realm's message
		{realm.ID, alice.ID, theirs.ID + 1000},
	} {
		_, err := s.GetScheduledMessage(ctx, key[0], key[1], key[2])
		assert.ErrorIs(t, err, storage.ErrNotFound, "%v", key)
	}
	list, err = s.ListScheduledMessages(ctx, other.ID, carol.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{theirs.ID}, scheduledIDs(list))
}

// A sender or channel that is missing or of another realm is refused.
func testScheduledReferences(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	carol := newUser(t, s, other.ID, "carol@example.com")
	c := newStream(t, s, realm.ID, "general")
	theirs := newStream(t, s, other.ID, "general")
	for name, m := range map[string]storage.ScheduledMessage{
		"sender of another realm": {RealmID: realm.ID, SenderID: carol.ID, StreamID: &c.ID},
		"missing sender":          {RealmID: realm.ID, SenderID: carol.ID + alice.ID + 100, StreamID: &c.ID},
		"channel of another":      {RealmID: realm.ID, SenderID: alice.ID, StreamID: &theirs.ID},
		"missing channel":         {RealmID: realm.ID, SenderID: alice.ID, StreamID: ptr(c.ID + theirs.ID + 100)},
		"missing realm":           {RealmID: realm.ID + other.ID + 100, SenderID: alice.ID, Recipients: "[1]"},
	} {
		err := s.CreateScheduledMessage(ctx, &m)
		assert.ErrorIs(t, err, storage.ErrNotFound, name)
		assert.Zero(t, m.ID, name)
	}
	list, err := s.ListScheduledMessages(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Empty(t, list)
}

// An update writes its columns and bumps the version, only on the version
// read and only while undelivered; a failed message edited is pending
// again.
func testScheduledUpdate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "general")
	m := schedule(t, s, realm.ID, alice.ID, c.ID, 1000, "before")

	edit := *m
	edit.StreamID, edit.Topic, edit.Recipients = nil, "", fmt.Sprintf("[%d]", bob.ID)
	edit.Content, edit.RenderedContent, edit.ScheduledTimestamp, edit.SendingClient = "after", "<p>after</p>", 5000, "website"
	edit.ReadBySender = true // not an updated column
	require.NoError(t, s.UpdateScheduledMessage(ctx, &edit))
	assert.Equal(t, int64(2), edit.Version)
	got, err := s.GetScheduledMessage(ctx, realm.ID, alice.ID, m.ID)
	require.NoError(t, err)
	want := edit
	want.ReadBySender = false
	assert.Equal(t, want, *got)

	stale := *m // still at version 1
	stale.Content = "stale"
	assert.ErrorIs(t, s.UpdateScheduledMessage(ctx, &stale), storage.ErrNotFound, "a stale version")
	assert.Equal(t, int64(1), stale.Version)
	notMine := *got
	notMine.SenderID = bob.ID
	assert.ErrorIs(t, s.UpdateScheduledMessage(ctx, &notMine), storage.ErrNotFound, "another sender's")
	got2, err := s.GetScheduledMessage(ctx, realm.ID, alice.ID, m.ID)
	require.NoError(t, err)
	assert.Equal(t, want, *got2, "refused updates wrote nothing")

	// Failed, then edited back to pending with a new time.
	require.NoError(t, s.FailScheduledMessage(ctx, realm.ID, m.ID, 2, "too late"))
	failed, err := s.GetScheduledMessage(ctx, realm.ID, alice.ID, m.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(3), failed.Version)
	failed.Failed, failed.FailureMessage, failed.ScheduledTimestamp = false, nil, 9000
	require.NoError(t, s.UpdateScheduledMessage(ctx, failed))
	due, err := s.ListDueScheduledMessages(ctx, 9000, storage.ScheduledCursor{}, 10)
	require.NoError(t, err)
	assert.Equal(t, []int64{m.ID}, scheduledIDs(due), "pending again")

	// Delivered: no more updates.
	require.NoError(t, s.ClaimScheduledMessage(ctx, realm.ID, m.ID, failed.Version, 42))
	assert.ErrorIs(t, s.UpdateScheduledMessage(ctx, failed), storage.ErrNotFound, "delivered")
}

// Deleting removes one of the sender's messages, delivered or not.
func testScheduledDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "general")
	m := schedule(t, s, realm.ID, alice.ID, c.ID, 1000, "x")
	sent := schedule(t, s, realm.ID, alice.ID, c.ID, 1000, "sent")
	require.NoError(t, s.ClaimScheduledMessage(ctx, realm.ID, sent.ID, 1, 7))

	assert.ErrorIs(t, s.DeleteScheduledMessage(ctx, realm.ID, bob.ID, m.ID), storage.ErrNotFound, "another sender's")
	assert.ErrorIs(t, s.DeleteScheduledMessage(ctx, realm.ID+100, alice.ID, m.ID), storage.ErrNotFound, "another realm")
	require.NoError(t, s.DeleteScheduledMessage(ctx, realm.ID, alice.ID, m.ID))
	require.NoError(t, s.DeleteScheduledMessage(ctx, realm.ID, alice.ID, sent.ID))
	assert.ErrorIs(t, s.DeleteScheduledMessage(ctx, realm.ID, alice.ID, m.ID), storage.ErrNotFound, "already deleted")
	_, err := s.GetScheduledMessage(ctx, realm.ID, alice.ID, m.ID)
	assert.ErrorIs(t, err, storage.ErrNotFound)
	assert.ErrorIs(t, s.ClaimScheduledMessage(ctx, realm.ID, m.ID, 1, 8), storage.ErrNotFound, "a deleted message is not claimed")
	next, ok, err := s.NextScheduledDelivery(ctx)
	require.NoError(t, err)
	assert.False(t, ok, "nothing pending: %d", next)
}

// The due list covers every realm's pending messages at or before now,
// in delivery order, after the cursor and up to the limit; the next
// delivery is the first pending one.
func testScheduledDue(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	carol := newUser(t, s, other.ID, "carol@example.com")
	c := newStream(t, s, realm.ID, "general")
	c2 := newStream(t, s, other.ID, "general")

	due, err := s.ListDueScheduledMessages(ctx, 1<<40, storage.ScheduledCursor{}, 10)
	require.NoError(t, err)
	assert.Equal(t, []storage.ScheduledMessage{}, due)
	_, ok, err := s.NextScheduledDelivery(ctx)
	require.NoError(t, err)
	assert.False(t, ok)

	a := schedule(t, s, realm.ID, alice.ID, c.ID, 200, "a")
	b := schedule(t, s, other.ID, carol.ID, c2.ID, 100, "b")
	cc := schedule(t, s, realm.ID, alice.ID, c.ID, 200, "c")
	d := schedule(t, s, other.ID, carol.ID, c2.ID, 300, "d")
	failed := schedule(t, s, realm.ID, alice.ID, c.ID, 50, "failed")
	sent := schedule(t, s, realm.ID, alice.ID, c.ID, 60, "sent")
	require.NoError(t, s.FailScheduledMessage(ctx, realm.ID, failed.ID, 1, "no"))
	require.NoError(t, s.ClaimScheduledMessage(ctx, realm.ID, sent.ID, 1, 1))

	at, ok, err := s.NextScheduledDelivery(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(100), at, "failed and delivered messages are not pending")

	list := func(now int64, after storage.ScheduledCursor, limit int) []int64 {
		t.Helper()
		due, err := s.ListDueScheduledMessages(ctx, now, after, limit)
		require.NoError(t, err)
		return scheduledIDs(due)
	}
	assert.Equal(t, []int64{}, list(99, storage.ScheduledCursor{}, 10))
	assert.Equal(t, []int64{b.ID}, list(100, storage.ScheduledCursor{}, 10), "due at now")
	assert.Equal(t, []int64{b.ID, a.ID, cc.ID}, list(299, storage.ScheduledCursor{}, 10))
	assert.Equal(t, []int64{b.ID, a.ID}, list(1000, storage.ScheduledCursor{}, 2))
	assert.Equal(t, []int64{cc.ID, d.ID}, list(1000, storage.ScheduledCursor{Timestamp: 200, ID: a.ID}, 10), "after a cursor")
	assert.Equal(t, []int64{a.ID, cc.ID, d.ID}, list(1000, storage.ScheduledCursor{Timestamp: 100, ID: b.ID}, 10))
	assert.Equal(t, []int64{}, list(1000, storage.ScheduledCursor{Timestamp: 300, ID: d.ID}, 10))
	got, err := s.ListDueScheduledMessages(ctx, 100, storage.ScheduledCursor{}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, *b, got[0], "whole records")
}

// A claim marks the pending message delivered once; a second claim, a
// stale version or a failed message is not claimed; failing is as
// conditional.
func testScheduledClaimAndFail(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	m := schedule(t, s, realm.ID, alice.ID, c.ID, 100, "m")
	edited := schedule(t, s, realm.ID, alice.ID, c.ID, 100, "edited")
	e := *edited
	require.NoError(t, s.UpdateScheduledMessage(ctx, &e))

	assert.ErrorIs(t, s.ClaimScheduledMessage(ctx, realm.ID+1, m.ID, 1, 10), storage.ErrNotFound, "another realm")
	require.NoError(t, s.InTx(ctx, func(tx storage.Store) error { return tx.ClaimScheduledMessage(ctx, realm.ID, m.ID, 1, 10) }))
	assert.ErrorIs(t, s.ClaimScheduledMessage(ctx, realm.ID, m.ID, 1, 11), storage.ErrNotFound, "claimed once")
	assert.ErrorIs(t, s.FailScheduledMessage(ctx, realm.ID, m.ID, 1, "x"), storage.ErrNotFound, "a delivered message does not fail")
	got, err := s.GetScheduledMessage(ctx, realm.ID, alice.ID, m.ID)
	require.NoError(t, err)
	assert.True(t, got.Delivered)
	assert.False(t, got.Failed)
	assert.Equal(t, int64(10), *got.DeliveredMessageID)

	assert.ErrorIs(t, s.ClaimScheduledMessage(ctx, realm.ID, edited.ID, 1, 12), storage.ErrNotFound, "edited since")
	assert.ErrorIs(t, s.FailScheduledMessage(ctx, realm.ID, edited.ID, 1, "x"), storage.ErrNotFound, "edited since")
	require.NoError(t, s.FailScheduledMessage(ctx, realm.ID, edited.ID, 2, "gone"))
	assert.ErrorIs(t, s.ClaimScheduledMessage(ctx, realm.ID, edited.ID, 3, 13), storage.ErrNotFound, "a failed message")
	assert.ErrorIs(t, s.FailScheduledMessage(ctx, realm.ID, edited.ID, 3, "again"), storage.ErrNotFound, "failed once")
	got, err = s.GetScheduledMessage(ctx, realm.ID, alice.ID, edited.ID)
	require.NoError(t, err)
	assert.True(t, got.Failed)
	assert.False(t, got.Delivered)
	assert.Nil(t, got.DeliveredMessageID)
	assert.Equal(t, "gone", *got.FailureMessage)
	assert.Equal(t, int64(3), got.Version)
}

// A claim rolled back with its transaction leaves the message pending, to
// be claimed again.
func testScheduledClaimRolledBack(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	m := schedule(t, s, realm.ID, alice.ID, c.ID, 100, "m")
	errCrash := errors.New("crash before commit")
	var msg int64
	err := s.InTx(ctx, func(tx storage.Store) error {
		msg = postTopic(t, tx, realm.ID, alice.ID, c.ID, "t", false)
		if err := tx.ClaimScheduledMessage(ctx, realm.ID, m.ID, 1, msg); err != nil {
			return err
		}
		return errCrash
	})
	require.ErrorIs(t, err, errCrash)
	_, err = s.GetMessage(ctx, realm.ID, msg)
	assert.ErrorIs(t, err, storage.ErrNotFound, "the message rolled back with the claim")
	due, err := s.ListDueScheduledMessages(ctx, 100, storage.ScheduledCursor{}, 10)
	require.NoError(t, err)
	assert.Equal(t, []int64{m.ID}, scheduledIDs(due), "still pending")
	require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
		return tx.ClaimScheduledMessage(ctx, realm.ID, m.ID, 1, post(t, tx, realm.ID, alice.ID, c.ID))
	}))
	due, err = s.ListDueScheduledMessages(ctx, 100, storage.ScheduledCursor{}, 10)
	require.NoError(t, err)
	assert.Empty(t, due)
}

// Workers claiming the same due messages concurrently, each in its own
// transaction with the message it stores, claim every message exactly
// once; the losers' transactions roll back with their messages.
func testScheduledConcurrentClaims(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	const n = 40
	for i := range n {
		schedule(t, s, realm.ID, alice.ID, c.ID, int64(100+i%5), fmt.Sprint("m", i))
	}
	var claimed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			due, err := s.ListDueScheduledMessages(ctx, 1000, storage.ScheduledCursor{}, n)
			if !assert.NoError(t, err) {
				return
			}
			for _, m := range due {
				err := s.InTx(ctx, func(tx storage.Store) error {
					msg := &storage.Message{RealmID: realm.ID, SenderID: alice.ID, StreamID: m.StreamID, Topic: m.Topic,
						Content: m.Content, RenderedContent: m.RenderedContent, DateSent: 1000}
					if err := tx.CreateMessage(ctx, msg, nil); err != nil {
						return err
					}
					return tx.ClaimScheduledMessage(ctx, realm.ID, m.ID, m.Version, msg.ID)
				})
				if err == nil {
					claimed.Add(1)
				} else {
					assert.ErrorIs(t, err, storage.ErrNotFound)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(n), claimed.Load(), "every message claimed exactly once")
	due, err := s.ListDueScheduledMessages(ctx, 1000, storage.ScheduledCursor{}, n)
	require.NoError(t, err)
	assert.Empty(t, due)
	msgs, _, err := s.ListMessageWindow(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: alice.ID,
		Scope: storage.MessageScope{FullChannels: []int64{c.ID}}, Anchor: 1 << 50, Before: 2 * n})
	require.NoError(t, err)
	assert.Len(t, msgs, n, "one stored message per scheduled message: the losers' rolled back")
	contents := map[string]bool{}
	for _, m := range msgs {
		contents[m.Content] = true
	}
	assert.Len(t, contents, n, "each scheduled message's own")
	pending, err := s.ListScheduledMessages(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Empty(t, pending)
}

// A claim made while another transaction holds an uncommitted claim of
// the same message does not succeed, whether the database runs it
// concurrently (PostgreSQL skips the locked row) or after the first
// commits (SQLite's one writer).
func testScheduledClaimWhileClaiming(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	m := schedule(t, s, realm.ID, alice.ID, c.ID, 100, "m")

	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.InTx(ctx, func(tx storage.Store) error {
			if err := tx.ClaimScheduledMessage(ctx, realm.ID, m.ID, 1, 1); err != nil {
				close(holding)
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	second := make(chan error, 1)
	go func() { second <- s.ClaimScheduledMessage(ctx, realm.ID, m.ID, 1, 2) }()
	select {
	case err := <-second:
		// Ran while the first claim was held.
		assert.ErrorIs(t, err, storage.ErrNotFound)
		close(release)
	case <-time.After(300 * time.Millisecond):
		// Waiting for the writer: let the first commit.
		close(release)
		assert.ErrorIs(t, <-second, storage.ErrNotFound)
	}
	require.NoError(t, <-first)
	got, err := s.GetScheduledMessage(ctx, realm.ID, alice.ID, m.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(1), *got.DeliveredMessageID, "the first claim's")
}
