package storagetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var txTests = []test{
	{"Tx/Commit", testTxCommit},
	{"Tx/RollbackOnError", testTxRollbackOnError},
	{"Tx/RollbackOnStoreError", testTxRollbackOnStoreError},
	{"Tx/RollbackOnPanic", testTxRollbackOnPanic},
	{"Tx/Nested", testTxNested},
	{"Tx/NestedRollback", testTxNestedRollback},
	{"Tx/ReadsOwnWrites", testTxReadsOwnWrites},
	{"Tx/NewRecords", testTxNewRecords},
	{"Tx/SubscribeRollback", testTxSubscribeRollback},
	{"Tx/Channels", testTxChannels},
	{"Concurrency/CreateUsers", testConcurrentCreateUsers},
	{"Concurrency/Transactions", testConcurrentTransactions},
	{"Concurrency/Replacements", testConcurrentReplacements},
}

// assertNoRealms checks that nothing was persisted.
func assertNoRealms(t *testing.T, s storage.Store, host string) {
	t.Helper()
	realms, err := s.ListRealms(t.Context())
	require.NoError(t, err)
	assert.Empty(t, realms)
	_, err = s.GetRealmByHost(t.Context(), host)
	assert.ErrorIs(t, err, storage.ErrNotFound)
}

func testTxCommit(t *testing.T, s storage.Store) {
	ctx := t.Context()
	var realm *storage.Realm
	var user *storage.User
	var group *storage.UserGroup
	err := s.InTx(ctx, func(tx storage.Store) error {
		realm = &storage.Realm{StringID: "acme", Host: "acme.example.com"}
		if err := tx.CreateRealm(ctx, realm); err != nil {
			return err
		}
		user = &storage.User{RealmID: realm.ID, Email: "a@example.com", IsActive: true}
		if err := tx.CreateUser(ctx, user); err != nil {
			return err
		}
		group = &storage.UserGroup{RealmID: realm.ID, Name: "team"}
		if err := tx.CreateGroup(ctx, group); err != nil {
			return err
		}
		return tx.AddGroupMembers(ctx, realm.ID, group.ID, []int64{user.ID})
	})
	require.NoError(t, err)

	gotRealm, err := s.GetRealm(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, *realm, *gotRealm)
	gotUser, err := s.GetUser(ctx, realm.ID, user.ID)
	require.NoError(t, err)
	assert.Equal(t, *user, *gotUser)
	gotGroup, err := s.GetGroup(ctx, realm.ID, group.ID)
	require.NoError(t, err)
	assert.Equal(t, *group, *gotGroup)
	ids, err := s.GroupMembers(ctx, realm.ID, group.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{user.ID}, ids)
}

func testTxRollbackOnError(t *testing.T, s storage.Store) {
	ctx := t.Context()
	errBoom := errors.New("boom")
	err := s.InTx(ctx, func(tx storage.Store) error {
		r := &storage.Realm{StringID: "acme", Host: "acme.example.com"}
		if err := tx.CreateRealm(ctx, r); err != nil {
			return err
		}
		if err := tx.CreateUser(ctx, &storage.User{RealmID: r.ID, Email: "a@example.com"}); err != nil {
			return err
		}
		return fmt.Errorf("wrapped: %w", errBoom)
	})
	require.ErrorIs(t, err, errBoom, "fn's error is returned")
	assertNoRealms(t, s, "acme.example.com")

	// The store is still usable.
	newRealm(t, s, "acme")
}

func testTxRollbackOnStoreError(t *testing.T, s storage.Store) {
	ctx := t.Context()
	err := s.InTx(ctx, func(tx storage.Store) error {
		if err := tx.CreateRealm(ctx, &storage.Realm{StringID: "acme", Host: "acme.example.com"}); err != nil {
			return err
		}
		return tx.CreateRealm(ctx, &storage.Realm{StringID: "acme", Host: "other.example.com"})
	})
	require.ErrorIs(t, err, storage.ErrConflict)
	assertNoRealms(t, s, "acme.example.com")
	newRealm(t, s, "acme")
}

func testTxRollbackOnPanic(t *testing.T, s storage.Store) {
	ctx := t.Context()
	require.PanicsWithValue(t, "boom", func() {
		_ = s.InTx(ctx, func(tx storage.Store) error {
			if err := tx.CreateRealm(ctx, &storage.Realm{StringID: "acme", Host: "acme.example.com"}); err != nil {
				return err
			}
			panic("boom")
		})
	})
	assertNoRealms(t, s, "acme.example.com")

	// The transaction released its connection: writes still go through.
	newRealm(t, s, "acme")
	require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
		return tx.CreateRealm(ctx, &storage.Realm{StringID: "b", Host: "b.example.com"})
	}))
}

