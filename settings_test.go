package chat_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
)

// userRow reads the stored user record (to check that rejected requests
// leave it byte-identical).
func userRow(t *testing.T, h *chattest.Harness, id int64) storage.User {
	t.Helper()
	u, err := h.Store.GetUser(context.Background(), h.RealmID, id)
	require.NoError(t, err)
	return *u
}

// settingValues lists, for every settings parameter, a valid non-default
// value and invalid values (as JSON, the way a client sends them).
var settingValues = map[string]struct {
	valid   string
	invalid []string
}{
	"twenty_four_hour_time":                               {"true", nil},
	"web_mark_read_on_scroll_policy":                      {"3", []string{"0", "4"}},
	"web_channel_default_view":                            {"2", []string{"0", "3"}},
	"starred_message_counts":                              {"false", nil},
	"receives_typing_notifications":                       {"false", nil},
	"web_suggest_update_timezone":                         {"false", nil},
	"fluid_layout_width":                                  {"true", nil},
	"high_contrast_mode":                                  {"true", nil},
	"web_font_size_px":                                    {"20", []string{"32768", "-1"}},
	"web_line_height_percent":                             {"150", []string{"-1", "40000"}},
	"color_scheme":                                        {"2", []string{"0", "4"}},
	"enable_drafts_synchronization":                       {"false", nil},
	"translate_emoticons":                                 {"true", nil},
	"display_emoji_reaction_users":                        {"false", nil},
	"default_language":                                    {`"de"`, []string{`"xx"`, `""`, `"EN"`}},
	"web_home_view":                                       {`"recent_topics"`, []string{`"home"`, `""`}},
	"web_escape_navigates_to_home_view":                   {"false", nil},
	"left_side_userlist":                                  {"true", nil},
	"emojiset":                                            {`"text"`, []string{`"apple"`}},
	"demote_inactive_streams":                             {"3", []string{"4"}},
	"user_list_style":                                     {"1", []string{"0", "4"}},
	"web_animate_image_previews":                          {`"never"`, []string{`"sometimes"`}},
	"web_stream_unreads_count_display_policy":             {"3", []string{"4"}},
	"hide_ai_features":                                    {"true", nil},
	"enable_stream_desktop_notifications":                 {"true", nil},
	"enable_stream_email_notifications":                   {"true", nil},
	"enable_stream_push_notifications":                    {"true", nil},
	"enable_stream_audible_notifications":                 {"true", nil},
	"notification_sound":                                  {`"ding"`, []string{`"bang"`}},
	"enable_desktop_notifications":                        {"false", nil},
	"enable_sounds":                                       {"false", nil},
	"email_notifications_batching_period_seconds":         {"600", []string{"0", "604801"}},
	"enable_offline_email_notifications":                  {"false", nil},
	"enable_offline_push_notifications":                   {"false", nil},
	"enable_online_push_notifications":                    {"false", nil},
	"enable_followed_topic_desktop_notifications":         {"false", nil},
	"enable_followed_topic_email_notifications":           {"false", nil},
	"enable_followed_topic_push_notifications":            {"false", nil},
	"enable_followed_topic_audible_notifications":         {"false", nil},
	"enable_digest_emails":                                {"false", nil},
	"enable_marketing_emails":                             {"false", nil},
	"enable_login_emails":                                 {"false", nil},
	"message_content_in_email_notifications":              {"false", nil},
	"pm_content_in_desktop_notifications":                 {"false", nil},
	"wildcard_mentions_notify":                            {"false", nil},
	"enable_followed_topic_wildcard_mentions_notify":      {"false", nil},
	"desktop_icon_count_display":                          {"4", []string{"5"}},
	"realm_name_in_email_notifications_policy":            {"2", []string{"4"}},
	"automatically_follow_topics_policy":                  {"4", []string{"5"}},
	"automatically_unmute_topics_in_muted_streams_policy": {"1", []string{"0"}},
	"automatically_follow_topics_where_mentioned":         {"false", nil},
	"presence_enabled":                                    {"false", nil},
	"enter_sends":                                         {"true", nil},
	"send_private_typing_notifications":                   {"false", nil},
	"send_stream_typing_notifications":                    {"false", nil},
	"send_read_receipts":                                  {"false", nil},
	"allow_private_data_export":                           {"true", nil},
	"email_address_visibility":                            {"4", []string{"6"}},
	"web_navigate_to_sent_message":                        {"false", nil},
}

