package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustDecode(t testing.TB, body []byte) any {
	t.Helper()
	v, err := decode(body)
	require.NoError(t, err)
	return v
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// ---------------------------------------------------------------------------
// Loading and renaming

func TestLoad(t *testing.T) {
	doc, err := Spec()
	require.NoError(t, err)
	require.NotNil(t, doc)
	t.Logf("reference loaded in %v: %d paths, %d component schemas",
		LoadDuration(), doc.Paths.Len(), len(doc.Components.Schemas))
	assert.Equal(t, "3.0.1", doc.OpenAPI)
	assert.Equal(t, 85, doc.Paths.Len())

	// A second call returns the cached document.
	doc2, err := Spec()
	require.NoError(t, err)
	assert.Same(t, doc, doc2)
}

func TestRenaming(t *testing.T) {
	renamed := string(RenamedYAML())
	for _, old := range []string{"zulip_feature_level", "zulip_version", "zulip_merge_base", "zulip_extra_emoji", "/zulip-outgoing-webhook:"} {
		assert.NotContains(t, renamed, old)
	}
	for _, n := range []string{"service_feature_level", "service_version", "service_merge_base", "service_extra_emoji", "/chat-outgoing-webhook:"} {
		assert.Contains(t, renamed, n)
	}
	// Nothing else changes: URLs and other mentions of the name stay.
	assert.Contains(t, renamed, "https://zulip.com")
	assert.Contains(t, renamed, "operationId: zulip-outgoing-webhooks")
	assert.Equal(t, strings.Count(string(rawYAML), "zulip"),
		strings.Count(renamed, "zulip")+
			strings.Count(string(rawYAML), "zulip_feature_level")+
			strings.Count(string(rawYAML), "zulip_version")+
			strings.Count(string(rawYAML), "zulip_merge_base")+
			strings.Count(string(rawYAML), "zulip_extra_emoji")+
			strings.Count(string(rawYAML), "/zulip-outgoing-webhook:"))

	// The hand-written matcher does what the word-boundary regexes say.
	want := rawYAML
	for _, id := range []string{"zulip_feature_level", "zulip_version", "zulip_merge_base", "zulip_extra_emoji"} {
		want = regexp.MustCompile(`\b`+id+`\b`).ReplaceAll(want, []byte(strings.Replace(id, "zulip_", "service_", 1)))
	}
	want = regexp.MustCompile(`(^|[^\w./~-])/zulip-outgoing-webhook([^\w-]|$)`).ReplaceAll(want, []byte("${1}/chat-outgoing-webhook${2}"))
	assert.True(t, bytes.Equal(want, RenamedYAML()), "hand-written renaming differs from the regex renaming")

	for in, out := range map[string]string{
		"zulip_version: 1":                         "service_version: 1",
		"`zulip_feature_level` and zulip_version":  "`service_feature_level` and service_version",
		"my_zulip_version zulip_version_2":         "my_zulip_version zulip_version_2",
		"zulip_merge_base":                         "service_merge_base",
		"\"zulip_extra_emoji\"":                    "\"service_extra_emoji\"",
		"  /zulip-outgoing-webhook:":               "  /chat-outgoing-webhook:",
		"https://zulip.com/zulip-outgoing-webhook": "https://zulip.com/zulip-outgoing-webhook",
		"x/zulip-outgoing-webhook":                 "x/zulip-outgoing-webhook",
		"/zulip-outgoing-webhooks":                 "/zulip-outgoing-webhooks",
		"/zulip-outgoing-webhook-2":                "/zulip-outgoing-webhook-2",
		"zulip-outgoing-webhook":                   "zulip-outgoing-webhook",
		"zulip.com zulip_versions":                 "zulip.com zulip_versions",
	} {
		got := []byte(in)
		for _, r := range renames {
			got = r.apply(got)
		}
		assert.Equal(t, out, string(got), in)
	}

	doc, err := Spec()
	require.NoError(t, err)
	assert.NotNil(t, doc.Paths.Value("/chat-outgoing-webhook"))
	assert.Nil(t, doc.Paths.Value("/zulip-outgoing-webhook"))
}

// TestDocumentValid runs kin-openapi's own validation of the loaded document
// (VisitJSON is only defined for valid schemas). Examples are checked by
// TestResponseExamples instead, with the reference's semantics.
func TestDocumentValid(t *testing.T) {
	doc, err := Spec()
	require.NoError(t, err)

	// Document-level findings of kin-openapi that concern neither paths'
	// response schemas nor component schemas; the reference has them too.
	known := []string{
		// Zulip routes /users/{user_id} and /users/{email} by parameter
		// syntax (digits vs. an email address); kin-openapi sees two
		// templates that normalize to the same path.
		`conflicting paths "/users/{user_id}" and "/users/{email}"`,
		// The test-suite server URL "http://{subdomain}.testserver/json"
		// does not declare its {subdomain} variable.
		"server has undeclared variables",
		// The security requirement names "basicAuth" while
		// components.securitySchemes declares it under another name.
		`refers to undefined security scheme "basicAuth"`,
	}
	err = doc.Validate(t.Context(), openapi3.EnableMultiError(), openapi3.DisableExamplesValidation())
	var me openapi3.MultiError
	if err != nil {
		require.ErrorAs(t, err, &me)
	}
	for _, e := range me {
		ok := false
		for _, k := range known {
			ok = ok || strings.Contains(e.Error(), k)
		}
		assert.True(t, ok, "unexpected document validation error: %v", e)
	}

	// doc.Validate skips the operations of the second of two conflicting
	// paths, so validate every response schema (and component schema)
	// directly as well.
	ctx := t.Context()
	for _, name := range sortedKeys(doc.Components.Schemas) {
		assert.NoError(t, doc.Components.Schemas[name].Validate(ctx, openapi3.DisableExamplesValidation()), "component schema %s", name)
	}
	n := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			for status, rr := range op.Responses.Map() {
				for ct, mt := range rr.Value.Content {
					n++
					assert.NoError(t, mt.Schema.Validate(ctx, openapi3.DisableExamplesValidation()),
						"%s %s %s %s", method, path, status, ct)
				}
			}
		}
	}
	t.Logf("kin-openapi validated %d component schemas and %d response schemas", len(doc.Components.Schemas), n)
}

