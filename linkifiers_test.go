package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// linkifiersJSON is a linkifier list as a client decodes it.
func linkifiersJSON(t *testing.T, list []chat.Linkifier) any {
	t.Helper()
	raw, err := json.Marshal(list)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

func addLinkifier(t *testing.T, h *chattest.Harness, as chattest.User, pattern, tmpl string) int64 {
	t.Helper()
	resp, err := h.Service.AddLinkifier(context.Background(), as.Caller, chat.AddLinkifierRequest{Pattern: pattern, URLTemplate: tmpl})
	require.NoError(t, err)
	checkSchema(t, "POST", "/realm/filters", resp)
	require.NotZero(t, resp.ID)
	return resp.ID
}

func getLinkifiers(t *testing.T, h *chattest.Harness, as chattest.User) []chat.Linkifier {
	t.Helper()
	resp, err := h.Service.GetLinkifiers(context.Background(), as.Caller)
	require.NoError(t, err)
	checkSchema(t, "GET", "/realm/linkifiers", resp)
	return resp.Linkifiers
}

var withLinkifiers = &chat.ClientCapabilities{NotificationSettingsNull: ptr(false), LinkifierURLTemplate: true}

// Administrators add, change, reorder and remove linkifiers; each change
// sends everyone (guests too) the whole list in order, which GET and
// register (with the capability) also give.
func TestLinkifiersLifecycleAndEvents(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	member := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	gone := h.NewUser(t, chat.RoleMember)
	h.Deactivate(t, gone)

	assert.Equal(t, []chat.Linkifier{}, getLinkifiers(t, h, guest), "an empty list, not null")
	empty := register(t, h, guest, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_linkifiers"}, QueueParams: chat.QueueParams{ClientCapabilities: withLinkifiers}})
	assert.Equal(t, []any{}, empty.state["realm_linkifiers"])
	takeEvents(t, h)

	issue := addLinkifier(t, h, admin, `#(?P<id>[0-9]+)`, "https://trac.example.com/ticket/{id}")
	want := []chat.Linkifier{{ID: issue, Pattern: `#(?P<id>[0-9]+)`, URLTemplate: "https://trac.example.com/ticket/{id}"}}
	ev := only(t, takeEvents(t, h), "realm_linkifiers", "")
	assert.Equal(t, linkifiersJSON(t, want), ev.JSON["realm_linkifiers"])
	assert.Equal(t, activeIDs(t, h), ev.To, "everyone active, guests included")
	assert.Contains(t, ev.To, guest.ID)
	assert.NotContains(t, ev.To, gone.ID)

	// The owner may too; values are stripped; a new one comes last.
	pr := addLinkifier(t, h, h.Owner, " \tPR(?P<repo>[a-z]+)/(?P<n>\\d+)\n", "  https://git.example.com/{repo}/pulls/{n} ")
	want = append(want, chat.Linkifier{ID: pr, Pattern: `PR(?P<repo>[a-z]+)/(?P<n>\d+)`, URLTemplate: "https://git.example.com/{repo}/pulls/{n}"})
	ev = only(t, takeEvents(t, h), "realm_linkifiers", "")
	assert.Equal(t, linkifiersJSON(t, want), ev.JSON["realm_linkifiers"])
	plain := addLinkifier(t, h, admin, "docs", "https://docs.example.com")
	want = append(want, chat.Linkifier{ID: plain, Pattern: "docs", URLTemplate: "https://docs.example.com"})
	takeEvents(t, h)

	for _, u := range []chattest.User{guest, member, admin, h.Owner} {
		assert.Equal(t, want, getLinkifiers(t, h, u), "GET of role %d", u.Role)
		c := register(t, h, u, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_linkifiers", "realm_filters"}, QueueParams: chat.QueueParams{ClientCapabilities: withLinkifiers}})
		assert.Equal(t, linkifiersJSON(t, want), c.state["realm_linkifiers"], "register of role %d", u.Role)
		assert.Equal(t, []any{}, c.state["realm_filters"], "realm_filters is always empty")
	}
	// Without the capability, register's list is empty.
	old := register(t, h, member, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_linkifiers", "realm_filters"}})
	assert.Equal(t, []any{}, old.state["realm_linkifiers"])
	assert.Equal(t, []any{}, old.state["realm_filters"])
	old = register(t, h, member, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: &chat.ClientCapabilities{NotificationSettingsNull: ptr(false)}}})
	assert.Equal(t, []any{}, old.state["realm_linkifiers"])
	all := register(t, h, member, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: withLinkifiers}})
	assert.Equal(t, linkifiersJSON(t, want), all.state["realm_linkifiers"], "in a register of everything")
	other := register(t, h, member, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_emoji"}, QueueParams: chat.QueueParams{ClientCapabilities: withLinkifiers}})
	assert.NotContains(t, other.state, "realm_linkifiers")

	// Update keeps the place.
	resp, err := h.Service.UpdateLinkifier(ctx, admin.Caller, chat.UpdateLinkifierRequest{FilterID: issue, Pattern: " T(?P<id>\\d+) ", URLTemplate: " https://bugs.example.com/{id} "})
	require.NoError(t, err)
	checkSchema(t, "PATCH", "/realm/filters/{filter_id}", resp)
	want[0] = chat.Linkifier{ID: issue, Pattern: `T(?P<id>\d+)`, URLTemplate: "https://bugs.example.com/{id}"}
	ev = only(t, takeEvents(t, h), "realm_linkifiers", "")
	assert.Equal(t, linkifiersJSON(t, want), ev.JSON["realm_linkifiers"])
	assert.Equal(t, activeIDs(t, h), ev.To)
	// Keeping its own pattern is no duplicate.
	_, err = h.Service.UpdateLinkifier(ctx, admin.Caller, chat.UpdateLinkifierRequest{FilterID: issue, Pattern: want[0].Pattern, URLTemplate: "https://bugs.example.com/show/{id}"})
	require.NoError(t, err)
	want[0].URLTemplate = "https://bugs.example.com/show/{id}"
	only(t, takeEvents(t, h), "realm_linkifiers", "")

	// Reorder.
	resp, err = h.Service.ReorderLinkifiers(ctx, h.Owner.Caller, chat.ReorderLinkifiersRequest{OrderedLinkifierIDs: []int64{plain, issue, pr}})
	require.NoError(t, err)
	checkSchema(t, "PATCH", "/realm/linkifiers", resp)
	want = []chat.Linkifier{want[2], want[0], want[1]}
	ev = only(t, takeEvents(t, h), "realm_linkifiers", "")
	assert.Equal(t, linkifiersJSON(t, want), ev.JSON["realm_linkifiers"])
	assert.Equal(t, activeIDs(t, h), ev.To)
	assert.Equal(t, want, getLinkifiers(t, h, member))
	// The same order again still tells everyone, as in the reference.
	_, err = h.Service.ReorderLinkifiers(ctx, admin.Caller, chat.ReorderLinkifiersRequest{OrderedLinkifierIDs: []int64{plain, issue, pr}})
	require.NoError(t, err)
	only(t, takeEvents(t, h), "realm_linkifiers", "")
	// A new one comes after the reordered ones.
	last := addLinkifier(t, h, admin, "last", "https://last.example.com")
	want = append(want, chat.Linkifier{ID: last, Pattern: "last", URLTemplate: "https://last.example.com"})
	takeEvents(t, h)
	assert.Equal(t, want, getLinkifiers(t, h, member))

	// Removing sends the rest.
	resp, err = h.Service.RemoveLinkifier(ctx, admin.Caller, chat.RemoveLinkifierRequest{FilterID: issue})
	require.NoError(t, err)
	checkSchema(t, "DELETE", "/realm/filters/{filter_id}", resp)
	want = append(want[:1:1], want[2:]...)
	ev = only(t, takeEvents(t, h), "realm_linkifiers", "")
	assert.Equal(t, linkifiersJSON(t, want), ev.JSON["realm_linkifiers"])
	assert.Equal(t, activeIDs(t, h), ev.To)
	for _, l := range want {
		_, err = h.Service.RemoveLinkifier(ctx, h.Owner.Caller, chat.RemoveLinkifierRequest{FilterID: l.ID})
		require.NoError(t, err)
	}
	evs := takeEvents(t, h)
	require.Len(t, evs, 3)
	assert.Equal(t, []any{}, evs[2].JSON["realm_linkifiers"], "an empty list after the last")
	assert.Equal(t, []chat.Linkifier{}, getLinkifiers(t, h, member))

	// With none, an empty reorder changes nothing and sends nothing.
	_, err = h.Service.ReorderLinkifiers(ctx, admin.Caller, chat.ReorderLinkifiersRequest{OrderedLinkifierIDs: []int64{}})
	require.NoError(t, err)
	assert.Empty(t, takeEvents(t, h))
}

// Only administrators (and owners) may change linkifiers, as the
// reference's require_realm_admin; everyone may list them.
func TestLinkifiersPermissions(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	member := h.NewUser(t, chat.RoleMember)
	others := []chattest.User{h.NewUser(t, chat.RoleModerator), member, h.NewUser(t, chat.RoleGuest), h.NewBot(t, h.Owner)}
	id := addLinkifier(t, h, admin, `#(?P<id>\d+)`, "https://example.com/{id}")
	takeEvents(t, h)
	const denied = "Must be an organization administrator"
	for _, u := range others {
		assert.Len(t, getLinkifiers(t, h, u), 1)
		_, err := h.Service.AddLinkifier(ctx, u.Caller, chat.AddLinkifierRequest{Pattern: "x", URLTemplate: "https://x.example.com"})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", denied)
		_, err = h.Service.UpdateLinkifier(ctx, u.Caller, chat.UpdateLinkifierRequest{FilterID: id, Pattern: "x", URLTemplate: "https://x.example.com"})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", denied)
		_, err = h.Service.ReorderLinkifiers(ctx, u.Caller, chat.ReorderLinkifiersRequest{OrderedLinkifierIDs: []int64{id}})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", denied)
		_, err = h.Service.RemoveLinkifier(ctx, u.Caller, chat.RemoveLinkifierRequest{FilterID: id})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", denied)
		// Even with invalid input the role is checked first.
		_, err = h.Service.AddLinkifier(ctx, u.Caller, chat.AddLinkifierRequest{Pattern: "(", URLTemplate: "{"})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", denied)
		_, err = h.Service.ReorderLinkifiers(ctx, u.Caller, chat.ReorderLinkifiersRequest{OrderedLinkifierIDs: []int64{id, id}})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", denied)
		_, err = h.Service.RemoveLinkifier(ctx, u.Caller, chat.RemoveLinkifierRequest{FilterID: id + 1000})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", denied)
	}
	assert.Empty(t, takeEvents(t, h))
	assert.Len(t, getLinkifiers(t, h, member), 1, "still there")
}

// The reference's validation, each error with its text and the "errors"
// object by field, for adding and for changing.
func TestLinkifiersValidation(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	taken := addLinkifier(t, h, admin, `#(?P<id>\d+)`, "https://example.com/{id}")
	mine := addLinkifier(t, h, admin, `mine`, "https://example.com/mine")
	takeEvents(t, h)

	const (
		blank   = "This field cannot be blank."
		invalid = "Invalid URL template."
		exists  = "Realm filter with this Realm and Pattern already exists."
	)
	type errs = map[string][]string
	for _, tc := range []struct {
		pattern, tmpl string
		msg           string
		errs          errs
	}{
		{"(abc", "https://example.com", "Bad regular expression: missing ): (abc", errs{"__all__": {"Bad regular expression: missing ): (abc"}}},
		{"abc)", "https://example.com", "Bad regular expression: unexpected ): abc)", errs{"__all__": {"Bad regular expression: unexpected ): abc)"}}},
		{"[a", "https://example.com", "Bad regular expression: missing ]: [a", errs{"__all__": {"Bad regular expression: missing ]: [a"}}},
		{"*a", "https://example.com", "Bad regular expression: no argument for repetition operator: *", errs{"__all__": {"Bad regular expression: no argument for repetition operator: *"}}},
		{`a\`, "https://example.com", `Bad regular expression: trailing \: `, errs{"__all__": {`Bad regular expression: trailing \: `}}},
		{`\8`, "https://example.com", `Bad regular expression: invalid escape sequence: \8`, errs{"__all__": {`Bad regular expression: invalid escape sequence: \8`}}},
		{"(?P<id>a)", "https://example.com/{id", invalid, errs{"url_template": {invalid}}},
		{"(?P<id>a)", "https://example.com/{=id}", invalid, errs{"url_template": {invalid}}},
		{"(abc", "https://example.com/{id", invalid, errs{"url_template": {invalid}, "__all__": {"Bad regular expression: missing ): (abc"}}},
		{"(?P<id>a)", "https://example.com/{id}/{b}/{a}", "Group 'a' in URL template is not present in linkifier pattern.",
			errs{"__all__": {"Group 'a' in URL template is not present in linkifier pattern."}}},
		{"(?P<id>a)(?P<z>b)(?P<y>c)", "https://example.com/{id}", "Group 'y' in linkifier pattern is not present in URL template.",
			errs{"__all__": {"Group 'y' in linkifier pattern is not present in URL template."}}},
		{"(?P<id>a)", "https://example.com/id", "Group 'id' in linkifier pattern is not present in URL template.",
			errs{"__all__": {"Group 'id' in linkifier pattern is not present in URL template."}}},
		{"  ", "https://example.com", blank, errs{"pattern": {blank}}},
		{"a", " ", blank, errs{"url_template": {blank}}},
		{"(?P<id>a)", "", blank, errs{"url_template": {blank}, "__all__": {"Group 'id' in linkifier pattern is not present in URL template."}}},
		{"", "", blank, errs{"pattern": {blank}, "url_template": {blank}}},
		{`#(?P<id>\d+)`, "https://other.example.com/{id}", exists, errs{"__all__": {exists}}},
		{` #(?P<id>\d+) `, "https://other.example.com/{id}", exists, errs{"__all__": {exists}}},
		{`#(?P<id>\d+)`, "https://other.example.com/{id", invalid, errs{"url_template": {invalid}, "__all__": {exists}}},
		{`#(?P<id>\d+)`, "https://other.example.com/", "Group 'id' in linkifier pattern is not present in URL template.",
			errs{"__all__": {"Group 'id' in linkifier pattern is not present in URL template.", exists}}},
	} {
		_, err := h.Service.AddLinkifier(ctx, admin.Caller, chat.AddLinkifierRequest{Pattern: tc.pattern, URLTemplate: tc.tmpl})
		e := requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, tc.msg)
		assert.Equal(t, tc.errs, e.Fields["errors"], "add %q %q", tc.pattern, tc.tmpl)
		_, err = h.Service.UpdateLinkifier(ctx, admin.Caller, chat.UpdateLinkifierRequest{FilterID: mine, Pattern: tc.pattern, URLTemplate: tc.tmpl})
		e = requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, tc.msg)
		assert.Equal(t, tc.errs, e.Fields["errors"], "update %q %q", tc.pattern, tc.tmpl)
	}
	assert.Empty(t, takeEvents(t, h), "a refused change sends nothing")

	// What passes: patterns without groups, groups used twice, Unicode
	// classes, other operators.
	for _, tc := range []struct{ pattern, tmpl string }{
		{`(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)`, "https://github.com/{org}/{repo}/issues/{id}"},
		{`\pL+-(?P<n>\d+)`, "https://example.com/{?n}"},
		{`(?P<a>x)(?P<b>y)`, "https://example.com/{a}{/b}{a}"},
		{`(?i)case`, "https://example.com/case"},
		{`(?P<id>\d+)x`, "https://example.com/{+id}#{id}"},
	} {
		addLinkifier(t, h, admin, tc.pattern, tc.tmpl)
	}
	assert.Len(t, getLinkifiers(t, h, admin), 7)
	_ = taken
}

