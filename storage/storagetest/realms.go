package storagetest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var realmTests = []test{
	{"Realm/RoundTrip", testRealmRoundTrip},
	{"Realm/NotFound", testRealmNotFound},
	{"Realm/HostCaseInsensitive", testRealmHostCaseInsensitive},
	{"Realm/Conflict", testRealmConflict},
	{"Realm/List", testRealmList},
	{"Realm/Update", testRealmUpdate},
	{"Realm/UpdateColumns", testRealmUpdateColumns},
	{"Realm/UpdateConflict", testRealmUpdateConflict},
	{"Realm/GroupSettings", testRealmGroupSettings},
}

func testRealmRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	cases := []struct {
		name  string
		realm storage.Realm
	}{
		{"all fields", storage.Realm{
			StringID:               "acme",
			Name:                   "Acme Corp",
			Description:            "**Welcome** to Acme.\n\nSecond paragraph.",
			URL:                    "https://acme.example.com:8443",
			Host:                   "acme.example.com:8443",
			DateCreated:            1_700_000_000,
			Deactivated:            true,
			EmailAddressVisibility: 5,
			WaitingPeriodThreshold: 90,
			NameChangesDisabled:    true,
			EmailChangesDisabled:   true,
		}},
		{"one of each boolean", storage.Realm{
			StringID:            "halves",
			Host:                "halves.example.com",
			NameChangesDisabled: true,
		}},
		{"zero values", storage.Realm{StringID: "zero", Host: "zero.example.com"}},
		{"unicode and quotes", storage.Realm{
			StringID:    "quotes",
			Name:        `Ünïcødé 'single' "double" \ ; -- 😀`,
			Description: "line1\nline2\ttab",
			Host:        "quotes.example.com",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.realm
			require.NoError(t, s.CreateRealm(ctx, &r))
			require.NotZero(t, r.ID)
			want := tc.realm
			want.ID = r.ID

			got, err := s.GetRealm(ctx, r.ID)
			require.NoError(t, err)
			assert.Equal(t, want, *got)

			got, err = s.GetRealmByHost(ctx, r.Host)
			require.NoError(t, err)
			assert.Equal(t, want, *got)
		})
	}
}

func testRealmNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := newRealm(t, s, "acme")

	_, err := s.GetRealm(ctx, r.ID+1000)
	assert.ErrorIs(t, err, storage.ErrNotFound)
	_, err = s.GetRealm(ctx, 0)
	assert.ErrorIs(t, err, storage.ErrNotFound)
	_, err = s.GetRealmByHost(ctx, "missing.example.com")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	_, err = s.GetRealmByHost(ctx, "")
	assert.ErrorIs(t, err, storage.ErrNotFound)

	missing := *r
	missing.ID = r.ID + 1000
	missing.Host = "other.example.com"
	missing.StringID = "other"
	assert.ErrorIs(t, s.UpdateRealm(ctx, &missing), storage.ErrNotFound)
	assert.ErrorIs(t, s.UpdateRealm(ctx, &missing, "name"), storage.ErrNotFound)
}

func testRealmHostCaseInsensitive(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := &storage.Realm{StringID: "mixed", Host: "Chat.Example.COM"}
	require.NoError(t, s.CreateRealm(ctx, r))
	newRealm(t, s, "other")

	for _, host := range []string{"Chat.Example.COM", "chat.example.com", "CHAT.EXAMPLE.COM"} {
		got, err := s.GetRealmByHost(ctx, host)
		require.NoError(t, err, host)
		assert.Equal(t, r.ID, got.ID, host)
		assert.True(t, strings.EqualFold(r.Host, got.Host), "host %q", got.Host)
	}
}

func testRealmConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	first := newRealm(t, s, "acme") // host acme.example.com
	cases := []struct {
		name     string
		stringID string
		host     string
	}{
		{"duplicate host", "acme2", first.Host},
		{"duplicate host differing in case", "acme3", "ACME.Example.com"},
		{"duplicate string_id", first.StringID, "acme4.example.com"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &storage.Realm{StringID: tc.stringID, Host: tc.host}
			assert.ErrorIs(t, s.CreateRealm(ctx, r), storage.ErrConflict)
		})
	}
	realms, err := s.ListRealms(ctx)
	require.NoError(t, err)
	assert.Equal(t, []storage.Realm{*first}, realms)
}

func testRealmList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realms, err := s.ListRealms(ctx)
	require.NoError(t, err)
	assert.Empty(t, realms)

	var want []storage.Realm
	for _, key := range []string{"c", "a", "b"} {
		want = append(want, *newRealm(t, s, key))
	}
	realms, err = s.ListRealms(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, realms)
	for i := 1; i < len(realms); i++ {
		assert.Less(t, realms[i-1].ID, realms[i].ID, "ordered by ID")
	}
}

