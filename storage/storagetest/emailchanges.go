package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var emailChangeTests = []test{
	{"EmailChange/RoundTrip", testEmailChangeRoundTrip},
	{"EmailChange/NotFound", testEmailChangeNotFound},
	{"EmailChange/MissingUser", testEmailChangeMissingUser},
	{"EmailChange/Replace", testEmailChangeReplace},
	{"EmailChange/KeyScope", testEmailChangeKeyScope},
	{"EmailChange/Delete", testEmailChangeDelete},
}

// newEmailChange creates a pending change of the user to email with key.
func newEmailChange(t *testing.T, s storage.Store, realmID, userID int64, email, key string) *storage.EmailChange {
	t.Helper()
	c := &storage.EmailChange{RealmID: realmID, UserID: userID, NewEmail: email, Key: key, DateCreated: 1_700_000_200}
	require.NoError(t, s.CreateEmailChange(t.Context(), c))
	require.NotZero(t, c.ID)
	return c
}

// getChange looks the change up by key.
func getChange(t *testing.T, s storage.Store, realmID int64, key string) (*storage.EmailChange, error) {
	t.Helper()
	return s.GetEmailChangeByKey(t.Context(), realmID, key)
}

func testEmailChangeRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")

	c := storage.EmailChange{
		RealmID:     realm.ID,
		UserID:      alice.ID,
		NewEmail:    "Ünïcødé.Alice@Example.org",
		Key:         "abcdefghijklmnopqrstuvwx",
		DateCreated: 1_700_000_321,
	}
	require.NoError(t, s.CreateEmailChange(ctx, &c))
	require.NotZero(t, c.ID)
	got, err := getChange(t, s, realm.ID, c.Key)
	require.NoError(t, err)
	assert.Equal(t, c, *got)

	zero := storage.EmailChange{RealmID: realm.ID, UserID: bob.ID}
	require.NoError(t, s.CreateEmailChange(ctx, &zero), "zero values")
	got, err = getChange(t, s, realm.ID, "")
	require.NoError(t, err)
	assert.Equal(t, zero, *got)
}

