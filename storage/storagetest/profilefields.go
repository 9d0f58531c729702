package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var profileFieldTests = []test{
	{"ProfileField/RoundTrip", testProfileFieldRoundTrip},
	{"ProfileField/NotFound", testProfileFieldNotFound},
	{"ProfileField/Conflict", testProfileFieldConflict},
	{"ProfileField/List", testProfileFieldList},
	{"ProfileField/Update", testProfileFieldUpdate},
	{"ProfileField/UpdateConflict", testProfileFieldUpdateConflict},
	{"ProfileField/Delete", testProfileFieldDelete},
	{"ProfileFieldValue/RoundTrip", testProfileFieldValueRoundTrip},
	{"ProfileFieldValue/Replace", testProfileFieldValueReplace},
	{"ProfileFieldValue/RealmScope", testProfileFieldValueRealmScope},
	{"ProfileFieldValue/List", testProfileFieldValueList},
	{"ProfileFieldValue/Delete", testProfileFieldValueDelete},
}

// newProfileField creates a short-text field of the realm.
func newProfileField(t *testing.T, s storage.Store, realmID int64, name string, order int) *storage.ProfileField {
	t.Helper()
	f := &storage.ProfileField{
		RealmID:        realmID,
		Name:           name,
		FieldType:      1,
		Order:          order,
		EditableByUser: true,
	}
	require.NoError(t, s.CreateProfileField(t.Context(), f))
	require.NotZero(t, f.ID)
	return f
}

// fieldValue is a value of a field without rendering.
func fieldValue(realmID, userID, fieldID int64, value string) storage.ProfileFieldValue {
	return storage.ProfileFieldValue{RealmID: realmID, UserID: userID, FieldID: fieldID, Value: value}
}

// listValues lists the values of the given users (nil: all) of the realm.
func listValues(t *testing.T, s storage.Store, realmID int64, userIDs []int64) []storage.ProfileFieldValue {
	t.Helper()
	values, err := s.ListProfileFieldValues(t.Context(), realmID, userIDs)
	require.NoError(t, err)
	return values
}

func testProfileFieldRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")

	cases := []struct {
		name  string
		field storage.ProfileField
	}{
		{"all fields", storage.ProfileField{
			Name:                    "Ünïcødé 'Pronouns' \"x\"",
			Hint:                    "What should we call you?\nline2",
			FieldType:               3,
			FieldData:               `{"0":{"text":"Vim","order":"1"},"1":{"text":"Emacs","order":"2"}}`,
			Order:                   7,
			DisplayInProfileSummary: true,
			Required:                true,
			EditableByUser:          true,
		}},
		{"zero values", storage.ProfileField{Name: "zero"}},
		{"negative order", storage.ProfileField{Name: "negative", FieldType: 2, Order: -3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.field
			f.RealmID = realm.ID
			require.NoError(t, s.CreateProfileField(ctx, &f))
			require.NotZero(t, f.ID)
			want := tc.field
			want.ID, want.RealmID = f.ID, realm.ID

			got, err := s.GetProfileField(ctx, realm.ID, f.ID)
			require.NoError(t, err)
			assert.Equal(t, want, *got)

			fields, err := s.ListProfileFields(ctx, realm.ID)
			require.NoError(t, err)
			assert.Contains(t, fields, want)
		})
	}
}

func testProfileFieldNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	f := newProfileField(t, s, realm.ID, "Phone", 1)
	foreign := newProfileField(t, s, other.ID, "Phone", 1)

	cases := []struct {
		name             string
		realmID, fieldID int64
	}{
		{"missing ID", realm.ID, foreign.ID + 1000},
		{"another realm's field", realm.ID, foreign.ID},
		{"missing realm", other.ID + 1000, f.ID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.GetProfileField(ctx, tc.realmID, tc.fieldID)
			assert.ErrorIs(t, err, storage.ErrNotFound)
			assert.ErrorIs(t, s.DeleteProfileField(ctx, tc.realmID, tc.fieldID), storage.ErrNotFound)
			changed := *f
			changed.RealmID, changed.ID = tc.realmID, tc.fieldID
			changed.Hint = "hijacked"
			assert.ErrorIs(t, s.UpdateProfileField(ctx, &changed), storage.ErrNotFound)
		})
	}
	t.Run("create in a missing realm", func(t *testing.T) {
		missing := &storage.ProfileField{RealmID: other.ID + 1000, Name: "x"}
		assert.ErrorIs(t, s.CreateProfileField(ctx, missing), storage.ErrNotFound)
	})

	for _, want := range []*storage.ProfileField{f, foreign} {
		got, err := s.GetProfileField(ctx, want.RealmID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, *want, *got, "untouched")
	}
}

func testProfileFieldConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	first := newProfileField(t, s, realm.ID, "Phone number", 1)

	cases := []struct {
		name    string
		realmID int64
		field   string
		wantErr error
	}{
		{"same name", realm.ID, "Phone number", storage.ErrConflict},
		{"name differing only in case", realm.ID, "PHONE Number", storage.ErrConflict},
		{"same name in another realm", other.ID, "Phone number", nil},
		{"other name", realm.ID, "Phone number 2", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &storage.ProfileField{RealmID: tc.realmID, Name: tc.field, FieldType: 1, Order: 2}
			err := s.CreateProfileField(ctx, f)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
		})
	}
	fields, err := s.ListProfileFields(ctx, realm.ID)
	require.NoError(t, err)
	require.Len(t, fields, 2)
	assert.Equal(t, *first, fields[0])
}

func testProfileFieldList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	empty := newRealm(t, s, "empty")

	c := newProfileField(t, s, realm.ID, "c", 2)
	a := newProfileField(t, s, realm.ID, "a", 1)
	newProfileField(t, s, other.ID, "x", 0)
	b1 := newProfileField(t, s, realm.ID, "b1", 1)
	first := newProfileField(t, s, realm.ID, "first", -1)

	fields, err := s.ListProfileFields(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.ProfileField{*first, *a, *b1, *c}, fields, "by Order, then ID")

	fields, err = s.ListProfileFields(ctx, empty.ID)
	require.NoError(t, err)
	assert.Empty(t, fields)
	fields, err = s.ListProfileFields(ctx, empty.ID+1000)
	require.NoError(t, err)
	assert.Empty(t, fields)
}

func testProfileFieldUpdate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	f := newProfileField(t, s, realm.ID, "Phone", 1)
	untouched := newProfileField(t, s, realm.ID, "Other", 2)

	f.Name = "Mobile phone"
	f.Hint = "new hint"
	f.FieldType = 3
	f.FieldData = `{"0":{"text":"a","order":"1"}}`
	f.Order = 9
	f.DisplayInProfileSummary = true
	f.Required = true
	f.EditableByUser = false
	require.NoError(t, s.UpdateProfileField(ctx, f))
	got, err := s.GetProfileField(ctx, realm.ID, f.ID)
	require.NoError(t, err)
	assert.Equal(t, *f, *got)

	// Booleans both ways, strings back to empty.
	f.Hint, f.FieldData, f.Order = "", "", 0
	f.DisplayInProfileSummary, f.Required, f.EditableByUser = false, false, true
	require.NoError(t, s.UpdateProfileField(ctx, f))
	got, err = s.GetProfileField(ctx, realm.ID, f.ID)
	require.NoError(t, err)
	assert.Equal(t, *f, *got)

	// Changing only the case of its own name is fine.
	f.Name = "MOBILE phone"
	require.NoError(t, s.UpdateProfileField(ctx, f))
	got, err = s.GetProfileField(ctx, realm.ID, f.ID)
	require.NoError(t, err)
	assert.Equal(t, *f, *got)

	got, err = s.GetProfileField(ctx, realm.ID, untouched.ID)
	require.NoError(t, err)
	assert.Equal(t, *untouched, *got)
}

