package chat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func newField(t *testing.T, h *chattest.Harness, typ int, name string, data map[string]any) int64 {
	t.Helper()
	req := chat.CreateProfileFieldRequest{Name: &name, FieldType: typ}
	if data != nil {
		req.FieldData = &data
	}
	resp, err := h.Service.CreateProfileField(context.Background(), h.Owner.Caller, req)
	require.NoError(t, err)
	return resp.ID
}

func TestProfileFields(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	choices := map[string]any{"go": map[string]any{"text": "Go", "order": "1"}, "py": map[string]any{"text": "Python", "order": "2"}}
	ids := map[int]int64{
		chat.FieldShortText:       newField(t, h, chat.FieldShortText, "Phone", nil),
		chat.FieldLongText:        newField(t, h, chat.FieldLongText, "Biography", nil),
		chat.FieldSelect:          newField(t, h, chat.FieldSelect, "Language", choices),
		chat.FieldDate:            newField(t, h, chat.FieldDate, "Birthday", nil),
		chat.FieldURL:             newField(t, h, chat.FieldURL, "Homepage", nil),
		chat.FieldUser:            newField(t, h, chat.FieldUser, "Mentor", nil),
		chat.FieldExternalAccount: newField(t, h, chat.FieldExternalAccount, "", map[string]any{"subtype": "github"}),
		chat.FieldPronouns:        newField(t, h, chat.FieldPronouns, "Pronouns", nil),
	}
	member := h.NewUser(t, chat.RoleMember)
	t.Run("list", func(t *testing.T) {
		got, err := h.Service.GetProfileFields(ctx, h.NewUser(t, chat.RoleGuest).Caller)
		require.NoError(t, err)
		checkSchema(t, "GET", "/realm/profile_fields", got)
		require.Len(t, got.CustomFields, 8)
		for i, f := range got.CustomFields {
			assert.Equal(t, i, f.Order)
			assert.Equal(t, ids[f.Type], f.ID)
			assert.True(t, f.EditableByUser)
		}
		assert.Equal(t, "GitHub", got.CustomFields[6].Name, "external accounts take the service's name")
	})
	t.Run("create errors", func(t *testing.T) {
		for _, c := range []struct {
			req  chat.CreateProfileFieldRequest
			code string
			msg  string
			kind chat.Kind
		}{
			{chat.CreateProfileFieldRequest{Name: ptr("X"), FieldType: 9}, chat.CodeBadRequest, "Invalid field type.", 0},
			{chat.CreateProfileFieldRequest{Name: ptr(" "), FieldType: 1}, chat.CodeBadRequest, "Label cannot be blank.", 0},
			{chat.CreateProfileFieldRequest{Name: ptr("phone"), FieldType: 1}, chat.CodeBadRequest, "A field with that label already exists.", chat.KindConflict},
			{chat.CreateProfileFieldRequest{Name: ptr(strings.Repeat("n", 41)), FieldType: 1}, chat.CodeBadRequest, "name is too long (limit: 40 characters)", 0},
			{chat.CreateProfileFieldRequest{Name: ptr("Hinted"), Hint: ptr(strings.Repeat("h", 81)), FieldType: 1}, chat.CodeBadRequest, "hint is too long (limit: 80 characters)", 0},
			{chat.CreateProfileFieldRequest{Name: ptr("Pick"), FieldType: 3}, chat.CodeRequestVariableMissing, "Missing 'field_data' argument", 0},
			{chat.CreateProfileFieldRequest{Name: ptr("Pick"), FieldType: 3, FieldData: &map[string]any{}}, chat.CodeBadRequest, "Field must have at least one choice.", 0},
			{chat.CreateProfileFieldRequest{Name: ptr("Pick"), FieldType: 3, FieldData: &map[string]any{"a": "b"}}, chat.CodeBadRequest, "field_data is not a dict of choices with text and order", 0},
			{chat.CreateProfileFieldRequest{Name: ptr("Acct"), FieldType: 7, FieldData: &map[string]any{"subtype": "myspace"}}, chat.CodeBadRequest, "Invalid external account type", 0},
			{chat.CreateProfileFieldRequest{Name: ptr("Acct"), FieldType: 7, FieldData: &map[string]any{"subtype": "custom", "url_pattern": "https://x.example.com/"}}, chat.CodeBadRequest, "Malformed URL pattern.", 0},
			{chat.CreateProfileFieldRequest{Name: ptr("Summary"), FieldType: 2, DisplayInProfileSummary: ptr(true)}, chat.CodeBadRequest, "Field type not supported for display in profile summary.", 0},
		} {
			_, err := h.Service.CreateProfileField(ctx, h.Owner.Caller, c.req)
			requireError(t, err, orInvalid(c.kind), c.code, c.msg)
		}
		_, err := h.Service.CreateProfileField(ctx, member.Caller, chat.CreateProfileFieldRequest{Name: ptr("Mine"), FieldType: 1})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
		for i := 0; i < 2; i++ {
			_, err := h.Service.CreateProfileField(ctx, h.Owner.Caller, chat.CreateProfileFieldRequest{Name: ptr(fmt.Sprint("Summary ", i)), FieldType: 1, DisplayInProfileSummary: ptr(true)})
			require.NoError(t, err)
		}
		_, err = h.Service.CreateProfileField(ctx, h.Owner.Caller, chat.CreateProfileFieldRequest{Name: ptr("Summary 3"), FieldType: 1, DisplayInProfileSummary: ptr(true)})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Only 2 custom profile fields can be displayed in the profile summary.")
	})
	set := func(updates ...chat.ProfileDataUpdate) error {
		_, err := h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: member.ID, UserUpdate: chat.UserUpdate{ProfileData: &updates}})
		return err
	}
	t.Run("values by type", func(t *testing.T) {
		require.NoError(t, set(
			chat.ProfileDataUpdate{ID: ids[chat.FieldShortText], Value: "+1 555 0100"},
			chat.ProfileDataUpdate{ID: ids[chat.FieldLongText], Value: "I **like** Go"},
			chat.ProfileDataUpdate{ID: ids[chat.FieldSelect], Value: "go"},
			chat.ProfileDataUpdate{ID: ids[chat.FieldDate], Value: "1990-05-17"},
			chat.ProfileDataUpdate{ID: ids[chat.FieldURL], Value: "https://example.com/me"},
			chat.ProfileDataUpdate{ID: ids[chat.FieldUser], Value: []any{float64(h.Owner.ID)}},
			chat.ProfileDataUpdate{ID: ids[chat.FieldExternalAccount], Value: "octocat"},
			chat.ProfileDataUpdate{ID: ids[chat.FieldPronouns], Value: "they/them"},
		))
		got, err := h.Service.GetUser(ctx, member.Caller, chat.GetUserRequest{UserID: member.ID, IncludeCustomProfileFields: ptr(true)})
		require.NoError(t, err)
		checkSchema(t, "GET", "/users/{user_id}", got)
		pd := got.User.ProfileData
		require.Len(t, pd, 8)
		key := func(typ int) string { return fmt.Sprint(ids[typ]) }
		assert.Equal(t, "I **like** Go", pd[key(chat.FieldLongText)].Value)
		assert.Equal(t, ptr("<p>I <strong>like</strong> Go</p>"), pd[key(chat.FieldLongText)].RenderedValue)
		assert.NotNil(t, pd[key(chat.FieldShortText)].RenderedValue, "short text is rendered too")
		assert.Nil(t, pd[key(chat.FieldDate)].RenderedValue)
		assert.Equal(t, fmt.Sprintf("[%d]", h.Owner.ID), pd[key(chat.FieldUser)].Value)
		me, err := h.Service.GetOwnUser(ctx, member.Caller)
		require.NoError(t, err)
		assert.Equal(t, pd, me.ProfileData)
		all, err := h.Service.GetUsers(ctx, member.Caller, chat.GetUsersRequest{IncludeCustomProfileFields: ptr(true)})
		require.NoError(t, err)
		checkSchema(t, "GET", "/users", all)
	})
	t.Run("rejected values", func(t *testing.T) {
		gone := h.NewUser(t, chat.RoleMember)
		h.Deactivate(t, gone)
		for _, c := range []struct {
			up   chat.ProfileDataUpdate
			msg  string
			kind chat.Kind
		}{
			{chat.ProfileDataUpdate{ID: 9999, Value: "x"}, "Field id 9999 not found.", chat.KindNotFound},
			{chat.ProfileDataUpdate{ID: ids[chat.FieldShortText], Value: strings.Repeat("x", 51)}, "Phone is too long (limit: 50 characters)", 0},
			{chat.ProfileDataUpdate{ID: ids[chat.FieldLongText], Value: strings.Repeat("x", 501)}, "Biography is too long (limit: 500 characters)", 0},
			{chat.ProfileDataUpdate{ID: ids[chat.FieldSelect], Value: "rust"}, "'rust' is not a valid choice for 'Language'.", 0},
			{chat.ProfileDataUpdate{ID: ids[chat.FieldDate], Value: "17/05/1990"}, "Birthday is not a date", 0},
			{chat.ProfileDataUpdate{ID: ids[chat.FieldURL], Value: "javascript:alert(1)"}, "Homepage is not a URL", 0},
			{chat.ProfileDataUpdate{ID: ids[chat.FieldUser], Value: []any{float64(9999)}}, "Invalid user ID: 9999", chat.KindNotFound},
			{chat.ProfileDataUpdate{ID: ids[chat.FieldUser], Value: []any{float64(gone.ID)}}, fmt.Sprintf("Invalid user ID: %d", gone.ID), chat.KindNotFound},
			{chat.ProfileDataUpdate{ID: ids[chat.FieldUser], Value: "not a list"}, "Mentor is not a list of user IDs", 0},
			{chat.ProfileDataUpdate{ID: ids[chat.FieldShortText], Value: 42.0}, "Phone is not a string", 0},
		} {
			before, err := h.Service.GetUser(ctx, h.Owner.Caller, chat.GetUserRequest{UserID: member.ID, IncludeCustomProfileFields: ptr(true)})
			require.NoError(t, err)
			requireError(t, set(c.up), orInvalid(c.kind), chat.CodeBadRequest, c.msg)
			after, err := h.Service.GetUser(ctx, h.Owner.Caller, chat.GetUserRequest{UserID: member.ID, IncludeCustomProfileFields: ptr(true)})
			require.NoError(t, err)
			assert.Equal(t, before, after)
		}
	})
	t.Run("an empty value removes", func(t *testing.T) {
		require.NoError(t, set(chat.ProfileDataUpdate{ID: ids[chat.FieldPronouns], Value: ""}, chat.ProfileDataUpdate{ID: ids[chat.FieldURL], Value: nil}))
		got, err := h.Service.GetUser(ctx, member.Caller, chat.GetUserRequest{UserID: member.ID, IncludeCustomProfileFields: ptr(true)})
		require.NoError(t, err)
		assert.Len(t, got.User.ProfileData, 6)
	})
	t.Run("reorder and delete", func(t *testing.T) {
		got, err := h.Service.GetProfileFields(ctx, h.Owner.Caller)
		require.NoError(t, err)
		var order []int64
		for i := len(got.CustomFields) - 1; i >= 0; i-- {
			order = append(order, got.CustomFields[i].ID)
		}
		_, err = h.Service.ReorderProfileFields(ctx, member.Caller, chat.ReorderProfileFieldsRequest{Order: order})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "")
		_, err = h.Service.ReorderProfileFields(ctx, h.Owner.Caller, chat.ReorderProfileFieldsRequest{Order: order[1:]})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid order mapping.")
		resp, err := h.Service.ReorderProfileFields(ctx, h.Owner.Caller, chat.ReorderProfileFieldsRequest{Order: order})
		require.NoError(t, err)
		checkSchema(t, "PATCH", "/realm/profile_fields", resp)
		again, err := h.Service.GetProfileFields(ctx, h.Owner.Caller)
		require.NoError(t, err)
		assert.Equal(t, order[0], again.CustomFields[0].ID)

		_, err = h.Service.DeleteProfileField(ctx, member.Caller, chat.DeleteProfileFieldRequest{FieldID: ids[chat.FieldDate]})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "")
		_, err = h.Service.DeleteProfileField(ctx, h.Owner.Caller, chat.DeleteProfileFieldRequest{FieldID: ids[chat.FieldDate]})
		require.NoError(t, err)
		_, err = h.Service.DeleteProfileField(ctx, h.Owner.Caller, chat.DeleteProfileFieldRequest{FieldID: ids[chat.FieldDate]})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, fmt.Sprintf("Field id %d not found.", ids[chat.FieldDate]))
		u, err := h.Service.GetUser(ctx, member.Caller, chat.GetUserRequest{UserID: member.ID, IncludeCustomProfileFields: ptr(true)})
		require.NoError(t, err)
		assert.NotContains(t, u.User.ProfileData, fmt.Sprint(ids[chat.FieldDate]), "values go with their field")
	})
}