// ---------------------------------------------------------------------------
// Every response example in the reference validates against its own response.

// exampleAllowList holds the response examples of the reference that do not
// validate against their own schema, keyed "METHOD path status where", each
// with the reason. All three are 4xx examples: the reference never notices
// them because its test suite does not validate 4xx responses
// (validate_test_response in zerver/openapi/openapi.py returns early for
// them), and they are documentation bugs of the reference, not of this
// validator. The test fails if an entry stops failing or matches nothing.
var exampleAllowList = map[string]string{
	// The MOVE_MESSAGES_TIME_LIMIT_EXCEEDED example carries
	// first_message_id_allowed_to_move, total_messages_allowed_to_move and
	// total_messages_in_topic, but its alternative is a bare CodedError,
	// whose additionalProperties: false allows only result, msg and code.
	"PATCH /messages/{message_id} 400 schema/oneOf/1/allOf/1/example": "extra keys not declared by CodedError",
	// RateLimitedError declares retry-after as an integer, but its example
	// has retry-after 28.706807374954224 (the server sends a float).
	"POST /rest-error-handling 429 schema/oneOf/0(#/components/schemas/RateLimitedError)/allOf/1/example": "retry-after is a float, declared integer",
	// The CANNOT_DEACTIVATE_GROUP_IN_USE example carries "objections", but
	// its alternative is a bare CodedError (additionalProperties: false).
	"POST /user_groups/{user_group_id}/deactivate 400 schema/oneOf/1/allOf/1/example": "objections not declared by CodedError",
}

type responseExample struct {
	key    string // "METHOD path status where"
	method string
	path   string
	status string
	found
}

// found is an example and where it sits in a response's content.
type found struct {
	where string
	value any
	// alt is the oneOf alternative that carries the example, if any.
	alt *openapi3.Schema
}

// collectExamples gathers the examples that document a response schema, the
// way the reference places them: on the schema itself, on its inline allOf
// branches (where the reference puts `example` next to the added
// properties), and on each oneOf alternative (lists of alternative error
// examples). allOf branches that are $refs to shared components are used
// only when the schema has no example of its own (e.g. a response that is
// just `allOf: [$ref: IgnoredParametersSuccess]`): a shared base's example
// documents the base, not this response.
func collectExamples(ref *openapi3.SchemaRef, where string, alt *openapi3.Schema) (out []found) {
	if ref == nil || ref.Value == nil {
		return nil
	}
	s := ref.Value
	if s.Example != nil {
		out = append(out, found{where + "/example", s.Example, alt})
	}
	for i, b := range s.AllOf {
		if b.Ref == "" {
			out = append(out, collectExamples(b, fmt.Sprintf("%s/allOf/%d", where, i), alt)...)
		}
	}
	if len(out) == 0 {
		for i, b := range s.AllOf {
			if b.Ref != "" {
				out = append(out, collectExamples(b, fmt.Sprintf("%s/allOf/%d(%s)", where, i, b.Ref), alt)...)
			}
		}
	}
	for i, a := range s.OneOf {
		w := fmt.Sprintf("%s/oneOf/%d", where, i)
		if a.Ref != "" {
			w += "(" + a.Ref + ")"
		}
		out = append(out, collectExamples(a, w, a.Value)...)
	}
	for i, a := range s.AnyOf {
		out = append(out, collectExamples(a, fmt.Sprintf("%s/anyOf/%d", where, i), a.Value)...)
	}
	return out
}

func allResponseExamples(t *testing.T) (examples []responseExample, responsesWithout []string) {
	doc, err := Spec()
	require.NoError(t, err)
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			for status, rr := range op.Responses.Map() {
				id := fmt.Sprintf("%s %s %s", method, path, status)
				mt := rr.Value.Content.Get("application/json")
				if mt == nil || mt.Schema == nil {
					responsesWithout = append(responsesWithout, id+" (no JSON schema)")
					continue
				}
				all := collectExamples(mt.Schema, "schema", nil)
				if mt.Example != nil {
					all = append(all, found{where: "example", value: mt.Example})
				}
				for _, name := range sortedKeys(mt.Examples) {
					if ex := mt.Examples[name]; ex != nil && ex.Value != nil {
						all = append(all, found{where: "examples/" + name, value: ex.Value.Value})
					}
				}
				if len(all) == 0 {
					responsesWithout = append(responsesWithout, id)
				}
				for _, f := range all {
					examples = append(examples, responseExample{
						key: id + " " + f.where, method: method, path: path, status: status, found: f,
					})
				}
			}
		}
	}
	sort.Slice(examples, func(i, j int) bool { return examples[i].key < examples[j].key })
	sort.Strings(responsesWithout)
	return examples, responsesWithout
}

