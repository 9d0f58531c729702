package storagetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var notificationTests = []test{
	{"Notifications/QueueClaimFinish", testNotificationClaims},
	{"Notifications/FanoutCursor", testNotificationFanout},
	{"Notifications/DropAndReschedule", testNotificationDropReschedule},
	{"Notifications/ConcurrentClaims", testNotificationConcurrentClaims},
	{"Notifications/ChannelCandidates", testNotificationCandidates},
	{"Notifications/Subscriptions", testNotificationSubscriptions},
}

func pending(realmID, userID, messageID int64, kind int, due int64) storage.PendingNotification {
	return storage.PendingNotification{RealmID: realmID, UserID: userID, MessageID: messageID, Kind: kind,
		Trigger: "direct_message", DueAt: due, CreatedAt: due - 100}
}

func notificationIDs(rows []storage.PendingNotification) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

func testNotificationClaims(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	require.NoError(t, s.QueueNotifications(ctx, nil))
	require.NoError(t, s.QueueNotifications(ctx, []storage.PendingNotification{
		pending(realm.ID, 7, 1, storage.NotificationEmail, 200),
		pending(realm.ID, 7, 2, storage.NotificationEmail, 900), // not due, but user 7 is
		pending(realm.ID, 8, 3, storage.NotificationEmail, 800), // nobody due for user 8
		pending(realm.ID, 7, 1, storage.NotificationPush, 100),
	}))
	// The same (message, user, kind) again is skipped, whatever else differs.
	dup := pending(realm.ID, 7, 1, storage.NotificationEmail, 50)
	dup.Trigger = "mentioned"
	require.NoError(t, s.QueueNotifications(ctx, []storage.PendingNotification{dup, pending(realm.ID, 9, 4, storage.NotificationEmail, 300)}))

	at, ok, err := s.NextNotificationAt(ctx, 0)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(100), at)

	got, err := s.ClaimNotifications(ctx, storage.NotificationEmail, 250, 310, "a", 10)
	require.NoError(t, err)
	require.Len(t, got, 2, "every email row of the due user, none of the others")
	assert.Equal(t, []int64{1, 2}, []int64{got[0].MessageID, got[1].MessageID})
	assert.Equal(t, "direct_message", got[0].Trigger, "the first row stays as it was queued")
	assert.Equal(t, int64(200), got[0].DueAt)
	assert.Equal(t, "a", got[0].Claim)
	assert.Equal(t, int64(310), got[1].ClaimedUntil)
	again, err := s.ClaimNotifications(ctx, storage.NotificationEmail, 260, 320, "b", 10)
	require.NoError(t, err)
	assert.Empty(t, again, "claimed rows are not claimed twice; nobody else is due")

	push, err := s.ClaimNotifications(ctx, storage.NotificationPush, 260, 320, "p", 10)
	require.NoError(t, err)
	require.Len(t, push, 1)
	assert.Equal(t, storage.NotificationPush, push[0].Kind)

	n, err := s.FinishNotifications(ctx, notificationIDs(got), "b")
	require.NoError(t, err)
	assert.Zero(t, n, "not b's claim")
	n, err = s.FinishNotifications(ctx, notificationIDs(got[:1]), "a")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = s.RetryNotifications(ctx, notificationIDs(got[1:]), "a", 1, 400)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = s.RetryNotifications(ctx, notificationIDs(got[1:]), "a", 2, 400)
	require.NoError(t, err)
	assert.Zero(t, n, "the claim was released")

	got, err = s.ClaimNotifications(ctx, storage.NotificationEmail, 400, 460, "c", 10)
	require.NoError(t, err)
	require.Len(t, got, 2, "user 7 due again at 400, user 9 since 300")
	assert.Equal(t, []int64{7, 9}, []int64{got[0].UserID, got[1].UserID}, "by user")
	assert.Equal(t, 1, got[0].Attempts)
	// An expired claim is taken again, with the rows that joined since.
	got, err = s.ClaimNotifications(ctx, storage.NotificationEmail, 900, 960, "d", 10)
	require.NoError(t, err)
	assert.Len(t, got, 3, "c's claim expired at 460; user 8 is due at 800")
	n, err = s.FinishNotifications(ctx, notificationIDs(got), "c")
	require.NoError(t, err)
	assert.Zero(t, n, "c lost its claim")
	n, err = s.FinishNotifications(ctx, notificationIDs(got), "d")
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	at, ok, err = s.NextNotificationAt(ctx, 1000)
	require.NoError(t, err)
	require.True(t, ok, "the push row's claim expired unfinished: it is pending again")
	assert.Equal(t, int64(100), at)
	_, ok, err = s.NextNotificationAt(ctx, 300)
	require.NoError(t, err)
	assert.False(t, ok, "while claimed, it is not")
}

