package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var alertWordTests = []test{
	{"AlertWords/AddListRemoveFind", testAlertWords},
}

func alertWord(realmID, userID int64, word, key, token string) storage.AlertWord {
	return storage.AlertWord{RealmID: realmID, UserID: userID, Word: word, Key: key, FirstToken: token}
}

// Words are added once per key, listed in the order added, removed by key,
// and found by first token for active users of the realm only.
func testAlertWords(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	stranger := newUser(t, s, other.ID, "stranger@example.com")

	anyWords := func() bool {
		t.Helper()
		any, err := s.AnyAlertWords(ctx, realm.ID)
		require.NoError(t, err)
		return any
	}
	assert.False(t, anyWords(), "none yet")
	require.NoError(t, s.AddAlertWords(ctx, []storage.AlertWord{alertWord(other.ID, stranger.ID, "x", "x", "x")}))
	assert.False(t, anyWords(), "another realm's word does not count")

	require.NoError(t, s.AddAlertWords(ctx, []storage.AlertWord{
		alertWord(realm.ID, alice.ID, "Release", "release", "release"),
		alertWord(realm.ID, alice.ID, "on call", "on call", "on"),
	}))
	require.NoError(t, s.AddAlertWords(ctx, []storage.AlertWord{
		alertWord(realm.ID, alice.ID, "RELEASE", "release", "release"),
		alertWord(realm.ID, bob.ID, "release", "release", "release"),
		alertWord(other.ID, stranger.ID, "release", "release", "release"),
	}))
	words, err := s.ListAlertWords(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	require.Len(t, words, 2)
	assert.Equal(t, "Release", words[0].Word, "the first spelling stays")
	assert.Equal(t, "on call", words[1].Word)

	found, err := s.FindAlertWords(ctx, realm.ID, []string{"release", "nothing"})
	require.NoError(t, err)
	var users []int64
	for _, w := range found {
		users = append(users, w.UserID)
	}
	assert.ElementsMatch(t, []int64{alice.ID, bob.ID}, users, "this realm's users only")

	bob.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, bob, "is_active"))
	found, err = s.FindAlertWords(ctx, realm.ID, []string{"release"})
	require.NoError(t, err)
	require.Len(t, found, 1, "a deactivated user's words are not found")

	assert.True(t, anyWords())
	alice.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, alice, "is_active"))
	assert.False(t, anyWords(), "only deactivated users have words")
	alice.IsActive = true
	require.NoError(t, s.UpdateUser(ctx, alice, "is_active"))

	require.NoError(t, s.RemoveAlertWords(ctx, realm.ID, alice.ID, []string{"release", "missing"}))
	words, err = s.ListAlertWords(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	require.Len(t, words, 1)
	assert.Equal(t, "on call", words[0].Word)
}
