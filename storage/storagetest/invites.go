package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var inviteTests = []test{
	{"Invite/CreateAndGet", testInviteCreateAndGet},
	{"Invite/References", testInviteReferences},
	{"Invite/UniqueKey", testInviteUniqueKey},
	{"Invite/List", testInviteList},
	{"Invite/Status", testInviteStatus},
	{"Invite/RevokeEmail", testInviteRevokeEmail},
}

func getInvite(t *testing.T, s storage.Store, realmID, id int64) *storage.Invite {
	t.Helper()
	inv, err := s.GetInvite(t.Context(), realmID, id)
	require.NoError(t, err)
	return inv
}

func listInviteIDs(t *testing.T, s storage.Store, realmID int64, f storage.InviteFilter) []int64 {
	t.Helper()
	list, err := s.ListInvites(t.Context(), realmID, f)
	require.NoError(t, err)
	ids := []int64{}
	for _, inv := range list {
		assert.Nil(t, inv.StreamIDs, "a listing leaves the channels out")
		assert.Nil(t, inv.GroupIDs, "and the groups")
		ids = append(ids, inv.ID)
	}
	return ids
}

// An invitation round-trips with its channels and groups (sorted, each
// once), found by ID and by key in its own organization only.
func testInviteCreateAndGet(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	owner := newUser(t, s, realm.ID, "owner@acme.example.com")
	a, b := newStream(t, s, realm.ID, "a"), newStream(t, s, realm.ID, "b")
	g := newGroup(t, s, realm.ID, "crew")
	exp := int64(1_700_100_000)

	email := &storage.Invite{RealmID: realm.ID, ReferrerID: owner.ID, Email: "New.Person@Example.com", Key: "k-email",
		InvitedAs: 600, Created: 1_700_000_000, ExpiresAt: &exp, NotifyReferrerOnJoin: true,
		StreamIDs: []int64{b.ID, a.ID, b.ID}, GroupIDs: []int64{g.ID}}
	require.NoError(t, s.CreateInvite(ctx, email))
	assert.NotZero(t, email.ID)
	assert.Equal(t, []int64{min(a.ID, b.ID), max(a.ID, b.ID)}, email.StreamIDs, "sorted, each once")

	link := &storage.Invite{RealmID: realm.ID, ReferrerID: owner.ID, IsMultiuse: true, Key: "k-link", InvitedAs: 400,
		Created: 1_700_000_001, IncludeRealmDefaultSubscriptions: true}
	require.NoError(t, s.CreateInvite(ctx, link))
	assert.Greater(t, link.ID, email.ID, "one ID sequence for both kinds")

	got := getInvite(t, s, realm.ID, email.ID)
	assert.Equal(t, *email, *got)
	got = getInvite(t, s, realm.ID, link.ID)
	assert.Equal(t, *link, *got)
	assert.Nil(t, got.ExpiresAt, "never expires")
	assert.Nil(t, got.StreamIDs)
	assert.Nil(t, got.GroupIDs)

	byKey, err := s.GetInviteByKey(ctx, realm.ID, "k-email")
	require.NoError(t, err)
	assert.Equal(t, *email, *byKey)
	_, err = s.GetInviteByKey(ctx, realm.ID, "K-EMAIL")
	assert.ErrorIs(t, err, storage.ErrNotFound, "keys compare exactly")
	_, err = s.GetInviteByKey(ctx, other.ID, "k-email")
	assert.ErrorIs(t, err, storage.ErrNotFound, "another organization's key")
	_, err = s.GetInvite(ctx, other.ID, email.ID)
	assert.ErrorIs(t, err, storage.ErrNotFound, "another organization's invitation")
	_, err = s.GetInvite(ctx, realm.ID, link.ID+100)
	assert.ErrorIs(t, err, storage.ErrNotFound)
}