func testTxNested(t *testing.T, s storage.Store) {
	ctx := t.Context()
	var outer, inner *storage.Realm
	err := s.InTx(ctx, func(tx storage.Store) error {
		outer = &storage.Realm{StringID: "outer", Host: "outer.example.com"}
		if err := tx.CreateRealm(ctx, outer); err != nil {
			return err
		}
		return tx.InTx(ctx, func(tx2 storage.Store) error {
			// The inner transaction sees the outer one's writes.
			if _, err := tx2.GetRealm(ctx, outer.ID); err != nil {
				return err
			}
			inner = &storage.Realm{StringID: "inner", Host: "inner.example.com"}
			return tx2.CreateRealm(ctx, inner)
		})
	})
	require.NoError(t, err)
	realms, err := s.ListRealms(ctx)
	require.NoError(t, err)
	assert.Equal(t, []storage.Realm{*outer, *inner}, realms)
}

func testTxNestedRollback(t *testing.T, s storage.Store) {
	ctx := t.Context()
	errInner := errors.New("inner failed")
	err := s.InTx(ctx, func(tx storage.Store) error {
		if err := tx.CreateRealm(ctx, &storage.Realm{StringID: "outer", Host: "outer.example.com"}); err != nil {
			return err
		}
		return tx.InTx(ctx, func(tx2 storage.Store) error {
			if err := tx2.CreateRealm(ctx, &storage.Realm{StringID: "inner", Host: "inner.example.com"}); err != nil {
				return err
			}
			return errInner
		})
	})
	require.ErrorIs(t, err, errInner)
	assertNoRealms(t, s, "outer.example.com")
	assertNoRealms(t, s, "inner.example.com")
}

func testTxReadsOwnWrites(t *testing.T, s storage.Store) {
	ctx := t.Context()
	existing := newRealm(t, s, "existing")
	err := s.InTx(ctx, func(tx storage.Store) error {
		r := &storage.Realm{StringID: "acme", Host: "Acme.example.com"}
		require.NoError(t, tx.CreateRealm(ctx, r))
		got, err := tx.GetRealm(ctx, r.ID)
		require.NoError(t, err)
		assert.Equal(t, *r, *got)
		got, err = tx.GetRealmByHost(ctx, "acme.EXAMPLE.com")
		require.NoError(t, err)
		assert.Equal(t, r.ID, got.ID)
		realms, err := tx.ListRealms(ctx)
		require.NoError(t, err)
		assert.Equal(t, []storage.Realm{*existing, *r}, realms)

		// Outside the transaction the write is not visible yet.
		_, err = s.GetRealm(ctx, r.ID)
		assert.ErrorIs(t, err, storage.ErrNotFound, "uncommitted write visible outside the transaction")

		u := &storage.User{RealmID: r.ID, Email: "Alice@example.com", IsActive: true}
		require.NoError(t, tx.CreateUser(ctx, u))
		gotUser, err := tx.GetUserByEmail(ctx, r.ID, "alice@example.com")
		require.NoError(t, err)
		assert.Equal(t, *u, *gotUser)
		u.FullName = "Alice"
		require.NoError(t, tx.UpdateUser(ctx, u, "full_name"))
		users, err := tx.ListUsers(ctx, r.ID)
		require.NoError(t, err)
		assert.Equal(t, []storage.User{*u}, users)

		g := &storage.UserGroup{RealmID: r.ID, Name: "team"}
		require.NoError(t, tx.CreateGroup(ctx, g))
		sub := &storage.UserGroup{RealmID: r.ID}
		require.NoError(t, tx.CreateGroup(ctx, sub))
		gotGroup, err := tx.GetGroupByName(ctx, r.ID, "team")
		require.NoError(t, err)
		assert.Equal(t, *g, *gotGroup)
		groups, err := tx.ListGroups(ctx, r.ID)
		require.NoError(t, err)
		assert.Equal(t, []storage.UserGroup{*g}, groups)
		require.NoError(t, tx.AddGroupMembers(ctx, r.ID, g.ID, []int64{u.ID}))
		require.NoError(t, tx.AddSubgroups(ctx, r.ID, g.ID, []int64{sub.ID}))
		ids, err := tx.GroupMembers(ctx, r.ID, g.ID)
		require.NoError(t, err)
		assert.Equal(t, []int64{u.ID}, ids)
		ids, err = tx.Subgroups(ctx, r.ID, g.ID)
		require.NoError(t, err)
		assert.Equal(t, []int64{sub.ID}, ids)
		ids, err = tx.UserGroupIDs(ctx, r.ID, u.ID)
		require.NoError(t, err)
		assert.Equal(t, []int64{g.ID}, ids)
		return nil
	})
	require.NoError(t, err)
	got, err := s.GetRealmByHost(ctx, "acme.example.com")
	require.NoError(t, err)
	assert.Equal(t, "acme", got.StringID)
}

