package rest_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func multipartBody(t *testing.T, fields map[string]string) (*bytes.Buffer, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		require.NoError(t, w.WriteField(k, v))
	}
	require.NoError(t, w.Close())
	// zulip-js writes the boundary parameter with no space after ';'.
	return &buf, "multipart/form-data;boundary=" + w.Boundary()
}

func TestServerSettingsHTTP(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, request{method: "GET", path: "/api/v1/server_settings"}).ok(t, "GET", "/server_settings")
	assert.EqualValues(t, chat.FeatureLevel, r.body["service_feature_level"])
	assert.Equal(t, "Test Organization", r.body["realm_name"])
	assert.Equal(t, "http://chat.example.com", r.body["realm_url"])

	// Credentials are neither needed nor checked.
	e.do(t, request{method: "GET", path: "/api/v1/server_settings", header: map[string]string{"Authorization": "Basic !!!"}}).
		ok(t, "GET", "/server_settings")

	// With two organizations, an unknown host is the root domain: no realm fields.
	e.NewRealm(t, "http://other.example.com")
	r = e.do(t, request{method: "GET", path: "/api/v1/server_settings", host: "root.example.com"}).ok(t, "GET", "/server_settings")
	assert.NotContains(t, r.body, "realm_name")
	assert.EqualValues(t, chat.FeatureLevel, r.body["service_feature_level"])
	r = e.do(t, request{method: "GET", path: "/api/v1/server_settings", host: "other.example.com"}).ok(t, "GET", "/server_settings")
	assert.Equal(t, "http://other.example.com", r.body["realm_url"])

	r = e.do(t, request{method: "GET", path: "/api/v1/server_settings", params: url.Values{"bogus": {"1"}}}).ok(t, "GET", "/server_settings")
	assert.Equal(t, []any{"bogus"}, r.body["ignored_parameters_unsupported"])
}

func TestFetchAPIKeyHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	post := func(params url.Values) response {
		return e.do(t, request{method: "POST", path: "/api/v1/fetch_api_key", params: params})
	}
	t.Run("urlencoded", func(t *testing.T) {
		r := post(url.Values{"username": {alice.Email}, "password": {chattest.Password}}).ok(t, "POST", "/fetch_api_key")
		assert.Equal(t, alice.APIKey, r.body["api_key"])
		assert.Equal(t, alice.Email, r.body["email"])
		assert.EqualValues(t, alice.ID, r.body["user_id"])
	})
	t.Run("multipart, as zulip-js sends it", func(t *testing.T) {
		body, ct := multipartBody(t, map[string]string{"username": alice.Email, "password": chattest.Password})
		r := e.do(t, request{method: "POST", path: "/api/v1/fetch_api_key", body: body, header: map[string]string{"Content-Type": ct}}).
			ok(t, "POST", "/fetch_api_key")
		assert.Equal(t, alice.APIKey, r.body["api_key"])
	})
	t.Run("wrong password", func(t *testing.T) {
		r := post(url.Values{"username": {alice.Email}, "password": {"nope nope"}}).
			fails(t, 401, chat.CodeAuthenticationFailed, "Your username or password is incorrect")
		assert.NotEmpty(t, r.header.Get("WWW-Authenticate"))
	})
	t.Run("missing arguments", func(t *testing.T) {
		r := post(url.Values{"username": {alice.Email}}).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'password' argument")
		assert.Equal(t, "password", r.body["var_name"])
		r = post(url.Values{"password": {"x"}}).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'username' argument")
		assert.Equal(t, "username", r.body["var_name"])
	})
	t.Run("deactivated", func(t *testing.T) {
		bob := e.NewUser(t, chat.RoleMember)
		e.Deactivate(t, bob)
		post(url.Values{"username": {bob.Email}, "password": {chattest.Password}}).fails(t, 401, chat.CodeUserDeactivated, "Account is deactivated")
	})
	t.Run("rate limited per account", func(t *testing.T) {
		carol := e.NewUser(t, chat.RoleMember)
		for i := 0; i < chat.DefaultLimits.LoginAttempts; i++ {
			post(url.Values{"username": {carol.Email}, "password": {"wrong password"}}).fails(t, 401, chat.CodeAuthenticationFailed, "")
		}
		r := post(url.Values{"username": {carol.Email}, "password": {chattest.Password}}).fails(t, 429, chat.CodeRateLimitHit, "")
		assert.EqualValues(t, 1800, r.body["retry-after"])
		assert.Equal(t, "1800", r.header.Get("Retry-After"), "the header too")
		post(url.Values{"username": {alice.Email}, "password": {chattest.Password}}).ok(t, "POST", "/fetch_api_key")
	})
	t.Run("unknown organization on a multi-organization server", func(t *testing.T) {
		e.NewRealm(t, "http://other.example.com")
		e.do(t, request{method: "POST", path: "/api/v1/fetch_api_key", host: "nowhere.example.com",
			params: url.Values{"username": {alice.Email}, "password": {chattest.Password}}}).
			fails(t, 404, chat.CodeNonexistentSubdomain, "Invalid subdomain")
		// The right host still works, and the other organization does not know alice.
		e.do(t, request{method: "POST", path: "/api/v1/fetch_api_key", host: "chat.example.com",
			params: url.Values{"username": {alice.Email}, "password": {chattest.Password}}}).ok(t, "POST", "/fetch_api_key")
		e.do(t, request{method: "POST", path: "/api/v1/fetch_api_key", host: "other.example.com",
			params: url.Values{"username": {alice.Email}, "password": {chattest.Password}}}).
			fails(t, 401, chat.CodeAuthenticationFailed, "")
	})
}

func TestAuthenticationHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	gone := e.NewUser(t, chat.RoleMember)
	e.Deactivate(t, gone)
	cases := []struct {
		name, auth string
		status     int
		code, msg  string
	}{
		{"no credentials", "", 401, chat.CodeUnauthorized, "Not logged in: API authentication or user session required"},
		{"not basic", "Bearer abc", 400, chat.CodeBadRequest, "This endpoint requires HTTP basic authentication."},
		{"bad base64", "Basic !!!", 401, chat.CodeUnauthorized, "Invalid authorization header for basic auth"},
		{"no colon", "Basic " + "YWxpY2U=", 401, chat.CodeUnauthorized, "Invalid authorization header for basic auth"},
		{"malformed key", basic(alice.Email, "short"), 401, chat.CodeUnauthorized, "Malformed API key"},
		{"wrong key", basic(alice.Email, strings.Repeat("x", 32)), 401, chat.CodeUnauthorized, "Invalid API key"},
		{"unknown email", basic("who@example.com", alice.APIKey), 401, chat.CodeUnauthorized, "Invalid API key"},
		{"deactivated user", basic(gone.Email, gone.APIKey), 401, chat.CodeUserDeactivated, "Account is deactivated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.auth != "" {
				hdr["Authorization"] = c.auth
			}
			r := e.do(t, request{method: "GET", path: "/api/v1/users/me", header: hdr}).fails(t, c.status, c.code, c.msg)
			if c.status == 401 {
				assert.Equal(t, `Basic realm="chat"`, r.header.Get("WWW-Authenticate"))
			}
		})
	}
	t.Run("email is case-insensitive", func(t *testing.T) {
		e.do(t, request{method: "GET", path: "/api/v1/users/me", header: map[string]string{"Authorization": basic(strings.ToUpper(alice.Email), alice.APIKey)}}).
			ok(t, "GET", "/users/me")
	})
	t.Run("deactivated organization", func(t *testing.T) {
		e2 := newEnv(t)
		e2.DeactivateRealm(t)
		e2.do(t, request{method: "GET", path: "/api/v1/users/me", user: &e2.Owner}).fails(t, 401, chat.CodeRealmDeactivated, "This organization has been deactivated")
	})
	t.Run("credentials are checked against the organization of the host", func(t *testing.T) {
		other := e.NewRealm(t, "http://other.example.com")
		e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &other.Owner, host: "other.example.com"}).ok(t, "GET", "/users/me")
		e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &other.Owner, host: "chat.example.com"}).fails(t, 401, chat.CodeUnauthorized, "Invalid API key")
	})
}