// A referrer, channel or group that is missing or of another organization
// is ErrNotFound, and nothing is written.
func testInviteReferences(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	owner := newUser(t, s, realm.ID, "owner@acme.example.com")
	theirUser := newUser(t, s, other.ID, "them@other.example.com")
	theirStream := newStream(t, s, other.ID, "theirs")
	theirGroup := newGroup(t, s, other.ID, "theirs")
	mine := newStream(t, s, realm.ID, "mine")
	for name, inv := range map[string]*storage.Invite{
		"referrer of another organization": {ReferrerID: theirUser.ID},
		"missing referrer":                 {ReferrerID: owner.ID + theirUser.ID + 100},
		"channel of another organization":  {ReferrerID: owner.ID, StreamIDs: []int64{mine.ID, theirStream.ID}},
		"missing channel":                  {ReferrerID: owner.ID, StreamIDs: []int64{mine.ID + theirStream.ID + 100}},
		"group of another organization":    {ReferrerID: owner.ID, GroupIDs: []int64{theirGroup.ID}},
	} {
		inv.RealmID, inv.Key, inv.Email, inv.InvitedAs, inv.Created = realm.ID, "key "+name, "x@example.com", 400, 1
		assert.ErrorIs(t, s.CreateInvite(ctx, inv), storage.ErrNotFound, name)
		assert.Zero(t, inv.ID, name)
	}
	assert.Empty(t, listInviteIDs(t, s, realm.ID, storage.InviteFilter{}), "nothing written")
	err := s.CreateInvite(ctx, &storage.Invite{RealmID: realm.ID + other.ID + 100, ReferrerID: owner.ID, Key: "k", InvitedAs: 400, Created: 1})
	assert.ErrorIs(t, err, storage.ErrNotFound, "a missing organization")
}

// Keys are unique across organizations.
func testInviteUniqueKey(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	owner := newUser(t, s, realm.ID, "owner@acme.example.com")
	them := newUser(t, s, other.ID, "them@other.example.com")
	require.NoError(t, s.CreateInvite(ctx, &storage.Invite{RealmID: realm.ID, ReferrerID: owner.ID, IsMultiuse: true, Key: "same", InvitedAs: 400, Created: 1}))
	dup := &storage.Invite{RealmID: other.ID, ReferrerID: them.ID, IsMultiuse: true, Key: "same", InvitedAs: 400, Created: 1}
	assert.ErrorIs(t, s.CreateInvite(ctx, dup), storage.ErrConflict)
	assert.Zero(t, dup.ID)
	assert.Empty(t, listInviteIDs(t, s, other.ID, storage.InviteFilter{}))
	dup.Key = "Same"
	require.NoError(t, s.CreateInvite(ctx, dup), "keys compare exactly")
}

// ListInvites filters by referrer and validity: active, unexpired at
// ValidAt (inclusive), and made by an active user.
func testInviteList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@acme.example.com")
	bob := newUser(t, s, realm.ID, "bob@acme.example.com")
	them := newUser(t, s, other.ID, "them@other.example.com")
	assert.Empty(t, listInviteIDs(t, s, realm.ID, storage.InviteFilter{ValidAt: 100}))

	n := 0
	add := func(realmID, referrer int64, expires *int64, status int) int64 {
		n++
		inv := &storage.Invite{RealmID: realmID, ReferrerID: referrer, Email: "x@example.com", Key: "key" + string(rune('a'+n)),
			InvitedAs: 400, Created: 10, ExpiresAt: expires, Status: status}
		require.NoError(t, s.CreateInvite(ctx, inv))
		return inv.ID
	}
	forever := add(realm.ID, alice.ID, nil, storage.InviteActive)
	until100 := add(realm.ID, alice.ID, ptr(int64(100)), storage.InviteActive)
	until99 := add(realm.ID, bob.ID, ptr(int64(99)), storage.InviteActive)
	used := add(realm.ID, bob.ID, nil, storage.InviteUsed)
	revoked := add(realm.ID, alice.ID, nil, storage.InviteRevoked)
	bobs := add(realm.ID, bob.ID, ptr(int64(500)), storage.InviteActive)
	theirs := add(other.ID, them.ID, nil, storage.InviteActive)

	assert.Equal(t, []int64{forever, until100, until99, used, revoked, bobs}, listInviteIDs(t, s, realm.ID, storage.InviteFilter{}))
	assert.Equal(t, []int64{forever, until100, bobs}, listInviteIDs(t, s, realm.ID, storage.InviteFilter{ValidAt: 100}))
	assert.Equal(t, []int64{forever, bobs}, listInviteIDs(t, s, realm.ID, storage.InviteFilter{ValidAt: 101}))
	assert.Equal(t, []int64{forever, until100}, listInviteIDs(t, s, realm.ID, storage.InviteFilter{ValidAt: 100, ReferrerID: alice.ID}))
	assert.Equal(t, []int64{until99, used, bobs}, listInviteIDs(t, s, realm.ID, storage.InviteFilter{ReferrerID: bob.ID}))
	assert.Equal(t, []int64{theirs}, listInviteIDs(t, s, other.ID, storage.InviteFilter{ValidAt: 100}))
	assert.Empty(t, listInviteIDs(t, s, other.ID, storage.InviteFilter{ReferrerID: alice.ID}))

	// A deactivated referrer's invitations are not valid.
	bob.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, bob, "is_active"))
	assert.Equal(t, []int64{forever, until100}, listInviteIDs(t, s, realm.ID, storage.InviteFilter{ValidAt: 100}))
	assert.Equal(t, []int64{until99, used, bobs}, listInviteIDs(t, s, realm.ID, storage.InviteFilter{ReferrerID: bob.ID}))
}

