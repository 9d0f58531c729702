package storagetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var subscriptionTests = []test{
	{"Subscription/RoundTrip", testSubscriptionRoundTrip},
	{"Subscription/Resubscribe", testSubscriptionResubscribe},
	{"Subscription/DoubleSubscribe", testSubscriptionDoubleSubscribe},
	{"Subscription/DoubleSubscribeInTx", testSubscriptionDoubleSubscribeInTx},
	{"Subscription/ConcurrentSubscribe", testSubscriptionConcurrentSubscribe},
	{"Subscription/UnsubscribeNotFound", testSubscriptionUnsubscribeNotFound},
	{"Subscription/SubscribeNotFound", testSubscriptionSubscribeNotFound},
	{"Subscription/Get", testSubscriptionGet},
	{"Subscription/Lists", testSubscriptionLists},
	{"Subscription/Update", testSubscriptionUpdate},
	{"Subscription/UpdateNotFound", testSubscriptionUpdateNotFound},
	{"Subscription/Periods", testSubscriptionPeriods},
}

// subscribe subscribes the user to the channel with default settings and
// returns the subscription as stored.
func subscribe(t *testing.T, s storage.Store, realmID, userID, streamID, now int64) storage.Subscription {
	t.Helper()
	sub := &storage.Subscription{RealmID: realmID, UserID: userID, StreamID: streamID, Color: "#c2c2c2"}
	require.NoError(t, s.Subscribe(t.Context(), sub, now))
	require.True(t, sub.Active)
	return *sub
}

// getSubscription reads a subscription back, failing the test if it is
// not there.
func getSubscription(t *testing.T, s storage.Store, realmID, userID, streamID int64) storage.Subscription {
	t.Helper()
	sub, err := s.GetSubscription(t.Context(), realmID, userID, streamID)
	require.NoError(t, err)
	return *sub
}

// listPeriods lists the user's periods in the channel.
func listPeriods(t *testing.T, s storage.Store, realmID, userID, streamID int64) []storage.SubscriptionPeriod {
	t.Helper()
	periods, err := s.ListSubscriptionPeriods(t.Context(), realmID, userID, streamID)
	require.NoError(t, err)
	require.NotNil(t, periods)
	return periods
}

// withoutIDs returns the periods with their IDs zeroed, after checking
// that the IDs are set and ascending.
func withoutIDs(t *testing.T, periods []storage.SubscriptionPeriod) []storage.SubscriptionPeriod {
	t.Helper()
	out := make([]storage.SubscriptionPeriod, len(periods))
	for i, p := range periods {
		require.NotZero(t, p.ID)
		if i > 0 {
			require.Greater(t, p.ID, periods[i-1].ID, "periods oldest first")
		}
		p.ID = 0
		out[i] = p
	}
	return out
}

// openPeriod is the period opened at start and at.
func openPeriod(realmID, userID, streamID, start, at int64) storage.SubscriptionPeriod {
	return storage.SubscriptionPeriod{RealmID: realmID, UserID: userID, StreamID: streamID, StartMessageID: start, StartedAt: at}
}

// closedPeriod is the period from start (at) to end (endedAt).
func closedPeriod(realmID, userID, streamID, start, at, end, endedAt int64) storage.SubscriptionPeriod {
	p := openPeriod(realmID, userID, streamID, start, at)
	p.EndMessageID, p.EndedAt = ptr(end), ptr(endedAt)
	return p
}

func testSubscriptionRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")

	cases := []struct {
		name string
		sub  storage.Subscription
	}{
		{"all settings", storage.Subscription{
			Color:                  "#76ce90",
			IsMuted:                true,
			PinToTop:               true,
			DesktopNotifications:   ptr(true),
			EmailNotifications:     ptr(false),
			PushNotifications:      ptr(true),
			AudibleNotifications:   ptr(false),
			WildcardMentionsNotify: ptr(true),
		}},
		{"other non-nil pointers", storage.Subscription{
			Color:                  "ünïcødé",
			DesktopNotifications:   ptr(false),
			EmailNotifications:     ptr(true),
			PushNotifications:      ptr(false),
			AudibleNotifications:   ptr(true),
			WildcardMentionsNotify: ptr(false),
		}},
		{"zero values", storage.Subscription{}},
		{"given inactive", storage.Subscription{Color: "#000000", Active: false, IsMuted: true}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newStream(t, s, realm.ID, tc.name)
			sub := tc.sub
			sub.RealmID, sub.UserID, sub.StreamID = realm.ID, u.ID, c.ID
			start, now := post(t, s, realm.ID, u.ID, c.ID), int64(1_700_001_000+i)
			require.NoError(t, s.Subscribe(ctx, &sub, now))

			want := tc.sub
			want.RealmID, want.UserID, want.StreamID = realm.ID, u.ID, c.ID
			want.Active = true
			assert.Equal(t, want, sub, "Subscribe sets Active only")
			assert.Equal(t, want, getSubscription(t, s, realm.ID, u.ID, c.ID))

			periods := listPeriods(t, s, realm.ID, u.ID, c.ID)
			assert.Equal(t, []storage.SubscriptionPeriod{openPeriod(realm.ID, u.ID, c.ID, start, now)}, withoutIDs(t, periods))
		})
	}
}

// testSubscriptionResubscribe subscribes, unsubscribes and subscribes
// again: the settings stored at first (and updated while inactive) come
// back, and there are two periods with the right bounds.
func testSubscriptionResubscribe(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")

	first := &storage.Subscription{
		RealmID: realm.ID, UserID: u.ID, StreamID: c.ID,
		Color: "#aaaaaa", IsMuted: true, PinToTop: true,
		DesktopNotifications: ptr(false), PushNotifications: ptr(true),
	}
	// The bounds are the newest message IDs at the time (m10, m20, ...).
	m10 := post(t, s, realm.ID, u.ID, c.ID)
	require.NoError(t, s.Subscribe(ctx, first, 1000))
	stored := *first

	m20 := post(t, s, realm.ID, u.ID, c.ID)
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, u.ID, c.ID, 2000))
	inactive := stored
	inactive.Active = false
	assert.Equal(t, inactive, getSubscription(t, s, realm.ID, u.ID, c.ID), "the row stays, inactive, with its settings")
	assert.Equal(t, []storage.SubscriptionPeriod{
		closedPeriod(realm.ID, u.ID, c.ID, m10, 1000, m20, 2000),
	}, withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, c.ID)))
	ids, err := s.ListStreamSubscribers(ctx, realm.ID, c.ID)
	require.NoError(t, err)
	assert.Empty(t, ids)

	// Settings written while inactive are kept too.
	inactive.EmailNotifications = ptr(true)
	require.NoError(t, s.UpdateSubscription(ctx, &inactive, "email_notifications"))
	stored.EmailNotifications = ptr(true)

	again := &storage.Subscription{
		RealmID: realm.ID, UserID: u.ID, StreamID: c.ID,
		Color: "#ffffff", AudibleNotifications: ptr(true),
	}
	m30 := post(t, s, realm.ID, u.ID, c.ID)
	require.NoError(t, s.Subscribe(ctx, again, 3000))
	assert.Equal(t, stored, *again, "the stored settings are copied into sub")
	assert.Equal(t, stored, getSubscription(t, s, realm.ID, u.ID, c.ID), "the stored settings are kept")
	assert.Equal(t, []storage.SubscriptionPeriod{
		closedPeriod(realm.ID, u.ID, c.ID, m10, 1000, m20, 2000),
		openPeriod(realm.ID, u.ID, c.ID, m30, 3000),
	}, withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, c.ID)))
	ids, err = s.ListStreamSubscribers(ctx, realm.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{u.ID}, ids)

	// A third round: three periods, the last one closed.
	m40 := post(t, s, realm.ID, u.ID, c.ID)
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, u.ID, c.ID, 4000))
	assert.Equal(t, []storage.SubscriptionPeriod{
		closedPeriod(realm.ID, u.ID, c.ID, m10, 1000, m20, 2000),
		closedPeriod(realm.ID, u.ID, c.ID, m30, 3000, m40, 4000),
	}, withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, c.ID)))
	m50 := post(t, s, realm.ID, u.ID, c.ID)
	require.NoError(t, s.Subscribe(ctx, &storage.Subscription{RealmID: realm.ID, UserID: u.ID, StreamID: c.ID}, 5000))
	periods := withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, c.ID))
	require.Len(t, periods, 3)
	assert.Equal(t, openPeriod(realm.ID, u.ID, c.ID, m50, 5000), periods[2])
	assert.Equal(t, stored, getSubscription(t, s, realm.ID, u.ID, c.ID))
}

