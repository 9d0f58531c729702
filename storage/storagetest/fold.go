package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// Case-insensitive names compare with storage.Fold on every backend, not
// with the database's lower(): non-ASCII letters fold the same on SQLite
// and PostgreSQL whatever the database's locale.
var foldTests = []test{
	{"Fold/UserEmails", testFoldUserEmails},
	{"Fold/StreamNames", testFoldStreamNames},
	{"Fold/ProfileFieldNames", testFoldProfileFieldNames},
	{"Fold/UserTopics", testFoldUserTopics},
}

func testFoldUserEmails(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "Élodie.Ünal@Exämple.com")

	for _, email := range []string{"élodie.ünal@exämple.com", "ÉLODIE.ÜNAL@EXÄMPLE.COM"} {
		got, err := s.GetUserByEmail(ctx, realm.ID, email)
		require.NoError(t, err, email)
		assert.Equal(t, u.ID, got.ID, email)
		assert.Equal(t, "Élodie.Ünal@Exämple.com", got.Email, "case is preserved")
		_, got, err = s.GetRealmUserByEmail(ctx, realm.ID, email)
		require.NoError(t, err, email)
		assert.Equal(t, u.ID, got.ID, email)
	}
	dup := &storage.User{RealmID: realm.ID, Email: "ÉLODIE.ünal@exÄmple.com", Role: 400, IsActive: true}
	assert.ErrorIs(t, s.CreateUser(ctx, dup), storage.ErrConflict, "differs only in the case of non-ASCII letters")

	// A new email moves the key with it: the old one is free, the new one found.
	other := newUser(t, s, realm.ID, "zoë@example.com")
	other.Email = "ZOË.NEW@example.com"
	require.NoError(t, s.UpdateUser(ctx, other, "email"))
	got, err := s.GetUserByEmail(ctx, realm.ID, "zoë.new@EXAMPLE.com")
	require.NoError(t, err)
	assert.Equal(t, other.ID, got.ID)
	_, err = s.GetUserByEmail(ctx, realm.ID, "ZOË@example.com")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	newUser(t, s, realm.ID, "Zoë@Example.com") // free again

	// Writing other columns leaves the key alone.
	other.FullName = "Zoë"
	require.NoError(t, s.UpdateUser(ctx, &storage.User{ID: other.ID, RealmID: realm.ID, FullName: "Zoë"}, "full_name"))
	got, err = s.GetUserByEmail(ctx, realm.ID, "ZOË.NEW@EXAMPLE.COM")
	require.NoError(t, err, "a partial update must not touch the email key")
	assert.Equal(t, "Zoë", got.FullName)
}

func testFoldStreamNames(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	c := newStream(t, s, realm.ID, "Équipe Ørsted")

	got, err := s.GetStreamByName(ctx, realm.ID, "équipe ørsted")
	require.NoError(t, err)
	assert.Equal(t, c.ID, got.ID)
	assert.Equal(t, "Équipe Ørsted", got.Name)

	dup := &storage.Stream{RealmID: realm.ID, Name: "ÉQUIPE ØRSTED"}
	assert.ErrorIs(t, s.CreateStream(ctx, dup), storage.ErrConflict)

	// Renaming moves the key; renaming to another case of its own name is fine.
	c.Name = "ÉQUIPE ØRSTED"
	require.NoError(t, s.UpdateStream(ctx, c, "name"))
	d := newStream(t, s, realm.ID, "Straße")
	d.Name = "équipe ørsted"
	assert.ErrorIs(t, s.UpdateStream(ctx, d, "name"), storage.ErrConflict)
	d.Name = "Über"
	require.NoError(t, s.UpdateStream(ctx, d))
	got, err = s.GetStreamByName(ctx, realm.ID, "ÜBER")
	require.NoError(t, err)
	assert.Equal(t, d.ID, got.ID)
	_, err = s.GetStreamByName(ctx, realm.ID, "straße")
	assert.ErrorIs(t, err, storage.ErrNotFound)
}

func testFoldProfileFieldNames(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	newProfileField(t, s, realm.ID, "Développeur", 1)
	dup := &storage.ProfileField{RealmID: realm.ID, Name: "DÉVELOPPEUR", FieldType: 1, Order: 2}
	assert.ErrorIs(t, s.CreateProfileField(ctx, dup), storage.ErrConflict)

	f := newProfileField(t, s, realm.ID, "Ça va", 3)
	f.Name = "développeur"
	assert.ErrorIs(t, s.UpdateProfileField(ctx, f), storage.ErrConflict, "rename onto another case of a taken name")
	f.Name = "ÇA VA"
	require.NoError(t, s.UpdateProfileField(ctx, f), "another case of its own name")
}

func testFoldUserTopics(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "general")

	setTopic(t, s, realm.ID, alice.ID, c.ID, "Été à Paris", topicMuted, 1)
	latest := setTopic(t, s, realm.ID, alice.ID, c.ID, "ÉTÉ À PARIS", topicFollowed, 2)
	assert.Equal(t, []storage.UserTopic{latest}, listTopics(t, s, realm.ID, alice.ID), "one topic, the case last written")

	require.NoError(t, s.DeleteUserTopic(ctx, realm.ID, alice.ID, c.ID, "été à paris"))
	assert.Empty(t, listTopics(t, s, realm.ID, alice.ID))

	// Ordered by the folded key, bytewise: ASCII before accented letters,
	// and no collation merging case or accents.
	b := setTopic(t, s, realm.ID, alice.ID, c.ID, "Zebra", topicMuted, 3)
	a := setTopic(t, s, realm.ID, alice.ID, c.ID, "ábaco", topicMuted, 3)
	z := setTopic(t, s, realm.ID, alice.ID, c.ID, "apple", topicMuted, 3)
	assert.Equal(t, []storage.UserTopic{z, b, a}, listTopics(t, s, realm.ID, alice.ID))
}
