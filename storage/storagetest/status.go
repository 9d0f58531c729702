package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var userStatusTests = []test{
	{"UserStatus/SetGetList", testUserStatus},
}

// A status is set, replaced, read back, and listed for active users only.
func testUserStatus(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	stranger := newUser(t, s, other.ID, "stranger@example.com")

	_, err := s.GetUserStatus(ctx, realm.ID, alice.ID)
	assert.ErrorIs(t, err, storage.ErrNotFound)

	st := &storage.UserStatus{RealmID: realm.ID, UserID: alice.ID, StatusText: "on vacation", EmojiName: "palm_tree",
		EmojiCode: "1f334", ReactionType: "unicode_emoji", UpdatedAt: 10}
	require.NoError(t, s.SetUserStatus(ctx, st))
	got, err := s.GetUserStatus(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Equal(t, *st, *got)

	st.StatusText, st.UpdatedAt = "back", 20
	require.NoError(t, s.SetUserStatus(ctx, st))
	got, err = s.GetUserStatus(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Equal(t, "back", got.StatusText)
	assert.Equal(t, "palm_tree", got.EmojiName)

	_, err = s.GetUserStatus(ctx, other.ID, alice.ID)
	assert.ErrorIs(t, err, storage.ErrNotFound, "another realm's user")
	require.NoError(t, s.SetUserStatus(ctx, &storage.UserStatus{RealmID: realm.ID, UserID: bob.ID, StatusText: "busy", ReactionType: "unicode_emoji", UpdatedAt: 5}))
	require.NoError(t, s.SetUserStatus(ctx, &storage.UserStatus{RealmID: other.ID, UserID: stranger.ID, StatusText: "x", ReactionType: "unicode_emoji", UpdatedAt: 5}))

	list, err := s.ListUserStatuses(ctx, realm.ID)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, alice.ID, list[0].UserID)
	assert.Equal(t, bob.ID, list[1].UserID)

	bob.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, bob, "is_active"))
	list, err = s.ListUserStatuses(ctx, realm.ID)
	require.NoError(t, err)
	require.Len(t, list, 1, "a deactivated user's status is not listed")
}