func testSubscriptionDoubleSubscribe(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	stored := subscribe(t, s, realm.ID, u.ID, c.ID, 1000)

	again := &storage.Subscription{RealmID: realm.ID, UserID: u.ID, StreamID: c.ID, Color: "#123456", IsMuted: true}
	before := *again
	assert.ErrorIs(t, s.Subscribe(ctx, again, 2000), storage.ErrConflict)
	assert.Equal(t, before, *again, "sub untouched on error")
	assert.Equal(t, stored, getSubscription(t, s, realm.ID, u.ID, c.ID), "row untouched")
	assert.Equal(t, []storage.SubscriptionPeriod{openPeriod(realm.ID, u.ID, c.ID, 0, 1000)},
		withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, c.ID)), "no second period")
}

// testSubscriptionDoubleSubscribeInTx checks that ErrConflict from
// Subscribe leaves the caller's transaction usable, so that a caller can
// skip users already subscribed and go on.
func testSubscriptionDoubleSubscribeInTx(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "general")
	subscribe(t, s, realm.ID, alice.ID, c.ID, 1000)

	err := s.InTx(ctx, func(tx storage.Store) error {
		for _, u := range []*storage.User{alice, bob} {
			err := tx.Subscribe(ctx, &storage.Subscription{RealmID: realm.ID, UserID: u.ID, StreamID: c.ID}, 2000)
			if errors.Is(err, storage.ErrConflict) {
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	ids, err := s.ListStreamSubscribers(ctx, realm.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{alice.ID, bob.ID}, ids)
	assert.Len(t, listPeriods(t, s, realm.ID, alice.ID, c.ID), 1)
	assert.Len(t, listPeriods(t, s, realm.ID, bob.ID, c.ID), 1)
}

// testSubscriptionConcurrentSubscribe races Subscribes of one subscription,
// new and then reactivated: exactly one wins each round, the others get
// ErrConflict, and there is one open period.
func testSubscriptionConcurrentSubscribe(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")

	race := func(start int64) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for i := range workers {
			wg.Go(func() {
				sub := &storage.Subscription{RealmID: realm.ID, UserID: u.ID, StreamID: c.ID}
				errs[i] = s.Subscribe(ctx, sub, start*100)
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				assert.ErrorIs(t, err, storage.ErrConflict)
			}
		}
		assert.Equal(t, 1, won, "one Subscribe wins")
	}
	race(10)
	assert.Equal(t, []storage.SubscriptionPeriod{openPeriod(realm.ID, u.ID, c.ID, 0, 1000)},
		withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, c.ID)))

	require.NoError(t, s.Unsubscribe(ctx, realm.ID, u.ID, c.ID, 2000))
	race(30)
	assert.Equal(t, []storage.SubscriptionPeriod{
		closedPeriod(realm.ID, u.ID, c.ID, 0, 1000, 0, 2000),
		openPeriod(realm.ID, u.ID, c.ID, 0, 3000),
	}, withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, c.ID)))
}

func testSubscriptionUnsubscribeNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	gone := newStream(t, s, realm.ID, "gone")
	never := newStream(t, s, realm.ID, "never")
	active := subscribe(t, s, realm.ID, u.ID, c.ID, 1000)
	subscribe(t, s, realm.ID, u.ID, gone.ID, 1000)
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, u.ID, gone.ID, 2000))

	cases := []struct {
		name                      string
		realmID, userID, streamID int64
	}{
		{"inactive", realm.ID, u.ID, gone.ID},
		{"never subscribed", realm.ID, u.ID, never.ID},
		{"missing channel", realm.ID, u.ID, never.ID + 1000},
		{"missing user", realm.ID, u.ID + 1000, c.ID},
		{"another realm", other.ID, u.ID, c.ID},
		{"missing realm", other.ID + 1000, u.ID, c.ID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Unsubscribe(ctx, tc.realmID, tc.userID, tc.streamID, 3000)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
	assert.Equal(t, active, getSubscription(t, s, realm.ID, u.ID, c.ID), "still active")
	assert.Equal(t, []storage.SubscriptionPeriod{openPeriod(realm.ID, u.ID, c.ID, 0, 1000)},
		withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, c.ID)))
	assert.Equal(t, []storage.SubscriptionPeriod{closedPeriod(realm.ID, u.ID, gone.ID, 0, 1000, 0, 2000)},
		withoutIDs(t, listPeriods(t, s, realm.ID, u.ID, gone.ID)), "the closed period is not closed again")
	assert.Empty(t, listPeriods(t, s, realm.ID, u.ID, never.ID))
}

func testSubscriptionSubscribeNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	inactive := newStream(t, s, realm.ID, "inactive")
	foreignUser := newUser(t, s, other.ID, "f@example.com")
	foreignStream := newStream(t, s, other.ID, "foreign")
	active := subscribe(t, s, realm.ID, u.ID, c.ID, 1000)
	subscribe(t, s, realm.ID, u.ID, inactive.ID, 1000)
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, u.ID, inactive.ID, 2000))

	cases := []struct {
		name                      string
		realmID, userID, streamID int64
	}{
		{"missing channel", realm.ID, u.ID, foreignStream.ID + 1000},
		{"missing user", realm.ID, foreignUser.ID + 1000, c.ID},
		{"another realm's channel", realm.ID, u.ID, foreignStream.ID},
		{"another realm's user", realm.ID, foreignUser.ID, c.ID},
		{"missing realm", other.ID + 1000, u.ID, c.ID},
		// Rows of realm exist for these: naming the other realm must not
		// find (and reactivate, or conflict with) them.
		{"active row, realm of neither", other.ID, u.ID, c.ID},
		{"inactive row, realm of neither", other.ID, u.ID, inactive.ID},
		{"user of the realm named, channel not", other.ID, foreignUser.ID, c.ID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub := &storage.Subscription{RealmID: tc.realmID, UserID: tc.userID, StreamID: tc.streamID, Color: "#111111"}
			assert.ErrorIs(t, s.Subscribe(ctx, sub, 3000), storage.ErrNotFound)
			_, err := s.GetSubscription(ctx, tc.realmID, tc.userID, tc.streamID)
			assert.ErrorIs(t, err, storage.ErrNotFound, "no row")
			assert.Empty(t, listPeriods(t, s, tc.realmID, tc.userID, tc.streamID), "no period")
		})
	}
	assert.Equal(t, active, getSubscription(t, s, realm.ID, u.ID, c.ID))
	assert.False(t, getSubscription(t, s, realm.ID, u.ID, inactive.ID).Active, "not reactivated")
	assert.Len(t, listPeriods(t, s, realm.ID, u.ID, c.ID), 1)
	assert.Len(t, listPeriods(t, s, realm.ID, u.ID, inactive.ID), 1)
	subs, err := s.ListRealmSubscriptions(ctx, other.ID)
	require.NoError(t, err)
	assert.Empty(t, subs)
}

