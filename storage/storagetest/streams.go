package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var streamTests = []test{
	{"Stream/RoundTrip", testStreamRoundTrip},
	{"Stream/NotFound", testStreamNotFound},
	{"Stream/Conflict", testStreamConflict},
	{"Stream/GetByName", testStreamGetByName},
	{"Stream/List", testStreamList},
	{"Stream/Update", testStreamUpdate},
	{"Stream/UpdateColumns", testStreamUpdateColumns},
	{"Stream/UpdateConflict", testStreamUpdateConflict},
	{"Stream/UpdateNotFound", testStreamUpdateNotFound},
}

// newStream creates a public channel of the realm.
func newStream(t *testing.T, s storage.Store, realmID int64, name string) *storage.Stream {
	t.Helper()
	c := &storage.Stream{
		RealmID:                    realmID,
		Name:                       name,
		Description:                "About " + name,
		RenderedDescription:        "<p>About " + name + "</p>",
		HistoryPublicToSubscribers: true,
		DateCreated:                1_700_000_200,
	}
	require.NoError(t, s.CreateStream(t.Context(), c))
	require.NotZero(t, c.ID)
	return c
}

// getStream reads a channel back, failing the test if it is not there.
func getStream(t *testing.T, s storage.Store, realmID, streamID int64) storage.Stream {
	t.Helper()
	c, err := s.GetStream(t.Context(), realmID, streamID)
	require.NoError(t, err)
	return *c
}

func testStreamRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	creator := newUser(t, s, realm.ID, "creator@example.com")
	g1 := newGroup(t, s, realm.ID, "admins")
	g2 := newGroup(t, s, realm.ID, "")

	cases := []struct {
		name   string
		stream storage.Stream
	}{
		{"all fields", storage.Stream{
			Name:                        "Ünïcødé 'general' \"x\"",
			Description:                 "The **general** channel\nline 2",
			RenderedDescription:         "<p>The <strong>general</strong> channel</p>",
			InviteOnly:                  true,
			IsWebPublic:                 true,
			HistoryPublicToSubscribers:  true,
			MessageRetentionDays:        ptr(30),
			DateCreated:                 1_700_000_300,
			CreatorID:                   ptr(creator.ID),
			IsArchived:                  true,
			IsDefault:                   true,
			FirstMessageID:              ptr(int64(12345)),
			CanAddSubscribersGroupID:    g1.ID,
			CanRemoveSubscribersGroupID: g2.ID,
			CanAdministerChannelGroupID: g1.ID,
			CanSendMessageGroupID:       g2.ID,
			CanSubscribeGroupID:         g1.ID,
		}},
		{"zero values", storage.Stream{Name: "zero"}},
		{"retention forever, no creator", storage.Stream{Name: "forever", MessageRetentionDays: ptr(-1)}},
		{"retention zero, first message zero", storage.Stream{
			Name: "zero pointers", MessageRetentionDays: ptr(0), FirstMessageID: ptr(int64(0)),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.stream
			c.RealmID = realm.ID
			require.NoError(t, s.CreateStream(ctx, &c))
			require.NotZero(t, c.ID)
			want := tc.stream
			want.ID, want.RealmID = c.ID, realm.ID
			assert.Equal(t, want, c, "CreateStream sets only the ID")

			got, err := s.GetStream(ctx, realm.ID, c.ID)
			require.NoError(t, err)
			assert.Equal(t, want, *got)
			got, err = s.GetStreamByName(ctx, realm.ID, want.Name)
			require.NoError(t, err)
			assert.Equal(t, want, *got)
			streams, err := s.ListStreams(ctx, realm.ID)
			require.NoError(t, err)
			assert.Contains(t, streams, want)
		})
	}
}

func testStreamNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	c := newStream(t, s, realm.ID, "general")
	foreign := newStream(t, s, other.ID, "foreign")
	foreignUser := newUser(t, s, other.ID, "f@example.com")

	cases := []struct {
		name              string
		realmID, streamID int64
	}{
		{"missing ID", realm.ID, foreign.ID + 1000},
		{"another realm's channel", realm.ID, foreign.ID},
		{"missing realm", other.ID + 1000, c.ID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.GetStream(ctx, tc.realmID, tc.streamID)
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
	t.Run("by name", func(t *testing.T) {
		_, err := s.GetStreamByName(ctx, realm.ID, "foreign")
		assert.ErrorIs(t, err, storage.ErrNotFound, "another realm's name")
		_, err = s.GetStreamByName(ctx, realm.ID, "genera")
		assert.ErrorIs(t, err, storage.ErrNotFound, "prefix")
		_, err = s.GetStreamByName(ctx, realm.ID, "general ")
		assert.ErrorIs(t, err, storage.ErrNotFound, "trailing space")
		_, err = s.GetStreamByName(ctx, other.ID+1000, "general")
		assert.ErrorIs(t, err, storage.ErrNotFound, "missing realm")
	})
	t.Run("create in a missing realm", func(t *testing.T) {
		err := s.CreateStream(ctx, &storage.Stream{RealmID: other.ID + 1000, Name: "x"})
		assert.ErrorIs(t, err, storage.ErrNotFound)
	})
	t.Run("creator of another realm", func(t *testing.T) {
		err := s.CreateStream(ctx, &storage.Stream{RealmID: realm.ID, Name: "y", CreatorID: ptr(foreignUser.ID)})
		assert.ErrorIs(t, err, storage.ErrNotFound)
	})
	t.Run("missing creator", func(t *testing.T) {
		err := s.CreateStream(ctx, &storage.Stream{RealmID: realm.ID, Name: "z", CreatorID: ptr(foreignUser.ID + 1000)})
		assert.ErrorIs(t, err, storage.ErrNotFound)
	})

	streams, err := s.ListStreams(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Stream{*c}, streams, "failed creates wrote nothing")
}

func testStreamConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	first := newStream(t, s, realm.ID, "General")

	cases := []struct {
		name    string
		realmID int64
		stream  string
		wantErr error
	}{
		{"same name", realm.ID, "General", storage.ErrConflict},
		{"name differing only in case", realm.ID, "gENERAL", storage.ErrConflict},
		{"same name in another realm", other.ID, "General", nil},
		{"other name", realm.ID, "General 2", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &storage.Stream{RealmID: tc.realmID, Name: tc.stream, Description: "second"}
			err := s.CreateStream(ctx, c)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
		})
	}
	streams, err := s.ListStreams(ctx, realm.ID)
	require.NoError(t, err)
	require.Len(t, streams, 2)
	assert.Equal(t, *first, streams[0], "the first channel is untouched")
	assert.Equal(t, "General 2", streams[1].Name)
}

func testStreamGetByName(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	c := newStream(t, s, realm.ID, "Design Team")
	foreign := newStream(t, s, other.ID, "design team")

	for _, name := range []string{"Design Team", "design team", "DESIGN TEAM", "dEsIgN tEaM"} {
		got, err := s.GetStreamByName(ctx, realm.ID, name)
		require.NoError(t, err, name)
		assert.Equal(t, *c, *got, "%q finds the channel, stored case kept", name)
	}
	got, err := s.GetStreamByName(ctx, other.ID, "DESIGN TEAM")
	require.NoError(t, err)
	assert.Equal(t, *foreign, *got, "each realm finds its own")
}

func testStreamList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	empty := newRealm(t, s, "empty")

	b := newStream(t, s, realm.ID, "b")
	newStream(t, s, other.ID, "x")
	a := newStream(t, s, realm.ID, "a")
	archived := &storage.Stream{RealmID: realm.ID, Name: "archived", IsArchived: true, InviteOnly: true}
	require.NoError(t, s.CreateStream(ctx, archived))

	streams, err := s.ListStreams(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.Stream{*b, *a, *archived}, streams, "by ID, archived and private included")

	for _, id := range []int64{empty.ID, empty.ID + 1000} {
		streams, err = s.ListStreams(ctx, id)
		require.NoError(t, err)
		assert.NotNil(t, streams)
		assert.Empty(t, streams)
	}
}