func TestResponseExamples(t *testing.T) {
	examples, without := allResponseExamples(t)
	require.NotEmpty(t, examples)

	validated, allowListed := 0, 0
	distinct := map[string]bool{}
	usedAllow := map[string]bool{}
	for _, ex := range examples {
		status, err := strconv.Atoi(ex.status)
		require.NoError(t, err, "non-numeric status %q in %s", ex.status, ex.key)
		body := mustJSON(t, ex.value)
		distinct[string(body)] = true
		err = Validate(ex.method, ex.path, status, body)
		if reason, ok := exampleAllowList[ex.key]; ok {
			usedAllow[ex.key] = true
			// An allow-listed example must still fail; otherwise the entry is stale.
			assert.Error(t, err, "allow-listed example %s (%s) now validates; remove it from exampleAllowList", ex.key, reason)
			allowListed++
			continue
		}
		ok := assert.NoError(t, err, "example at %s of %s", ex.where, ex.key)
		// Responses that are a oneOf are read as anyOf; an example on an
		// alternative must also match that alternative itself.
		if ex.alt != nil {
			altProblems := problems(ex.alt.VisitJSON(mustDecode(t, body), validationOptions...))
			ok = assert.Empty(t, altProblems, "example at %s of %s against its own alternative", ex.where, ex.key) && ok
		}
		if ok {
			validated++
		}
	}
	for k := range exampleAllowList {
		assert.True(t, usedAllow[k], "exampleAllowList entry %q matches no example", k)
	}
	t.Logf("response examples: %d found (%d distinct), %d validated, %d allow-listed; %d responses have no example",
		len(examples), len(distinct), validated, allowListed, len(without))
	for _, w := range without {
		t.Logf("  no example: %s", w)
	}
}

// ---------------------------------------------------------------------------
// Targeted cases against the real reference.

func ownUser() map[string]any {
	return map[string]any{
		"result":                         "success",
		"msg":                            "",
		"ignored_parameters_unsupported": []any{"invalid_param"},
		"avatar_url":                     "https://chat.example.com/avatar/5?v=1",
		"avatar_version":                 1,
		"email":                          "iago@example.com",
		"delivery_email":                 "iago@example.com",
		"full_name":                      "Iago",
		"is_admin":                       true,
		"is_owner":                       false,
		"role":                           200,
		"is_guest":                       false,
		"is_bot":                         false,
		"is_active":                      true,
		"timezone":                       "Europe/Paris",
		"date_joined":                    "2019-10-20T07:50:53.728864+00:00",
		"max_message_id":                 30,
		"user_id":                        5,
		"profile_data": map[string]any{
			"1": map[string]any{"value": "+1-234-567-8901", "rendered_value": "<p>+1-234-567-8901</p>"},
			"4": map[string]any{"value": "emacs"},
		},
	}
}

// problemsOf returns the problem lines of a validation error.
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var ve *Error
	require.ErrorAs(t, err, &ve)
	return ve.Problems
}