func TestDrafts(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	other := h.NewUser(t, chat.RoleMember)
	channel := newChannel(t, h, "drafts here", false)
	hidden := newChannel(t, h, "drafts hidden", true)
	d := func(typ string, to []int64, topic, content string) chat.DraftInput {
		return chat.DraftInput{Type: &typ, To: &to, Topic: &topic, Content: &content}
	}
	created, err := h.Service.CreateDrafts(ctx, u.Caller, chat.CreateDraftsRequest{Drafts: []chat.DraftInput{
		d("private", []int64{other.ID}, "ignored", "hello"),
		d("stream", []int64{channel}, "  greetings  ", "hi all"),
		d("", []int64{1, 2}, "x", "unaddressed"),
	}})
	require.NoError(t, err)
	checkSchema(t, "POST", "/drafts", created)
	require.Len(t, created.IDs, 3)

	h.Clock.Advance(60e9)
	later := d("private", []int64{other.ID}, "", "edited")
	_, err = h.Service.EditDraft(ctx, u.Caller, chat.EditDraftRequest{DraftID: created.IDs[0], Draft: later})
	require.NoError(t, err)
	got, err := h.Service.GetDrafts(ctx, u.Caller)
	require.NoError(t, err)
	checkSchema(t, "GET", "/drafts", got)
	require.Equal(t, 3, got.Count)
	assert.Equal(t, []int64{created.IDs[1], created.IDs[2], created.IDs[0]},
		[]int64{got.Drafts[0].ID, got.Drafts[1].ID, got.Drafts[2].ID}, "oldest edit first, as the reference lists them")
	assert.Equal(t, "edited", got.Drafts[2].Content)
	assert.Equal(t, "", got.Drafts[2].Topic)
	byID := map[int64]chat.Draft{}
	for _, x := range got.Drafts {
		byID[x.ID] = x
	}
	assert.Equal(t, "greetings", byID[created.IDs[1]].Topic)
	assert.Equal(t, []int64{}, byID[created.IDs[2]].To, "unaddressed drafts have no recipients")

	for _, c := range []struct {
		in   chat.DraftInput
		msg  string
		kind chat.Kind
	}{
		{d("stream", []int64{1, 2}, "t", "c"), "Must specify exactly 1 channel ID for channel messages", 0},
		{d("stream", []int64{9999}, "t", "c"), "Invalid channel ID", chat.KindNotFound},
		{d("stream", []int64{hidden}, "t", "c"), "Invalid channel ID", chat.KindNotFound},
		{d("private", []int64{9999}, "", "c"), "Invalid user ID 9999", chat.KindNotFound},
		{d("group", nil, "", "c"), `Invalid drafts[0]["type"]: allowed values are "", "stream", "private"`, 0},
		{d("", nil, "", "a\x00b"), "Content must not contain null bytes", 0},
		{chat.DraftInput{Type: ptr("")}, `drafts[0]["to"] field is missing: Field required`, 0},
		{chat.DraftInput{Type: ptr(""), To: &[]int64{}, Topic: ptr(""), Content: ptr("x"), Timestamp: ptr(int64(-5))}, "Timestamp must not be negative.", 0},
	} {
		_, err := h.Service.CreateDrafts(ctx, u.Caller, chat.CreateDraftsRequest{Drafts: []chat.DraftInput{c.in}})
		requireError(t, err, orInvalid(c.kind), chat.CodeBadRequest, c.msg)
	}
	// Drafts are private: another user cannot edit or delete them.
	_, err = h.Service.EditDraft(ctx, other.Caller, chat.EditDraftRequest{DraftID: created.IDs[1], Draft: later})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Draft does not exist")
	_, err = h.Service.DeleteDraft(ctx, other.Caller, chat.DeleteDraftRequest{DraftID: created.IDs[1]})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Draft does not exist")
	resp, err := h.Service.DeleteDraft(ctx, u.Caller, chat.DeleteDraftRequest{DraftID: created.IDs[1]})
	require.NoError(t, err)
	checkSchema(t, "DELETE", "/drafts/{draft_id}", resp)
	_, err = h.Service.DeleteDraft(ctx, u.Caller, chat.DeleteDraftRequest{DraftID: created.IDs[1]})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Draft does not exist")
}