// patchFor builds an UpdateSettingsRequest setting one parameter from JSON.
func patchFor(t *testing.T, name, value string) chat.UpdateSettingsRequest {
	t.Helper()
	var req chat.UpdateSettingsRequest
	require.NoError(t, json.Unmarshal([]byte(`{"`+name+`":`+value+`}`), &req.SettingsPatch), name)
	return req
}

func TestSettingsCoverEveryParameter(t *testing.T) {
	// Every field of Settings has a test value, and the defaults are complete.
	typ := reflect.TypeOf(chat.Settings{})
	require.Equal(t, typ.NumField(), len(settingValues))
	for i := 0; i < typ.NumField(); i++ {
		name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
		_, ok := settingValues[name]
		assert.True(t, ok, "no test values for %s", name)
	}
}

func TestUpdateSettingsEachParameter(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	for name, c := range settingValues {
		t.Run(name, func(t *testing.T) {
			req := patchFor(t, name, c.valid)
			resp, err := h.Service.UpdateSettings(ctx, u.Caller, req)
			require.NoError(t, err)
			checkSchema(t, "PATCH", "/settings", resp)
			got, err := h.Service.GetSettings(ctx, u.Caller)
			require.NoError(t, err)
			doc, err := json.Marshal(got.UserSettings)
			require.NoError(t, err)
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(doc, &m))
			assert.JSONEq(t, c.valid, string(m[name]))
			me, err := h.Service.GetOwnUser(ctx, u.Caller)
			require.NoError(t, err)
			assert.Equal(t, got.UserSettings.Settings, me.Settings, "the own-user data carries the settings")

			for _, bad := range c.invalid {
				before := userRow(t, h, u.ID)
				_, err := h.Service.UpdateSettings(ctx, u.Caller, patchFor(t, name, bad))
				e := requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "")
				assert.Contains(t, e.Msg, name, "the message names the parameter")
				assert.Contains(t, e.Msg, "Invalid", bad)
				assert.Equal(t, before, userRow(t, h, u.ID), "rejected: row unchanged")
			}
		})
	}
}

func TestUpdateSettingsEnumMessagesListAllowedValues(t *testing.T) {
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	_, err := h.Service.UpdateSettings(context.Background(), u.Caller, patchFor(t, "color_scheme", "9"))
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid color_scheme: allowed values are 1, 2, 3")
	_, err = h.Service.UpdateSettings(context.Background(), u.Caller, patchFor(t, "web_home_view", `"x"`))
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid web_home_view: allowed values are recent_topics, inbox, all_messages")
}