func TestOwnUser(t *testing.T) {
	body := ownUser()
	require.NoError(t, Validate("GET", "/users/me", 200, mustJSON(t, body)))
	// The method is case-insensitive.
	require.NoError(t, Validate("get", "/users/me", 200, mustJSON(t, body)))

	// The envelope keys are re-declared as {} in the allOf branch that
	// forbids additional properties; they pass there, and without the
	// optional ignored_parameters_unsupported too.
	delete(body, "ignored_parameters_unsupported")
	require.NoError(t, Validate("GET", "/users/me", 200, mustJSON(t, body)))

	t.Run("extra top-level key", func(t *testing.T) {
		b := ownUser()
		b["unexpected_key"] = true
		err := Validate("GET", "/users/me", 200, mustJSON(t, b))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"unexpected_key"`)
		assert.Contains(t, err.Error(), "GET /users/me (get-own-user)")
		assert.Equal(t, []string{`/: property "unexpected_key" is unsupported [properties]`}, problemsOf(t, err))
	})
	t.Run("missing envelope key", func(t *testing.T) {
		b := ownUser()
		delete(b, "msg")
		err := Validate("GET", "/users/me", 200, mustJSON(t, b))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `/msg: property "msg" is missing`)
	})
	t.Run("error envelope on the success schema", func(t *testing.T) {
		b := ownUser()
		b["result"] = "error"
		err := Validate("GET", "/users/me", 200, mustJSON(t, b))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/result: value is not one of the allowed values")
	})
	t.Run("string for integer", func(t *testing.T) {
		b := ownUser()
		b["avatar_version"] = "1"
		err := Validate("GET", "/users/me", 200, mustJSON(t, b))
		require.Error(t, err)
		assert.Equal(t, []string{`/avatar_version: value must be an integer [type]; got "1"`}, problemsOf(t, err))
	})
	t.Run("non-integral number for integer", func(t *testing.T) {
		b := ownUser()
		b["user_id"] = 5.5
		err := Validate("GET", "/users/me", 200, mustJSON(t, b))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/user_id: ")
	})
	t.Run("value outside enum", func(t *testing.T) {
		b := ownUser()
		b["role"] = 500
		err := Validate("GET", "/users/me", 200, mustJSON(t, b))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/role: value is not one of the allowed values [100,200,300,400,600]")
	})
	t.Run("nested additionalProperties", func(t *testing.T) {
		b := ownUser()
		b["profile_data"] = map[string]any{"1": map[string]any{"value": "x", "colour": "red"}}
		err := Validate("GET", "/users/me", 200, mustJSON(t, b))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `/profile_data/1: property "colour" is unsupported`)
	})
	t.Run("null for a non-nullable string", func(t *testing.T) {
		b := ownUser()
		b["full_name"] = nil
		err := Validate("GET", "/users/me", 200, mustJSON(t, b))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/full_name: ")
	})
	t.Run("all problems are reported", func(t *testing.T) {
		b := ownUser()
		b["avatar_version"] = "1"
		b["is_admin"] = "yes"
		b["bogus"] = 1
		delete(b, "result")
		p := problemsOf(t, Validate("GET", "/users/me", 200, mustJSON(t, b)))
		assert.Len(t, p, 4, "%q", p)
	})
}

func user(id int, email, deliveryEmail any) map[string]any {
	return map[string]any{
		"user_id":        id,
		"email":          email,
		"delivery_email": deliveryEmail,
		"full_name":      "King Hamlet",
		"date_joined":    "2019-10-20T07:50:53.729659+00:00",
		"is_active":      true,
		"is_owner":       false,
		"is_admin":       false,
		"is_guest":       false,
		"is_bot":         false,
		"bot_type":       nil,
		"role":           400,
		"timezone":       "",
		"avatar_url":     nil,
		"avatar_version": 1,
		"profile_data":   map[string]any{},
	}
}

func TestUsersNullability(t *testing.T) {
	list := func(members ...any) []byte {
		return mustJSON(t, map[string]any{"result": "success", "msg": "", "members": members})
	}
	// In the reference, User is allOf [UserBase, {additionalProperties:
	// false, properties: {delivery_email: {nullable: true}, email: {}, ...}}]
	// and UserBase declares delivery_email {type: string, nullable: true}
	// and email {type: string}.
	t.Run("delivery_email null", func(t *testing.T) {
		require.NoError(t, Validate("GET", "/users", 200, list(user(10, "user10@example.com", nil))))
	})
	t.Run("delivery_email string", func(t *testing.T) {
		require.NoError(t, Validate("GET", "/users", 200, list(user(10, "user10@example.com", "hamlet@example.com"))))
	})
	t.Run("bot_owner_id null, bot_type integer", func(t *testing.T) {
		u := user(11, "bot@example.com", "bot@example.com")
		u["is_bot"], u["bot_type"], u["bot_owner_id"] = true, 1, nil
		require.NoError(t, Validate("GET", "/users", 200, list(u)))
	})
	t.Run("email null", func(t *testing.T) {
		err := Validate("GET", "/users", 200, list(user(10, "user10@example.com", nil), user(12, nil, nil)))
		require.Error(t, err)
		// Reported once, by UserBase's {type: string}: the {} re-declaration
		// in the other branch accepts null, as in openapi-core.
		assert.Equal(t, []string{"/members/1/email: Value is not nullable; got null"}, problemsOf(t, err))
	})
	t.Run("delivery_email wrong type", func(t *testing.T) {
		err := Validate("GET", "/users", 200, list(user(10, "user10@example.com", 42)))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/members/0/delivery_email: value must be a string")
	})
	t.Run("component schema User", func(t *testing.T) {
		require.NoError(t, ValidateSchema("User", mustJSON(t, user(10, "a@example.com", nil))))
		err := ValidateSchema("User", mustJSON(t, user(10, nil, nil)))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "component schema User")
		assert.Contains(t, err.Error(), "/email: ")
	})
}

func TestServerSettingsRenaming(t *testing.T) {
	settings := func(levelKey string) []byte {
		return mustJSON(t, map[string]any{
			"result":                          "success",
			"msg":                             "",
			"authentication_methods":          map[string]any{"password": true, "dev": false, "email": true, "ldap": false, "remoteuser": false, "github": false, "azuread": false, "google": false, "saml": false},
			levelKey:                          340,
			"service_version":                 "1.0.0",
			"service_merge_base":              "1.0.0",
			"push_notifications_enabled":      false,
			"is_incompatible":                 false,
			"email_auth_enabled":              true,
			"require_email_format_usernames":  true,
			"realm_url":                       "http://localhost:9991",
			"realm_name":                      "Chat Dev",
			"realm_icon":                      "https://example.com/icon.png",
			"realm_description":               "<p>Dev.</p>",
			"realm_web_public_access_enabled": false,
			"external_authentication_methods": []any{},
		})
	}
	require.NoError(t, Validate("GET", "/server_settings", 200, settings("service_feature_level")))
	// The old name is declared beside the new one, with the same schema:
	// the server sends both.
	require.NoError(t, Validate("GET", "/server_settings", 200, settings("zulip_feature_level")))
	both := settings("service_feature_level")
	var withBoth map[string]any
	require.NoError(t, json.Unmarshal(both, &withBoth))
	withBoth["zulip_feature_level"], withBoth["zulip_version"], withBoth["zulip_merge_base"] = 340, "1.0.0", "1.0.0"
	require.NoError(t, Validate("GET", "/server_settings", 200, mustJSON(t, withBoth)))
	withBoth["zulip_version"] = 3
	err := Validate("GET", "/server_settings", 200, mustJSON(t, withBoth))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/zulip_version")

	err = Validate("GET", "/server_settings", 200, settings("other_feature_level"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `property "other_feature_level" is unsupported`)

	// The renamed path is known under its new name only.
	require.NoError(t, Validate("POST", "/chat-outgoing-webhook", 200, outgoingWebhookExample(t)))
	require.Error(t, Validate("POST", "/zulip-outgoing-webhook", 200, outgoingWebhookExample(t)))
}

// outgoingWebhookExample returns the reference's own example for the
// renamed outgoing-webhook path.
func outgoingWebhookExample(t *testing.T) []byte {
	doc, err := Spec()
	require.NoError(t, err)
	rr := doc.Paths.Value("/chat-outgoing-webhook").Post.Responses.Status(200)
	ex := collectExamples(rr.Value.Content.Get("application/json").Schema, "schema", nil)
	require.NotEmpty(t, ex)
	return mustJSON(t, ex[0].value)
}

func TestErrorResponses(t *testing.T) {
	coded := func(msg, code string) []byte {
		return mustJSON(t, map[string]any{"result": "error", "msg": msg, "code": code})
	}
	// A 400 declared as a oneOf of CodedError examples: any CodedError body
	// matches (each alternative would), so it is read as anyOf.
	require.NoError(t, Validate("POST", "/messages/{message_id}/reactions", 400, coded("Invalid emoji code", "BAD_REQUEST")))
	require.NoError(t, Validate("POST", "/messages/{message_id}/reactions", 400, coded("Reaction already exists.", "REACTION_ALREADY_EXISTS")))
	// A 401 declared as a single allOf.
	require.NoError(t, Validate("DELETE", "/attachments/{attachment_id}", 401, coded("Not logged in: API authentication or user session required", "UNAUTHORIZED")))
	require.NoError(t, ValidateSchema("CodedError", coded("Invalid emoji code", "BAD_REQUEST")))

	t.Run("missing code", func(t *testing.T) {
		body := mustJSON(t, map[string]any{"result": "error", "msg": "Invalid emoji code"})
		err := Validate("POST", "/messages/{message_id}/reactions", 400, body)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `/code: property "code" is missing`)
		require.Error(t, ValidateSchema("CodedError", body))
	})
	t.Run("success result in an error", func(t *testing.T) {
		body := mustJSON(t, map[string]any{"result": "success", "msg": "", "code": "BAD_REQUEST"})
		err := Validate("POST", "/messages/{message_id}/reactions", 400, body)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/result: value is not one of the allowed values")
	})
	t.Run("extra key in an error", func(t *testing.T) {
		body := mustJSON(t, map[string]any{"result": "error", "msg": "x", "code": "BAD_REQUEST", "detail": "x"})
		require.Error(t, Validate("DELETE", "/attachments/{attachment_id}", 401, body))
	})
	t.Run("component with its own extra key", func(t *testing.T) {
		body := mustJSON(t, map[string]any{"result": "error", "msg": "Bad event queue ID: abc", "code": "BAD_EVENT_QUEUE_ID", "queue_id": "abc"})
		require.NoError(t, ValidateSchema("BadEventQueueIdError", body))
		require.Error(t, ValidateSchema("CodedError", body))
	})
	t.Run("no JsonError component", func(t *testing.T) {
		// Zulip 10.2's reference has no schema named JsonError: its error
		// envelope is CodedErrorBase/CodedError.
		err := ValidateSchema("JsonError", coded("x", "BAD_REQUEST"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `unknown component schema "JsonError"`)
		assert.Contains(t, err.Error(), "CodedError")
	})
}

func TestLookupErrors(t *testing.T) {
	ok := mustJSON(t, map[string]any{"result": "success", "msg": ""})
	cases := []struct {
		name, method, path string
		status             int
		body               []byte
		want               string
	}{
		{"unknown path", "GET", "/no/such/path", 200, ok, `unknown path "/no/such/path"`},
		{"concrete path instead of template", "GET", "/users/12", 200, ok, `did you mean the template "/users/{user_id}"`},
		{"unknown method", "PUT", "/users/me", 200, ok, "unknown operation PUT /users/me"},
		{"undeclared status", "GET", "/users/me", 500, ok, "no response declared for status 500 (declared: 200)"},
		{"undeclared error status", "GET", "/users/me", 404, ok, "no response declared for status 404"},
		{"response without JSON schema", "POST", "/real-time", 200, ok, "no content, so no JSON schema"},
		{"empty body", "GET", "/users/me", 200, nil, "empty body"},
		{"invalid JSON", "GET", "/users/me", 200, []byte(`{"result": "success",`), "not valid JSON"},
		{"trailing data", "GET", "/users/me", 200, []byte(`{} {}`), "trailing data"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.method, c.path, c.status, c.body)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestMatchPath(t *testing.T) {
	for concrete, want := range map[string]string{
		"/users/me":               "/users/me",
		"/users/12":               "/users/{user_id}",
		"/users/iago@example.com": "/users/{email}",
		"/users/me/12/topics":     "/users/me/{stream_id}/topics",
		"/messages/42/reactions":  "/messages/{message_id}/reactions",
		"/server_settings":        "/server_settings",
		"/chat-outgoing-webhook":  "/chat-outgoing-webhook",
		"/users/{user_id}":        "/users/{user_id}",
	} {
		got, ok := MatchPath(concrete)
		assert.True(t, ok, concrete)
		assert.Equal(t, want, got, concrete)
	}
	_, ok := MatchPath("/no/such/path")
	assert.False(t, ok)
	_, ok = MatchPath("/users/abc")
	assert.False(t, ok, "a non-numeric, non-email segment matches neither {user_id} nor {email}")
}

// recorder is a testing.TB that records Errorf calls.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestCheck(t *testing.T) {
	good := mustJSON(t, ownUser())
	bad := ownUser()
	bad["avatar_version"] = "1"

	r := &recorder{}
	Check(r, "GET", "/users/me", 200, good)
	assert.Empty(t, r.errors)
	Check(r, "GET", "/users/me", 200, mustJSON(t, bad))
	require.Len(t, r.errors, 1)
	assert.Contains(t, r.errors[0], "/avatar_version")
	assert.Contains(t, r.errors[0], "body: {")

	r = &recorder{}
	CheckSchema(r, "User", mustJSON(t, user(1, "a@example.com", nil)))
	assert.Empty(t, r.errors)
	CheckSchema(r, "User", mustJSON(t, user(1, nil, nil)))
	assert.Len(t, r.errors, 1)

	// And the real thing, on a passing body.
	Check(t, "GET", "/users/me", 200, good)
}

func TestEventsOneOf(t *testing.T) {
	// GET /events returns an array of events; each must match exactly one
	// of the reference's ~77 event schemas (standard oneOf inside a body).
	events := func(ev ...any) []byte {
		return mustJSON(t, map[string]any{"result": "success", "msg": "", "queue_id": "1", "events": ev})
	}
	heartbeat := map[string]any{"type": "heartbeat", "id": 0}
	require.NoError(t, Validate("GET", "/events", 200, events(heartbeat)))

	err := Validate("GET", "/events", 200, events(heartbeat, map[string]any{"type": "heartbeat", "id": "zero"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/events/1: value matches none of the")
	assert.Contains(t, err.Error(), "closest")
}

func TestConcurrentValidation(t *testing.T) {
	good := mustJSON(t, ownUser())
	bad := ownUser()
	bad["x"] = 1
	badJSON := mustJSON(t, bad)
	for i := range 8 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			for range 20 {
				assert.NoError(t, Validate("GET", "/users/me", 200, good))
				assert.Error(t, Validate("GET", "/users/me", 200, badJSON))
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Semantics on small hand-written schemas, validated the way Validate does.

// tiny loads schemas (a yaml mapping of component schemas, indented by 4
// spaces) into a minimal OpenAPI 3.0 document, optionally pre-processed like
// the reference.
func tiny(t *testing.T, schemas string, pre bool) map[string]*openapi3.Schema {
	t.Helper()
	src := "openapi: 3.0.1\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n" + schemas
	doc, err := openapi3.NewLoader().LoadFromData([]byte(src))
	require.NoError(t, err)
	require.NoError(t, doc.Validate(t.Context()))
	if pre {
		preprocess(doc)
	}
	out := map[string]*openapi3.Schema{}
	for name, ref := range doc.Components.Schemas {
		out[name] = ref.Value
	}
	return out
}

func visit(t *testing.T, s *openapi3.Schema, body string) []string {
	t.Helper()
	v, err := decode([]byte(body))
	require.NoError(t, err)
	return problems(s.VisitJSON(v, validationOptions...))
}

const nullSchemas = `
    Empty: {}
    NullableOnly: {nullable: true}
    Described: {description: just prose}
    PropsOnly:
      properties:
        a: {type: integer}
    String: {type: string}
    NullableString: {type: string, nullable: true}
    Enum: {enum: [a, b]}
    AllOfNullable:
      allOf:
        - {type: string, nullable: true}
        - {nullable: true}
    AllOfStringAndEmpty:
      allOf:
        - {type: string}
        - {}
    Obj:
      allOf:
        - type: object
          properties:
            s: {type: string, nullable: true}
            t: {type: string}
        - additionalProperties: false
          properties:
            s: {nullable: true}
            t: {}
    TypedAllOf:
      type: object
      allOf:
        - nullable: true
          properties:
            a: {type: integer}
    ObjEmptyRedeclared:
      allOf:
        - type: object
          properties:
            n: {type: string, nullable: true}
        - additionalProperties: false
          properties:
            n: {}
`

func TestNullSemantics(t *testing.T) {
	s := tiny(t, nullSchemas, true)
	// openapi-core (OAS 3.0): null is rejected only by a "type" keyword of a
	// schema object that is not nullable itself.
	for name, wantOK := range map[string]bool{
		"Empty":               true,
		"NullableOnly":        true,
		"Described":           true,
		"PropsOnly":           true,
		"String":              false,
		"NullableString":      true,
		"Enum":                false, // null is not one of the values
		"AllOfNullable":       true,
		"AllOfStringAndEmpty": false,
		"TypedAllOf":          false,
	} {
		p := visit(t, s[name], "null")
		if wantOK {
			assert.Empty(t, p, name)
		} else {
			assert.NotEmpty(t, p, name)
		}
	}
	// Non-null values are unaffected by the pre-processing.
	assert.Empty(t, visit(t, s["Empty"], `{"x": 1}`))
	assert.Empty(t, visit(t, s["NullableOnly"], `"x"`))
	assert.NotEmpty(t, visit(t, s["PropsOnly"], `{"a": "x"}`))
	assert.NotEmpty(t, visit(t, s["NullableString"], `1`))
	assert.Empty(t, visit(t, s["TypedAllOf"], `{"a": 1}`))
	assert.Equal(t, []string{"/a: value must be an integer [type]; got \"x\""}, visit(t, s["TypedAllOf"], `{"a": "x"}`))
	assert.Equal(t, []string{"/: value must be an object [type]; got \"x\""}, visit(t, s["TypedAllOf"], `"x"`))

	// The allOf pattern of the reference: a property declared with a type
	// in one branch and re-declared in the other.
	assert.Empty(t, visit(t, s["Obj"], `{"s": null, "t": "x"}`))
	assert.Equal(t, []string{"/t: Value is not nullable; got null"}, visit(t, s["Obj"], `{"s": "x", "t": null}`))
	assert.Equal(t, []string{`/: property "u" is unsupported [properties]`}, visit(t, s["Obj"], `{"s": "x", "t": "y", "u": 1}`))

	// Without the pre-processing, kin-openapi rejects null for {} and for
	// schemas without a type, unlike openapi-core: this is what it fixes.
	raw := tiny(t, nullSchemas, false)
	assert.NotEmpty(t, visit(t, raw["Empty"], "null"))
	assert.NotEmpty(t, visit(t, raw["PropsOnly"], "null"))
	assert.Empty(t, visit(t, raw["TypedAllOf"], "null"), "kin-openapi skips the type of a schema with allOf for null")
	assert.Empty(t, visit(t, s["ObjEmptyRedeclared"], `{"n": null}`))
	assert.Equal(t, []string{"/n: Value is not nullable; got null"}, visit(t, raw["ObjEmptyRedeclared"], `{"n": null}`))
}

func TestReadOnlyWriteOnlyFormatsOneOf(t *testing.T) {
	s := tiny(t, `
    RW:
      type: object
      additionalProperties: false
      required: [id, password]
      properties:
        id: {type: integer, readOnly: true}
        password: {type: string, writeOnly: true}
        name: {type: string}
    Formats:
      type: object
      properties:
        custom: {type: string, format: our-own-format}
        binary: {type: string, format: binary}
        int32: {type: integer, format: int32}
    OneOf:
      oneOf:
        - {type: integer}
        - {type: number}
`, true)

	// Response semantics: readOnly properties are fine, a required
	// writeOnly property may be absent, a writeOnly property present fails.
	assert.Empty(t, visit(t, s["RW"], `{"id": 1, "name": "x"}`))
	p := visit(t, s["RW"], `{"id": 1, "password": "secret"}`)
	require.Len(t, p, 1)
	assert.Contains(t, p[0], "/password: writeOnly property")

	// Unknown formats never fail; known ones are checked.
	assert.Empty(t, visit(t, s["Formats"], `{"custom": "anything", "binary": "\u0000\u0001"}`))
	assert.NotEmpty(t, visit(t, s["Formats"], `{"int32": 4294967296}`))

	// oneOf inside a body keeps its standard meaning: exactly one.
	assert.Empty(t, visit(t, s["OneOf"], `1.5`))
	p = visit(t, s["OneOf"], `1`)
	require.Len(t, p, 1)
	assert.Contains(t, p[0], "matches more than one")
}

// schemaExampleAllowList: the same three documentation bugs as in
// exampleAllowList, as TestSchemaExamples first reaches them.
var schemaExampleAllowList = map[string]string{
	"PATCH /messages/{message_id} 400 schema/oneOf/1/allOf/1":                 "extra keys not declared by CodedError",
	"POST /rest-error-handling 429 schema/oneOf/0/allOf/1":                    "retry-after is a float, declared integer",
	"POST /user_groups/{user_group_id}/deactivate 400 schema/oneOf/1/allOf/1": "objections not declared by CodedError",
}

// TestSchemaExamples validates every `example` of every schema object
// reachable from a response or from components.schemas (response examples,
// but also those of properties, array items, and e.g. each of the ~77 event
// types of GET /events) against the schema that carries it. An example on an
// allOf branch describes the whole allOf, so it is validated against the
// schema that holds the allOf.
func TestSchemaExamples(t *testing.T) {
	doc, err := Spec()
	require.NoError(t, err)
	seen := map[*openapi3.Schema]bool{}
	found, allowListed := 0, 0
	used := map[string]bool{}
	var walk func(s, allOfParent *openapi3.Schema, where string)
	walk = func(s, allOfParent *openapi3.Schema, where string) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.Example != nil {
			found++
			target := s
			if allOfParent != nil {
				target = allOfParent
			}
			p := problems(target.VisitJSON(mustDecode(t, mustJSON(t, s.Example)), validationOptions...))
			if reason, ok := schemaExampleAllowList[where]; ok {
				used[where] = true
				allowListed++
				assert.NotEmpty(t, p, "allow-listed example %s (%s) now validates", where, reason)
			} else {
				assert.Empty(t, p, "example of %s", where)
			}
		}
		for i, x := range s.AllOf {
			walk(x.Value, s, fmt.Sprintf("%s/allOf/%d", where, i))
		}
		for i, x := range s.OneOf {
			walk(x.Value, nil, fmt.Sprintf("%s/oneOf/%d", where, i))
		}
		for i, x := range s.AnyOf {
			walk(x.Value, nil, fmt.Sprintf("%s/anyOf/%d", where, i))
		}
		if s.Items != nil {
			walk(s.Items.Value, nil, where+"/items")
		}
		for _, k := range sortedKeys(s.Properties) {
			walk(s.Properties[k].Value, nil, where+"/properties/"+k)
		}
		if s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema.Value, nil, where+"/additionalProperties")
		}
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		ops := doc.Paths.Value(path).Operations()
		for _, method := range sortedKeys(ops) {
			responses := ops[method].Responses.Map()
			for _, status := range sortedKeys(responses) {
				if mt := responses[status].Value.Content.Get("application/json"); mt != nil {
					walk(mt.Schema.Value, nil, fmt.Sprintf("%s %s %s schema", method, path, status))
				}
			}
		}
	}
	for _, name := range sortedKeys(doc.Components.Schemas) {
		walk(doc.Components.Schemas[name].Value, nil, "components/schemas/"+name)
	}
	for k := range schemaExampleAllowList {
		assert.True(t, used[k], "schemaExampleAllowList entry %q matches no example", k)
	}
	t.Logf("schema examples: %d found, %d validated, %d allow-listed", found, found-allowListed, allowListed)
}

// TestNullInEmptyRedeclaration covers the one place of the reference where
// the nullability pre-processing matters: in POST /register, each
// cross_realm_bots item is allOf [UserBase, {additionalProperties: false,
// properties: {delivery_email: {}, ...}}] and UserBase declares
// delivery_email {type: string, nullable: true}. openapi-core accepts null
// there; kin-openapi alone would reject it at the {} re-declaration.
func TestNullInEmptyRedeclaration(t *testing.T) {
	bot := user(1, "notification-bot@example.com", nil)
	delete(bot, "profile_data")
	bot["is_bot"], bot["bot_type"], bot["bot_owner_id"] = true, 1, nil
	bot["is_system_bot"] = true
	body := func(b map[string]any) []byte {
		return mustJSON(t, map[string]any{"result": "success", "msg": "", "queue_id": "1", "last_event_id": -1, "cross_realm_bots": []any{b}})
	}
	require.NoError(t, Validate("POST", "/register", 200, body(bot)))
	bot["delivery_email"] = "notification-bot@example.com"
	require.NoError(t, Validate("POST", "/register", 200, body(bot)))
	bot["email"] = nil
	err := Validate("POST", "/register", 200, body(bot))
	require.Error(t, err)
	assert.Equal(t, []string{"/cross_realm_bots/0/email: Value is not nullable; got null"}, problemsOf(t, err))
}

func TestDocumentedErrors(t *testing.T) {
	errs, err := DocumentedErrors()
	require.NoError(t, err)
	find := func(method, path, msg string) *DocumentedError {
		for i := range errs {
			if errs[i].Method == method && errs[i].Path == path && errs[i].Msg == msg {
				return &errs[i]
			}
		}
		return nil
	}
	// An example written on the response's schema.
	e := find("DELETE", "/messages/{message_id}", "You don't have permission to delete this message")
	require.NotNil(t, e)
	assert.Equal(t, 400, e.Status)
	assert.Equal(t, "BAD_REQUEST", e.Code)
	// One reached through a reference to a shared error component.
	e = find("GET", "/streams/{stream_id}", "Invalid channel ID")
	require.NotNil(t, e)
	assert.Equal(t, 400, e.Status)
	// A 404 and a code of its own with extra fields.
	e = find("DELETE", "/drafts/{draft_id}", "Draft does not exist")
	require.NotNil(t, e)
	assert.Equal(t, 404, e.Status)
	for _, d := range errs {
		if d.Code == "BAD_EVENT_QUEUE_ID" {
			assert.Contains(t, d.Body, "queue_id")
		}
		assert.GreaterOrEqual(t, d.Status, 400, "only error answers: %+v", d)
		assert.NotEmpty(t, d.Code, "%+v", d)
	}
}
