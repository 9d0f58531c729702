package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var userTopicTests = []test{
	{"UserTopic/RoundTrip", testUserTopicRoundTrip},
	{"UserTopic/CaseInsensitiveSet", testUserTopicCaseInsensitiveSet},
	{"UserTopic/Delete", testUserTopicDelete},
	{"UserTopic/Order", testUserTopicOrder},
	{"UserTopic/RealmScope", testUserTopicRealmScope},
}

// Visibility policies.
const (
	topicMuted    = 1
	topicUnmuted  = 2
	topicFollowed = 3
)

// listTopics lists the user's topic policies.
func listTopics(t *testing.T, s storage.Store, realmID, userID int64) []storage.UserTopic {
	t.Helper()
	topics, err := s.ListUserTopics(t.Context(), realmID, userID)
	require.NoError(t, err)
	require.NotNil(t, topics)
	return topics
}

// setTopic sets a policy and returns it.
func setTopic(t *testing.T, s storage.Store, realmID, userID, streamID int64, topic string, policy int, at int64) storage.UserTopic {
	t.Helper()
	ut := storage.UserTopic{RealmID: realmID, UserID: userID, StreamID: streamID, TopicName: topic, VisibilityPolicy: policy, LastUpdated: at}
	require.NoError(t, s.SetUserTopic(t.Context(), &ut))
	return ut
}

func testUserTopicRoundTrip(t *testing.T, s storage.Store) {
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")

	assert.Empty(t, listTopics(t, s, realm.ID, u.ID))
	muted := setTopic(t, s, realm.ID, u.ID, c.ID, "Ünïcødé 'lunch' \"x\"", topicMuted, 1_700_000_000)
	followed := setTopic(t, s, realm.ID, u.ID, c.ID, "z", topicFollowed, 0)
	empty := setTopic(t, s, realm.ID, u.ID, c.ID, "", topicUnmuted, 5)
	assert.Equal(t, []storage.UserTopic{empty, followed, muted}, listTopics(t, s, realm.ID, u.ID))

	// Setting the same policy again, or another one, keeps one row.
	followed.VisibilityPolicy, followed.LastUpdated = topicUnmuted, 6
	require.NoError(t, s.SetUserTopic(t.Context(), &followed))
	require.NoError(t, s.SetUserTopic(t.Context(), &followed))
	assert.Equal(t, []storage.UserTopic{empty, followed, muted}, listTopics(t, s, realm.ID, u.ID))
}

func testUserTopicCaseInsensitiveSet(t *testing.T, s storage.Store) {
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "general")
	d := newStream(t, s, realm.ID, "design")

	setTopic(t, s, realm.ID, alice.ID, c.ID, "Lunch Plans", topicMuted, 100)
	bobs := setTopic(t, s, realm.ID, bob.ID, c.ID, "lunch plans", topicFollowed, 100)
	elsewhere := setTopic(t, s, realm.ID, alice.ID, d.ID, "LUNCH PLANS", topicUnmuted, 100)

	latest := setTopic(t, s, realm.ID, alice.ID, c.ID, "LUNCH plans", topicFollowed, 200)
	assert.Equal(t, []storage.UserTopic{latest, elsewhere}, listTopics(t, s, realm.ID, alice.ID),
		"replaced, with the case, policy and time last written; other channels apart")
	assert.Equal(t, []storage.UserTopic{bobs}, listTopics(t, s, realm.ID, bob.ID), "other users apart")

	latest = setTopic(t, s, realm.ID, alice.ID, c.ID, "lunch PLANS", topicMuted, 150)
	assert.Equal(t, []storage.UserTopic{latest, elsewhere}, listTopics(t, s, realm.ID, alice.ID),
		"the last write wins, whatever its time")

	got, err := s.GetUserTopic(t.Context(), realm.ID, alice.ID, c.ID, "LUNCH PLANS")
	require.NoError(t, err)
	assert.Equal(t, latest, *got, "found in any case")
	_, err = s.GetUserTopic(t.Context(), realm.ID, alice.ID, d.ID, "dinner")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	_, err = s.GetUserTopic(t.Context(), realm.ID, bob.ID, d.ID, "lunch plans")
	assert.ErrorIs(t, err, storage.ErrNotFound, "another user's")
}

func testUserTopicDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "general")
	d := newStream(t, s, realm.ID, "design")

	setTopic(t, s, realm.ID, alice.ID, c.ID, "Lunch", topicMuted, 1)
	kept := setTopic(t, s, realm.ID, alice.ID, c.ID, "Lunch break", topicMuted, 1)
	elsewhere := setTopic(t, s, realm.ID, alice.ID, d.ID, "lunch", topicMuted, 1)
	bobs := setTopic(t, s, realm.ID, bob.ID, c.ID, "lunch", topicMuted, 1)

	// Nothing matches: no error, nothing deleted.
	require.NoError(t, s.DeleteUserTopic(ctx, other.ID, alice.ID, c.ID, "lunch"), "another realm")
	require.NoError(t, s.DeleteUserTopic(ctx, realm.ID, alice.ID, c.ID, "lunc"), "prefix")
	require.NoError(t, s.DeleteUserTopic(ctx, realm.ID, alice.ID, c.ID, "no such topic"))
	require.NoError(t, s.DeleteUserTopic(ctx, realm.ID, alice.ID, d.ID+1000, "lunch"), "missing channel")
	require.NoError(t, s.DeleteUserTopic(ctx, realm.ID, alice.ID+1000, c.ID, "lunch"), "missing user")
	assert.Len(t, listTopics(t, s, realm.ID, alice.ID), 3)

	require.NoError(t, s.DeleteUserTopic(ctx, realm.ID, alice.ID, c.ID, "LUNCH"), "case-insensitive")
	assert.Equal(t, []storage.UserTopic{kept, elsewhere}, listTopics(t, s, realm.ID, alice.ID))
	assert.Equal(t, []storage.UserTopic{bobs}, listTopics(t, s, realm.ID, bob.ID))
	require.NoError(t, s.DeleteUserTopic(ctx, realm.ID, alice.ID, c.ID, "lunch"), "already deleted")
	assert.Equal(t, []storage.UserTopic{kept, elsewhere}, listTopics(t, s, realm.ID, alice.ID))

	// A deleted policy can be set again.
	again := setTopic(t, s, realm.ID, alice.ID, c.ID, "lUnCh", topicFollowed, 2)
	assert.Equal(t, []storage.UserTopic{again, kept, elsewhere}, listTopics(t, s, realm.ID, alice.ID))
}

func testUserTopicOrder(t *testing.T, s storage.Store) {
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c1 := newStream(t, s, realm.ID, "one")
	c2 := newStream(t, s, realm.ID, "two")

	// Set out of order; case must not change the order.
	var want []storage.UserTopic
	b2 := setTopic(t, s, realm.ID, u.ID, c2.ID, "b", topicMuted, 1)
	c2c := setTopic(t, s, realm.ID, u.ID, c2.ID, "C", topicMuted, 1)
	a2 := setTopic(t, s, realm.ID, u.ID, c2.ID, "a", topicMuted, 1)
	z1 := setTopic(t, s, realm.ID, u.ID, c1.ID, "Zebra", topicFollowed, 1)
	ab1 := setTopic(t, s, realm.ID, u.ID, c1.ID, "ab", topicUnmuted, 1)
	a1 := setTopic(t, s, realm.ID, u.ID, c1.ID, "A", topicMuted, 1)
	b1 := setTopic(t, s, realm.ID, u.ID, c1.ID, "B10", topicMuted, 1)
	b9 := setTopic(t, s, realm.ID, u.ID, c1.ID, "b9", topicMuted, 1)
	want = append(want, a1, ab1, b1, b9, z1, a2, b2, c2c)
	assert.Equal(t, want, listTopics(t, s, realm.ID, u.ID), "by channel, then lower(topic)")
}

func testUserTopicRealmScope(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")
	foreignUser := newUser(t, s, other.ID, "f@example.com")
	foreignStream := newStream(t, s, other.ID, "foreign")
	existing := setTopic(t, s, realm.ID, u.ID, c.ID, "lunch", topicMuted, 1)
	foreign := setTopic(t, s, other.ID, foreignUser.ID, foreignStream.ID, "lunch", topicFollowed, 1)

	cases := []struct {
		name                      string
		realmID, userID, streamID int64
		topic                     string
	}{
		{"another realm's channel", realm.ID, u.ID, foreignStream.ID, "x"},
		{"another realm's user", realm.ID, foreignUser.ID, c.ID, "x"},
		{"missing channel", realm.ID, u.ID, foreignStream.ID + 1000, "x"},
		{"missing user", realm.ID, foreignUser.ID + 1000, c.ID, "x"},
		{"missing realm", other.ID + 1000, u.ID, c.ID, "x"},
		// A row of realm exists for this one: naming the other realm must
		// not update it.
		{"existing row, realm of neither", other.ID, u.ID, c.ID, "LUNCH"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ut := &storage.UserTopic{RealmID: tc.realmID, UserID: tc.userID, StreamID: tc.streamID, TopicName: tc.topic, VisibilityPolicy: topicUnmuted, LastUpdated: 9}
			assert.ErrorIs(t, s.SetUserTopic(ctx, ut), storage.ErrNotFound)
		})
	}
	assert.Equal(t, []storage.UserTopic{existing}, listTopics(t, s, realm.ID, u.ID), "untouched")
	assert.Equal(t, []storage.UserTopic{foreign}, listTopics(t, s, other.ID, foreignUser.ID), "untouched")
	assert.Empty(t, listTopics(t, s, other.ID, u.ID), "another realm")
	assert.Empty(t, listTopics(t, s, realm.ID, foreignUser.ID), "another realm's user")
	assert.Empty(t, listTopics(t, s, realm.ID, u.ID+1000), "missing user")
}
