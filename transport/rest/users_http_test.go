package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func TestSettingsHTTP(t *testing.T) {
	e := newEnv(t)
	u := e.NewUser(t, chat.RoleMember)
	for _, path := range []string{"/api/v1/settings", "/api/v1/settings/display", "/api/v1/settings/notifications"} {
		r := e.do(t, request{method: "PATCH", path: path, user: &u, params: url.Values{
			"color_scheme": {"2"}, "twenty_four_hour_time": {"true"}, "default_language": {"de"},
			"timezone": {"Europe/Berlin"}, "bogus_setting": {"1"},
		}}).ok(t, "PATCH", "/settings")
		assert.Equal(t, []any{"bogus_setting"}, r.body["ignored_parameters_unsupported"])
	}
	r := e.do(t, request{method: "GET", path: "/api/v1/settings", user: &u}).ok(t, "GET", "")
	s := r.body["user_settings"].(map[string]any)
	assert.EqualValues(t, 2, s["color_scheme"])
	assert.Equal(t, true, s["twenty_four_hour_time"])
	assert.Equal(t, "de", s["default_language"])
	assert.Equal(t, "Europe/Berlin", s["timezone"])

	// zulip-js sends PATCH parameters in the query string.
	req := request{method: "PATCH", path: "/api/v1/settings?enter_sends=true", user: &u}
	e.do(t, req).ok(t, "PATCH", "/settings")
	r = e.do(t, request{method: "GET", path: "/api/v1/settings", user: &u}).ok(t, "GET", "")
	assert.Equal(t, true, r.body["user_settings"].(map[string]any)["enter_sends"])

	e.do(t, request{method: "PATCH", path: "/api/v1/settings", user: &u, params: url.Values{"color_scheme": {"7"}}}).
		fails(t, 400, chat.CodeBadRequest, "Invalid color_scheme: allowed values are 1, 2, 3")
	e.do(t, request{method: "PATCH", path: "/api/v1/settings", user: &u, params: url.Values{"color_scheme": {"dark"}}}).
		fails(t, 400, chat.CodeBadRequest, "color_scheme is not an integer")
	e.do(t, request{method: "PATCH", path: "/api/v1/settings", user: &u, params: url.Values{"enter_sends": {"yes"}}}).
		fails(t, 400, chat.CodeBadRequest, "enter_sends is not a boolean")
	e.do(t, request{method: "PATCH", path: "/api/v1/settings", user: &u, params: url.Values{"new_password": {"a new password"}}}).
		fails(t, 400, chat.CodeBadRequest, "Wrong password!")
	e.do(t, request{method: "PATCH", path: "/api/v1/settings", params: url.Values{"enter_sends": {"true"}}}).
		fails(t, 401, chat.CodeUnauthorized, "")
}

func TestEmailChangeHTTP(t *testing.T) {
	var keys []string
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithEmailChangeNotifier(func(_ ctxT, n chat.EmailChangeNotice) error {
		keys = append(keys, n.Key)
		return nil
	})))
	e := serve(t, h)
	u := e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "PATCH", path: "/api/v1/settings", user: &u, params: url.Values{"email": {"fresh@example.com"}}}).ok(t, "PATCH", "/settings")
	require.Len(t, keys, 1)
	e.do(t, request{method: "POST", path: "/api/v1/accounts/confirm_new_email/wrongkey"}).
		fails(t, 400, chat.CodeBadRequest, "Invalid or expired confirmation key")
	r := e.do(t, request{method: "POST", path: "/api/v1/accounts/confirm_new_email/" + keys[0]}).ok(t, "POST", "")
	assert.Equal(t, "fresh@example.com", r.body["email"])
	u.Email = "fresh@example.com"
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &u}).ok(t, "GET", "/users/me")
}

