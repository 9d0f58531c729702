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

func TestLinkifiersHTTP(t *testing.T) {
	e := newEnv(t)
	admin := e.NewUser(t, chat.RoleAdministrator)
	member := e.NewUser(t, chat.RoleMember)
	guest := e.NewUser(t, chat.RoleGuest)
	params := func(pattern, tmpl string) url.Values {
		return url.Values{"pattern": {pattern}, "url_template": {tmpl}}
	}

	r := e.do(t, request{method: "POST", path: "/api/v1/realm/filters", user: &admin,
		params: params(`#(?P<id>[0-9]+)`, "https://tracker.example.com/{id}")}).ok(t, "POST", "/realm/filters")
	a := int64(r.body["id"].(float64))
	require.NotZero(t, a)
	r = e.do(t, request{method: "POST", path: "/api/v1/realm/filters", user: &e.Owner,
		params: params("docs", "https://docs.example.com")}).ok(t, "POST", "/realm/filters")
	b := int64(r.body["id"].(float64))

	// Everyone lists them; register gives them to clients with the
	// capability.
	want := []any{
		map[string]any{"id": float64(a), "pattern": `#(?P<id>[0-9]+)`, "url_template": "https://tracker.example.com/{id}"},
		map[string]any{"id": float64(b), "pattern": "docs", "url_template": "https://docs.example.com"},
	}
	for _, u := range []*chattest.User{&guest, &member, &admin} {
		r = e.do(t, request{method: "GET", path: "/api/v1/realm/linkifiers", user: u}).ok(t, "GET", "/realm/linkifiers")
		assert.Equal(t, want, r.body["linkifiers"])
	}
	r = e.do(t, request{method: "POST", path: "/api/v1/register", user: &guest,
		params: url.Values{"fetch_event_types": {`["realm_linkifiers","realm_filters"]`},
			"client_capabilities": {`{"notification_settings_null": true, "linkifier_url_template": true}`}}}).ok(t, "POST", "/register")
	assert.Equal(t, want, r.body["realm_linkifiers"])
	assert.Equal(t, []any{}, r.body["realm_filters"])
	r = e.do(t, request{method: "POST", path: "/api/v1/register", user: &guest,
		params: url.Values{"fetch_event_types": {`["realm_linkifiers"]`}}}).ok(t, "POST", "/register")
	assert.Equal(t, []any{}, r.body["realm_linkifiers"], "without the capability")

	// Required parameters, in the reference's order.
	e.do(t, request{method: "POST", path: "/api/v1/realm/filters", user: &admin, params: url.Values{}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'pattern' argument")
	e.do(t, request{method: "POST", path: "/api/v1/realm/filters", user: &admin, params: url.Values{"pattern": {"x"}}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'url_template' argument")
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/realm/filters/%d", a), user: &admin, params: url.Values{"url_template": {"x"}}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'pattern' argument")
	e.do(t, request{method: "PATCH", path: "/api/v1/realm/linkifiers", user: &admin, params: url.Values{}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'ordered_linkifier_ids' argument")
	e.do(t, request{method: "PATCH", path: "/api/v1/realm/linkifiers", user: &admin, params: url.Values{"ordered_linkifier_ids": {"[1,"}}}).
		fails(t, 400, chat.CodeBadRequest, "")

	// Administrators only.
	for _, u := range []*chattest.User{&member, &guest} {
		e.do(t, request{method: "POST", path: "/api/v1/realm/filters", user: u, params: params("x", "https://x.example.com")}).
			fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
		e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/realm/filters/%d", a), user: u, params: params("x", "https://x.example.com")}).
			fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
		e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/realm/filters/%d", a), user: u}).
			fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
		e.do(t, request{method: "PATCH", path: "/api/v1/realm/linkifiers", user: u, params: url.Values{"ordered_linkifier_ids": {fmt.Sprintf("[%d,%d]", b, a)}}}).
			fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	}

	// The model's checks with their "errors" object.
	for _, tc := range []struct {
		params url.Values
		msg    string
		errors map[string]any
	}{
		{params("(abc", "https://example.com"), "Bad regular expression: missing ): (abc",
			map[string]any{"__all__": []any{"Bad regular expression: missing ): (abc"}}},
		{params("(?P<id>a)", "https://example.com/{id"), "Invalid URL template.",
			map[string]any{"url_template": []any{"Invalid URL template."}}},
		{params("(?P<id>a)", "https://example.com/{x}"), "Group 'x' in URL template is not present in linkifier pattern.",
			map[string]any{"__all__": []any{"Group 'x' in URL template is not present in linkifier pattern."}}},
		{params(" ", "https://example.com"), "This field cannot be blank.",
			map[string]any{"pattern": []any{"This field cannot be blank."}}},
		{params("docs", "https://other.example.com"), "Realm filter with this Realm and Pattern already exists.",
			map[string]any{"__all__": []any{"Realm filter with this Realm and Pattern already exists."}}},
	} {
		r := e.do(t, request{method: "POST", path: "/api/v1/realm/filters", user: &admin, params: tc.params})
		require.Equal(t, 400, r.status, "body: %s", r.raw)
		assert.Equal(t, "error", r.body["result"])
		assert.Equal(t, chat.CodeBadRequest, r.body["code"])
		assert.Equal(t, tc.msg, r.body["msg"])
		assert.Equal(t, tc.errors, r.body["errors"])
		schemacheck.CheckSchema(t, "CodedErrorBase", r.raw)
	}

	// Update, reorder, remove.
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/realm/filters/%d", a), user: &admin,
		params: params(`T(?P<id>\d+)`, "https://bugs.example.com/{id}")}).ok(t, "PATCH", "/realm/filters/{filter_id}")
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/realm/filters/%d", a+b+100), user: &admin,
		params: params(`T(?P<id>\d+)`, "https://bugs.example.com/{id}")}).fails(t, 400, chat.CodeBadRequest, "Linkifier not found.")
	e.do(t, request{method: "PATCH", path: "/api/v1/realm/linkifiers", user: &admin,
		params: url.Values{"ordered_linkifier_ids": {fmt.Sprintf("[%d,%d]", b, a)}}}).ok(t, "PATCH", "/realm/linkifiers")
	e.do(t, request{method: "PATCH", path: "/api/v1/realm/linkifiers", user: &admin,
		params: url.Values{"ordered_linkifier_ids": {fmt.Sprintf("[%d,%d]", b, b)}}}).
		fails(t, 400, chat.CodeBadRequest, "The ordered list must not contain duplicated linkifiers")
	e.do(t, request{method: "PATCH", path: "/api/v1/realm/linkifiers", user: &admin,
		params: url.Values{"ordered_linkifier_ids": {fmt.Sprintf("[%d]", b)}}}).
		fails(t, 400, chat.CodeBadRequest, "The ordered list must enumerate all existing linkifiers exactly once")
	r = e.do(t, request{method: "GET", path: "/api/v1/realm/linkifiers", user: &member}).ok(t, "GET", "/realm/linkifiers")
	assert.Equal(t, []any{
		map[string]any{"id": float64(b), "pattern": "docs", "url_template": "https://docs.example.com"},
		map[string]any{"id": float64(a), "pattern": `T(?P<id>\d+)`, "url_template": "https://bugs.example.com/{id}"},
	}, r.body["linkifiers"])

	e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/realm/filters/%d", a+b+100), user: &admin}).
		fails(t, 400, chat.CodeBadRequest, "Linkifier not found.")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/realm/filters/%d", a), user: &e.Owner}).
		ok(t, "DELETE", "/realm/filters/{filter_id}")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/realm/filters/%d", a), user: &admin}).
		fails(t, 400, chat.CodeBadRequest, "Linkifier not found.")
	r = e.do(t, request{method: "GET", path: "/api/v1/realm/linkifiers", user: &member}).ok(t, "GET", "/realm/linkifiers")
	assert.Len(t, r.body["linkifiers"], 1)
}