// SetInviteStatus changes one invitation of its organization.
func testInviteStatus(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	owner := newUser(t, s, realm.ID, "owner@acme.example.com")
	inv := &storage.Invite{RealmID: realm.ID, ReferrerID: owner.ID, IsMultiuse: true, Key: "k", InvitedAs: 400, Created: 1}
	require.NoError(t, s.CreateInvite(ctx, inv))
	assert.ErrorIs(t, s.SetInviteStatus(ctx, other.ID, inv.ID, storage.InviteRevoked), storage.ErrNotFound)
	assert.ErrorIs(t, s.SetInviteStatus(ctx, realm.ID, inv.ID+100, storage.InviteRevoked), storage.ErrNotFound)
	assert.Equal(t, storage.InviteActive, getInvite(t, s, realm.ID, inv.ID).Status)
	require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
		return tx.SetInviteStatus(ctx, realm.ID, inv.ID, storage.InviteRevoked)
	}))
	assert.Equal(t, storage.InviteRevoked, getInvite(t, s, realm.ID, inv.ID).Status)
}

// RevokeEmailInvites revokes the active email invitations of one address
// (compared by Fold, non-ASCII letters too) in one organization, except one.
func testInviteRevokeEmail(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	owner := newUser(t, s, realm.ID, "owner@acme.example.com")
	them := newUser(t, s, other.ID, "them@other.example.com")
	n := 0
	add := func(realmID, referrer int64, email string, multiuse bool, status int) int64 {
		n++
		inv := &storage.Invite{RealmID: realmID, ReferrerID: referrer, IsMultiuse: multiuse, Email: email,
			Key: "key" + string(rune('a'+n)), InvitedAs: 400, Created: 1, Status: status}
		require.NoError(t, s.CreateInvite(ctx, inv))
		return inv.ID
	}
	kept := add(realm.ID, owner.ID, "Jürgen@Example.com", false, storage.InviteActive)
	sameUpper := add(realm.ID, owner.ID, "JÜRGEN@example.COM", false, storage.InviteActive)
	same := add(realm.ID, owner.ID, "jürgen@example.com", false, storage.InviteActive)
	used := add(realm.ID, owner.ID, "jürgen@example.com", false, storage.InviteUsed)
	otherAddress := add(realm.ID, owner.ID, "jurgen@example.com", false, storage.InviteActive)
	link := add(realm.ID, owner.ID, "", true, storage.InviteActive)
	theirs := add(other.ID, them.ID, "jürgen@example.com", false, storage.InviteActive)

	changed, err := s.RevokeEmailInvites(ctx, realm.ID, "JüRGEN@EXAMPLE.com", kept)
	require.NoError(t, err)
	assert.Equal(t, 2, changed)
	for id, want := range map[int64]int{kept: storage.InviteActive, sameUpper: storage.InviteRevoked, same: storage.InviteRevoked,
		used: storage.InviteUsed, otherAddress: storage.InviteActive, link: storage.InviteActive} {
		assert.Equal(t, want, getInvite(t, s, realm.ID, id).Status, "invitation %d", id)
	}
	assert.Equal(t, storage.InviteActive, getInvite(t, s, other.ID, theirs).Status)
	changed, err = s.RevokeEmailInvites(ctx, realm.ID, "nobody@example.com", 0)
	require.NoError(t, err)
	assert.Zero(t, changed)
}
