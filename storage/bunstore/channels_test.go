package bunstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// The channel tables' constraints beyond what the Store's methods can
// reach (no method deletes users or channels, or writes periods directly),
// checked through plain SQL.

func TestSQLiteChannelsSchema(t *testing.T) {
	testChannelsSchema(t, OpenTestSQLite(t))
}

func TestPostgresChannelsSchema(t *testing.T) {
	testChannelsSchema(t, OpenTestPostgres(t))
}

func testChannelsSchema(t *testing.T, s *Store) {
	ctx := t.Context()
	realm := &storage.Realm{StringID: "acme", Host: "acme.example.com"}
	require.NoError(t, s.CreateRealm(ctx, realm))
	other := &storage.Realm{StringID: "other", Host: "other.example.com"}
	require.NoError(t, s.CreateRealm(ctx, other))
	alice := &storage.User{RealmID: realm.ID, Email: "alice@example.com"}
	require.NoError(t, s.CreateUser(ctx, alice))
	bob := &storage.User{RealmID: realm.ID, Email: "bob@example.com"}
	require.NoError(t, s.CreateUser(ctx, bob))
	general := &storage.Stream{RealmID: realm.ID, Name: "general", CreatorID: ptr(alice.ID)}
	require.NoError(t, s.CreateStream(ctx, general))
	design := &storage.Stream{RealmID: realm.ID, Name: "design"}
	require.NoError(t, s.CreateStream(ctx, design))
	for _, u := range []int64{alice.ID, bob.ID} {
		for _, c := range []int64{general.ID, design.ID} {
			require.NoError(t, s.Subscribe(ctx, &storage.Subscription{RealmID: realm.ID, UserID: u, StreamID: c}, 1))
			require.NoError(t, s.SetUserTopic(ctx, &storage.UserTopic{RealmID: realm.ID, UserID: u, StreamID: c, TopicName: "t"}))
		}
	}
	exec := func(query string, args ...any) error {
		_, err := s.writer.ExecContext(ctx, query, args...)
		return wrapErr("exec", err)
	}
	count := func(table string) int {
		t.Helper()
		var n int
		require.NoError(t, s.writer.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
		return n
	}

	t.Run("one open period per subscription", func(t *testing.T) {
		err := exec(`INSERT INTO subscription_periods (realm_id, user_id, stream_id, start_message_id, started_at) VALUES (?, ?, ?, 5, 5)`,
			realm.ID, alice.ID, general.ID)
		assert.ErrorIs(t, err, storage.ErrConflict)
		err = exec(`INSERT INTO subscription_periods (realm_id, user_id, stream_id, start_message_id, started_at, end_message_id, ended_at) VALUES (?, ?, ?, 5, 5, 6, 6)`,
			realm.ID, alice.ID, general.ID)
		assert.NoError(t, err, "closed periods are not limited")
	})
	t.Run("a period is of its subscription's realm", func(t *testing.T) {
		err := exec(`INSERT INTO subscription_periods (realm_id, user_id, stream_id, start_message_id, started_at, end_message_id, ended_at) VALUES (?, ?, ?, 5, 5, 6, 6)`,
			other.ID, alice.ID, general.ID)
		assert.ErrorIs(t, err, storage.ErrNotFound)
	})
	t.Run("a subscription is of its user's and channel's realm", func(t *testing.T) {
		carol := &storage.User{RealmID: other.ID, Email: "carol@example.com"}
		require.NoError(t, s.CreateUser(ctx, carol))
		err := exec(`INSERT INTO subscriptions (realm_id, user_id, stream_id) VALUES (?, ?, ?)`, other.ID, carol.ID, general.ID)
		assert.ErrorIs(t, err, storage.ErrNotFound)
	})
	t.Run("unsubscribe without an open period", func(t *testing.T) {
		dave := &storage.User{RealmID: realm.ID, Email: "dave@example.com"}
		require.NoError(t, s.CreateUser(ctx, dave))
		require.NoError(t, exec(`INSERT INTO subscriptions (realm_id, user_id, stream_id) VALUES (?, ?, ?)`, realm.ID, dave.ID, design.ID))
		require.NoError(t, s.Unsubscribe(ctx, realm.ID, dave.ID, design.ID, 9))
		sub, err := s.GetSubscription(ctx, realm.ID, dave.ID, design.ID)
		require.NoError(t, err)
		assert.False(t, sub.Active)
		require.NoError(t, exec(`DELETE FROM users WHERE id = ?`, dave.ID))
	})

	// Deleting a channel or a user deletes its subscriptions, periods and
	// topic policies. (The closed period of alice in general exists only
	// when the first subtest ran: -run may skip it.)
	closed := count("subscription_periods") - 4
	require.Equal(t, 4, count("subscriptions"))
	require.Equal(t, 4+closed, count("subscription_periods"))
	require.Equal(t, 4, count("user_topics"))
	require.NoError(t, exec(`DELETE FROM streams WHERE id = ?`, design.ID))
	assert.Equal(t, 2, count("subscriptions"))
	assert.Equal(t, 2+closed, count("subscription_periods"))
	assert.Equal(t, 2, count("user_topics"))
	require.NoError(t, exec(`DELETE FROM users WHERE id = ?`, bob.ID))
	subs, err := s.ListRealmSubscriptions(ctx, realm.ID)
	require.NoError(t, err)
	require.Len(t, subs, 1)
	assert.Equal(t, alice.ID, subs[0].UserID)
	assert.Equal(t, 1+closed, count("subscription_periods"))
	assert.Equal(t, 1, count("user_topics"))

	// A channel's creator cannot be deleted while the channel refers to it.
	assert.ErrorIs(t, exec(`DELETE FROM users WHERE id = ?`, alice.ID), storage.ErrNotFound)
}
