package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var playgroundTests = []test{
	{"Playground/CreateAndList", testPlaygroundCreateAndList},
	{"Playground/UniqueLanguageAndName", testPlaygroundUnique},
	{"Playground/Delete", testPlaygroundDelete},
}

// Playgrounds round-trip and list by ID, each organization its own.
func testPlaygroundCreateAndList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	empty, err := s.ListPlaygrounds(ctx, realm.ID)
	require.NoError(t, err)
	assert.Empty(t, empty)

	py := &storage.Playground{RealmID: realm.ID, Name: "Python playground", PygmentsLanguage: "Python", URLTemplate: "https://python.example.com?code={code}"}
	rs := &storage.Playground{RealmID: realm.ID, Name: "Rust – spielplatz", PygmentsLanguage: "Rust", URLTemplate: "https://play.example.com/{?code}"}
	theirs := &storage.Playground{RealmID: other.ID, Name: "Python playground", PygmentsLanguage: "Python", URLTemplate: "https://other.example.com/{code}"}
	for _, p := range []*storage.Playground{py, theirs, rs} {
		require.NoError(t, s.CreatePlayground(ctx, p))
		assert.NotZero(t, p.ID)
	}
	assert.Less(t, py.ID, rs.ID)

	list, err := s.ListPlaygrounds(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Playground{*py, *rs}, list)
	list, err = s.ListPlaygrounds(ctx, other.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Playground{*theirs}, list)

	err = s.CreatePlayground(ctx, &storage.Playground{RealmID: realm.ID + other.ID + 100, Name: "x", PygmentsLanguage: "x", URLTemplate: "{code}"})
	assert.ErrorIs(t, err, storage.ErrNotFound, "a missing organization")
}

// A (language, name) pair is unique in an organization, compared exactly;
// a refused playground leaves the list as it was.
func testPlaygroundUnique(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	first := &storage.Playground{RealmID: realm.ID, Name: "Main", PygmentsLanguage: "Python", URLTemplate: "https://a.example.com/{code}"}
	require.NoError(t, s.CreatePlayground(ctx, first))

	dup := &storage.Playground{RealmID: realm.ID, Name: "Main", PygmentsLanguage: "Python", URLTemplate: "https://b.example.com/{code}"}
	assert.ErrorIs(t, s.CreatePlayground(ctx, dup), storage.ErrConflict)
	assert.Zero(t, dup.ID, "no ID for a refused playground")
	err := s.InTx(ctx, func(tx storage.Store) error { return tx.CreatePlayground(ctx, dup) })
	assert.ErrorIs(t, err, storage.ErrConflict, "in a transaction too")

	for _, p := range []storage.Playground{
		{RealmID: realm.ID, Name: "Main", PygmentsLanguage: "Python3", URLTemplate: "{code}"},  // another language
		{RealmID: realm.ID, Name: "Second", PygmentsLanguage: "Python", URLTemplate: "{code}"}, // another name
		{RealmID: realm.ID, Name: "main", PygmentsLanguage: "Python", URLTemplate: "{code}"},   // names compare exactly
		{RealmID: realm.ID, Name: "Main", PygmentsLanguage: "python", URLTemplate: "{code}"},   // languages too
		{RealmID: other.ID, Name: "Main", PygmentsLanguage: "Python", URLTemplate: "{code}"},   // another organization
	} {
		require.NoError(t, s.CreatePlayground(ctx, &p), "%+v", p)
	}
	list, err := s.ListPlaygrounds(ctx, realm.ID)
	require.NoError(t, err)
	require.Len(t, list, 5)
	assert.Equal(t, *first, list[0])
}

// Delete removes one playground of its organization; another
// organization's, or a missing one, is ErrNotFound and stays.
func testPlaygroundDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	a := &storage.Playground{RealmID: realm.ID, Name: "A", PygmentsLanguage: "Go", URLTemplate: "https://go.example.com/{code}"}
	b := &storage.Playground{RealmID: realm.ID, Name: "B", PygmentsLanguage: "Go", URLTemplate: "https://go.example.com/b/{code}"}
	theirs := &storage.Playground{RealmID: other.ID, Name: "A", PygmentsLanguage: "Go", URLTemplate: "https://go.example.com/{code}"}
	for _, p := range []*storage.Playground{a, b, theirs} {
		require.NoError(t, s.CreatePlayground(ctx, p))
	}

	assert.ErrorIs(t, s.DeletePlayground(ctx, realm.ID, theirs.ID), storage.ErrNotFound, "another organization's")
	assert.ErrorIs(t, s.DeletePlayground(ctx, realm.ID, theirs.ID+b.ID+100), storage.ErrNotFound, "a missing one")
	require.NoError(t, s.DeletePlayground(ctx, realm.ID, a.ID))
	assert.ErrorIs(t, s.DeletePlayground(ctx, realm.ID, a.ID), storage.ErrNotFound, "deleted already")

	list, err := s.ListPlaygrounds(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Playground{*b}, list)
	list, err = s.ListPlaygrounds(ctx, other.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Playground{*theirs}, list)

	// The pair is free again once deleted.
	again := &storage.Playground{RealmID: realm.ID, Name: "A", PygmentsLanguage: "Go", URLTemplate: "{code}"}
	require.NoError(t, s.CreatePlayground(ctx, again))
}