// Not found, and reorder's errors; each organization has its own list.
func TestLinkifiersNotFoundReorderAndOrganizations(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	other := h.NewRealm(t, "http://other.example.com")
	a := addLinkifier(t, h, h.Owner, "a", "https://a.example.com")
	b := addLinkifier(t, h, h.Owner, "b", "https://b.example.com")
	theirs := addLinkifier(t, other, other.Owner, "a", "https://a.example.com")
	takeEvents(t, h)

	for _, id := range []int64{theirs, theirs + a + b + 100, 0, -1} {
		_, err := h.Service.RemoveLinkifier(ctx, h.Owner.Caller, chat.RemoveLinkifierRequest{FilterID: id})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Linkifier not found.")
		// Not found comes before the validation.
		_, err = h.Service.UpdateLinkifier(ctx, h.Owner.Caller, chat.UpdateLinkifierRequest{FilterID: id, Pattern: "(", URLTemplate: "{"})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Linkifier not found.")
	}
	const (
		dup  = "The ordered list must not contain duplicated linkifiers"
		each = "The ordered list must enumerate all existing linkifiers exactly once"
	)
	for _, tc := range []struct {
		ids []int64
		msg string
	}{
		{[]int64{a, a, b}, dup},
		{[]int64{a, b, b}, dup},
		{[]int64{theirs, theirs}, dup},
		{[]int64{a}, each},
		{[]int64{}, each},
		{nil, each},
		{[]int64{a, b, theirs}, each},
		{[]int64{a, theirs}, each},
		{[]int64{b, a, a + b + theirs + 100}, each},
	} {
		_, err := h.Service.ReorderLinkifiers(ctx, h.Owner.Caller, chat.ReorderLinkifiersRequest{OrderedLinkifierIDs: tc.ids})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, tc.msg)
	}
	assert.Empty(t, takeEvents(t, h))
	assert.Equal(t, []chat.Linkifier{{ID: a, Pattern: "a", URLTemplate: "https://a.example.com"}, {ID: b, Pattern: "b", URLTemplate: "https://b.example.com"}},
		getLinkifiers(t, h, h.Owner))
	assert.Equal(t, []chat.Linkifier{{ID: theirs, Pattern: "a", URLTemplate: "https://a.example.com"}}, getLinkifiers(t, other, other.Owner))

	_, err := h.Service.RemoveLinkifier(ctx, h.Owner.Caller, chat.RemoveLinkifierRequest{FilterID: a})
	require.NoError(t, err)
	_, err = h.Service.RemoveLinkifier(ctx, h.Owner.Caller, chat.RemoveLinkifierRequest{FilterID: a})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Linkifier not found.")
	assert.Len(t, getLinkifiers(t, other, other.Owner), 1, "another organization's stays")
}