func testProfileFieldUpdateConflict(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	newProfileField(t, s, realm.ID, "Phone", 1)
	b := newProfileField(t, s, realm.ID, "Email", 2)
	newProfileField(t, s, other.ID, "Twitter", 1)

	changed := *b
	changed.Name = "pHONE"
	assert.ErrorIs(t, s.UpdateProfileField(ctx, &changed), storage.ErrConflict)

	// The name of another realm's field is free.
	changed.Name = "Twitter"
	require.NoError(t, s.UpdateProfileField(ctx, &changed))
	got, err := s.GetProfileField(ctx, realm.ID, b.ID)
	require.NoError(t, err)
	assert.Equal(t, changed, *got)
}

func testProfileFieldDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	doomed := newProfileField(t, s, realm.ID, "Phone", 1)
	kept := newProfileField(t, s, realm.ID, "Email", 2)
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{
		fieldValue(realm.ID, alice.ID, doomed.ID, "1"),
		fieldValue(realm.ID, alice.ID, kept.ID, "a@example.org"),
	}))
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{
		fieldValue(realm.ID, bob.ID, doomed.ID, "2"),
	}))

	require.NoError(t, s.DeleteProfileField(ctx, realm.ID, doomed.ID))
	_, err := s.GetProfileField(ctx, realm.ID, doomed.ID)
	assert.ErrorIs(t, err, storage.ErrNotFound)
	assert.ErrorIs(t, s.DeleteProfileField(ctx, realm.ID, doomed.ID), storage.ErrNotFound, "deleted twice")

	assert.Equal(t, []storage.ProfileFieldValue{fieldValue(realm.ID, alice.ID, kept.ID, "a@example.org")},
		listValues(t, s, realm.ID, nil), "the field's values are deleted with it")
	fields, err := s.ListProfileFields(ctx, realm.ID)
	require.NoError(t, err)
	assert.Equal(t, []storage.ProfileField{*kept}, fields)

	// The name is free again.
	newProfileField(t, s, realm.ID, "phone", 3)
}

func testProfileFieldValueRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	f1 := newProfileField(t, s, realm.ID, "f1", 1)
	f2 := newProfileField(t, s, realm.ID, "f2", 2)
	f3 := newProfileField(t, s, realm.ID, "f3", 3)
	f4 := newProfileField(t, s, realm.ID, "f4", 4)

	values := []storage.ProfileFieldValue{
		{RealmID: realm.ID, UserID: u.ID, FieldID: f3.ID, Value: "**bold** Ünïcødé 'q' \"x\"", RenderedValue: ptr("<p><strong>bold</strong> Ünïcødé</p>")},
		{RealmID: realm.ID, UserID: u.ID, FieldID: f1.ID, Value: "plain", RenderedValue: nil},
		{RealmID: realm.ID, UserID: u.ID, FieldID: f2.ID, Value: "", RenderedValue: ptr("")},
		{RealmID: realm.ID, UserID: u.ID, FieldID: f4.ID, Value: "[1,2]"},
	}
	require.NoError(t, s.SetProfileFieldValues(ctx, values))
	want := []storage.ProfileFieldValue{values[1], values[2], values[0], values[3]}
	assert.Equal(t, want, listValues(t, s, realm.ID, nil), "ordered by field; nil and empty rendered values kept apart")
	assert.Equal(t, want, listValues(t, s, realm.ID, []int64{u.ID}))

	require.NoError(t, s.SetProfileFieldValues(ctx, nil), "no values")
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{}), "no values")
	assert.Equal(t, want, listValues(t, s, realm.ID, nil))
}