func testSubscriptionGet(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	d := newStream(t, s, realm.ID, "design")
	sub := subscribe(t, s, realm.ID, u.ID, c.ID, 1000)

	got, err := s.GetSubscription(ctx, realm.ID, u.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, sub, *got)

	cases := []struct {
		name                      string
		realmID, userID, streamID int64
	}{
		{"another realm", other.ID, u.ID, c.ID},
		{"missing realm", other.ID + 1000, u.ID, c.ID},
		{"not subscribed", realm.ID, u.ID, d.ID},
		{"missing user", realm.ID, u.ID + 1000, c.ID},
		{"missing channel", realm.ID, u.ID, d.ID + 1000},
	}
	for _, tc := range cases {
		_, err := s.GetSubscription(ctx, tc.realmID, tc.userID, tc.streamID)
		assert.ErrorIs(t, err, storage.ErrNotFound, tc.name)
	}
}

func testSubscriptionLists(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	empty := newRealm(t, s, "empty")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	carol := newUser(t, s, realm.ID, "carol@example.com")
	c1 := newStream(t, s, realm.ID, "one")
	c2 := newStream(t, s, realm.ID, "two")
	c3 := newStream(t, s, realm.ID, "three")
	foreignUser := newUser(t, s, other.ID, "f@example.com")
	foreignStream := newStream(t, s, other.ID, "foreign")
	foreign := subscribe(t, s, other.ID, foreignUser.ID, foreignStream.ID, 1)

	// Subscribed out of order; bob leaves c1; carol subscribes to nothing.
	b2 := subscribe(t, s, realm.ID, bob.ID, c2.ID, 1)
	a3 := subscribe(t, s, realm.ID, alice.ID, c3.ID, 1)
	b1 := subscribe(t, s, realm.ID, bob.ID, c1.ID, 1)
	a1 := subscribe(t, s, realm.ID, alice.ID, c1.ID, 1)
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, bob.ID, c1.ID, 2))
	b1.Active = false

	userSubs := func(realmID, userID int64) []storage.Subscription {
		t.Helper()
		subs, err := s.ListUserSubscriptions(ctx, realmID, userID)
		require.NoError(t, err)
		require.NotNil(t, subs)
		return subs
	}
	assert.Equal(t, []storage.Subscription{a1, a3}, userSubs(realm.ID, alice.ID), "by channel ID")
	assert.Equal(t, []storage.Subscription{b1, b2}, userSubs(realm.ID, bob.ID), "inactive rows included")
	assert.Empty(t, userSubs(realm.ID, carol.ID))
	assert.Empty(t, userSubs(realm.ID, foreignUser.ID), "another realm's user")
	assert.Empty(t, userSubs(other.ID, alice.ID), "realm of neither")
	assert.Equal(t, []storage.Subscription{foreign}, userSubs(other.ID, foreignUser.ID))

	realmSubs := func(realmID int64) []storage.Subscription {
		t.Helper()
		subs, err := s.ListRealmSubscriptions(ctx, realmID)
		require.NoError(t, err)
		require.NotNil(t, subs)
		return subs
	}
	assert.Equal(t, []storage.Subscription{a1, b2, a3}, realmSubs(realm.ID), "active only, by channel then user")
	assert.Equal(t, []storage.Subscription{foreign}, realmSubs(other.ID))
	assert.Empty(t, realmSubs(empty.ID))
	assert.Empty(t, realmSubs(empty.ID+1000))

	subscribers := func(realmID, streamID int64) []int64 {
		t.Helper()
		ids, err := s.ListStreamSubscribers(ctx, realmID, streamID)
		require.NoError(t, err)
		require.NotNil(t, ids)
		return ids
	}
	b1again := subscribe(t, s, realm.ID, bob.ID, c1.ID, 3)
	c3sub := subscribe(t, s, realm.ID, carol.ID, c3.ID, 3)
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, alice.ID, c3.ID, 4))
	assert.Equal(t, []int64{alice.ID, bob.ID}, subscribers(realm.ID, c1.ID), "ascending")
	assert.Equal(t, []int64{bob.ID}, subscribers(realm.ID, c2.ID))
	assert.Equal(t, []int64{carol.ID}, subscribers(realm.ID, c3.ID), "active only")
	assert.Empty(t, subscribers(realm.ID, foreignStream.ID), "another realm's channel")
	assert.Empty(t, subscribers(other.ID, c1.ID), "realm of neither")
	assert.Empty(t, subscribers(realm.ID, foreignStream.ID+1000), "missing channel")
	assert.Equal(t, []int64{foreignUser.ID}, subscribers(other.ID, foreignStream.ID))
	assert.Equal(t, []storage.Subscription{a1, b1again, b2, c3sub}, realmSubs(realm.ID))
}