func TestUpdateUserHTTP(t *testing.T) {
	e := newEnv(t)
	admin := e.NewUser(t, chat.RoleAdministrator)
	member := e.NewUser(t, chat.RoleMember)
	target := e.NewUser(t, chat.RoleMember)
	path := fmt.Sprintf("/api/v1/users/%d", target.ID)

	e.do(t, request{method: "PATCH", path: path, user: &admin, params: url.Values{"role": {"300"}, "full_name": {"Mod Erator"}}}).ok(t, "PATCH", "/users/{user_id}")
	r := e.do(t, request{method: "GET", path: path, user: &member}).ok(t, "GET", "/users/{user_id}")
	assert.EqualValues(t, 300, r.body["user"].(map[string]any)["role"])
	assert.Equal(t, "Mod Erator", r.body["user"].(map[string]any)["full_name"])

	e.do(t, request{method: "PATCH", path: "/api/v1/users/" + url.PathEscape(target.Email), user: &admin, params: url.Values{"role": {"400"}}}).
		ok(t, "PATCH", "/users/{email}")
	e.do(t, request{method: "PATCH", path: path, user: &member, params: url.Values{"role": {"200"}}}).
		fails(t, 400, chat.CodeBadRequest, "Insufficient permission")
	e.do(t, request{method: "PATCH", path: path, user: &admin, params: url.Values{"role": {"100"}}}).
		fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
	e.do(t, request{method: "PATCH", path: path, user: &admin, params: url.Values{"role": {"500"}}}).
		fails(t, 400, chat.CodeBadRequest, "Invalid role")
	e.do(t, request{method: "PATCH", path: "/api/v1/users/9999", user: &admin, params: url.Values{"role": {"400"}}}).
		fails(t, 400, chat.CodeBadRequest, "No such user")

	field, err := e.Service.CreateProfileField(ctxBg, e.Owner.Caller, chat.CreateProfileFieldRequest{Name: ptr("Team"), FieldType: chat.FieldShortText})
	require.NoError(t, err)
	e.do(t, request{method: "PATCH", path: path, user: &admin, params: url.Values{"profile_data": {fmt.Sprintf(`[{"id": %d, "value": "Platform"}]`, field.ID)}}}).
		ok(t, "PATCH", "/users/{user_id}")
	r = e.do(t, request{method: "GET", path: path, user: &member, params: url.Values{"include_custom_profile_fields": {"true"}}}).ok(t, "GET", "/users/{user_id}")
	pd := r.body["user"].(map[string]any)["profile_data"].(map[string]any)
	assert.Equal(t, "Platform", pd[fmt.Sprint(field.ID)].(map[string]any)["value"])
	e.do(t, request{method: "PATCH", path: path, user: &admin, params: url.Values{"profile_data": {`{"id": 1}`}}}).
		fails(t, 400, chat.CodeBadRequest, "profile_data is not a list")
}

func TestUserLifecycleHTTP(t *testing.T) {
	e := newEnv(t)
	admin := e.NewUser(t, chat.RoleAdministrator)
	member := e.NewUser(t, chat.RoleMember)
	path := fmt.Sprintf("/api/v1/users/%d", member.ID)

	e.do(t, request{method: "DELETE", path: path, user: &member}).fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	// A DELETE body is read (the Python client sends one).
	r := e.do(t, request{method: "DELETE", path: path, user: &admin, params: url.Values{"deactivation_notification_comment": {"bye"}}}).
		ok(t, "DELETE", "/users/{user_id}")
	assert.NotContains(t, r.body, "ignored_parameters_unsupported")
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &member}).fails(t, 401, chat.CodeUserDeactivated, "Account is deactivated")
	e.do(t, request{method: "DELETE", path: path, user: &admin}).fails(t, 400, chat.CodeBadRequest, "User is deactivated")
	e.do(t, request{method: "POST", path: path + "/reactivate", user: &admin}).ok(t, "POST", "/users/{user_id}/reactivate")
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &member}).ok(t, "GET", "/users/me")

	e.do(t, request{method: "DELETE", path: "/api/v1/users/me", user: &member}).ok(t, "DELETE", "/users/me")
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &member}).fails(t, 401, chat.CodeUserDeactivated, "")
	r = e.do(t, request{method: "DELETE", path: "/api/v1/users/me", user: &e.Owner}).
		failsAs(t, "DELETE", "/users/me", 400, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only organization owner.")
	assert.Equal(t, true, r.body["is_last_owner"])
	assert.Equal(t, "organization owner", r.body["entity"])
}