// testTxNewRecords checks drafts, profile fields and values, and email
// changes inside a transaction: rolled back, then committed. The email
// change replacement runs in the caller's transaction.
func testTxNewRecords(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	earlier := newEmailChange(t, s, realm.ID, u.ID, "earlier@example.org", "earlier-key")

	write := func(tx storage.Store) error {
		d := &storage.Draft{RealmID: realm.ID, UserID: u.ID, Type: "stream", To: "[1]", Content: "x", Timestamp: 5}
		require.NoError(t, tx.CreateDraft(ctx, d))
		f := &storage.ProfileField{RealmID: realm.ID, Name: "Phone", FieldType: 1}
		require.NoError(t, tx.CreateProfileField(ctx, f))
		v := storage.ProfileFieldValue{RealmID: realm.ID, UserID: u.ID, FieldID: f.ID, Value: "123"}
		require.NoError(t, tx.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{v}))
		c := &storage.EmailChange{RealmID: realm.ID, UserID: u.ID, NewEmail: "new@example.org", Key: "new-key"}
		require.NoError(t, tx.CreateEmailChange(ctx, c))

		// The transaction reads its own writes.
		drafts, err := tx.ListDrafts(ctx, realm.ID, u.ID)
		require.NoError(t, err)
		assert.Equal(t, []storage.Draft{*d}, drafts)
		fields, err := tx.ListProfileFields(ctx, realm.ID)
		require.NoError(t, err)
		assert.Equal(t, []storage.ProfileField{*f}, fields)
		values, err := tx.ListProfileFieldValues(ctx, realm.ID, nil)
		require.NoError(t, err)
		assert.Equal(t, []storage.ProfileFieldValue{v}, values)
		got, err := tx.GetEmailChangeByKey(ctx, realm.ID, "new-key")
		require.NoError(t, err)
		assert.Equal(t, *c, *got)
		_, err = tx.GetEmailChangeByKey(ctx, realm.ID, "earlier-key")
		assert.ErrorIs(t, err, storage.ErrNotFound, "replaced inside the transaction")
		return nil
	}

	errRollback := errors.New("roll back")
	err := s.InTx(ctx, func(tx storage.Store) error {
		require.NoError(t, write(tx))
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)
	drafts, err := s.ListDrafts(ctx, realm.ID, u.ID)
	require.NoError(t, err)
	assert.Empty(t, drafts)
	fields, err := s.ListProfileFields(ctx, realm.ID)
	require.NoError(t, err)
	assert.Empty(t, fields)
	values, err := s.ListProfileFieldValues(ctx, realm.ID, nil)
	require.NoError(t, err)
	assert.Empty(t, values)
	got, err := s.GetEmailChangeByKey(ctx, realm.ID, "earlier-key")
	require.NoError(t, err)
	assert.Equal(t, *earlier, *got, "the replaced change is back after the rollback")

	require.NoError(t, s.InTx(ctx, write))
	drafts, err = s.ListDrafts(ctx, realm.ID, u.ID)
	require.NoError(t, err)
	assert.Len(t, drafts, 1)
	values, err = s.ListProfileFieldValues(ctx, realm.ID, []int64{u.ID})
	require.NoError(t, err)
	assert.Len(t, values, 1)
	_, err = s.GetEmailChangeByKey(ctx, realm.ID, "earlier-key")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	_, err = s.GetEmailChangeByKey(ctx, realm.ID, "new-key")
	assert.NoError(t, err)
}