func testProfileFieldValueReplace(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	f1 := newProfileField(t, s, realm.ID, "f1", 1)
	f2 := newProfileField(t, s, realm.ID, "f2", 2)

	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{
		{RealmID: realm.ID, UserID: alice.ID, FieldID: f1.ID, Value: "old", RenderedValue: ptr("<p>old</p>")},
		fieldValue(realm.ID, alice.ID, f2.ID, "kept"),
	}))
	bobValue := fieldValue(realm.ID, bob.ID, f1.ID, "bob's")
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{bobValue}))

	// Replacing one value leaves the user's other values alone; the
	// rendered value goes back to nil.
	replaced := fieldValue(realm.ID, alice.ID, f1.ID, "new")
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{replaced}))
	assert.Equal(t, []storage.ProfileFieldValue{replaced, fieldValue(realm.ID, alice.ID, f2.ID, "kept")},
		listValues(t, s, realm.ID, []int64{alice.ID}))

	// nil to non-nil rendered value, and a pair given twice: the last wins.
	rendered := storage.ProfileFieldValue{RealmID: realm.ID, UserID: alice.ID, FieldID: f2.ID, Value: "v2", RenderedValue: ptr("<p>v2</p>")}
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{
		fieldValue(realm.ID, alice.ID, f2.ID, "v1"),
		rendered,
	}))
	assert.Equal(t, []storage.ProfileFieldValue{replaced, rendered}, listValues(t, s, realm.ID, []int64{alice.ID}))

	assert.Equal(t, []storage.ProfileFieldValue{bobValue}, listValues(t, s, realm.ID, []int64{bob.ID}), "other users untouched")
}

func testProfileFieldValueRealmScope(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	u := newUser(t, s, realm.ID, "alice@example.com")
	f := newProfileField(t, s, realm.ID, "f", 1)
	g := newProfileField(t, s, realm.ID, "g", 2)
	foreignUser := newUser(t, s, other.ID, "foreign@example.com")
	foreignField := newProfileField(t, s, other.ID, "f", 1)
	existing := fieldValue(realm.ID, u.ID, f.ID, "existing")
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{existing}))
	foreignValue := fieldValue(other.ID, foreignUser.ID, foreignField.ID, "foreign")
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{foreignValue}))

	cases := []struct {
		name  string
		value storage.ProfileFieldValue
	}{
		{"field of another realm", fieldValue(realm.ID, u.ID, foreignField.ID, "x")},
		{"missing field", fieldValue(realm.ID, u.ID, foreignField.ID+1000, "x")},
		{"user of another realm", fieldValue(realm.ID, foreignUser.ID, g.ID, "x")},
		{"missing user", fieldValue(realm.ID, foreignUser.ID+1000, g.ID, "x")},
		{"missing realm", fieldValue(other.ID+1000, u.ID, g.ID, "x")},
		// The (user, field) pair has a value: the new one must not
		// overwrite it under another realm's ID.
		{"existing value under another realm", fieldValue(other.ID, u.ID, f.ID, "hijacked")},
		{"another realm's existing value", fieldValue(realm.ID, foreignUser.ID, foreignField.ID, "hijacked")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The whole call fails: the valid value is not written either.
			valid := fieldValue(realm.ID, u.ID, g.ID, "valid")
			err := s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{valid, tc.value})
			assert.ErrorIs(t, err, storage.ErrNotFound)
		})
	}
	assert.Equal(t, []storage.ProfileFieldValue{existing}, listValues(t, s, realm.ID, nil))
	assert.Equal(t, []storage.ProfileFieldValue{foreignValue}, listValues(t, s, other.ID, nil))
}

