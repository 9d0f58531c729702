package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var userTests = []test{
	{"User/RoundTrip", testUserRoundTrip},
	{"User/WithRealm", testGetRealmUser},
	{"User/NotFound", testUserNotFound},
	{"User/EmailCaseInsensitive", testUserEmailCaseInsensitive},
	{"User/Conflict", testUserConflict},
	{"User/MissingReferences", testUserMissingReferences},
	{"User/List", testUserList},
	{"User/Update", testUserUpdate},
	{"User/UpdateColumns", testUserUpdateColumns},
	{"User/UpdateOtherRealm", testUserUpdateOtherRealm},
	{"User/UpdateConflict", testUserUpdateConflict},
}

func testUserRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	owner := newUser(t, s, realm.ID, "owner@example.com")

	cases := []struct {
		name string
		user storage.User
	}{
		{"all fields", storage.User{
			Email:               "Bot-Mixed@Example.com",
			FullName:            "Ünïcødé 'Bot' \"X\"",
			Role:                200,
			IsActive:            true,
			IsBot:               true,
			BotType:             ptr(4),
			BotOwnerID:          ptr(owner.ID),
			Timezone:            "Europe/Paris",
			DateJoined:          1_700_000_123,
			PasswordHash:        "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA",
			APIKey:              "abcdefghijklmnopqrstuvwxyz012345",
			AvatarSource:        "U",
			AvatarVersion:       3,
			CanCreateUsers:      true,
			CanChangeUserEmails: true,
			Settings:            `{"enter_sends":true,"default_language":"fr","emojiset":"Ünïcødé 'q' \"x\""}`,
		}},
		{"zero values and nil pointers", storage.User{Email: "zero@example.com"}},
		{"empty settings object", storage.User{Email: "empty-settings@example.com", Settings: "{}"}},
		{"settings with one key", storage.User{Email: "one-setting@example.com", Settings: `{"a":1}`}},
		{"non-nil pointer to zero", storage.User{Email: "zero-ptr@example.com", BotType: ptr(0)}},
		{"inactive guest", storage.User{Email: "guest@example.com", Role: 600, AvatarSource: "G"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.user
			u.RealmID = realm.ID
			require.NoError(t, s.CreateUser(ctx, &u))
			require.NotZero(t, u.ID)
			want := tc.user
			want.ID, want.RealmID = u.ID, realm.ID

			got, err := s.GetUser(ctx, realm.ID, u.ID)
			require.NoError(t, err)
			assert.Equal(t, want, *got)

			got, err = s.GetUserByEmail(ctx, realm.ID, u.Email)
			require.NoError(t, err)
			assert.Equal(t, want, *got)

			users, err := s.ListUsers(ctx, realm.ID)
			require.NoError(t, err)
			require.NotEmpty(t, users)
			assert.Equal(t, want, users[len(users)-1])
		})
	}
}

func testUserNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")
	foreign := newUser(t, s, other.ID, "bob@example.com")

	cases := []struct {
		name           string
		realmID, id    int64
		email          string
		wantByIDErr    bool
		wantByEmailErr bool
	}{
		{"missing ID", realm.ID, foreign.ID + 1000, "nobody@example.com", true, true},
		{"other realm's user", realm.ID, foreign.ID, foreign.Email, true, true},
		{"user in a missing realm", other.ID + 1000, u.ID, u.Email, true, true},
		{"own user", realm.ID, u.ID, u.Email, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.GetUser(ctx, tc.realmID, tc.id)
			if tc.wantByIDErr {
				assert.ErrorIs(t, err, storage.ErrNotFound)
			} else {
				assert.NoError(t, err)
			}
			_, err = s.GetUserByEmail(ctx, tc.realmID, tc.email)
			if tc.wantByEmailErr {
				assert.ErrorIs(t, err, storage.ErrNotFound)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

func testUserEmailCaseInsensitive(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "Alice.Smith@Example.COM")
	newUser(t, s, realm.ID, "bob@example.com")

	for _, email := range []string{"Alice.Smith@Example.COM", "alice.smith@example.com", "ALICE.SMITH@EXAMPLE.COM"} {
		got, err := s.GetUserByEmail(ctx, realm.ID, email)
		require.NoError(t, err, email)
		assert.Equal(t, u.ID, got.ID, email)
		assert.Equal(t, "Alice.Smith@Example.COM", got.Email, "case is preserved")
	}
}

func testUserConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	first := newUser(t, s, realm.ID, "alice@example.com")

	cases := []struct {
		name    string
		realmID int64
		email   string
		wantErr error
	}{
		{"same email", realm.ID, "alice@example.com", storage.ErrConflict},
		{"email differing only in case", realm.ID, "Alice@EXAMPLE.com", storage.ErrConflict},
		{"same email in another realm", other.ID, "alice@example.com", nil},
		{"other email", realm.ID, "alice2@example.com", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := &storage.User{RealmID: tc.realmID, Email: tc.email}
			err := s.CreateUser(ctx, u)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
		})
	}
	got, err := s.GetUserByEmail(ctx, realm.ID, "ALICE@example.com")
	require.NoError(t, err)
	assert.Equal(t, *first, *got)
	users, err := s.ListUsers(ctx, realm.ID)
	require.NoError(t, err)
	assert.Len(t, users, 2)
}