func TestSettingsDefaultsAndStorage(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	got, err := h.Service.GetSettings(ctx, u.Caller)
	require.NoError(t, err)
	assert.Equal(t, chat.DefaultSettings, got.UserSettings.Settings)
	assert.Equal(t, "", userRow(t, h, u.ID).Settings, "defaults cost no storage")

	_, err = h.Service.UpdateSettings(ctx, u.Caller, patchFor(t, "color_scheme", "2"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"color_scheme":2}`, userRow(t, h, u.ID).Settings, "only changed values are stored")
	_, err = h.Service.UpdateSettings(ctx, u.Caller, patchFor(t, "color_scheme", "1"))
	require.NoError(t, err)
	assert.Equal(t, "", userRow(t, h, u.ID).Settings)
}

func TestUpdateSettingsAtomic(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	before := userRow(t, h, u.ID)
	req := patchFor(t, "color_scheme", "2")
	req.FullName = ptr("A Good Name")
	req.Timezone = ptr("Europe/Paris")
	req.WebFontSizePx = ptr(-1) // one bad value rejects everything
	_, err := h.Service.UpdateSettings(ctx, u.Caller, req)
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid web_font_size_px: must be between 0 and 32767")
	assert.Equal(t, before, userRow(t, h, u.ID))

	req.WebFontSizePx = nil
	_, err = h.Service.UpdateSettings(ctx, u.Caller, req)
	require.NoError(t, err)
	after := userRow(t, h, u.ID)
	assert.Equal(t, "A Good Name", after.FullName)
	assert.Equal(t, "Europe/Paris", after.Timezone)
	assert.JSONEq(t, `{"color_scheme":2}`, after.Settings)
}

func TestUpdateSettingsFullNameAndTimezone(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	for _, c := range []struct{ name, msg string }{
		{"A", "Name too short!"}, {strings.Repeat("x", 101), "Name too long!"}, {"Bad@Name", "Invalid characters in name!"},
		{"Name|42", "Invalid format!"},
	} {
		before := userRow(t, h, u.ID)
		_, err := h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{FullName: &c.name})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, c.msg)
		assert.Equal(t, before, userRow(t, h, u.ID))
	}
	_, err := h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{FullName: ptr("  New Name ")})
	require.NoError(t, err)
	assert.Equal(t, "New Name", userRow(t, h, u.ID).FullName)

	for _, tz := range []string{"America/New_York", "UTC", "Asia/Kolkata", ""} {
		_, err := h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{Timezone: ptr(tz)})
		require.NoError(t, err, tz)
		assert.Equal(t, tz, userRow(t, h, u.ID).Timezone)
	}
	for _, tz := range []string{"Mars/Olympus", "Local", "/etc/passwd", "../../etc/passwd", "Europe/"} {
		_, err := h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{Timezone: ptr(tz)})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Not a recognized time zone")
	}

	t.Run("name changes disabled", func(t *testing.T) {
		_, err := h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{NameChangesDisabled: ptr(true)})
		require.NoError(t, err)
		// The reference ignores the new name and answers success.
		_, err = h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{FullName: ptr("Other Name")})
		require.NoError(t, err)
		assert.Equal(t, "New Name", userRow(t, h, u.ID).FullName)
		// Sending the current name is not a change.
		_, err = h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{FullName: ptr("New Name")})
		require.NoError(t, err)
		// Administrators still may.
		admin := h.NewUser(t, chat.RoleAdministrator)
		_, err = h.Service.UpdateSettings(ctx, admin.Caller, chat.UpdateSettingsRequest{FullName: ptr("Admin Renamed")})
		require.NoError(t, err)
	})
}

func TestUpdateSettingsPassword(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	login := func(pw string) error {
		_, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: u.Email, Password: pw})
		return err
	}
	cases := []struct {
		name     string
		old, new *string
		code     string
		msg      string
	}{
		{"new without old", nil, ptr("a new password"), chat.CodeBadRequest, "Wrong password!"},
		{"wrong old", ptr("not my password"), ptr("a new password"), chat.CodeBadRequest, "Wrong password!"},
		{"weak new", ptr(chattest.Password), ptr("123"), chat.CodeBadRequest, "The password is too weak."},
	}
	for _, c := range cases {
		before := userRow(t, h, u.ID)
		_, err := h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{OldPassword: c.old, NewPassword: c.new})
		requireError(t, err, chat.KindInvalid, c.code, c.msg)
		assert.Equal(t, before, userRow(t, h, u.ID), c.name)
	}
	require.NoError(t, login(chattest.Password), "unchanged")
	// old_password alone changes nothing and is no error.
	_, err := h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{OldPassword: ptr("whatever")})
	require.NoError(t, err)

	_, err = h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{OldPassword: ptr(chattest.Password), NewPassword: ptr("a brand new password")})
	require.NoError(t, err)
	require.Error(t, login(chattest.Password))
	require.NoError(t, login("a brand new password"))

	t.Run("guessing the old password is rate limited", func(t *testing.T) {
		v := h.NewUser(t, chat.RoleMember)
		for i := 0; i < chat.DefaultLimits.LoginAttempts; i++ {
			_, err := h.Service.UpdateSettings(ctx, v.Caller, chat.UpdateSettingsRequest{OldPassword: ptr("guess"), NewPassword: ptr("a new password")})
			requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Wrong password!")
		}
		_, err := h.Service.UpdateSettings(ctx, v.Caller, chat.UpdateSettingsRequest{OldPassword: ptr(chattest.Password), NewPassword: ptr("a new password")})
		requireError(t, err, chat.KindRateLimited, chat.CodeRateLimitHit, "")
	})
}

func TestUpdateSettingsEmailChange(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var sent []chat.EmailChangeNotice
	notify := func(_ context.Context, n chat.EmailChangeNotice) error {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, n)
		return nil
	}
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithEmailChangeNotifier(notify)))
	u := h.NewUser(t, chat.RoleMember)
	other := h.NewUser(t, chat.RoleMember)

	for _, c := range []struct {
		email, msg string
		kind       chat.Kind
	}{
		{"not an email", "Bad name or username", 0},
		{strings.ToUpper(other.Email), "Email is already in use.", chat.KindConflict},
	} {
		before := userRow(t, h, u.ID)
		_, err := h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{Email: ptr(c.email)})
		requireError(t, err, orInvalid(c.kind), chat.CodeBadRequest, c.msg)
		assert.Equal(t, before, userRow(t, h, u.ID))
	}
	require.Empty(t, sent)

	// The current address (in any case) is not a change.
	_, err := h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{Email: ptr(strings.ToUpper(u.Email))})
	require.NoError(t, err)
	require.Empty(t, sent)

	_, err = h.Service.UpdateSettings(ctx, u.Caller, chat.UpdateSettingsRequest{Email: ptr("new.address@example.com")})
	require.NoError(t, err)
	require.Len(t, sent, 1)
	assert.Equal(t, u.Email, sent[0].OldEmail)
	assert.Equal(t, "new.address@example.com", sent[0].NewEmail)
	assert.Equal(t, u.Email, userRow(t, h, u.ID).Email, "nothing changes before confirmation")

	_, err = h.Service.ConfirmEmailChange(ctx, h.RealmID, chat.ConfirmEmailChangeRequest{Key: "wrong"})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid or expired confirmation key")
	_, err = h.Service.ConfirmEmailChange(ctx, h.RealmID, chat.ConfirmEmailChangeRequest{})
	requireError(t, err, chat.KindInvalid, chat.CodeRequestVariableMissing, "")
	other2 := h.NewRealm(t, "http://other.example.com")
	_, err = h.Service.ConfirmEmailChange(ctx, other2.RealmID, chat.ConfirmEmailChangeRequest{Key: sent[0].Key})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid or expired confirmation key")

	resp, err := h.Service.ConfirmEmailChange(ctx, h.RealmID, chat.ConfirmEmailChangeRequest{Key: sent[0].Key})
	require.NoError(t, err)
	checkEnvelope(t, resp)
	assert.Equal(t, &chat.ConfirmEmailChangeResponse{UserID: u.ID, Email: "new.address@example.com"}, resp)
	c, err := h.Service.Authenticate(ctx, h.RealmID, "new.address@example.com", u.APIKey)
	require.NoError(t, err, "the API key keeps working with the new email")
	assert.Equal(t, u.Caller, c)
	_, err = h.Service.ConfirmEmailChange(ctx, h.RealmID, chat.ConfirmEmailChangeRequest{Key: sent[0].Key})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid or expired confirmation key") // used up

	t.Run("expired", func(t *testing.T) {
		_, err := h.Service.UpdateSettings(ctx, other.Caller, chat.UpdateSettingsRequest{Email: ptr("later@example.com")})
		require.NoError(t, err)
		key := sent[len(sent)-1].Key
		h.Clock.Advance(chat.EmailChangeValidity + time.Second)
		_, err = h.Service.ConfirmEmailChange(ctx, h.RealmID, chat.ConfirmEmailChangeRequest{Key: key})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid or expired confirmation key")
		_, err = h.Store.GetEmailChangeByKey(ctx, h.RealmID, key)
		require.ErrorIs(t, err, storage.ErrNotFound, "an expired change is removed")
	})
	t.Run("taken before confirmation", func(t *testing.T) {
		v := h.NewUser(t, chat.RoleMember)
		_, err := h.Service.UpdateSettings(ctx, v.Caller, chat.UpdateSettingsRequest{Email: ptr("contested@example.com")})
		require.NoError(t, err)
		key := sent[len(sent)-1].Key
		h.Provision(t, chat.ProvisionUserRequest{Email: "contested@example.com", FullName: "Quick One"})
		_, err = h.Service.ConfirmEmailChange(ctx, h.RealmID, chat.ConfirmEmailChangeRequest{Key: key})
		requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "Email is already in use.")
	})
	t.Run("email changes disabled", func(t *testing.T) {
		_, err := h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{EmailChangesDisabled: ptr(true)})
		require.NoError(t, err)
		_, err = h.Service.UpdateSettings(ctx, other.Caller, chat.UpdateSettingsRequest{Email: ptr("blocked@example.com")})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Email address changes are disabled in this organization.")
		_, err = h.Service.UpdateSettings(ctx, h.Owner.Caller, chat.UpdateSettingsRequest{Email: ptr("boss@example.com")})
		require.NoError(t, err, "administrators still may")
	})
}

func TestUpdateSettingsDraftsSynchronization(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	_, err := h.Service.CreateDrafts(ctx, u.Caller, chat.CreateDraftsRequest{Drafts: []chat.DraftInput{
		{Type: ptr(""), To: &[]int64{}, Topic: ptr(""), Content: ptr("one")},
		{Type: ptr(""), To: &[]int64{}, Topic: ptr(""), Content: ptr("two")},
	}})
	require.NoError(t, err)
	_, err = h.Service.UpdateSettings(ctx, u.Caller, patchFor(t, "enable_drafts_synchronization", "false"))
	require.NoError(t, err)
	rows, err := h.Store.ListDrafts(ctx, h.RealmID, u.ID)
	require.NoError(t, err)
	assert.Empty(t, rows, "turning synchronization off deletes stored drafts")
	_, err = h.Service.GetDrafts(ctx, u.Caller)
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "User has disabled synchronizing drafts.")
	_, err = h.Service.UpdateSettings(ctx, u.Caller, patchFor(t, "enable_drafts_synchronization", "true"))
	require.NoError(t, err)
	got, err := h.Service.GetDrafts(ctx, u.Caller)
	require.NoError(t, err)
	assert.Zero(t, got.Count)
}

func TestEmailVisibilityIsPerUser(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	viewer := h.NewUser(t, chat.RoleMember)
	_, err := h.Service.UpdateSettings(ctx, u.Caller, patchFor(t, "email_address_visibility", "3"))
	require.NoError(t, err)
	got, err := h.Service.GetUser(ctx, viewer.Caller, chat.GetUserRequest{UserID: u.ID})
	require.NoError(t, err)
	assert.Nil(t, got.User.DeliveryEmail)
	assert.Equal(t, "user"+itoa(u.ID)+"@chat.example.com", got.User.Email)
	got, err = h.Service.GetUser(ctx, h.Owner.Caller, chat.GetUserRequest{UserID: u.ID})
	require.NoError(t, err)
	assert.Equal(t, ptr(u.Email), got.User.DeliveryEmail)

	// The organization setting caps everyone's at once; users restrict further.
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{EmailAddressVisibility: ptr(chat.EmailVisibleAdministrators)})
	require.NoError(t, err)
	open := h.NewUser(t, chat.RoleMember)
	got, err = h.Service.GetUser(ctx, viewer.Caller, chat.GetUserRequest{UserID: open.ID})
	require.NoError(t, err)
	assert.Nil(t, got.User.DeliveryEmail, "capped by the organization")
	got, err = h.Service.GetUser(ctx, h.Owner.Caller, chat.GetUserRequest{UserID: open.ID})
	require.NoError(t, err)
	assert.Equal(t, ptr(open.Email), got.User.DeliveryEmail)
	_, err = h.Service.UpdateSettings(ctx, open.Caller, patchFor(t, "email_address_visibility", "4"))
	require.NoError(t, err)
	got, err = h.Service.GetUser(ctx, h.Owner.Caller, chat.GetUserRequest{UserID: open.ID})
	require.NoError(t, err)
	assert.Nil(t, got.User.DeliveryEmail, "the user's own setting is stricter")
	s, err := h.Service.GetSettings(ctx, viewer.Caller)
	require.NoError(t, err)
	assert.Equal(t, chat.EmailVisibleEveryone, s.UserSettings.EmailAddressVisibility, "users' own settings are untouched")
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{EmailAddressVisibility: ptr(chat.EmailVisibleEveryone)})
	require.NoError(t, err)
	got, err = h.Service.GetUser(ctx, viewer.Caller, chat.GetUserRequest{UserID: h.Owner.ID})
	require.NoError(t, err)
	assert.Equal(t, ptr(h.Owner.Email), got.User.DeliveryEmail, "lifting the cap shows emails again")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
