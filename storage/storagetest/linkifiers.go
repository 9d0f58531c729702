package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var linkifierTests = []test{
	{"Linkifier/CreateAndList", testLinkifierCreateAndList},
	{"Linkifier/UniquePattern", testLinkifierUnique},
	{"Linkifier/Update", testLinkifierUpdate},
	{"Linkifier/Delete", testLinkifierDelete},
	{"Linkifier/Reorder", testLinkifierReorder},
}

func listLinkifiers(t *testing.T, s storage.Store, realmID int64) []storage.Linkifier {
	t.Helper()
	list, err := s.ListLinkifiers(t.Context(), realmID)
	require.NoError(t, err)
	return list
}

// Linkifiers round-trip, each after the organization's others, and list
// by order, each organization its own.
func testLinkifierCreateAndList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	assert.Empty(t, listLinkifiers(t, s, realm.ID))

	a := &storage.Linkifier{RealmID: realm.ID, Pattern: `#(?P<id>[0-9]+)`, URLTemplate: "https://tracker.example.com/{id}", Order: 7}
	theirs := &storage.Linkifier{RealmID: other.ID, Pattern: `#(?P<id>[0-9]+)`, URLTemplate: "https://other.example.com/{id}"}
	b := &storage.Linkifier{RealmID: realm.ID, Pattern: `PR(?P<id>[0-9]+) – ü`, URLTemplate: "https://git.example.com/pr/{id}"}
	for _, l := range []*storage.Linkifier{a, theirs, b} {
		require.NoError(t, s.CreateLinkifier(ctx, l))
		assert.NotZero(t, l.ID)
	}
	assert.Equal(t, 0, a.Order, "the first is order 0, whatever was asked")
	assert.Equal(t, 0, theirs.Order, "orders count per organization")
	assert.Equal(t, 1, b.Order)

	assert.Equal(t, []storage.Linkifier{*a, *b}, listLinkifiers(t, s, realm.ID))
	assert.Equal(t, []storage.Linkifier{*theirs}, listLinkifiers(t, s, other.ID))

	err := s.CreateLinkifier(ctx, &storage.Linkifier{RealmID: realm.ID + other.ID + 100, Pattern: "x", URLTemplate: "x"})
	assert.ErrorIs(t, err, storage.ErrNotFound, "a missing organization")
}

// A pattern is unique in an organization, compared exactly; a refused
// linkifier leaves the list as it was.
func testLinkifierUnique(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	first := &storage.Linkifier{RealmID: realm.ID, Pattern: `T(?P<id>\d+)`, URLTemplate: "https://a.example.com/{id}"}
	require.NoError(t, s.CreateLinkifier(ctx, first))

	dup := &storage.Linkifier{RealmID: realm.ID, Pattern: `T(?P<id>\d+)`, URLTemplate: "https://b.example.com/{id}"}
	assert.ErrorIs(t, s.CreateLinkifier(ctx, dup), storage.ErrConflict)
	assert.Zero(t, dup.ID, "no ID for a refused linkifier")
	err := s.InTx(ctx, func(tx storage.Store) error { return tx.CreateLinkifier(ctx, dup) })
	assert.ErrorIs(t, err, storage.ErrConflict, "in a transaction too")

	for _, l := range []storage.Linkifier{
		{RealmID: realm.ID, Pattern: `t(?P<id>\d+)`, URLTemplate: "{id}"}, // patterns compare exactly
		{RealmID: other.ID, Pattern: `T(?P<id>\d+)`, URLTemplate: "{id}"}, // another organization
	} {
		require.NoError(t, s.CreateLinkifier(ctx, &l), "%+v", l)
	}
	list := listLinkifiers(t, s, realm.ID)
	require.Len(t, list, 2)
	assert.Equal(t, *first, list[0])
}

// Update writes the pattern and template of the organization's own
// linkifier, keeping its order; a taken pattern is ErrConflict.
func testLinkifierUpdate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	a := &storage.Linkifier{RealmID: realm.ID, Pattern: "A(?P<n>.)", URLTemplate: "https://a.example.com/{n}"}
	b := &storage.Linkifier{RealmID: realm.ID, Pattern: "B(?P<n>.)", URLTemplate: "https://b.example.com/{n}"}
	theirs := &storage.Linkifier{RealmID: other.ID, Pattern: "A(?P<n>.)", URLTemplate: "https://a.example.com/{n}"}
	for _, l := range []*storage.Linkifier{a, b, theirs} {
		require.NoError(t, s.CreateLinkifier(ctx, l))
	}

	changed := storage.Linkifier{ID: a.ID, RealmID: realm.ID, Pattern: "C(?P<m>.)", URLTemplate: "https://c.example.com/{m}", Order: 99}
	require.NoError(t, s.UpdateLinkifier(ctx, &changed))
	changed.Order = a.Order
	assert.Equal(t, []storage.Linkifier{changed, *b}, listLinkifiers(t, s, realm.ID), "the order stays")

	taken := storage.Linkifier{ID: a.ID, RealmID: realm.ID, Pattern: b.Pattern, URLTemplate: "x"}
	assert.ErrorIs(t, s.UpdateLinkifier(ctx, &taken), storage.ErrConflict)
	mine := storage.Linkifier{ID: theirs.ID, RealmID: realm.ID, Pattern: "D", URLTemplate: "x"}
	assert.ErrorIs(t, s.UpdateLinkifier(ctx, &mine), storage.ErrNotFound, "another organization's")
	mine.ID = theirs.ID + b.ID + 100
	assert.ErrorIs(t, s.UpdateLinkifier(ctx, &mine), storage.ErrNotFound, "a missing one")

	assert.Equal(t, []storage.Linkifier{changed, *b}, listLinkifiers(t, s, realm.ID))
	assert.Equal(t, []storage.Linkifier{*theirs}, listLinkifiers(t, s, other.ID))
}