func TestOwnUserHTTP(t *testing.T) {
	e := newEnv(t)
	roles := map[string]chattest.User{"owner": e.Owner}
	for _, role := range []int{chat.RoleAdministrator, chat.RoleModerator, chat.RoleMember, chat.RoleGuest} {
		roles[fmt.Sprint(role)] = e.NewUser(t, role)
	}
	roles["bot"] = e.NewBot(t, e.Owner)
	for name, u := range roles {
		t.Run(name, func(t *testing.T) {
			r := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &u}).ok(t, "GET", "/users/me")
			assert.EqualValues(t, u.ID, r.body["user_id"])
			assert.EqualValues(t, u.Role, r.body["role"])
			assert.Equal(t, u.Email, r.body["delivery_email"])
			assert.EqualValues(t, -1, r.body["max_message_id"])
			assert.Equal(t, name == "bot", r.body["is_bot"])
		})
	}
	r := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &e.Owner, params: url.Values{"zzz": {"1"}, "aaa": {"2"}}}).
		ok(t, "GET", "/users/me")
	assert.Equal(t, []any{"aaa", "zzz"}, r.body["ignored_parameters_unsupported"])
}

func TestGetUsersHTTP(t *testing.T) {
	e := newEnv(t)
	guest := e.NewUser(t, chat.RoleGuest)
	bot := e.NewBot(t, e.Owner)
	for _, u := range []chattest.User{e.Owner, guest, bot} {
		r := e.do(t, request{method: "GET", path: "/api/v1/users", user: &u}).ok(t, "GET", "/users")
		members := r.body["members"].([]any)
		require.Len(t, members, 3)
		assert.Nil(t, members[0].(map[string]any)["avatar_url"], "client_gravatar defaults to true")
	}
	r := e.do(t, request{method: "GET", path: "/api/v1/users", user: &guest,
		params: url.Values{"client_gravatar": {"false"}, "include_custom_profile_fields": {"true"}}}).ok(t, "GET", "/users")
	first := r.body["members"].([]any)[0].(map[string]any)
	assert.NotNil(t, first["avatar_url"])
	assert.Equal(t, map[string]any{}, first["profile_data"])

	e.do(t, request{method: "GET", path: "/api/v1/users", user: &guest, params: url.Values{"client_gravatar": {"yes"}}}).
		fails(t, 400, chat.CodeBadRequest, "client_gravatar is not a boolean")
}

func TestGetUserHTTP(t *testing.T) {
	e := newEnv(t)
	member := e.NewUser(t, chat.RoleMember)
	guest := e.NewUser(t, chat.RoleGuest)
	for _, caller := range []chattest.User{e.Owner, member, guest} {
		r := e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/users/%d", member.ID), user: &caller}).ok(t, "GET", "/users/{user_id}")
		assert.EqualValues(t, member.ID, r.body["user"].(map[string]any)["user_id"])
		r = e.do(t, request{method: "GET", path: "/api/v1/users/" + url.PathEscape(member.Email), user: &caller}).ok(t, "GET", "/users/{email}")
		assert.EqualValues(t, member.ID, r.body["user"].(map[string]any)["user_id"])
	}
	// Clients repeat path parameters as form fields; they are not "ignored".
	r := e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/users/%d", member.ID), user: &guest,
		params: url.Values{"user_id": {fmt.Sprint(member.ID)}}}).ok(t, "GET", "/users/{user_id}")
	assert.NotContains(t, r.body, "ignored_parameters_unsupported")

	e.do(t, request{method: "GET", path: "/api/v1/users/9999", user: &member}).fails(t, 400, chat.CodeBadRequest, "No such user")
	e.do(t, request{method: "GET", path: "/api/v1/users/nobody@example.com", user: &member}).fails(t, 400, chat.CodeBadRequest, "No such user")
	e.do(t, request{method: "GET", path: "/api/v1/users/99999999999999999999999", user: &member}).fails(t, 400, chat.CodeBadRequest, "user_id is not an integer")
	e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/users/%d", member.ID), user: &member, params: url.Values{"client_gravatar": {"1"}}}).
		fails(t, 400, chat.CodeBadRequest, "client_gravatar is not a boolean")
	e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/users/%d", member.ID)}).fails(t, 401, chat.CodeUnauthorized, "")
}

