package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var presenceTests = []test{
	{"Presence/SaveGetList", testPresence},
	{"Presence/ActiveUsersAtMost", testActiveUsersAtMost},
}

// Rows take consecutive values of their realm's sequence, replace
// earlier ones, and list after an update ID, by connection time, for
// active humans only.
func testPresence(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	carol := newUser(t, s, realm.ID, "carol@example.com")
	stranger := newUser(t, s, other.ID, "stranger@example.com")

	got, err := s.GetPresences(ctx, realm.ID, []int64{alice.ID})
	require.NoError(t, err)
	assert.Empty(t, got)

	rows := []storage.Presence{
		{UserID: alice.ID, LastActive: ptr[int64](1000), LastConnected: ptr[int64](1000)},
		{UserID: bob.ID, LastConnected: ptr[int64](900)},
	}
	require.NoError(t, s.SavePresences(ctx, realm.ID, rows))
	assert.Equal(t, int64(1), rows[0].LastUpdateID)
	assert.Equal(t, int64(2), rows[1].LastUpdateID)
	// Another realm has its own sequence.
	theirs := []storage.Presence{{UserID: stranger.ID, LastConnected: ptr[int64](5)}}
	require.NoError(t, s.SavePresences(ctx, other.ID, theirs))
	assert.Equal(t, int64(1), theirs[0].LastUpdateID)

	// A replaced row takes the next value.
	again := []storage.Presence{{UserID: bob.ID, LastActive: ptr[int64](1100), LastConnected: ptr[int64](1100)},
		{UserID: carol.ID, LastConnected: ptr[int64](50)}}
	require.NoError(t, s.SavePresences(ctx, realm.ID, again))
	assert.Equal(t, int64(3), again[0].LastUpdateID)
	assert.Equal(t, int64(4), again[1].LastUpdateID)

	got, err = s.GetPresences(ctx, realm.ID, []int64{alice.ID, bob.ID, stranger.ID})
	require.NoError(t, err)
	require.Len(t, got, 2, "another realm's user is not read")
	for _, p := range got {
		if p.UserID == bob.ID {
			assert.Equal(t, int64(1100), *p.LastActive)
			assert.Equal(t, int64(3), p.LastUpdateID)
			assert.Equal(t, realm.ID, p.RealmID)
		}
	}

	list, err := s.ListPresences(ctx, realm.ID, -1, 0)
	require.NoError(t, err)
	require.Len(t, list, 3)
	assert.Equal(t, []int64{alice.ID, bob.ID, carol.ID}, []int64{list[0].UserID, list[1].UserID, list[2].UserID}, "by update ID")
	assert.Equal(t, "alice@example.com", list[0].Email)
	assert.Equal(t, alice.DateJoined, list[0].DateJoined)
	assert.Nil(t, list[2].LastActive)

	list, err = s.ListPresences(ctx, realm.ID, 2, 0)
	require.NoError(t, err)
	require.Len(t, list, 2, "only rows changed after update 2")
	assert.Equal(t, bob.ID, list[0].UserID)

	list, err = s.ListPresences(ctx, realm.ID, -1, 1000)
	require.NoError(t, err)
	require.Len(t, list, 2, "carol was last connected before 1000")

	bob.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, bob, "is_active"))
	list, err = s.ListPresences(ctx, realm.ID, -1, 0)
	require.NoError(t, err)
	require.Len(t, list, 2, "a deactivated user's presence is not listed")

	require.NoError(t, s.DeletePresence(ctx, realm.ID, alice.ID))
	require.NoError(t, s.DeletePresence(ctx, realm.ID, alice.ID), "deleting nothing is fine")
	got, err = s.GetPresences(ctx, realm.ID, []int64{alice.ID})
	require.NoError(t, err)
	assert.Empty(t, got)
}

func testActiveUsersAtMost(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	a := newUser(t, s, realm.ID, "a@example.com")
	newUser(t, s, realm.ID, "b@example.com")
	ok, err := s.ActiveUsersAtMost(ctx, realm.ID, 2)
	require.NoError(t, err)
	assert.True(t, ok)
	newUser(t, s, realm.ID, "c@example.com")
	ok, err = s.ActiveUsersAtMost(ctx, realm.ID, 2)
	require.NoError(t, err)
	assert.False(t, ok)
	a.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, a, "is_active"))
	ok, err = s.ActiveUsersAtMost(ctx, realm.ID, 2)
	require.NoError(t, err)
	assert.True(t, ok, "deactivated users do not count")
}