func TestBotsHTTP(t *testing.T) {
	e := newEnv(t)
	member := e.NewUser(t, chat.RoleMember)
	r := e.do(t, request{method: "POST", path: "/api/v1/bots", user: &member, params: url.Values{"full_name": {"Helper Bot"}, "short_name": {"helper"}}}).ok(t, "POST", "")
	botID := int64(r.body["user_id"].(float64))
	bot := chattest.User{Email: "helper-bot@chat.example.com", APIKey: r.body["api_key"].(string)}
	me := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &bot}).ok(t, "GET", "/users/me")
	assert.Equal(t, true, me.body["is_bot"])

	r = e.do(t, request{method: "GET", path: "/api/v1/bots", user: &member}).ok(t, "GET", "")
	require.Len(t, r.body["bots"], 1)
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/bots/%d", botID), user: &member, params: url.Values{"full_name": {"Helper Two"}}}).ok(t, "PATCH", "")
	stranger := e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/bots/%d", botID), user: &stranger, params: url.Values{"full_name": {"Mine Now"}}}).
		fails(t, 400, chat.CodeBadRequest, "Insufficient permission")
	r = e.do(t, request{method: "POST", path: fmt.Sprintf("/api/v1/bots/%d/api_key/regenerate", botID), user: &member}).ok(t, "POST", "")
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &bot}).fails(t, 401, chat.CodeUnauthorized, "Invalid API key")
	bot.APIKey = r.body["api_key"].(string)
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &bot}).ok(t, "GET", "/users/me")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/bots/%d", botID), user: &member}).ok(t, "DELETE", "")
	e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &bot}).fails(t, 401, chat.CodeUserDeactivated, "")
	guest := e.NewUser(t, chat.RoleGuest)
	e.do(t, request{method: "POST", path: "/api/v1/bots", user: &guest, params: url.Values{"full_name": {"Guest Bot"}, "short_name": {"gb"}}}).
		fails(t, 400, chat.CodeBadRequest, "Not allowed for guest users")
	e.do(t, request{method: "POST", path: "/api/v1/bots", user: &member, params: url.Values{"full_name": {"No Short"}}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'short_name' argument")
}

func TestDraftsHTTP(t *testing.T) {
	e := newEnv(t)
	u := e.NewUser(t, chat.RoleMember)
	_, err := e.Service.Subscribe(ctxBg, u.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "plans"}}})
	require.NoError(t, err)
	ch, err := e.Service.GetChannelID(ctxBg, u.Caller, chat.GetChannelIDRequest{Stream: "plans"})
	require.NoError(t, err)
	r := e.do(t, request{method: "POST", path: "/api/v1/drafts", user: &u, params: url.Values{
		"drafts": {fmt.Sprintf(`[{"type": "stream", "to": [%d], "topic": "plans", "content": "draft one"}, {"type": "", "to": [], "topic": "", "content": "two", "timestamp": 1700000000}]`, ch.StreamID)}}}).
		ok(t, "POST", "/drafts")
	ids := r.body["ids"].([]any)
	require.Len(t, ids, 2)
	r = e.do(t, request{method: "GET", path: "/api/v1/drafts", user: &u}).ok(t, "GET", "/drafts")
	assert.EqualValues(t, 2, r.body["count"])
	id := int64(ids[0].(float64))
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/drafts/%d", id), user: &u, params: url.Values{
		"draft": {fmt.Sprintf(`{"type": "stream", "to": [%d], "topic": "plans", "content": "edited"}`, ch.StreamID)}}}).ok(t, "PATCH", "/drafts/{draft_id}")
	e.do(t, request{method: "PATCH", path: "/api/v1/drafts/9999", user: &u, params: url.Values{
		"draft": {`{"type": "", "to": [], "topic": "", "content": "x"}`}}}).fails(t, 404, chat.CodeBadRequest, "Draft does not exist")
	e.do(t, request{method: "POST", path: "/api/v1/drafts", user: &u, params: url.Values{"drafts": {`[{"type": "stream", "to": [1, 2], "topic": "t", "content": "c"}]`}}}).
		fails(t, 400, chat.CodeBadRequest, "Must specify exactly 1 channel ID for channel messages")
	e.do(t, request{method: "POST", path: "/api/v1/drafts", user: &u, params: url.Values{"drafts": {`not json`}}}).
		fails(t, 400, chat.CodeBadRequest, "drafts is not valid JSON")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/drafts/%d", id), user: &u}).ok(t, "DELETE", "/drafts/{draft_id}")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/drafts/%d", id), user: &u}).fails(t, 404, chat.CodeBadRequest, "Draft does not exist")
}

