package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var draftTests = []test{
	{"Draft/RoundTrip", testDraftRoundTrip},
	{"Draft/NotFound", testDraftNotFound},
	{"Draft/MissingUser", testDraftMissingUser},
	{"Draft/List", testDraftList},
	{"Draft/Update", testDraftUpdate},
	{"Draft/UpdateOtherUser", testDraftUpdateOtherUser},
	{"Draft/Delete", testDraftDelete},
	{"Draft/DeleteUserDrafts", testDraftDeleteUserDrafts},
}

// newDraft creates a stream draft of the user with the given timestamp.
func newDraft(t *testing.T, s storage.Store, realmID, userID, timestamp int64) *storage.Draft {
	t.Helper()
	d := &storage.Draft{
		RealmID:   realmID,
		UserID:    userID,
		Type:      "stream",
		To:        "[7]",
		Topic:     "topic",
		Content:   "content",
		Timestamp: timestamp,
	}
	require.NoError(t, s.CreateDraft(t.Context(), d))
	require.NotZero(t, d.ID)
	return d
}

func testDraftRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")

	cases := []struct {
		name  string
		draft storage.Draft
	}{
		{"stream draft", storage.Draft{
			Type:      "stream",
			To:        "[12]",
			Topic:     "Ünïcødé 'topic' \"x\" 😀",
			Content:   "**bold**\n\nline2\ttab \\ ; --",
			Timestamp: 1_700_000_000,
		}},
		{"private draft", storage.Draft{
			Type:      "private",
			To:        "[3,5,8]",
			Content:   "hi",
			Timestamp: 1_700_000_001,
		}},
		{"zero values", storage.Draft{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.draft
			d.RealmID, d.UserID = realm.ID, u.ID
			require.NoError(t, s.CreateDraft(ctx, &d))
			require.NotZero(t, d.ID)
			want := tc.draft
			want.ID, want.RealmID, want.UserID = d.ID, realm.ID, u.ID

			got, err := s.GetDraft(ctx, realm.ID, u.ID, d.ID)
			require.NoError(t, err)
			assert.Equal(t, want, *got)

			drafts, err := s.ListDrafts(ctx, realm.ID, u.ID)
			require.NoError(t, err)
			assert.Contains(t, drafts, want)
		})
	}
}

func testDraftNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	foreign := newUser(t, s, other.ID, "foreign@example.com")
	d := newDraft(t, s, realm.ID, alice.ID, 100)
	foreignDraft := newDraft(t, s, other.ID, foreign.ID, 100)

	cases := []struct {
		name                   string
		realmID, userID, draft int64
	}{
		{"missing ID", realm.ID, alice.ID, foreignDraft.ID + 1000},
		{"another user's draft", realm.ID, bob.ID, d.ID},
		{"another realm's draft", realm.ID, alice.ID, foreignDraft.ID},
		{"own draft under another realm", other.ID, alice.ID, d.ID},
		{"missing realm", other.ID + 1000, alice.ID, d.ID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.GetDraft(ctx, tc.realmID, tc.userID, tc.draft)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
	got, err := s.GetDraft(ctx, realm.ID, alice.ID, d.ID)
	require.NoError(t, err)
	assert.Equal(t, *d, *got)
}

func testDraftMissingUser(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")
	foreign := newUser(t, s, other.ID, "foreign@example.com")

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
			d := &storage.Draft{RealmID: tc.realmID, UserID: tc.userID, Content: "x"}
			assert.ErrorIs(t, s.CreateDraft(ctx, d), storage.ErrNotFound)
		})
	}
	for _, user := range []*storage.User{u, foreign} {
		drafts, err := s.ListDrafts(ctx, user.RealmID, user.ID)
		require.NoError(t, err)
		assert.Empty(t, drafts)
	}
}

func testDraftList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	foreign := newUser(t, s, other.ID, "foreign@example.com")

	drafts, err := s.ListDrafts(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Empty(t, drafts)

	d100 := newDraft(t, s, realm.ID, alice.ID, 100)
	d300a := newDraft(t, s, realm.ID, alice.ID, 300)
	newDraft(t, s, realm.ID, bob.ID, 250)
	newDraft(t, s, other.ID, foreign.ID, 400)
	d200 := newDraft(t, s, realm.ID, alice.ID, 200)
	d300b := newDraft(t, s, realm.ID, alice.ID, 300)

	drafts, err = s.ListDrafts(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Draft{*d300a, *d300b, *d200, *d100}, drafts,
		"newest timestamp first, equal timestamps by ascending ID")

	// Realm scoping: the user's ID under another realm lists nothing.
	drafts, err = s.ListDrafts(ctx, other.ID, alice.ID)
	require.NoError(t, err)
	assert.Empty(t, drafts)
	drafts, err = s.ListDrafts(ctx, realm.ID, foreign.ID)
	require.NoError(t, err)
	assert.Empty(t, drafts)
}