func testNotificationFanout(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	rows := []storage.PendingNotification{
		pending(realm.ID, 0, 1, storage.NotificationFanout, 10),
		pending(realm.ID, 0, 2, storage.NotificationFanout, 10),
		pending(realm.ID, 0, 3, storage.NotificationFanout, 99),
	}
	require.NoError(t, s.QueueNotifications(ctx, rows))
	got, err := s.ClaimNotifications(ctx, storage.NotificationFanout, 20, 80, "a", 1)
	require.NoError(t, err)
	require.Len(t, got, 1, "fan-outs are claimed a row at a time, not by user")
	assert.Equal(t, int64(1), got[0].MessageID)
	ok, err := s.AdvanceNotificationCursor(ctx, got[0].ID, "a", 42)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.AdvanceNotificationCursor(ctx, got[0].ID, "b", 43)
	require.NoError(t, err)
	assert.False(t, ok, "not b's claim")
	more, err := s.ClaimNotifications(ctx, storage.NotificationFanout, 20, 80, "b", 10)
	require.NoError(t, err)
	require.Len(t, more, 1)
	assert.Equal(t, int64(2), more[0].MessageID)
	later, err := s.ClaimNotifications(ctx, storage.NotificationFanout, 100, 160, "c", 10)
	require.NoError(t, err)
	require.Len(t, later, 3, "the claims expired at 80")
	assert.Equal(t, int64(42), later[0].Cursor, "the cursor survives the claim")
}