func testStreamUpdate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	creator := newUser(t, s, realm.ID, "creator@example.com")
	g := newGroup(t, s, realm.ID, "admins")
	c := newStream(t, s, realm.ID, "general")
	untouched := newStream(t, s, realm.ID, "other")

	c.Name = "General Chat"
	c.Description = "new"
	c.RenderedDescription = "<p>new</p>"
	c.InviteOnly = true
	c.IsWebPublic = true
	c.HistoryPublicToSubscribers = false
	c.MessageRetentionDays = ptr(-1)
	c.DateCreated = 5
	c.CreatorID = ptr(creator.ID)
	c.IsArchived = true
	c.IsDefault = true
	c.FirstMessageID = ptr(int64(77))
	c.CanAddSubscribersGroupID = g.ID
	c.CanRemoveSubscribersGroupID = g.ID + 1
	c.CanAdministerChannelGroupID = g.ID + 2
	c.CanSendMessageGroupID = g.ID + 3
	c.CanSubscribeGroupID = g.ID + 4
	require.NoError(t, s.UpdateStream(ctx, c), "all columns")
	assert.Equal(t, *c, getStream(t, s, realm.ID, c.ID))

	// Pointers back to nil.
	c.MessageRetentionDays, c.CreatorID, c.FirstMessageID = nil, nil, nil
	require.NoError(t, s.UpdateStream(ctx, c))
	assert.Equal(t, *c, getStream(t, s, realm.ID, c.ID))

	// Renaming to a different case of its own name is no conflict.
	c.Name = "GENERAL CHAT"
	require.NoError(t, s.UpdateStream(ctx, c, "name"))
	assert.Equal(t, *c, getStream(t, s, realm.ID, c.ID))
	got, err := s.GetStreamByName(ctx, realm.ID, "general chat")
	require.NoError(t, err)
	assert.Equal(t, "GENERAL CHAT", got.Name)
	_, err = s.GetStreamByName(ctx, realm.ID, "general")
	assert.ErrorIs(t, err, storage.ErrNotFound, "the old name is free")

	assert.Equal(t, *untouched, getStream(t, s, realm.ID, untouched.ID))
}

func testStreamUpdateColumns(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	c := newStream(t, s, realm.ID, "general")
	want := *c

	changed := *c
	changed.Description = "changed"
	changed.IsArchived = true
	changed.Name = "renamed"
	changed.FirstMessageID = ptr(int64(9))
	changed.CanSendMessageGroupID = 42
	require.NoError(t, s.UpdateStream(ctx, &changed, "is_archived", "first_message_id", "can_send_message_group_id"))
	want.IsArchived = true
	want.FirstMessageID = ptr(int64(9))
	want.CanSendMessageGroupID = 42
	assert.Equal(t, want, getStream(t, s, realm.ID, c.ID), "only the named columns are written")

	changed.FirstMessageID = nil
	require.NoError(t, s.UpdateStream(ctx, &changed, "first_message_id"))
	want.FirstMessageID = nil
	assert.Equal(t, want, getStream(t, s, realm.ID, c.ID))
}

func testStreamUpdateConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	a := newStream(t, s, realm.ID, "alpha")
	b := newStream(t, s, realm.ID, "beta")
	newStream(t, s, other.ID, "gamma")

	for _, name := range []string{"alpha", "ALPHA", "Alpha"} {
		changed := *b
		changed.Name = name
		changed.Description = "changed"
		assert.ErrorIs(t, s.UpdateStream(ctx, &changed), storage.ErrConflict, name)
		assert.ErrorIs(t, s.UpdateStream(ctx, &changed, "name"), storage.ErrConflict, name)
	}
	assert.Equal(t, *a, getStream(t, s, realm.ID, a.ID))
	assert.Equal(t, *b, getStream(t, s, realm.ID, b.ID), "unchanged after the conflicts")

	changed := *b
	changed.Name = "Gamma"
	require.NoError(t, s.UpdateStream(ctx, &changed, "name"), "another realm's name is free")
	assert.Equal(t, changed, getStream(t, s, realm.ID, b.ID))
}

func testStreamUpdateNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	c := newStream(t, s, realm.ID, "general")
	foreign := newStream(t, s, other.ID, "foreign")
	foreignUser := newUser(t, s, other.ID, "f@example.com")

	cases := []struct {
		name              string
		realmID, streamID int64
	}{
		{"missing ID", realm.ID, foreign.ID + 1000},
		{"another realm's channel", realm.ID, foreign.ID},
		{"missing realm", other.ID + 1000, c.ID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			changed := *c
			changed.RealmID, changed.ID = tc.realmID, tc.streamID
			changed.Description = "hijacked"
			assert.ErrorIs(t, s.UpdateStream(ctx, &changed), storage.ErrNotFound)
			assert.ErrorIs(t, s.UpdateStream(ctx, &changed, "description"), storage.ErrNotFound)
		})
	}
	t.Run("creator of another realm", func(t *testing.T) {
		changed := *c
		changed.CreatorID = ptr(foreignUser.ID)
		assert.ErrorIs(t, s.UpdateStream(ctx, &changed, "creator_id"), storage.ErrNotFound)
	})
	assert.Equal(t, *c, getStream(t, s, realm.ID, c.ID), "untouched")
	assert.Equal(t, *foreign, getStream(t, s, other.ID, foreign.ID), "untouched")
}
