package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/schemacheck"
)

func TestPlaygroundsHTTP(t *testing.T) {
	e := newEnv(t)
	admin := e.NewUser(t, chat.RoleAdministrator)
	member := e.NewUser(t, chat.RoleMember)
	guest := e.NewUser(t, chat.RoleGuest)
	const path = "/api/v1/realm/playgrounds"
	params := func(name, lang, tmpl string) url.Values {
		return url.Values{"name": {name}, "pygments_language": {lang}, "url_template": {tmpl}}
	}

	r := e.do(t, request{method: "POST", path: path, user: &admin,
		params: params("Python playground", "Python", "https://python.example.com?code={code}")}).ok(t, "POST", "/realm/playgrounds")
	id := int64(r.body["id"].(float64))
	require.NotZero(t, id)

	// Register gives the list to everyone, guests too.
	r = e.do(t, request{method: "POST", path: "/api/v1/register", user: &guest,
		params: url.Values{"fetch_event_types": {`["realm_playgrounds"]`}}}).ok(t, "POST", "/register")
	assert.Equal(t, []any{map[string]any{"id": float64(id), "name": "Python playground", "pygments_language": "Python",
		"url_template": "https://python.example.com?code={code}"}}, r.body["realm_playgrounds"])

	// Required parameters, in the reference's order.
	e.do(t, request{method: "POST", path: path, user: &admin, params: url.Values{}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'name' argument")
	e.do(t, request{method: "POST", path: path, user: &admin, params: url.Values{"name": {"x"}, "pygments_language": {"Go"}}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'url_template' argument")
	e.do(t, request{method: "POST", path: path, user: &admin, params: url.Values{"name": {"x"}, "url_template": {"{code}"}}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'pygments_language' argument")

	// Administrators only.
	for _, u := range []*chattest.User{&member, &guest} {
		e.do(t, request{method: "POST", path: path, user: u, params: params("Mine", "Go", "{code}")}).
			fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
		e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, id), user: u}).
			fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	}

	// The checks before the model's, and the model's with their "errors"
	// object (which no error schema of the reference declares).
	e.do(t, request{method: "POST", path: path, user: &admin, params: params("x", "a$b$c", "{code}")}).
		fails(t, 400, chat.CodeBadRequest, "Invalid characters in pygments language")
	e.do(t, request{method: "POST", path: path, user: &admin, params: params("x", "abcdefghijklmnopqrstuvwxyzabcdefghijklmno", "{code}")}).
		fails(t, 400, chat.CodeBadRequest, "pygments_language is too long (limit: 40 characters)")
	for _, tc := range []struct {
		params url.Values
		msg    string
		errors map[string]any
	}{
		{params("x", "Python", "https://template.com?test={test"), "Invalid URL template.",
			map[string]any{"url_template": []any{"Invalid URL template."}}},
		{params("x", "Python", "https://template.com{?test,code}"), `"code" should be the only variable present in the URL template`,
			map[string]any{"__all__": []any{`"code" should be the only variable present in the URL template`}}},
		{params("x", "Python", "https://template.com{?test}"), `Missing the required variable "code" in the URL template`,
			map[string]any{"__all__": []any{`Missing the required variable "code" in the URL template`}}},
		{params(" ", "Python", "{code}"), "This field cannot be blank.",
			map[string]any{"name": []any{"This field cannot be blank."}}},
		{params("Python playground", "Python", "https://other.example.com/{code}"), "Realm playground with this Realm, Pygments language and Name already exists.",
			map[string]any{"__all__": []any{"Realm playground with this Realm, Pygments language and Name already exists."}}},
	} {
		r := e.do(t, request{method: "POST", path: path, user: &admin, params: tc.params})
		require.Equal(t, 400, r.status, "body: %s", r.raw)
		assert.Equal(t, "error", r.body["result"])
		assert.Equal(t, chat.CodeBadRequest, r.body["code"])
		assert.Equal(t, tc.msg, r.body["msg"])
		assert.Equal(t, tc.errors, r.body["errors"])
		schemacheck.CheckSchema(t, "CodedErrorBase", r.raw)
	}

	// Removing.
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, id+100), user: &admin}).
		fails(t, 400, chat.CodeBadRequest, "Invalid playground")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, id), user: &e.Owner}).
		ok(t, "DELETE", "/realm/playgrounds/{playground_id}")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, id), user: &admin}).
		fails(t, 400, chat.CodeBadRequest, "Invalid playground")
	r = e.do(t, request{method: "POST", path: "/api/v1/register", user: &member,
		params: url.Values{"fetch_event_types": {`["realm_playgrounds"]`}}}).ok(t, "POST", "/register")
	assert.Equal(t, []any{}, r.body["realm_playgrounds"])
}