// Concurrent adds of one pattern: exactly one succeeds, the others get
// the reference's duplicate error.
func TestLinkifiersConcurrentDuplicates(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = h.Service.AddLinkifier(ctx, h.Owner.Caller, chat.AddLinkifierRequest{Pattern: "same", URLTemplate: "https://example.com"})
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		e := requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Realm filter with this Realm and Pattern already exists.")
		assert.Equal(t, map[string][]string{"__all__": {"Realm filter with this Realm and Pattern already exists."}}, e.Fields["errors"])
	}
	assert.Equal(t, 1, ok)
	assert.Len(t, getLinkifiers(t, h, h.Owner), 1)
}

// Messages are rendered with the organization's linkifiers as they are
// when the message is sent: a change applies to the next message at once.
func TestLinkifiersRenderMessages(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "dev", false)
	to := "dev"
	sendAndRender := func(content string) string {
		t.Helper()
		return getMessage(t, h, alice, send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: &to, Topic: ptr("t"), Content: content})).Content
	}

	assert.Equal(t, "<p>fix #224</p>", sendAndRender("fix #224"), "no linkifiers")
	id := addLinkifier(t, h, h.Owner, `#(?P<id>[0-9]+)`, "https://trac.example.com/ticket/{id}")
	assert.Equal(t, `<p>fix <a href="https://trac.example.com/ticket/224">#224</a>, not x#225</p>`, sendAndRender("fix #224, not x#225"))

	_, err := h.Service.UpdateLinkifier(ctx, h.Owner.Caller, chat.UpdateLinkifierRequest{FilterID: id, Pattern: `#(?P<id>[0-9]+)`, URLTemplate: "https://bugs.example.com/{id}"})
	require.NoError(t, err)
	assert.Equal(t, `<p>fix <a href="https://bugs.example.com/224">#224</a></p>`, sendAndRender("fix #224"), "the changed template")

	// Order decides overlapping matches.
	other := addLinkifier(t, h, h.Owner, `#(?P<id>2[0-9]+)`, "https://two.example.com/{id}")
	assert.Equal(t, `<p><a href="https://bugs.example.com/224">#224</a></p>`, sendAndRender("#224"))
	_, err = h.Service.ReorderLinkifiers(ctx, h.Owner.Caller, chat.ReorderLinkifiersRequest{OrderedLinkifierIDs: []int64{other, id}})
	require.NoError(t, err)
	assert.Equal(t, `<p><a href="https://two.example.com/224">#224</a> <a href="https://bugs.example.com/124">#124</a></p>`, sendAndRender("#224 #124"))

	// An edit renders with the linkifiers of its time.
	msg := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: &to, Topic: ptr("t"), Content: "see #1"})
	for _, l := range []int64{id, other} {
		_, err = h.Service.RemoveLinkifier(ctx, h.Owner.Caller, chat.RemoveLinkifierRequest{FilterID: l})
		require.NoError(t, err)
	}
	assert.Equal(t, "<p>fix #224</p>", sendAndRender("fix #224"), "removed")
	assert.Equal(t, `<p>see <a href="https://bugs.example.com/1">#1</a></p>`, getMessage(t, h, alice, msg).Content, "rendered once, at send time")
	_, err = h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: msg, Content: ptr("see #2")})
	require.NoError(t, err)
	assert.Equal(t, "<p>see #2</p>", getMessage(t, h, alice, msg).Content)

	// Each organization its own.
	realm2 := h.NewRealm(t, "http://other.example.com")
	addLinkifier(t, realm2, realm2.Owner, `#(?P<id>[0-9]+)`, "https://other.example.com/{id}")
	assert.Equal(t, "<p>fix #224</p>", sendAndRender("fix #224"))
}