func testNotificationDropReschedule(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	require.NoError(t, s.QueueNotifications(ctx, []storage.PendingNotification{
		pending(realm.ID, 7, 1, storage.NotificationEmail, 200),
		pending(realm.ID, 7, 1, storage.NotificationPush, 100),
		pending(realm.ID, 7, 2, storage.NotificationEmail, 300),
		pending(other.ID, 8, 5, storage.NotificationEmail, 300),
	}))
	require.NoError(t, s.DeleteMessageNotifications(ctx, realm.ID, []int64{1, 5}))
	got, err := s.ClaimNotifications(ctx, storage.NotificationEmail, 1000, 1060, "a", 10)
	require.NoError(t, err)
	require.Len(t, got, 2, "message 1's rows went; another realm's message 5 stays")
	assert.ElementsMatch(t, []int64{2, 5}, []int64{got[0].MessageID, got[1].MessageID})
	push, err := s.ClaimNotifications(ctx, storage.NotificationPush, 1000, 1060, "a", 10)
	require.NoError(t, err)
	assert.Empty(t, push)
	_, err = s.RetryNotifications(ctx, notificationIDs(got), "a", 0, 5000)
	require.NoError(t, err)

	// Rows are due period seconds after they were created (created 200).
	require.NoError(t, s.RescheduleNotifications(ctx, realm.ID, 7, storage.NotificationEmail, 1000, 10))
	due, err := s.ClaimNotifications(ctx, storage.NotificationEmail, 210, 270, "b", 10)
	require.NoError(t, err)
	require.Len(t, due, 1)
	assert.Equal(t, int64(210), due[0].DueAt)
	// Claimed rows keep their time.
	require.NoError(t, s.RescheduleNotifications(ctx, realm.ID, 7, storage.NotificationEmail, 220, 500))
	n, err := s.RetryNotifications(ctx, notificationIDs(due), "b", 0, 210)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

// Concurrent deliverers never claim the same row.
func testNotificationConcurrentClaims(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	var rows []storage.PendingNotification
	for i := range 60 {
		rows = append(rows, pending(realm.ID, int64(i%20+1), int64(i+1), storage.NotificationEmail, 1))
	}
	require.NoError(t, s.QueueNotifications(ctx, rows))
	var mu sync.Mutex
	seen := map[int64]int{}
	users := map[int64]string{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			claim := fmt.Sprint("w", w)
			for {
				got, err := s.ClaimNotifications(ctx, storage.NotificationEmail, 10, 100, claim, 3)
				if !assert.NoError(t, err) || len(got) == 0 {
					return
				}
				mu.Lock()
				for _, r := range got {
					seen[r.ID]++
					if prev, ok := users[r.UserID]; ok && prev != claim {
						t.Errorf("user %d's rows went to %s and %s", r.UserID, prev, claim)
					}
					users[r.UserID] = claim
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, 60)
	for id, n := range seen {
		assert.Equal(t, 1, n, "notification %d claimed %d times", id, n)
	}
}

func testNotificationCandidates(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	ch := newStream(t, s, realm.ID, "general")
	ch2 := newStream(t, s, realm.ID, "random")
	var users []*storage.User
	for i := range 8 {
		u := newUser(t, s, realm.ID, fmt.Sprintf("u%d@example.com", i))
		subscribe(t, s, realm.ID, u.ID, ch.ID, 1)
		subscribe(t, s, realm.ID, u.ID, ch2.ID, 1)
		users = append(users, u)
	}
	set := func(u *storage.User, col string, v *bool) {
		sub := getSubscription(t, s, realm.ID, u.ID, ch.ID)
		switch col {
		case "email_notifications":
			sub.EmailNotifications = v
		case "push_notifications":
			sub.PushNotifications = v
		}
		require.NoError(t, s.UpdateSubscription(ctx, &sub, col))
	}
	candidates := func(topic string) []int64 {
		ids, err := s.ChannelNotificationCandidates(ctx, realm.ID, ch.ID, topic)
		require.NoError(t, err)
		return ids
	}
	assert.Empty(t, candidates("lunch"), "nobody's settings select the channel")

	set(users[0], "email_notifications", ptr(true))
	set(users[1], "push_notifications", ptr(true))
	set(users[2], "email_notifications", ptr(false)) // off, whatever the default
	require.NoError(t, s.SetChannelNotificationDefaults(ctx, realm.ID, users[2].ID, true, false))
	require.NoError(t, s.SetChannelNotificationDefaults(ctx, realm.ID, users[3].ID, false, true)) // inherits: a candidate
	require.NoError(t, s.SetChannelNotificationDefaults(ctx, realm.ID, users[4].ID, true, true))
	require.NoError(t, s.SetChannelNotificationDefaults(ctx, realm.ID, users[4].ID, false, false)) // turned off again
	policy := func(u *storage.User, streamID int64, topic string, p int) {
		require.NoError(t, s.SetUserTopic(ctx, &storage.UserTopic{RealmID: realm.ID, UserID: u.ID, StreamID: streamID,
			TopicName: topic, VisibilityPolicy: p, LastUpdated: 1}))
	}
	policy(users[5], ch.ID, "Lunch", 3)
	policy(users[6], ch.ID, "lunch", 1)  // muted, not followed
	policy(users[7], ch2.ID, "lunch", 3) // another channel
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, users[1].ID, ch.ID, 2))
	assert.ErrorIs(t, s.SetChannelNotificationDefaults(ctx, other.ID, users[3].ID, true, true), storage.ErrNotFound)

	assert.Equal(t, []int64{users[0].ID, users[3].ID, users[5].ID}, candidates("LUNCH"),
		"explicit setting, inherited default, topic follower (by folded topic); not the unsubscribed")
	assert.Equal(t, []int64{users[0].ID, users[3].ID}, candidates("dinner"))
	got, err := s.ChannelNotificationCandidates(ctx, other.ID, ch.ID, "lunch")
	require.NoError(t, err)
	assert.Empty(t, got, "another realm")
}

func testNotificationSubscriptions(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	ch := newStream(t, s, realm.ID, "general")
	var ids []int64
	for i := range 5 {
		u := newUser(t, s, realm.ID, fmt.Sprintf("u%d@example.com", i))
		subscribe(t, s, realm.ID, u.ID, ch.ID, 1)
		ids = append(ids, u.ID)
	}
	require.NoError(t, s.Unsubscribe(ctx, realm.ID, ids[2], ch.ID, 2))
	subs, err := s.ListSubscriptionsOf(ctx, realm.ID, ch.ID, []int64{ids[4], ids[2], ids[0], 9999})
	require.NoError(t, err)
	require.Len(t, subs, 3, "inactive included, unknown left out")
	assert.Equal(t, []int64{ids[0], ids[2], ids[4]}, []int64{subs[0].UserID, subs[1].UserID, subs[2].UserID})
	assert.False(t, subs[1].Active)

	page, err := s.ListChannelSubscriptions(ctx, realm.ID, ch.ID, 0, 2)
	require.NoError(t, err)
	require.Len(t, page, 2)
	assert.Equal(t, []int64{ids[0], ids[1]}, []int64{page[0].UserID, page[1].UserID})
	page, err = s.ListChannelSubscriptions(ctx, realm.ID, ch.ID, ids[1], 10)
	require.NoError(t, err)
	assert.Len(t, page, 2, "the inactive one is skipped")
	page, err = s.ListChannelSubscriptions(ctx, realm.ID, ch.ID, ids[4], 10)
	require.NoError(t, err)
	assert.Empty(t, page)
}