// testTxSubscribeRollback rolls back transactions that subscribe
// (inserting and reactivating) and unsubscribe: no row, no period and no
// change is left, though the transaction saw its own writes.
func testTxSubscribeRollback(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	fresh := newStream(t, s, realm.ID, "fresh")
	left := newStream(t, s, realm.ID, "left")
	joined := newStream(t, s, realm.ID, "joined")
	leftSub := subscribe(t, s, realm.ID, u.ID, left.ID, 100)
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, u.ID, left.ID, 200))
	leftSub.Active = false
	leftPeriods := listPeriods(t, s, realm.ID, u.ID, left.ID)
	joinedSub := subscribe(t, s, realm.ID, u.ID, joined.ID, 300)
	joinedPeriods := listPeriods(t, s, realm.ID, u.ID, joined.ID)

	errRollback := errors.New("roll back")
	err := s.InTx(ctx, func(tx storage.Store) error {
		sub := &storage.Subscription{RealmID: realm.ID, UserID: u.ID, StreamID: fresh.ID, Color: "#111111"}
		require.NoError(t, tx.Subscribe(ctx, sub, 1000))
		got, err := tx.GetSubscription(ctx, realm.ID, u.ID, fresh.ID)
		require.NoError(t, err)
		assert.Equal(t, *sub, *got)
		assert.Len(t, listPeriods(t, tx, realm.ID, u.ID, fresh.ID), 1)

		require.NoError(t, tx.Subscribe(ctx, &storage.Subscription{RealmID: realm.ID, UserID: u.ID, StreamID: left.ID}, 1000))
		assert.Len(t, listPeriods(t, tx, realm.ID, u.ID, left.ID), 2)
		require.NoError(t, tx.Unsubscribe(ctx, realm.ID, u.ID, joined.ID, 1000))
		require.NoError(t, tx.SetUserTopic(ctx, &storage.UserTopic{RealmID: realm.ID, UserID: u.ID, StreamID: fresh.ID, TopicName: "t", VisibilityPolicy: 1}))

		ids, err := tx.ListStreamSubscribers(ctx, realm.ID, fresh.ID)
		require.NoError(t, err)
		assert.Equal(t, []int64{u.ID}, ids)
		ids, err = s.ListStreamSubscribers(ctx, realm.ID, fresh.ID)
		require.NoError(t, err)
		assert.Empty(t, ids, "uncommitted subscription visible outside the transaction")
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)

	_, err = s.GetSubscription(ctx, realm.ID, u.ID, fresh.ID)
	assert.ErrorIs(t, err, storage.ErrNotFound, "no row")
	assert.Empty(t, listPeriods(t, s, realm.ID, u.ID, fresh.ID), "no period")
	assert.Equal(t, leftSub, getSubscription(t, s, realm.ID, u.ID, left.ID), "still inactive")
	assert.Equal(t, leftPeriods, listPeriods(t, s, realm.ID, u.ID, left.ID))
	assert.Equal(t, joinedSub, getSubscription(t, s, realm.ID, u.ID, joined.ID), "still active")
	assert.Equal(t, joinedPeriods, listPeriods(t, s, realm.ID, u.ID, joined.ID), "period still open")
	assert.Empty(t, listTopics(t, s, realm.ID, u.ID))
}

// testTxChannels commits channels, subscriptions and topic policies
// written in one transaction, with Subscribe nested in it.
func testTxChannels(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	var c *storage.Stream
	var sub *storage.Subscription
	var mid int64
	err := s.InTx(ctx, func(tx storage.Store) error {
		c = &storage.Stream{RealmID: realm.ID, Name: "general", CreatorID: ptr(u.ID)}
		if err := tx.CreateStream(ctx, c); err != nil {
			return err
		}
		got, err := tx.GetStreamByName(ctx, realm.ID, "GENERAL")
		require.NoError(t, err)
		assert.Equal(t, *c, *got)
		sub = &storage.Subscription{RealmID: realm.ID, UserID: u.ID, StreamID: c.ID, Color: "#222222"}
		if err := tx.InTx(ctx, func(tx2 storage.Store) error { return tx2.Subscribe(ctx, sub, 10) }); err != nil {
			return err
		}
		// The bounds see the transaction's own message.
		m := &storage.Message{RealmID: realm.ID, SenderID: u.ID, StreamID: &c.ID, Content: "x", RenderedContent: "x"}
		if err := tx.CreateMessage(ctx, m, nil); err != nil {
			return err
		}
		mid = m.ID
		if err := tx.Unsubscribe(ctx, realm.ID, u.ID, c.ID, 20); err != nil {
			return err
		}
		if err := tx.Subscribe(ctx, sub, 30); err != nil {
			return err
		}
		sub.PinToTop = true
		if err := tx.UpdateSubscription(ctx, sub, "pin_to_top"); err != nil {
			return err
		}
		return tx.SetUserTopic(ctx, &storage.UserTopic{RealmID: realm.ID, UserID: u.ID, StreamID: c.ID, TopicName: "t", VisibilityPolicy: 3})
	})
	require.NoError(t, err)
	assert.Equal(t, *c, getStream(t, s, realm.ID, c.ID))
	assert.Equal(t, *sub, getSubscription(t, s, realm.ID, u.ID, c.ID))
	assert.Equal(t, []storage.SubscriptionPeriod{
		closedPeriod(realm.ID, u.ID, c.ID, 0, 10, mid, 20),
		openPeriod(realm.ID, u.ID, c.ID, mid, 30),
	}, withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, c.ID)))
	assert.Len(t, listTopics(t, s, realm.ID, u.ID), 1)
}