func TestUpdateRealm(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	for _, role := range []int{chat.RoleModerator, chat.RoleMember, chat.RoleGuest} {
		_, err := h.Service.UpdateRealm(ctx, h.NewUser(t, role).Caller, chat.UpdateRealmRequest{Name: ptr("Hijacked")})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	}
	admin := h.NewUser(t, chat.RoleAdministrator)
	_, err := h.Service.UpdateRealm(ctx, admin.Caller, chat.UpdateRealmRequest{Name: ptr("Renamed Org"), Description: ptr("**Hi**"),
		NameChangesDisabled: ptr(true), EmailChangesDisabled: ptr(true), WaitingPeriodThreshold: ptr(3), EmailAddressVisibility: ptr(2)})
	require.NoError(t, err)
	got, err := h.Service.GetRealmSettings(ctx, h.NewUser(t, chat.RoleGuest).Caller)
	require.NoError(t, err)
	checkEnvelope(t, got)
	assert.Equal(t, "Renamed Org", got.RealmName)
	assert.Equal(t, "<p><strong>Hi</strong></p>", got.RealmRenderedDescription)
	assert.True(t, got.RealmNameChangesDisabled)
	assert.True(t, got.RealmEmailChangesDisabled)
	assert.Equal(t, 3, got.RealmWaitingPeriodThreshold)
	assert.Equal(t, 2, got.RealmEmailAddressVisibility)
	members, err := h.Store.GetGroupByName(ctx, h.RealmID, chat.GroupMembers)
	require.NoError(t, err)
	assert.Equal(t, &members.ID, got.RealmCanCreateBotsGroup.GroupID, "the reference default: members")

	for _, c := range []struct {
		req  chat.UpdateRealmRequest
		code string
		msg  string
		kind chat.Kind
	}{
		{chat.UpdateRealmRequest{Name: ptr(" ")}, chat.CodeBadRequest, "Organization name can't be empty.", 0},
		{chat.UpdateRealmRequest{EmailAddressVisibility: ptr(7)}, chat.CodeBadRequest, "Invalid email_address_visibility: allowed values are 1, 2, 3, 4, 5", 0},
		{chat.UpdateRealmRequest{WaitingPeriodThreshold: ptr(-1)}, chat.CodeBadRequest, "", 0},
		{chat.UpdateRealmRequest{CanCreateBotsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: ptr(int64(9999))}}}, chat.CodeBadRequest, "Invalid user group ID: 9999", chat.KindNotFound},
		{chat.UpdateRealmRequest{CanCreateBotsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{DirectMembers: []int64{9999}}}}, chat.CodeBadRequest, "Invalid user ID: 9999", chat.KindNotFound},
		{chat.UpdateRealmRequest{CanCreateBotsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &members.ID},
			Old: &chat.GroupSettingValue{GroupID: ptr(members.ID + 1)}}}, "EXPECTATION_MISMATCH", "'old' value does not match the expected value.", 0},
		{chat.UpdateRealmRequest{Name: ptr("Fine"), CanCreateBotsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: ptr(int64(9999))}}}, chat.CodeBadRequest, "Invalid user group ID: 9999", chat.KindNotFound},
	} {
		_, err := h.Service.UpdateRealm(ctx, admin.Caller, c.req)
		requireError(t, err, orInvalid(c.kind), c.code, c.msg)
	}
	after, err := h.Service.GetRealmSettings(ctx, admin.Caller)
	require.NoError(t, err)
	assert.Equal(t, got, after, "rejected requests changed nothing")

	_, err = h.Service.UpdateRealm(ctx, admin.Caller, chat.UpdateRealmRequest{CanCreateBotsGroup: &chat.GroupSettingUpdate{
		New: &chat.GroupSettingValue{DirectMembers: []int64{admin.ID}, DirectSubgroups: []int64{members.ID}},
		Old: &chat.GroupSettingValue{GroupID: &members.ID}}})
	require.NoError(t, err)
	after, err = h.Service.GetRealmSettings(ctx, admin.Caller)
	require.NoError(t, err)
	assert.Equal(t, chat.GroupSettingValue{DirectMembers: []int64{admin.ID}, DirectSubgroups: []int64{members.ID}}, after.RealmCanCreateBotsGroup)
}

// GET /users/me reads its profile values through the record cache: a
// change, and a field's deletion, show at once.
func TestOwnUserSeesProfileChangesAtOnce(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	member := h.NewUser(t, chat.RoleMember)
	f, err := h.Service.CreateProfileField(ctx, h.Owner.Caller, chat.CreateProfileFieldRequest{Name: ptr("Phone"), FieldType: chat.FieldShortText})
	require.NoError(t, err)
	own := func() map[string]chat.ProfileFieldValue {
		me, err := h.Service.GetOwnUser(ctx, member.Caller)
		require.NoError(t, err)
		return me.ProfileData
	}
	require.Empty(t, own())
	updates := []chat.ProfileDataUpdate{{ID: f.ID, Value: "+1 555 0100"}}
	_, err = h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: member.ID, UserUpdate: chat.UserUpdate{ProfileData: &updates}})
	require.NoError(t, err)
	require.Equal(t, "+1 555 0100", own()[fmt.Sprint(f.ID)].Value)
	_, err = h.Service.DeleteProfileField(ctx, h.Owner.Caller, chat.DeleteProfileFieldRequest{FieldID: f.ID})
	require.NoError(t, err)
	require.Empty(t, own())
}