func testProfileFieldValueList(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	empty := newRealm(t, s, "empty")
	a := newUser(t, s, realm.ID, "a@example.com")
	b := newUser(t, s, realm.ID, "b@example.com")
	c := newUser(t, s, realm.ID, "c@example.com")
	foreign := newUser(t, s, other.ID, "foreign@example.com")
	f1 := newProfileField(t, s, realm.ID, "f1", 2)
	f2 := newProfileField(t, s, realm.ID, "f2", 1)
	foreignField := newProfileField(t, s, other.ID, "f1", 1)

	assert.Empty(t, listValues(t, s, realm.ID, nil))

	// Written out of order, one call per user.
	set := func(values ...storage.ProfileFieldValue) {
		t.Helper()
		require.NoError(t, s.SetProfileFieldValues(ctx, values))
	}
	set(fieldValue(realm.ID, b.ID, f2.ID, "b2"), fieldValue(realm.ID, b.ID, f1.ID, "b1"))
	set(fieldValue(other.ID, foreign.ID, foreignField.ID, "x"))
	set(fieldValue(realm.ID, a.ID, f2.ID, "a2"))
	set(fieldValue(realm.ID, c.ID, f1.ID, "c1"))

	all := []storage.ProfileFieldValue{
		fieldValue(realm.ID, a.ID, f2.ID, "a2"),
		fieldValue(realm.ID, b.ID, f1.ID, "b1"),
		fieldValue(realm.ID, b.ID, f2.ID, "b2"),
		fieldValue(realm.ID, c.ID, f1.ID, "c1"),
	}
	assert.Equal(t, all, listValues(t, s, realm.ID, nil), "nil: the whole realm, by user then field ID")
	assert.Equal(t, []storage.ProfileFieldValue{all[0], all[3]}, listValues(t, s, realm.ID, []int64{c.ID, a.ID, c.ID}))
	assert.Equal(t, all[1:3], listValues(t, s, realm.ID, []int64{b.ID, foreign.ID, c.ID + 1000}),
		"another realm's and missing users give nothing")

	values, err := s.ListProfileFieldValues(ctx, realm.ID, []int64{})
	require.NoError(t, err)
	assert.NotNil(t, values)
	assert.Empty(t, values, "empty, non-nil: no users")

	assert.Empty(t, listValues(t, s, empty.ID, nil))
	assert.Empty(t, listValues(t, s, empty.ID, []int64{a.ID}))
	assert.Empty(t, listValues(t, s, other.ID, []int64{a.ID, b.ID}))
}

func testProfileFieldValueDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	a := newUser(t, s, realm.ID, "a@example.com")
	b := newUser(t, s, realm.ID, "b@example.com")
	f1 := newProfileField(t, s, realm.ID, "f1", 1)
	f2 := newProfileField(t, s, realm.ID, "f2", 2)
	f3 := newProfileField(t, s, realm.ID, "f3", 3)
	require.NoError(t, s.SetProfileFieldValues(ctx, []storage.ProfileFieldValue{
		fieldValue(realm.ID, a.ID, f1.ID, "a1"),
		fieldValue(realm.ID, a.ID, f2.ID, "a2"),
		fieldValue(realm.ID, a.ID, f3.ID, "a3"),
	}))
	bValues := []storage.ProfileFieldValue{fieldValue(realm.ID, b.ID, f1.ID, "b1"), fieldValue(realm.ID, b.ID, f2.ID, "b2")}
	require.NoError(t, s.SetProfileFieldValues(ctx, bValues))

	require.NoError(t, s.DeleteProfileFieldValues(ctx, realm.ID, a.ID, nil))
	require.NoError(t, s.DeleteProfileFieldValues(ctx, realm.ID, a.ID, []int64{}))
	require.NoError(t, s.DeleteProfileFieldValues(ctx, other.ID, a.ID, []int64{f1.ID, f2.ID}), "wrong realm deletes nothing")
	assert.Len(t, listValues(t, s, realm.ID, []int64{a.ID}), 3)

	require.NoError(t, s.DeleteProfileFieldValues(ctx, realm.ID, a.ID, []int64{f3.ID, f1.ID, f3.ID}))
	assert.Equal(t, []storage.ProfileFieldValue{fieldValue(realm.ID, a.ID, f2.ID, "a2")}, listValues(t, s, realm.ID, []int64{a.ID}))
	require.NoError(t, s.DeleteProfileFieldValues(ctx, realm.ID, a.ID, []int64{f1.ID, f3.ID + 1000}), "fields without a value are ignored")
	assert.Equal(t, bValues, listValues(t, s, realm.ID, []int64{b.ID}), "other users untouched")

	// The fields themselves stay.
	fields, err := s.ListProfileFields(ctx, realm.ID)
	require.NoError(t, err)
	assert.Len(t, fields, 3)
}