const workers = 8

func testConcurrentCreateUsers(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")

	var wg sync.WaitGroup
	ids := make([]int64, workers)
	for i := range workers {
		wg.Go(func() {
			u := &storage.User{RealmID: realm.ID, Email: fmt.Sprintf("user%d@example.com", i), IsActive: true}
			if assert.NoError(t, s.CreateUser(ctx, u)) {
				ids[i] = u.ID
			}
			// Reads interleaved with the other goroutines' writes.
			_, err := s.ListUsers(ctx, realm.ID)
			assert.NoError(t, err)
			got, err := s.GetUserByEmail(ctx, realm.ID, u.Email)
			if assert.NoError(t, err) {
				assert.Equal(t, u.ID, got.ID)
			}
		})
	}
	wg.Wait()

	users, err := s.ListUsers(ctx, realm.ID)
	require.NoError(t, err)
	require.Len(t, users, workers)
	seen := map[int64]bool{}
	for _, u := range users {
		seen[u.ID] = true
	}
	for _, id := range ids {
		assert.True(t, seen[id], "user %d listed", id)
	}
}

func testConcurrentTransactions(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	shared := newGroup(t, s, realm.ID, "everyone")

	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			err := s.InTx(ctx, func(tx storage.Store) error {
				u := &storage.User{RealmID: realm.ID, Email: fmt.Sprintf("user%d@example.com", i)}
				if err := tx.CreateUser(ctx, u); err != nil {
					return err
				}
				g := &storage.UserGroup{RealmID: realm.ID, Name: fmt.Sprintf("group %d", i)}
				if err := tx.CreateGroup(ctx, g); err != nil {
					return err
				}
				if err := tx.AddGroupMembers(ctx, realm.ID, g.ID, []int64{u.ID}); err != nil {
					return err
				}
				return tx.AddGroupMembers(ctx, realm.ID, shared.ID, []int64{u.ID})
			})
			assert.NoError(t, err)
		})
	}
	wg.Wait()

	members, err := s.GroupMembers(ctx, realm.ID, shared.ID)
	require.NoError(t, err)
	assert.Len(t, members, workers)
	groups, err := s.ListGroups(ctx, realm.ID)
	require.NoError(t, err)
	assert.Len(t, groups, workers+1)
}

// testConcurrentReplacements races writers that replace one row: the
// pending email change of a user and one profile field value. None fails;
// one change and one value remain, each written by one of the writers.
func testConcurrentReplacements(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	f := newProfileField(t, s, realm.ID, "Phone", 1)
	newEmailChange(t, s, realm.ID, u.ID, "first@example.org", "first")

	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			c := &storage.EmailChange{RealmID: realm.ID, UserID: u.ID, NewEmail: fmt.Sprintf("n%d@example.org", i), Key: fmt.Sprintf("key-%d", i)}
			assert.NoError(t, s.CreateEmailChange(ctx, c))
			v := storage.ProfileFieldValue{RealmID: realm.ID, UserID: u.ID, FieldID: f.ID, Value: fmt.Sprintf("v%d", i)}
			assert.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{v}))
		})
	}
	wg.Wait()

	found := 0
	for i := range workers {
		c, err := s.GetEmailChangeByKey(ctx, realm.ID, fmt.Sprintf("key-%d", i))
		if err == nil {
			found++
			assert.Equal(t, fmt.Sprintf("n%d@example.org", i), c.NewEmail)
		} else {
			assert.ErrorIs(t, err, storage.ErrNotFound)
		}
	}
	assert.Equal(t, 1, found, "one pending change left")
	_, err := s.GetEmailChangeByKey(ctx, realm.ID, "first")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	values, err := s.ListProfileFieldValues(ctx, realm.ID, nil)
	require.NoError(t, err)
	assert.Len(t, values, 1)
}