func testUserMissingReferences(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	foreign := newUser(t, s, other.ID, "foreign@example.com")

	cases := []struct {
		name string
		user storage.User
	}{
		{"missing realm", storage.User{RealmID: other.ID + 1000, Email: "a@example.com"}},
		{"missing bot owner", storage.User{RealmID: realm.ID, Email: "b@example.com", IsBot: true, BotOwnerID: ptr(foreign.ID + 1000)}},
		{"bot owner in another realm", storage.User{RealmID: realm.ID, Email: "c@example.com", IsBot: true, BotOwnerID: ptr(foreign.ID)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.user
			assert.ErrorIs(t, s.CreateUser(ctx, &u), storage.ErrNotFound)
		})
	}
	users, err := s.ListUsers(ctx, realm.ID)
	require.NoError(t, err)
	assert.Empty(t, users)
}

func testUserList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	empty := newRealm(t, s, "empty")

	a := newUser(t, s, realm.ID, "a@example.com")
	newUser(t, s, other.ID, "x@example.com")
	b := newUser(t, s, realm.ID, "b@example.com")
	b.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, b, "is_active"))
	c := newUser(t, s, realm.ID, "c@example.com")

	users, err := s.ListUsers(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.User{*a, *b, *c}, users, "active and inactive, ordered by ID")

	users, err = s.ListUsers(ctx, empty.ID)
	require.NoError(t, err)
	assert.Empty(t, users)
	users, err = s.ListUsers(ctx, empty.ID+1000)
	require.NoError(t, err)
	assert.Empty(t, users)
}

func testUserUpdate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	owner := newUser(t, s, realm.ID, "owner@example.com")
	u := newUser(t, s, realm.ID, "bot@example.com")

	u.Email = "Renamed-Bot@example.com"
	u.FullName = "Renamed"
	u.Role = 300
	u.IsActive = false
	u.IsBot = true
	u.BotType = ptr(1)
	u.BotOwnerID = ptr(owner.ID)
	u.Timezone = "Asia/Tokyo"
	u.DateJoined = 5
	u.PasswordHash = "hash"
	u.APIKey = "new-key"
	u.AvatarSource = "U"
	u.AvatarVersion = 9
	u.CanCreateUsers = true
	u.CanChangeUserEmails = true
	u.Settings = `{"a":1}`
	require.NoError(t, s.UpdateUser(ctx, u))
	got, err := s.GetUser(ctx, realm.ID, u.ID)
	require.NoError(t, err)
	assert.Equal(t, *u, *got)

	// Pointers back to nil, booleans back to false.
	u.BotType, u.BotOwnerID = nil, nil
	u.IsBot, u.CanCreateUsers, u.CanChangeUserEmails = false, false, false
	u.Settings = ""
	require.NoError(t, s.UpdateUser(ctx, u))
	got, err = s.GetUser(ctx, realm.ID, u.ID)
	require.NoError(t, err)
	assert.Equal(t, *u, *got)

	gotOwner, err := s.GetUser(ctx, realm.ID, owner.ID)
	require.NoError(t, err)
	assert.Equal(t, *owner, *gotOwner, "other users untouched")
}