// Messages carry the links of their topic, from the linkifiers and bare
// URLs, in fetches and in the message event.
func TestLinkifiersTopicLinks(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "dev", false)
	to := "dev"
	topic := "#224 and example.com/x"
	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: &to, Topic: &topic, Content: "hi"})
	assert.Equal(t, []chat.TopicLink{{Text: "example.com/x", URL: "https://example.com/x"}}, getMessage(t, h, alice, id).TopicLinks)

	tracID := addLinkifier(t, h, h.Owner, `#(?P<id>[0-9]+)`, "https://trac.example.com/ticket/{id}")
	takeEvents(t, h)
	want := []chat.TopicLink{{Text: "#224", URL: "https://trac.example.com/ticket/224"}, {Text: "example.com/x", URL: "https://example.com/x"}}
	assert.Equal(t, want, getMessage(t, h, alice, id).TopicLinks, "computed when fetched, with the linkifiers of now")
	resp, err := h.Service.GetMessages(ctx, alice.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(5), NumAfter: ptr(0)})
	require.NoError(t, err)
	require.NotEmpty(t, resp.Messages)
	assert.Equal(t, want, resp.Messages[len(resp.Messages)-1].TopicLinks)

	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: &to, Topic: &topic, Content: "again"})
	evs := takeEvents(t, h)
	require.NotEmpty(t, evs)
	for _, ev := range evs { // the message's variants
		require.Equal(t, "message", ev.JSON["type"])
		assert.Equal(t, []any{
			map[string]any{"text": "#224", "url": "https://trac.example.com/ticket/224"},
			map[string]any{"text": "example.com/x", "url": "https://example.com/x"},
		}, ev.JSON["message"].(map[string]any)["topic_links"])
	}

	// Moving the message to another topic announces the new topic's links.
	_, err = h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: id, Topic: ptr("see #7")})
	require.NoError(t, err)
	moved := only(t, takeEvents(t, h), "update_message", "")
	assert.Equal(t, []any{map[string]any{"text": "#7", "url": "https://trac.example.com/ticket/7"}}, moved.JSON["topic_links"])
	_, err = h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: id, Topic: &topic})
	require.NoError(t, err)
	takeEvents(t, h)

	_, err = h.Service.RemoveLinkifier(ctx, h.Owner.Caller, chat.RemoveLinkifierRequest{FilterID: tracID})
	require.NoError(t, err)
	assert.Equal(t, want[1:], getMessage(t, h, alice, id).TopicLinks)

	// Direct messages have none.
	bob := h.NewUser(t, chat.RoleMember)
	dm := fmt.Sprintf("[%d]", bob.ID)
	dmID := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: &dm, Content: "#224 example.com"})
	assert.Equal(t, []chat.TopicLink{}, getMessage(t, h, alice, dmID).TopicLinks)
}