func testEmailChangeNotFound(t *testing.T, s storage.Store) {
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c := newEmailChange(t, s, realm.ID, u.ID, "new@example.com", "Key-1")

	for name, key := range map[string]string{
		"missing key":               "missing",
		"key differing in case":     "key-1",
		"prefix of the key":         "Key-",
		"empty key":                 "",
		"key with trailing space":   "Key-1 ",
		"key as a LIKE pattern (%)": "Key%",
		"key as a LIKE pattern (_)": "Key_1",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := getChange(t, s, realm.ID, key)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
	got, err := getChange(t, s, realm.ID, "Key-1")
	require.NoError(t, err)
	assert.Equal(t, *c, *got)
}

func testEmailChangeMissingUser(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")
	foreign := newUser(t, s, other.ID, "foreign@example.com")
	foreignChange := newEmailChange(t, s, other.ID, foreign.ID, "f@example.org", "foreign-key")

	cases := []struct {
		name            string
		realmID, userID int64
	}{
		{"missing user", realm.ID, foreign.ID + 1000},
		{"user of another realm", realm.ID, foreign.ID},
		{"missing realm", other.ID + 1000, u.ID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &storage.EmailChange{RealmID: tc.realmID, UserID: tc.userID, NewEmail: "x@example.org", Key: "k-" + tc.name}
			assert.ErrorIs(t, s.CreateEmailChange(ctx, c), storage.ErrNotFound)
			_, err := getChange(t, s, tc.realmID, c.Key)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
	got, err := getChange(t, s, other.ID, "foreign-key")
	require.NoError(t, err)
	assert.Equal(t, *foreignChange, *got, "the other realm's pending change of that user is kept")
}

func testEmailChangeReplace(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	bobChange := newEmailChange(t, s, realm.ID, bob.ID, "bob@example.org", "bob-key")

	first := newEmailChange(t, s, realm.ID, alice.ID, "first@example.org", "key-1")
	second := newEmailChange(t, s, realm.ID, alice.ID, "second@example.org", "key-2")
	assert.NotEqual(t, first.ID, second.ID, "the replacement is a new change")

	_, err := getChange(t, s, realm.ID, "key-1")
	assert.ErrorIs(t, err, storage.ErrNotFound, "the earlier key no longer works")
	assert.ErrorIs(t, s.DeleteEmailChange(ctx, realm.ID, first.ID), storage.ErrNotFound, "the earlier change is gone")
	got, err := getChange(t, s, realm.ID, "key-2")
	require.NoError(t, err)
	assert.Equal(t, *second, *got)

	// Replacing with the same key works too.
	third := newEmailChange(t, s, realm.ID, alice.ID, "third@example.org", "key-2")
	got, err = getChange(t, s, realm.ID, "key-2")
	require.NoError(t, err)
	assert.Equal(t, *third, *got)

	got, err = getChange(t, s, realm.ID, "bob-key")
	require.NoError(t, err)
	assert.Equal(t, *bobChange, *got, "other users' changes untouched")
}

func testEmailChangeKeyScope(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	foreign := newUser(t, s, other.ID, "foreign@example.com")

	aliceChange := newEmailChange(t, s, realm.ID, alice.ID, "alice@example.org", "shared-key")
	// The same key in another realm is a different change.
	foreignChange := newEmailChange(t, s, other.ID, foreign.ID, "foreign@example.org", "shared-key")
	foreign2 := newUser(t, s, other.ID, "foreign2@example.com")
	otherOnly := newEmailChange(t, s, other.ID, foreign2.ID, "foreign2@example.org", "other-only")

	got, err := getChange(t, s, realm.ID, "shared-key")
	require.NoError(t, err)
	assert.Equal(t, *aliceChange, *got)
	got, err = getChange(t, s, other.ID, "shared-key")
	require.NoError(t, err)
	assert.Equal(t, *foreignChange, *got)
	_, err = getChange(t, s, realm.ID, "other-only")
	assert.ErrorIs(t, err, storage.ErrNotFound, "a key of another realm")
	got, err = getChange(t, s, other.ID, "other-only")
	require.NoError(t, err)
	assert.Equal(t, *otherOnly, *got)

	// A key already pending in the realm for another user is a conflict,
	// and the failed call keeps that user's earlier change.
	bobChange := newEmailChange(t, s, realm.ID, bob.ID, "bob@example.org", "bob-key")
	dup := &storage.EmailChange{RealmID: realm.ID, UserID: bob.ID, NewEmail: "bob2@example.org", Key: "shared-key"}
	assert.ErrorIs(t, s.CreateEmailChange(ctx, dup), storage.ErrConflict)
	got, err = getChange(t, s, realm.ID, "bob-key")
	require.NoError(t, err)
	assert.Equal(t, *bobChange, *got)
	got, err = getChange(t, s, realm.ID, "shared-key")
	require.NoError(t, err)
	assert.Equal(t, *aliceChange, *got)
}

func testEmailChangeDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newEmailChange(t, s, realm.ID, alice.ID, "alice@example.org", "alice-key")
	kept := newEmailChange(t, s, realm.ID, bob.ID, "bob@example.org", "bob-key")

	assert.ErrorIs(t, s.DeleteEmailChange(ctx, other.ID, c.ID), storage.ErrNotFound, "another realm")
	assert.ErrorIs(t, s.DeleteEmailChange(ctx, realm.ID, kept.ID+1000), storage.ErrNotFound, "missing ID")
	_, err := getChange(t, s, realm.ID, "alice-key")
	require.NoError(t, err)

	require.NoError(t, s.DeleteEmailChange(ctx, realm.ID, c.ID))
	_, err = getChange(t, s, realm.ID, "alice-key")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	assert.ErrorIs(t, s.DeleteEmailChange(ctx, realm.ID, c.ID), storage.ErrNotFound, "deleted twice")

	got, err := getChange(t, s, realm.ID, "bob-key")
	require.NoError(t, err)
	assert.Equal(t, *kept, *got)

	// After deletion the user can start a new change.
	newEmailChange(t, s, realm.ID, alice.ID, "alice2@example.org", "alice-key")
}