func testUserUpdateColumns(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	owner := newUser(t, s, realm.ID, "owner@example.com")
	u := newUser(t, s, realm.ID, "alice@example.com")
	want := *u

	changed := *u
	changed.FullName = "Alice Renamed"
	changed.IsActive = false
	changed.BotOwnerID = ptr(owner.ID)
	changed.Role = 100 // not written
	changed.APIKey = "not written"
	changed.Settings = `{"a":1}`
	changed.CanChangeUserEmails = true // not written
	require.NoError(t, s.UpdateUser(ctx, &changed, "full_name", "is_active", "bot_owner_id", "settings"))
	want.FullName = "Alice Renamed"
	want.IsActive = false
	want.BotOwnerID = ptr(owner.ID)
	want.Settings = `{"a":1}`
	got, err := s.GetUser(ctx, realm.ID, u.ID)
	require.NoError(t, err)
	assert.Equal(t, want, *got)

	changed.BotOwnerID = nil
	changed.Settings = ""
	require.NoError(t, s.UpdateUser(ctx, &changed, "bot_owner_id", "settings", "can_change_user_emails"))
	want.BotOwnerID = nil
	want.Settings = ""
	want.CanChangeUserEmails = true
	got, err = s.GetUser(ctx, realm.ID, u.ID)
	require.NoError(t, err)
	assert.Equal(t, want, *got)
}

func testUserUpdateOtherRealm(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")

	moved := *u
	moved.RealmID = other.ID
	moved.FullName = "Hijacked"
	assert.ErrorIs(t, s.UpdateUser(ctx, &moved), storage.ErrNotFound)
	assert.ErrorIs(t, s.UpdateUser(ctx, &moved, "full_name"), storage.ErrNotFound)

	missing := *u
	missing.ID = u.ID + 1000
	assert.ErrorIs(t, s.UpdateUser(ctx, &missing, "full_name"), storage.ErrNotFound)

	got, err := s.GetUser(ctx, realm.ID, u.ID)
	require.NoError(t, err)
	assert.Equal(t, *u, *got)
}

func testUserUpdateConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	a := newUser(t, s, realm.ID, "a@example.com")
	b := newUser(t, s, realm.ID, "b@example.com")

	changed := *b
	changed.Email = "A@Example.com"
	assert.ErrorIs(t, s.UpdateUser(ctx, &changed, "email"), storage.ErrConflict)
	assert.ErrorIs(t, s.UpdateUser(ctx, &changed), storage.ErrConflict)

	// Changing only the case of one's own email is fine.
	changed = *a
	changed.Email = "A@example.com"
	require.NoError(t, s.UpdateUser(ctx, &changed, "email"))

	got, err := s.GetUser(ctx, realm.ID, b.ID)
	require.NoError(t, err)
	assert.Equal(t, *b, *got)
}

func testGetRealmUser(t *testing.T, st storage.Store) {
	ctx := t.Context()
	r1 := newRealm(t, st, "ru-one")
	r2 := newRealm(t, st, "ru-two")
	u := &storage.User{RealmID: r1.ID, Email: "Mixed.Case@Example.com", FullName: "Ru", Role: 400, IsActive: true, Settings: `{"a":1}`}
	require.NoError(t, st.CreateUser(ctx, u))

	realm, got, err := st.GetRealmUser(ctx, r1.ID, u.ID)
	require.NoError(t, err)
	assert.Equal(t, r1.ID, realm.ID)
	assert.Equal(t, r1.Host, realm.Host)
	want, err := st.GetUser(ctx, r1.ID, u.ID)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the same user record as GetUser")
	wantRealm, err := st.GetRealm(ctx, r1.ID)
	require.NoError(t, err)
	assert.Equal(t, wantRealm, realm, "the same realm record as GetRealm")

	realm, got, err = st.GetRealmUserByEmail(ctx, r1.ID, "mixed.case@EXAMPLE.com")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, wantRealm, realm)

	_, _, err = st.GetRealmUser(ctx, r2.ID, u.ID)
	require.ErrorIs(t, err, storage.ErrNotFound, "other realm")
	_, _, err = st.GetRealmUser(ctx, r1.ID, u.ID+1000)
	require.ErrorIs(t, err, storage.ErrNotFound)
	_, _, err = st.GetRealmUserByEmail(ctx, r2.ID, u.Email)
	require.ErrorIs(t, err, storage.ErrNotFound)
	_, _, err = st.GetRealmUserByEmail(ctx, r1.ID, "nobody@example.com")
	require.ErrorIs(t, err, storage.ErrNotFound)
}