// Delete removes one linkifier of its organization; another
// organization's, or a missing one, is ErrNotFound and stays.
func testLinkifierDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	a := &storage.Linkifier{RealmID: realm.ID, Pattern: "A", URLTemplate: "https://a.example.com/"}
	b := &storage.Linkifier{RealmID: realm.ID, Pattern: "B", URLTemplate: "https://b.example.com/"}
	theirs := &storage.Linkifier{RealmID: other.ID, Pattern: "A", URLTemplate: "https://a.example.com/"}
	for _, l := range []*storage.Linkifier{a, b, theirs} {
		require.NoError(t, s.CreateLinkifier(ctx, l))
	}

	assert.ErrorIs(t, s.DeleteLinkifier(ctx, realm.ID, theirs.ID), storage.ErrNotFound, "another organization's")
	assert.ErrorIs(t, s.DeleteLinkifier(ctx, realm.ID, theirs.ID+b.ID+100), storage.ErrNotFound, "a missing one")
	require.NoError(t, s.DeleteLinkifier(ctx, realm.ID, a.ID))
	assert.ErrorIs(t, s.DeleteLinkifier(ctx, realm.ID, a.ID), storage.ErrNotFound, "deleted already")

	assert.Equal(t, []storage.Linkifier{*b}, listLinkifiers(t, s, realm.ID))
	assert.Equal(t, []storage.Linkifier{*theirs}, listLinkifiers(t, s, other.ID))

	// The pattern is free again once deleted; the new one comes last.
	again := &storage.Linkifier{RealmID: realm.ID, Pattern: "A", URLTemplate: "https://a.example.com/"}
	require.NoError(t, s.CreateLinkifier(ctx, again))
	assert.Equal(t, []storage.Linkifier{*b, *again}, listLinkifiers(t, s, realm.ID))
}

// Reorder gives each listed linkifier its index as order and touches no
// other organization's; a new linkifier comes after the reordered ones.
func testLinkifierReorder(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	var mine []*storage.Linkifier
	for _, p := range []string{"A", "B", "C"} {
		l := &storage.Linkifier{RealmID: realm.ID, Pattern: p, URLTemplate: "https://example.com/"}
		require.NoError(t, s.CreateLinkifier(ctx, l))
		mine = append(mine, l)
	}
	theirs := &storage.Linkifier{RealmID: other.ID, Pattern: "A", URLTemplate: "https://example.com/"}
	require.NoError(t, s.CreateLinkifier(ctx, theirs))

	require.NoError(t, s.ReorderLinkifiers(ctx, realm.ID, []int64{mine[2].ID, mine[0].ID, mine[1].ID, theirs.ID}))
	list := listLinkifiers(t, s, realm.ID)
	require.Len(t, list, 3)
	assert.Equal(t, []int64{mine[2].ID, mine[0].ID, mine[1].ID}, []int64{list[0].ID, list[1].ID, list[2].ID})
	assert.Equal(t, []int{0, 1, 2}, []int{list[0].Order, list[1].Order, list[2].Order})
	assert.Equal(t, []storage.Linkifier{*theirs}, listLinkifiers(t, s, other.ID), "another organization's stays")

	d := &storage.Linkifier{RealmID: realm.ID, Pattern: "D", URLTemplate: "https://example.com/"}
	require.NoError(t, s.CreateLinkifier(ctx, d))
	assert.Equal(t, 3, d.Order)

	// In a transaction that fails, nothing changes.
	err := s.InTx(ctx, func(tx storage.Store) error {
		require.NoError(t, tx.ReorderLinkifiers(ctx, realm.ID, []int64{d.ID, mine[0].ID, mine[1].ID, mine[2].ID}))
		return storage.ErrConflict
	})
	require.ErrorIs(t, err, storage.ErrConflict)
	assert.Equal(t, append(list, *d), listLinkifiers(t, s, realm.ID))
}