func TestCreateUserHTTP(t *testing.T) {
	e := newEnv(t)
	admin := e.NewUser(t, chat.RoleAdministrator)
	params := func(n string) url.Values {
		return url.Values{"email": {n + "@example.com"}, "password": {"a good password"}, "full_name": {"User " + n}}
	}
	r := e.do(t, request{method: "POST", path: "/api/v1/users", user: &admin, params: params("one")}).ok(t, "POST", "/users")
	id := int64(r.body["user_id"].(float64))
	e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/users/%d", id), user: &admin}).ok(t, "GET", "/users/{user_id}")
	e.do(t, request{method: "POST", path: "/api/v1/fetch_api_key", params: url.Values{"username": {"one@example.com"}, "password": {"a good password"}}}).
		ok(t, "POST", "/fetch_api_key")

	body, ct := multipartBody(t, map[string]string{"email": "two@example.com", "password": "a good password", "full_name": "Two"})
	e.do(t, request{method: "POST", path: "/api/v1/users", user: &e.Owner, body: body, header: map[string]string{"Content-Type": ct}}).ok(t, "POST", "/users")

	for _, role := range []int{chat.RoleModerator, chat.RoleMember, chat.RoleGuest} {
		u := e.NewUser(t, role)
		e.do(t, request{method: "POST", path: "/api/v1/users", user: &u, params: params(fmt.Sprint("role", role))}).
			fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	}
	bot := e.NewBot(t, admin)
	e.do(t, request{method: "POST", path: "/api/v1/users", user: &bot, params: params("bybot")}).
		fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")

	e.do(t, request{method: "POST", path: "/api/v1/users", user: &admin, params: params("one")}).fails(t, 400, chat.CodeBadRequest, "Email is already in use.")
	for _, missing := range []string{"email", "password", "full_name"} {
		p := params("missing")
		p.Del(missing)
		r := e.do(t, request{method: "POST", path: "/api/v1/users", user: &admin, params: p}).
			fails(t, 400, chat.CodeRequestVariableMissing, "Missing '"+missing+"' argument")
		assert.Equal(t, missing, r.body["var_name"])
	}
	p := params("weak")
	p.Set("password", "123")
	e.do(t, request{method: "POST", path: "/api/v1/users", user: &admin, params: p}).fails(t, 400, chat.CodeBadRequest, "The password is too weak.")
	e.do(t, request{method: "POST", path: "/api/v1/users", params: params("anon")}).fails(t, 401, chat.CodeUnauthorized, "")
}

func TestRegenerateAPIKeyHTTP(t *testing.T) {
	e := newEnv(t)
	for _, u := range []chattest.User{e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleGuest), e.NewBot(t, e.Owner)} {
		r := e.do(t, request{method: "POST", path: "/api/v1/users/me/api_key/regenerate", user: &u}).ok(t, "POST", "")
		key := r.body["api_key"].(string)
		require.Len(t, key, 32)
		e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &u}).fails(t, 401, chat.CodeUnauthorized, "Invalid API key")
		u.APIKey = key
		e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &u}).ok(t, "GET", "/users/me")
	}
	e.do(t, request{method: "POST", path: "/api/v1/users/me/api_key/regenerate"}).fails(t, 401, chat.CodeUnauthorized, "")
	r := e.do(t, request{method: "GET", path: "/api/v1/users/me/api_key/regenerate", user: &e.Owner})
	assert.Equal(t, http.StatusMethodNotAllowed, r.status)
}