func TestProfileFieldsHTTP(t *testing.T) {
	e := newEnv(t)
	member := e.NewUser(t, chat.RoleMember)
	r := e.do(t, request{method: "POST", path: "/api/v1/realm/profile_fields", user: &e.Owner, params: url.Values{
		"name": {"Favorite language"}, "hint": {"Pick one"}, "field_type": {"3"},
		"field_data": {`{"go": {"text": "Go", "order": "1"}, "c": {"text": "C", "order": "2"}}`}}}).ok(t, "POST", "/realm/profile_fields")
	first := int64(r.body["id"].(float64))
	r = e.do(t, request{method: "POST", path: "/api/v1/realm/profile_fields", user: &e.Owner, params: url.Values{"name": {"Team"}, "field_type": {"1"}}}).
		ok(t, "POST", "/realm/profile_fields")
	second := int64(r.body["id"].(float64))
	e.do(t, request{method: "POST", path: "/api/v1/realm/profile_fields", user: &member, params: url.Values{"name": {"Mine"}, "field_type": {"1"}}}).
		fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	e.do(t, request{method: "POST", path: "/api/v1/realm/profile_fields", user: &e.Owner, params: url.Values{"name": {"Mine"}}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'field_type' argument")

	r = e.do(t, request{method: "GET", path: "/api/v1/realm/profile_fields", user: &member}).ok(t, "GET", "/realm/profile_fields")
	fields := r.body["custom_fields"].([]any)
	require.Len(t, fields, 2)
	assert.Equal(t, "Pick one", fields[0].(map[string]any)["hint"])

	e.do(t, request{method: "PATCH", path: "/api/v1/realm/profile_fields", user: &e.Owner, params: url.Values{"order": {fmt.Sprintf("[%d, %d]", second, first)}}}).
		ok(t, "PATCH", "/realm/profile_fields")
	r = e.do(t, request{method: "GET", path: "/api/v1/realm/profile_fields", user: &member}).ok(t, "GET", "/realm/profile_fields")
	assert.EqualValues(t, second, r.body["custom_fields"].([]any)[0].(map[string]any)["id"])
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/realm/profile_fields/%d", first), user: &e.Owner}).ok(t, "DELETE", "")
}

func TestRealmHTTP(t *testing.T) {
	e := newEnv(t)
	admin := e.NewUser(t, chat.RoleAdministrator)
	member := e.NewUser(t, chat.RoleMember)
	r := e.do(t, request{method: "GET", path: "/api/v1/realm", user: &member}).ok(t, "GET", "")
	membersGroup := r.body["realm_can_create_bots_group"]
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &admin, params: url.Values{
		"name_changes_disabled": {"true"},
		"can_create_bots_group": {fmt.Sprintf(`{"new": {"direct_members": [%d], "direct_subgroups": []}, "old": %v}`, admin.ID, membersGroup)},
	}}).ok(t, "PATCH", "")
	r = e.do(t, request{method: "GET", path: "/api/v1/realm", user: &member}).ok(t, "GET", "")
	assert.Equal(t, true, r.body["realm_name_changes_disabled"])
	assert.Equal(t, map[string]any{"direct_members": []any{float64(admin.ID)}, "direct_subgroups": []any{}}, r.body["realm_can_create_bots_group"])
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &admin, params: url.Values{
		"can_create_bots_group": {fmt.Sprintf(`{"new": 1, "old": %v}`, membersGroup)}}}).
		fails(t, 400, "EXPECTATION_MISMATCH", "'old' value does not match the expected value.")
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &admin, params: url.Values{"can_create_bots_group": {`{"new": "x"}`}}}).
		fails(t, 400, chat.CodeBadRequest, "")
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &member, params: url.Values{"name": {"Mine"}}}).
		fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
}

// TestSettingsRejectWrongTypes sends a wrongly typed value for every
// setting the server reports and checks the answer and that nothing changed.
func TestSettingsRejectWrongTypes(t *testing.T) {
	e := newEnv(t)
	u := e.NewUser(t, chat.RoleMember)
	before := e.do(t, request{method: "GET", path: "/api/v1/settings", user: &u}).ok(t, "GET", "")
	settings := before.body["user_settings"].(map[string]any)
	require.Greater(t, len(settings), 50)
	for name, v := range settings {
		var bad, msg string
		switch v.(type) {
		case bool:
			bad, msg = "maybe", name+" is not a boolean"
		case float64:
			bad, msg = "lots", name+" is not an integer"
		case string:
			bad, msg = "zz-not-valid-zz", ""
		}
		r := e.do(t, request{method: "PATCH", path: "/api/v1/settings", user: &u, params: url.Values{name: {bad}}}).fails(t, 400, chat.CodeBadRequest, msg)
		if msg == "" && name == "timezone" {
			assert.Equal(t, "Not a recognized time zone", r.body["msg"])
		} else if msg == "" {
			assert.Contains(t, r.body["msg"], "Invalid "+name, "the message names the parameter")
		}
	}
	after := e.do(t, request{method: "GET", path: "/api/v1/settings", user: &u}).ok(t, "GET", "")
	assert.Equal(t, before.body, after.body, "no rejected request changed anything")
}

// The password-change limiter answers 429 with Retry-After in the header
// and the body.
func TestPasswordChangeRateLimitHTTP(t *testing.T) {
	e := newEnv(t)
	u := e.NewUser(t, chat.RoleMember)
	for i := 0; i < chat.DefaultLimits.LoginAttempts; i++ {
		e.do(t, request{method: "PATCH", path: "/api/v1/settings", user: &u,
			params: url.Values{"old_password": {"wrong"}, "new_password": {"a new password"}}}).
			fails(t, 400, chat.CodeBadRequest, "Wrong password!")
	}
	r := e.do(t, request{method: "PATCH", path: "/api/v1/settings", user: &u,
		params: url.Values{"old_password": {"wrong"}, "new_password": {"a new password"}}}).
		fails(t, 429, chat.CodeRateLimitHit, "")
	assert.EqualValues(t, 1800, r.body["retry-after"])
	assert.Equal(t, "1800", r.header.Get("Retry-After"))
}
