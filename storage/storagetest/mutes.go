package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var userMuteTests = []test{
	{"UserMutes/AddListRemove", testUserMutes},
	{"UserMutes/UnreadRule", testUserMuteUnreadRule},
}

func testUserMutes(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	carol := newUser(t, s, realm.ID, "carol@example.com")

	require.NoError(t, s.AddUserMute(ctx, &storage.UserMute{RealmID: realm.ID, UserID: alice.ID, MutedUserID: carol.ID, DateMuted: 20}))
	require.NoError(t, s.AddUserMute(ctx, &storage.UserMute{RealmID: realm.ID, UserID: alice.ID, MutedUserID: bob.ID, DateMuted: 10}))
	require.NoError(t, s.AddUserMute(ctx, &storage.UserMute{RealmID: realm.ID, UserID: bob.ID, MutedUserID: carol.ID, DateMuted: 30}))
	err := s.AddUserMute(ctx, &storage.UserMute{RealmID: realm.ID, UserID: alice.ID, MutedUserID: bob.ID, DateMuted: 40})
	assert.ErrorIs(t, err, storage.ErrConflict)

	list, err := s.ListUserMutes(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.UserMute{
		{RealmID: realm.ID, UserID: alice.ID, MutedUserID: bob.ID, DateMuted: 10},
		{RealmID: realm.ID, UserID: alice.ID, MutedUserID: carol.ID, DateMuted: 20},
	}, list, "by date")
	muters, err := s.ListMuters(ctx, realm.ID, carol.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{alice.ID, bob.ID}, muters)

	require.NoError(t, s.RemoveUserMute(ctx, realm.ID, alice.ID, carol.ID))
	assert.ErrorIs(t, s.RemoveUserMute(ctx, realm.ID, alice.ID, carol.ID), storage.ErrNotFound)
	muters, err = s.ListMuters(ctx, realm.ID, carol.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{bob.ID}, muters)
	list, err = s.ListUserMutes(ctx, realm.ID, carol.ID)
	require.NoError(t, err)
	assert.Empty(t, list)
}

// A muted sender's channel messages are read for the muter in the
// unread filter and the first-unread search, only while the mute lasts,
// and for nobody else; unread counts leave out the senders they are given.
func testUserMuteUnreadRule(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	carol := newUser(t, s, realm.ID, "carol@example.com")
	c := newStream(t, s, realm.ID, "c")
	fromBob := postTopic(t, s, realm.ID, bob.ID, c.ID, "t", false)
	fromCarol := postTopic(t, s, realm.ID, carol.ID, c.ID, "t", false)
	fromBob2 := postTopic(t, s, realm.ID, bob.ID, c.ID, "t", false)
	spans := []storage.IDSpan{{StreamID: c.ID, First: 1, Last: 1 << 40}}
	scope := storage.MessageScope{Spans: []storage.ChannelSpan{{StreamID: c.ID}}}

	unread := func(except ...int64) []int64 {
		t.Helper()
		ms, err := s.ListUnreadChannelMessages(ctx, realm.ID, spans, except, 10)
		require.NoError(t, err)
		ids := []int64{}
		for _, m := range ms.Messages {
			ids = append(ids, m.ID)
		}
		return ids
	}
	filtered := func(reader int64, f storage.MessageFilter) []int64 {
		t.Helper()
		older, _, err := s.ListMessageWindow(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: reader,
			Scope: scope, Filter: f, Anchor: 1 << 62, Before: 100})
		require.NoError(t, err)
		ids := []int64{}
		for _, m := range older {
			ids = append(ids, m.ID)
		}
		return ids
	}
	first := func(reader int64) int64 {
		t.Helper()
		id, err := s.FirstUnreadMessage(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: reader, Scope: scope})
		require.NoError(t, err)
		return id
	}
	assert.Equal(t, []int64{fromBob2, fromCarol, fromBob}, unread())
	assert.Equal(t, []int64{fromCarol}, unread(bob.ID, bob.ID), "the senders left out")
	assert.Equal(t, []int64{}, unread(bob.ID, carol.ID))
	assert.Equal(t, fromBob, first(alice.ID))

	require.NoError(t, s.AddUserMute(ctx, &storage.UserMute{RealmID: realm.ID, UserID: alice.ID, MutedUserID: bob.ID, DateMuted: 1}))
	assert.Equal(t, []int64{fromCarol}, filtered(alice.ID, storage.MessageFilter{Unread: true}))
	assert.Equal(t, []int64{fromBob, fromBob2}, filtered(alice.ID, storage.MessageFilter{Not: []storage.MessageFilter{{Unread: true}}}),
		"negated: read")
	assert.Equal(t, fromCarol, first(alice.ID))
	assert.Equal(t, fromBob, first(carol.ID), "only for the muter")

	require.NoError(t, s.RemoveUserMute(ctx, realm.ID, alice.ID, bob.ID))
	assert.Equal(t, fromBob, first(alice.ID), "unmuted: the rule is gone")
	assert.Equal(t, []int64{fromBob, fromCarol, fromBob2}, filtered(alice.ID, storage.MessageFilter{Unread: true}))
}