func testSubscriptionUpdate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	d := newStream(t, s, realm.ID, "design")
	sub := subscribe(t, s, realm.ID, u.ID, c.ID, 1000)
	untouched := subscribe(t, s, realm.ID, u.ID, d.ID, 1000)

	// All settings, Active given false: not written.
	sub.Color = "#abcdef"
	sub.IsMuted = true
	sub.PinToTop = true
	sub.DesktopNotifications = ptr(true)
	sub.EmailNotifications = ptr(false)
	sub.PushNotifications = ptr(true)
	sub.AudibleNotifications = ptr(false)
	sub.WildcardMentionsNotify = ptr(true)
	changed := sub
	changed.Active = false
	require.NoError(t, s.UpdateSubscription(ctx, &changed))
	assert.Equal(t, sub, getSubscription(t, s, realm.ID, u.ID, c.ID), "all settings written, Active not")

	// Back to nil and false.
	sub.IsMuted, sub.PinToTop = false, false
	sub.DesktopNotifications, sub.EmailNotifications, sub.PushNotifications = nil, nil, nil
	sub.AudibleNotifications, sub.WildcardMentionsNotify = nil, nil
	require.NoError(t, s.UpdateSubscription(ctx, &sub))
	assert.Equal(t, sub, getSubscription(t, s, realm.ID, u.ID, c.ID))

	// Named columns only.
	changed = sub
	changed.Color = "#000000"
	changed.IsMuted = true
	changed.PinToTop = true
	changed.PushNotifications = ptr(false)
	changed.EmailNotifications = ptr(true)
	require.NoError(t, s.UpdateSubscription(ctx, &changed, "is_muted", "push_notifications"))
	sub.IsMuted = true
	sub.PushNotifications = ptr(false)
	assert.Equal(t, sub, getSubscription(t, s, realm.ID, u.ID, c.ID), "only the named settings")

	// Columns that are not settings are refused and nothing is written.
	for _, cols := range [][]string{{"active"}, {"color", "active"}, {"realm_id"}, {"user_id"}, {"stream_id"}, {"no_such_column"}} {
		changed := sub
		changed.Active = false
		changed.Color = "#ff0000"
		err := s.UpdateSubscription(ctx, &changed, cols...)
		assert.Error(t, err, "%v", cols)
		assert.NotErrorIs(t, err, storage.ErrNotFound)
		assert.NotErrorIs(t, err, storage.ErrConflict)
		assert.Equal(t, sub, getSubscription(t, s, realm.ID, u.ID, c.ID), "%v: nothing written", cols)
	}

	// An inactive subscription is updated too (and stays inactive).
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, u.ID, c.ID, 2000))
	sub.Active = false
	sub.Color = "#999999"
	changed = sub
	changed.Active = true
	require.NoError(t, s.UpdateSubscription(ctx, &changed, "color"))
	assert.Equal(t, sub, getSubscription(t, s, realm.ID, u.ID, c.ID))

	assert.Equal(t, untouched, getSubscription(t, s, realm.ID, u.ID, d.ID))
	assert.Len(t, listPeriods(t, s, realm.ID, u.ID, c.ID), 1, "no period written by updates")
}

func testSubscriptionUpdateNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	d := newStream(t, s, realm.ID, "design")
	sub := subscribe(t, s, realm.ID, u.ID, c.ID, 1000)

	cases := []struct {
		name                      string
		realmID, userID, streamID int64
	}{
		{"not subscribed", realm.ID, u.ID, d.ID},
		{"missing channel", realm.ID, u.ID, d.ID + 1000},
		{"missing user", realm.ID, u.ID + 1000, c.ID},
		{"another realm", other.ID, u.ID, c.ID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			changed := sub
			changed.RealmID, changed.UserID, changed.StreamID = tc.realmID, tc.userID, tc.streamID
			changed.Color = "#ff0000"
			assert.ErrorIs(t, s.UpdateSubscription(ctx, &changed), storage.ErrNotFound)
			assert.ErrorIs(t, s.UpdateSubscription(ctx, &changed, "color"), storage.ErrNotFound)
		})
	}
	assert.Equal(t, sub, getSubscription(t, s, realm.ID, u.ID, c.ID), "untouched")
}

func testSubscriptionPeriods(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "general")
	d := newStream(t, s, realm.ID, "design")

	// Interleaved periods of two users in two channels, a message (m1,
	// m2, ...) before each change: each bound is the message just before.
	m1 := post(t, s, realm.ID, alice.ID, d.ID)
	subscribe(t, s, realm.ID, alice.ID, c.ID, 100)
	m2 := post(t, s, realm.ID, alice.ID, d.ID)
	subscribe(t, s, realm.ID, bob.ID, c.ID, 200)
	m3 := post(t, s, realm.ID, alice.ID, d.ID)
	subscribe(t, s, realm.ID, alice.ID, d.ID, 300)
	m4 := post(t, s, realm.ID, alice.ID, d.ID)
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, alice.ID, c.ID, 400))
	m5 := post(t, s, realm.ID, alice.ID, d.ID)
	subscribe(t, s, realm.ID, alice.ID, c.ID, 500)
	m6 := post(t, s, realm.ID, alice.ID, d.ID)
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, bob.ID, c.ID, 600))

	periods := listPeriods(t, s, realm.ID, alice.ID, c.ID)
	assert.Equal(t, []storage.SubscriptionPeriod{
		closedPeriod(realm.ID, alice.ID, c.ID, m1, 100, m4, 400),
		openPeriod(realm.ID, alice.ID, c.ID, m5, 500),
	}, withoutIDs(t, periods))
	assert.Equal(t, []storage.SubscriptionPeriod{
		closedPeriod(realm.ID, bob.ID, c.ID, m2, 200, m6, 600),
	}, withoutIDs(t, listPeriods(t, s, realm.ID, bob.ID, c.ID)))
	assert.Equal(t, []storage.SubscriptionPeriod{
		openPeriod(realm.ID, alice.ID, d.ID, m3, 300),
	}, withoutIDs(t, listPeriods(t, s, realm.ID, alice.ID, d.ID)))

	// IDs are distinct across subscriptions.
	seen := map[int64]bool{}
	for _, key := range [][2]int64{{alice.ID, c.ID}, {bob.ID, c.ID}, {alice.ID, d.ID}} {
		for _, p := range listPeriods(t, s, realm.ID, key[0], key[1]) {
			assert.False(t, seen[p.ID], "period ID %d reused", p.ID)
			seen[p.ID] = true
		}
	}

	assert.Empty(t, listPeriods(t, s, realm.ID, bob.ID, d.ID), "never subscribed")
	assert.Empty(t, listPeriods(t, s, other.ID, alice.ID, c.ID), "another realm")
	assert.Empty(t, listPeriods(t, s, realm.ID, alice.ID, d.ID+1000), "missing channel")
}