func testDraftUpdate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	d := newDraft(t, s, realm.ID, u.ID, 100)
	untouched := newDraft(t, s, realm.ID, u.ID, 50)

	d.Type = "private"
	d.To = "[1,2]"
	d.Topic = "new topic"
	d.Content = "new content 😀"
	d.Timestamp = 200
	require.NoError(t, s.UpdateDraft(ctx, d))
	got, err := s.GetDraft(ctx, realm.ID, u.ID, d.ID)
	require.NoError(t, err)
	assert.Equal(t, *d, *got)

	// Back to zero values.
	d.Type, d.To, d.Topic, d.Content, d.Timestamp = "", "", "", "", 0
	require.NoError(t, s.UpdateDraft(ctx, d))
	got, err = s.GetDraft(ctx, realm.ID, u.ID, d.ID)
	require.NoError(t, err)
	assert.Equal(t, *d, *got)

	got, err = s.GetDraft(ctx, realm.ID, u.ID, untouched.ID)
	require.NoError(t, err)
	assert.Equal(t, *untouched, *got, "other drafts untouched")
}

func testDraftUpdateOtherUser(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	d := newDraft(t, s, realm.ID, alice.ID, 100)

	cases := []struct {
		name  string
		apply func(d *storage.Draft)
	}{
		{"another user's draft", func(d *storage.Draft) { d.UserID = bob.ID }},
		{"another realm", func(d *storage.Draft) { d.RealmID = other.ID }},
		{"missing ID", func(d *storage.Draft) { d.ID += 1000 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			changed := *d
			changed.Content = "hijacked"
			tc.apply(&changed)
			assert.ErrorIs(t, s.UpdateDraft(ctx, &changed), storage.ErrNotFound)
		})
	}
	got, err := s.GetDraft(ctx, realm.ID, alice.ID, d.ID)
	require.NoError(t, err)
	assert.Equal(t, *d, *got)
	drafts, err := s.ListDrafts(ctx, realm.ID, bob.ID)
	require.NoError(t, err)
	assert.Empty(t, drafts)
}

func testDraftDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	d := newDraft(t, s, realm.ID, alice.ID, 100)
	keep := newDraft(t, s, realm.ID, alice.ID, 200)

	assert.ErrorIs(t, s.DeleteDraft(ctx, realm.ID, bob.ID, d.ID), storage.ErrNotFound, "another user's draft")
	assert.ErrorIs(t, s.DeleteDraft(ctx, other.ID, alice.ID, d.ID), storage.ErrNotFound, "another realm")
	_, err := s.GetDraft(ctx, realm.ID, alice.ID, d.ID)
	require.NoError(t, err, "draft still there")

	require.NoError(t, s.DeleteDraft(ctx, realm.ID, alice.ID, d.ID))
	_, err = s.GetDraft(ctx, realm.ID, alice.ID, d.ID)
	assert.ErrorIs(t, err, storage.ErrNotFound)
	assert.ErrorIs(t, s.DeleteDraft(ctx, realm.ID, alice.ID, d.ID), storage.ErrNotFound, "deleted twice")

	drafts, err := s.ListDrafts(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Draft{*keep}, drafts)
}

func testDraftDeleteUserDrafts(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	foreign := newUser(t, s, other.ID, "foreign@example.com")
	for ts := range int64(3) {
		newDraft(t, s, realm.ID, alice.ID, ts)
	}
	bobDraft := newDraft(t, s, realm.ID, bob.ID, 1)
	foreignDraft := newDraft(t, s, other.ID, foreign.ID, 1)

	// Under the wrong realm nothing is deleted.
	require.NoError(t, s.DeleteUserDrafts(ctx, other.ID, alice.ID))
	drafts, err := s.ListDrafts(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Len(t, drafts, 3)

	require.NoError(t, s.DeleteUserDrafts(ctx, realm.ID, alice.ID))
	drafts, err = s.ListDrafts(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Empty(t, drafts)
	require.NoError(t, s.DeleteUserDrafts(ctx, realm.ID, alice.ID), "no drafts left is not an error")

	drafts, err = s.ListDrafts(ctx, realm.ID, bob.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Draft{*bobDraft}, drafts, "other users untouched")
	drafts, err = s.ListDrafts(ctx, other.ID, foreign.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Draft{*foreignDraft}, drafts, "other realms untouched")
}