func testRealmUpdate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")

	// Every field changes, booleans both ways.
	r.StringID = "acme-renamed"
	r.Name = "Renamed"
	r.Description = "new description"
	r.URL = "https://renamed.example.com"
	r.Host = "renamed.example.com"
	r.DateCreated = 42
	r.Deactivated = true
	r.EmailAddressVisibility = 4
	r.WaitingPeriodThreshold = 7
	r.NameChangesDisabled = true
	r.EmailChangesDisabled = true
	r.CanCreateBotsGroupID = newGroup(t, s, r.ID, "role:administrators").ID
	r.CanCreateWriteOnlyBotsGroupID = newGroup(t, s, r.ID, "").ID
	require.NoError(t, s.UpdateRealm(ctx, r))
	got, err := s.GetRealm(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, *r, *got)

	// Back to zero values.
	r.Name, r.Description, r.URL = "", "", ""
	r.DateCreated, r.Deactivated = 0, false
	r.EmailAddressVisibility, r.WaitingPeriodThreshold = 0, 0
	r.NameChangesDisabled, r.EmailChangesDisabled = false, false
	r.CanCreateBotsGroupID, r.CanCreateWriteOnlyBotsGroupID = 0, 0
	require.NoError(t, s.UpdateRealm(ctx, r))
	got, err = s.GetRealm(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, *r, *got)

	// The other realm is untouched.
	gotOther, err := s.GetRealm(ctx, other.ID)
	require.NoError(t, err)
	assert.Equal(t, *other, *gotOther)
}

func testRealmUpdateColumns(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := newRealm(t, s, "acme")
	want := *r

	changed := *r
	changed.Name = "New name"
	changed.Deactivated = true
	changed.Description = "not written"
	changed.WaitingPeriodThreshold = 30
	changed.NameChangesDisabled = true
	changed.EmailChangesDisabled = true // not written
	require.NoError(t, s.UpdateRealm(ctx, &changed, "name", "deactivated", "name_changes_disabled"))
	want.Name = "New name"
	want.Deactivated = true
	want.NameChangesDisabled = true
	got, err := s.GetRealm(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, want, *got)

	// A named boolean column set back to false is written.
	changed.Deactivated = false
	require.NoError(t, s.UpdateRealm(ctx, &changed, "deactivated"))
	want.Deactivated = false
	got, err = s.GetRealm(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, want, *got)
}

func testRealmUpdateConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	a := newRealm(t, s, "a")
	b := newRealm(t, s, "b")

	changed := *b
	changed.Host = strings.ToUpper(a.Host)
	assert.ErrorIs(t, s.UpdateRealm(ctx, &changed, "host"), storage.ErrConflict)
	changed = *b
	changed.StringID = a.StringID
	assert.ErrorIs(t, s.UpdateRealm(ctx, &changed), storage.ErrConflict)

	got, err := s.GetRealm(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, *b, *got)
}

func testRealmGroupSettings(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	assert.Zero(t, r.CanCreateBotsGroupID, "not set")
	assert.Zero(t, r.CanCreateWriteOnlyBotsGroupID, "not set")

	admins := newGroup(t, s, r.ID, "role:administrators")
	anon := newGroup(t, s, r.ID, "")
	want := *r

	// Each setting written alone, by name.
	changed := *r
	changed.CanCreateBotsGroupID = admins.ID
	changed.CanCreateWriteOnlyBotsGroupID = anon.ID // not written
	require.NoError(t, s.UpdateRealm(ctx, &changed, "can_create_bots_group_id"))
	want.CanCreateBotsGroupID = admins.ID
	got, err := s.GetRealm(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, want, *got)

	require.NoError(t, s.UpdateRealm(ctx, &changed, "can_create_write_only_bots_group_id"))
	want.CanCreateWriteOnlyBotsGroupID = anon.ID
	got, err = s.GetRealmByHost(ctx, r.Host)
	require.NoError(t, err)
	assert.Equal(t, want, *got)

	// Back to not set.
	changed.CanCreateBotsGroupID, changed.CanCreateWriteOnlyBotsGroupID = 0, 0
	require.NoError(t, s.UpdateRealm(ctx, &changed, "can_create_bots_group_id", "can_create_write_only_bots_group_id"))
	want.CanCreateBotsGroupID, want.CanCreateWriteOnlyBotsGroupID = 0, 0
	realms, err := s.ListRealms(ctx)
	require.NoError(t, err)
	assert.Equal(t, []storage.Realm{want, *other}, realms)
}
