package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// playgroundsJSON is a playground list as a client decodes it.
func playgroundsJSON(t *testing.T, list []chat.Playground) any {
	t.Helper()
	raw, err := json.Marshal(list)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

func addPlayground(t *testing.T, h *chattest.Harness, as chattest.User, name, lang, tmpl string) int64 {
	t.Helper()
	resp, err := h.Service.AddPlayground(context.Background(), as.Caller, chat.AddPlaygroundRequest{Name: name, PygmentsLanguage: lang, URLTemplate: tmpl})
	require.NoError(t, err)
	checkSchema(t, "POST", "/realm/playgrounds", resp)
	require.NotZero(t, resp.ID)
	return resp.ID
}

// Administrators add and remove playgrounds; each change sends everyone
// (guests too) the whole list, which register also gives.
func TestPlaygroundsAddRemoveAndEvents(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	member := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	gone := h.NewUser(t, chat.RoleMember)
	h.Deactivate(t, gone)

	empty := register(t, h, guest, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_playgrounds"}})
	assert.Equal(t, []any{}, empty.state["realm_playgrounds"], "an empty list, not null")
	takeEvents(t, h)

	py := addPlayground(t, h, admin, "Python playground", "Python", "https://python.example.com?code={code}")
	want := []chat.Playground{{ID: py, Name: "Python playground", PygmentsLanguage: "Python", URLTemplate: "https://python.example.com?code={code}"}}
	ev := only(t, takeEvents(t, h), "realm_playgrounds", "")
	assert.Equal(t, playgroundsJSON(t, want), ev.JSON["realm_playgrounds"])
	assert.Equal(t, activeIDs(t, h), ev.To, "everyone active, guests included")
	assert.Contains(t, ev.To, guest.ID)
	assert.NotContains(t, ev.To, gone.ID)

	// The owner may too; values are stripped; the list is by ID.
	rs := addPlayground(t, h, h.Owner, "  Rust \t", " Rust\n", "\thttps://play.example.com/{?code}  ")
	want = append(want, chat.Playground{ID: rs, Name: "Rust", PygmentsLanguage: "Rust", URLTemplate: "https://play.example.com/{?code}"})
	ev = only(t, takeEvents(t, h), "realm_playgrounds", "")
	assert.Equal(t, playgroundsJSON(t, want), ev.JSON["realm_playgrounds"])

	for _, u := range []chattest.User{guest, member, admin, h.Owner} {
		c := register(t, h, u, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_playgrounds"}})
		assert.Equal(t, playgroundsJSON(t, want), c.state["realm_playgrounds"], "register of role %d", u.Role)
	}
	all := register(t, h, member, chat.RegisterRequest{})
	assert.Equal(t, playgroundsJSON(t, want), all.state["realm_playgrounds"], "in a register of everything")
	other := register(t, h, member, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_emoji"}})
	assert.NotContains(t, other.state, "realm_playgrounds")

	// Removing sends the rest.
	_, err := h.Service.RemovePlayground(ctx, admin.Caller, chat.RemovePlaygroundRequest{PlaygroundID: py})
	require.NoError(t, err)
	ev = only(t, takeEvents(t, h), "realm_playgrounds", "")
	assert.Equal(t, playgroundsJSON(t, want[1:]), ev.JSON["realm_playgrounds"])
	assert.Equal(t, activeIDs(t, h), ev.To)
	resp, err := h.Service.RemovePlayground(ctx, h.Owner.Caller, chat.RemovePlaygroundRequest{PlaygroundID: rs})
	require.NoError(t, err)
	checkSchema(t, "DELETE", "/realm/playgrounds/{playground_id}", resp)
	ev = only(t, takeEvents(t, h), "realm_playgrounds", "")
	assert.Equal(t, []any{}, ev.JSON["realm_playgrounds"], "an empty list after the last")
	c := register(t, h, member, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_playgrounds"}})
	assert.Equal(t, []any{}, c.state["realm_playgrounds"])
}

// Only administrators (and owners) may add or remove a playground, as the
// reference's require_realm_admin: moderators, members, guests and bots
// may not, and nothing changes.
func TestPlaygroundsPermissions(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	member := h.NewUser(t, chat.RoleMember)
	others := []chattest.User{h.NewUser(t, chat.RoleModerator), member, h.NewUser(t, chat.RoleGuest), h.NewBot(t, h.Owner)}
	id := addPlayground(t, h, admin, "Go", "Go", "https://go.dev/play/?code={code}")
	takeEvents(t, h)
	for _, u := range others {
		_, err := h.Service.AddPlayground(ctx, u.Caller, chat.AddPlaygroundRequest{Name: "Mine", PygmentsLanguage: "Go", URLTemplate: "{code}"})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
		_, err = h.Service.RemovePlayground(ctx, u.Caller, chat.RemovePlaygroundRequest{PlaygroundID: id})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
		// Even with invalid input the role is checked first.
		_, err = h.Service.AddPlayground(ctx, u.Caller, chat.AddPlaygroundRequest{PygmentsLanguage: "a$b"})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
		_, err = h.Service.RemovePlayground(ctx, u.Caller, chat.RemovePlaygroundRequest{PlaygroundID: id + 1000})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	}
	assert.Empty(t, takeEvents(t, h))
	c := register(t, h, member, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_playgrounds"}})
	assert.Len(t, c.state["realm_playgrounds"], 1, "still there")

	// A demoted administrator may no longer.
	_, err := h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: admin.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleMember)}})
	require.NoError(t, err)
	_, err = h.Service.RemovePlayground(ctx, admin.Caller, chat.RemovePlaygroundRequest{PlaygroundID: id})
	requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
}

// The reference's validation, each error with its text (and, for the
// model's checks, the "errors" object by field, as its
// ValidationFailureError sends).
func TestPlaygroundsValidation(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	addPlayground(t, h, admin, "Python playground", "Python", "https://python.example.com{code}")
	takeEvents(t, h)

	const (
		blank   = "This field cannot be blank."
		invalid = "Invalid URL template."
		missing = `Missing the required variable "code" in the URL template`
		onlyOne = `"code" should be the only variable present in the URL template`
		exists  = "Realm playground with this Realm, Pygments language and Name already exists."
	)
	ok := "https://example.com/{code}"
	for _, tc := range []struct {
		name, lang, tmpl string
		msg              string
		errs             map[string][]string // nil: a check before the model's
	}{
		{"Long", strings.Repeat("x", 41), ok, "pygments_language is too long (limit: 40 characters)", nil},
		{"Long padded", " " + strings.Repeat("x", 39) + " ", ok, "pygments_language is too long (limit: 40 characters)", nil},
		{"Dollars", "a$b$c", ok, "Invalid characters in pygments language", nil},
		{"Inner newline", "Py\nthon", ok, "Invalid characters in pygments language", nil},
		{"Tab", "Py\tthon", ok, "Invalid characters in pygments language", nil},
		{"Accented", "Pythön", ok, "Invalid characters in pygments language", nil},

		{"Unexpected variable", "Python", "https://template.com{?test,code}", onlyOne, map[string][]string{"__all__": {onlyOne}}},
		{"Two expressions", "Python", "https://template.com/{code}{?lang}", onlyOne, map[string][]string{"__all__": {onlyOne}}},
		{"Unclosed", "Python", "https://template.com?test={test", invalid, map[string][]string{"url_template": {invalid}}},
		{"Unopened", "Python", "https://template.com?test=test}{code}", invalid, map[string][]string{"url_template": {invalid}}},
		{"Bad operator", "Python", "https://template.com/{=code}", invalid, map[string][]string{"url_template": {invalid}}},
		// RFC 6570 as github.com/yosida95/uritemplate reads it: stricter
		// than the reference's library, which checks only the expressions.
		{"Bad prefix", "Python", "https://template.com/{code:0}", invalid, map[string][]string{"url_template": {invalid}}},
		{"Space", "Python", "https://template.com/a b/{code}", invalid, map[string][]string{"url_template": {invalid}}},
		{"Bad percent", "Python", "https://template.com/%zz/{code}", invalid, map[string][]string{"url_template": {invalid}}},
		{"No code", "Python", "https://template.com{?test}", missing, map[string][]string{"__all__": {missing}}},
		{"No variable", "Python", "https://python.example.com", missing, map[string][]string{"__all__": {missing}}},
		{"Code in literal text", "Python", "https://python.example.com/code", missing, map[string][]string{"__all__": {missing}}},
		{"Case of code", "Python", "https://python.example.com/{Code}", missing, map[string][]string{"__all__": {missing}}},

		{"Blank template", "Python", "  ", blank, map[string][]string{"url_template": {blank}, "__all__": {missing}}},
		{" \t", "Python", ok, blank, map[string][]string{"name": {blank}}},
		{"Blank language", "   ", ok, blank, map[string][]string{"pygments_language": {blank}}},
		{"", "", "", blank, map[string][]string{"url_template": {blank}, "name": {blank}, "pygments_language": {blank}, "__all__": {missing}}},
		{"", "Python", "{x}", blank, map[string][]string{"name": {blank}, "__all__": {missing}}},

		{"Python playground", "Python", ok, exists, map[string][]string{"__all__": {exists}}},
		{" Python playground ", " Python ", ok, exists, map[string][]string{"__all__": {exists}}},
		{"Python playground", "Python", "{lang}", missing, map[string][]string{"__all__": {missing, exists}}},
		{"Python playground", "Python", "{code", invalid, map[string][]string{"url_template": {invalid}, "__all__": {exists}}},
	} {
		_, err := h.Service.AddPlayground(ctx, admin.Caller, chat.AddPlaygroundRequest{Name: tc.name, PygmentsLanguage: tc.lang, URLTemplate: tc.tmpl})
		e := requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, tc.msg)
		if tc.errs == nil {
			assert.NotContains(t, e.Fields, "errors", "%q", tc.name)
		} else {
			assert.Equal(t, tc.errs, e.Fields["errors"], "%q %q %q", tc.name, tc.lang, tc.tmpl)
		}
	}
	assert.Empty(t, takeEvents(t, h), "a refused playground sends nothing")

	// What passes: any other (language, name) pair, names compared
	// exactly; the characters the reference allows in a language, and 40
	// of them; any RFC 6570 use of the one variable code.
	for _, tc := range []struct{ name, lang, tmpl string }{
		{"python playground", "Python", ok},
		{"Python playground", "python", ok},
		{"Python playground", "Python3", ok},
		{"C sharp", "C#", ok},
		{"C++", "c++", ok},
		{"Odd", "a,b/c.d-e_f g#", ok},
		{"Forty", strings.Repeat("x", 40), ok},
		{"Final newline", "Python\n", ok}, // Python's "$" matches before it; strip removes it
		{"Reserved", "Go", "https://go.example.com/{+code}"},
		{"Fragment", "Go", "https://go.example.com/#{#code}"},
		{"Twice", "Go", "https://go.example.com/{code}?again={code}"},
		{"Prefix and explode", "Go", "https://go.example.com/{code:30}/{/code*}"},
		{"Query", "Go", "https://go.example.com/run{?code}{&code}"},
		{"Only the variable", "Go", "{code}"},
		{"Percent-encoded", "Go", "https://go.example.com/%20/{code}"},
		{"Unicode", "Go", "https://例え.jp/{code}"},
	} {
		addPlayground(t, h, admin, tc.name, tc.lang, tc.tmpl)
	}
	c := register(t, h, admin, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_playgrounds"}})
	list := c.state["realm_playgrounds"].([]any)
	require.Len(t, list, 17)
	assert.Equal(t, "Python", list[8].(map[string]any)["pygments_language"], "the final newline stripped")
}

// Removing: a missing playground, or another organization's, is "Invalid
// playground"; each organization has its own list.
func TestPlaygroundsRemoveAndOrganizations(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	other := h.NewRealm(t, "http://other.example.com")
	mine := addPlayground(t, h, h.Owner, "Python", "Python", "https://a.example.com/{code}")
	theirs := addPlayground(t, other, other.Owner, "Python", "Python", "https://b.example.com/{code}")
	takeEvents(t, h)

	for _, id := range []int64{theirs, theirs + mine + 100, 0, -1} {
		_, err := h.Service.RemovePlayground(ctx, h.Owner.Caller, chat.RemovePlaygroundRequest{PlaygroundID: id})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid playground")
	}
	assert.Empty(t, takeEvents(t, h))
	c := register(t, h, other.Owner, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_playgrounds"}})
	list := c.state["realm_playgrounds"].([]any)
	require.Len(t, list, 1, "another organization's playground stays")
	assert.Equal(t, float64(theirs), list[0].(map[string]any)["id"])

	_, err := h.Service.RemovePlayground(ctx, h.Owner.Caller, chat.RemovePlaygroundRequest{PlaygroundID: mine})
	require.NoError(t, err)
	ev := only(t, takeEvents(t, h), "realm_playgrounds", "")
	assert.Equal(t, []any{}, ev.JSON["realm_playgrounds"], "only this organization's list")
	assert.Equal(t, activeIDs(t, h), ev.To)
	_, err = h.Service.RemovePlayground(ctx, h.Owner.Caller, chat.RemovePlaygroundRequest{PlaygroundID: mine})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid playground")
}

// Concurrent adds of one (language, name) pair: exactly one succeeds, the
// others get the reference's duplicate error.
func TestPlaygroundsConcurrentDuplicates(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = h.Service.AddPlayground(ctx, h.Owner.Caller, chat.AddPlaygroundRequest{
				Name: "Same", PygmentsLanguage: "Go", URLTemplate: "https://go.example.com/{code}"})
		})
	}
	wg.Wait()
	succeeded := 0
	for _, err := range errs {
		if err == nil {
			succeeded++
			continue
		}
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Realm playground with this Realm, Pygments language and Name already exists.")
	}
	assert.Equal(t, 1, succeeded)
	assert.Len(t, takeEvents(t, h), 1)
}
