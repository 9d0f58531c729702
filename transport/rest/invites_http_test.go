package rest_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/schemacheck"
)

// inviteEnv is an env whose Service mails invitations to sent.
type inviteEnv struct {
	*env
	mu   sync.Mutex
	sent []chat.Invitation
}

func newInviteEnv(t *testing.T) *inviteEnv {
	ie := &inviteEnv{}
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithInvitationSender(func(_ ctxT, inv chat.Invitation) error {
		ie.mu.Lock()
		defer ie.mu.Unlock()
		ie.sent = append(ie.sent, inv)
		return nil
	})))
	ie.env = serve(t, h)
	return ie
}

func (ie *inviteEnv) take() []chat.Invitation {
	ie.mu.Lock()
	defer ie.mu.Unlock()
	out := ie.sent
	ie.sent = nil
	return out
}

var linkPattern = regexp.MustCompile(`^http://chat\.example\.com/join/([a-z2-7]{24})/$`)

// invitationFailed checks an INVITATION_FAILED answer against the
// reference's InvitationFailedError and returns its errors.
func invitationFailedHTTP(t *testing.T, r response, msg string, sent bool) []any {
	t.Helper()
	require.Equal(t, 400, r.status, "body: %s", r.raw)
	assert.Equal(t, chat.CodeInvitationFailed, r.body["code"])
	assert.Equal(t, msg, r.body["msg"])
	assert.Equal(t, sent, r.body["sent_invitations"])
	assert.Equal(t, false, r.body["daily_limit_reached"])
	assert.Equal(t, false, r.body["license_limit_reached"])
	schemacheck.CheckSchema(t, "InvitationFailedError", r.raw)
	return r.body["errors"].([]any)
}

func TestInviteLinksHTTP(t *testing.T) {
	e := newInviteEnv(t)
	admin := e.NewUser(t, chat.RoleAdministrator)
	member := e.NewUser(t, chat.RoleMember)
	guest := e.NewUser(t, chat.RoleGuest)
	const path = "/api/v1/invites/multiuse"
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &member,
		params: url.Values{"subscriptions": {`[{"name": "lobby"}]`}}}).ok(t, "POST", "/users/me/subscriptions")
	id := e.do(t, request{method: "GET", path: "/api/v1/get_stream_id", user: &member, params: url.Values{"stream": {"lobby"}}}).
		ok(t, "GET", "/get_stream_id").body["stream_id"].(float64)

	// Permission: administrators by default; guests never.
	e.do(t, request{method: "POST", path: path, user: &member}).fails(t, 400, chat.CodeBadRequest, "Insufficient permission")
	e.do(t, request{method: "POST", path: path, user: &guest}).fails(t, 400, chat.CodeBadRequest, "Not allowed for guest users")
	e.do(t, request{method: "POST", path: path}).fails(t, 401, chat.CodeUnauthorized, "")

	// The parameters, JSON-encoded.
	r := e.do(t, request{method: "POST", path: path, user: &admin, params: url.Values{
		"invite_expires_in_minutes": {"60"}, "invite_as": {"300"}, "stream_ids": {fmt.Sprintf("[%d]", int64(id))},
		"group_ids": {"[]"}, "include_realm_default_subscriptions": {"true"}}}).ok(t, "POST", "/invites/multiuse")
	link := r.body["invite_link"].(string)
	require.Regexp(t, linkPattern, link)
	r = e.do(t, request{method: "POST", path: path, user: &admin, params: url.Values{"invite_expires_in_minutes": {"null"}}}).
		ok(t, "POST", "/invites/multiuse")
	never := r.body["invite_link"].(string)

	// Errors, in the reference's words.
	for _, tc := range []struct {
		params url.Values
		code   string
		msg    string
	}{
		{url.Values{"stream_ids": {"[99999]"}}, chat.CodeBadRequest, "Invalid channel ID 99999. No invites were sent."},
		{url.Values{"stream_ids": {`"x"`}}, chat.CodeBadRequest, "stream_ids is not a list"},
		{url.Values{"group_ids": {"[99999]"}}, chat.CodeBadRequest, "Invalid user group"},
		{url.Values{"invite_as": {"500"}}, chat.CodeBadRequest, "Invalid invite_as: Value error, Not in the list of possible values"},
		{url.Values{"invite_as": {"100"}}, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner"},
		{url.Values{"invite_expires_in_minutes": {"abc"}}, chat.CodeBadRequest, "invite_expires_in_minutes is not valid JSON"},
		{url.Values{"invite_expires_in_minutes": {"1.5"}}, chat.CodeBadRequest, "invite_expires_in_minutes is not an integer"},
		{url.Values{"invite_expires_in_minutes": {`"10"`}}, chat.CodeBadRequest, "invite_expires_in_minutes is not an integer"},
		{url.Values{"include_realm_default_subscriptions": {"maybe"}}, chat.CodeBadRequest, "include_realm_default_subscriptions is not a boolean"},
	} {
		e.do(t, request{method: "POST", path: path, user: &admin, params: tc.params}).fails(t, 400, tc.code, tc.msg)
	}

	// Listed for administrators; the member sees none of them.
	r = e.do(t, request{method: "GET", path: "/api/v1/invites", user: &admin}).ok(t, "GET", "/invites")
	invites := r.body["invites"].([]any)
	require.Len(t, invites, 2)
	first := invites[0].(map[string]any)
	assert.Equal(t, link, first["link_url"])
	assert.Equal(t, true, first["is_multiuse"])
	assert.Equal(t, float64(300), first["invited_as"])
	assert.Equal(t, float64(admin.ID), first["invited_by_user_id"])
	assert.Equal(t, float64(e.Clock.Now().Unix()+3600), first["expiry_date"])
	assert.Nil(t, invites[1].(map[string]any)["expiry_date"])
	assert.Contains(t, invites[1].(map[string]any), "expiry_date", "null, not absent")
	r = e.do(t, request{method: "GET", path: "/api/v1/invites", user: &member}).ok(t, "GET", "/invites")
	assert.Equal(t, []any{}, r.body["invites"])
	e.do(t, request{method: "GET", path: "/api/v1/invites", user: &guest}).fails(t, 400, chat.CodeBadRequest, "Not allowed for guest users")

	// Accepting needs no credentials.
	accept := func(params url.Values) response {
		return e.do(t, request{method: "POST", path: "/api/v1/invites/accept", params: params})
	}
	r = accept(url.Values{"key": {link}, "email": {"new@example.com"}, "full_name": {"New Person"}, "password": {chattest.Password}}).ok(t, "", "")
	assert.Equal(t, "new@example.com", r.body["email"])
	newUser := chattest.User{Email: "new@example.com", APIKey: r.body["api_key"].(string)}
	me := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &newUser}).ok(t, "GET", "/users/me")
	assert.Equal(t, r.body["user_id"], me.body["user_id"])
	assert.Equal(t, float64(chat.RoleModerator), me.body["role"])
	subs := e.do(t, request{method: "GET", path: "/api/v1/users/me/subscriptions", user: &newUser}).ok(t, "GET", "/users/me/subscriptions")
	require.Len(t, subs.body["subscriptions"], 1)
	assert.Equal(t, id, subs.body["subscriptions"].([]any)[0].(map[string]any)["stream_id"])
	key := e.do(t, request{method: "POST", path: "/api/v1/fetch_api_key", params: url.Values{"username": {"new@example.com"}, "password": {chattest.Password}}}).
		ok(t, "POST", "/fetch_api_key")
	assert.Equal(t, newUser.APIKey, key.body["api_key"])

	accept(url.Values{"key": {link}, "full_name": {"X Person"}, "password": {chattest.Password}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'email' argument")
	accept(url.Values{"email": {"x@example.com"}, "full_name": {"X Person"}, "password": {chattest.Password}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'key' argument")
	accept(url.Values{"key": {"nope"}, "email": {"x@example.com"}, "full_name": {"X Person"}, "password": {chattest.Password}}).
		fails(t, 400, chat.CodeBadRequest, "The invitation link is malformed or invalid.")
	accept(url.Values{"key": {link}, "email": {"new@example.com"}, "full_name": {"X Person"}, "password": {chattest.Password}}).
		fails(t, 400, chat.CodeBadRequest, "Email is already in use.")

	// Revoking.
	linkID := int64(first["id"].(float64))
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, linkID), user: &member}).
		fails(t, 400, chat.CodeBadRequest, "Must be an organization administrator")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, linkID), user: &admin}).ok(t, "DELETE", "/invites/multiuse/{invite_id}")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, linkID), user: &admin}).
		fails(t, 400, chat.CodeBadRequest, "Invitation has already been revoked")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, linkID+100), user: &admin}).
		fails(t, 400, chat.CodeBadRequest, "No such invitation")
	accept(url.Values{"key": {link}, "email": {"late@example.com"}, "full_name": {"Late Person"}, "password": {chattest.Password}}).
		fails(t, 400, chat.CodeBadRequest, "The invitation link has been revoked.")

	// Expiry follows the server's clock.
	e.Clock.Advance(1000 * 24 * time.Hour)
	accept(url.Values{"key": {never}, "email": {"later@example.com"}, "full_name": {"Later Person"}, "password": {chattest.Password}}).ok(t, "", "")
	r = e.do(t, request{method: "GET", path: "/api/v1/invites", user: &admin}).ok(t, "GET", "/invites")
	assert.Len(t, r.body["invites"], 1)

	// The setting, through PATCH /realm and register.
	members := groupIDHTTP(t, e.env, &admin, chat.GroupMembers)
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &e.Owner, params: url.Values{
		"create_multiuse_invite_group": {fmt.Sprintf(`{"new": %d}`, members)}}}).ok(t, "", "") // not in the reference's description
	// null lists are no lists, as the reference's Json[list[int]] | None.
	e.do(t, request{method: "POST", path: path, user: &member, params: url.Values{"stream_ids": {"null"}, "group_ids": {"null"}}}).
		ok(t, "POST", "/invites/multiuse")
	reg := e.do(t, request{method: "POST", path: "/api/v1/register", user: &member,
		params: url.Values{"fetch_event_types": {`["realm", "realm_user"]`}}}).ok(t, "POST", "/register")
	assert.Equal(t, float64(members), reg.body["realm_create_multiuse_invite_group"])
	assert.Equal(t, float64(members), reg.body["realm_can_invite_users_group"])
	assert.Equal(t, true, reg.body["can_invite_others_to_realm"])
}

// groupIDHTTP finds a system group's ID through GET /user_groups.
func groupIDHTTP(t *testing.T, e *env, as *chattest.User, name string) int64 {
	t.Helper()
	r := e.do(t, request{method: "GET", path: "/api/v1/user_groups", user: as}).ok(t, "GET", "/user_groups")
	for _, g := range r.body["user_groups"].([]any) {
		if g.(map[string]any)["name"] == name {
			return int64(g.(map[string]any)["id"].(float64))
		}
	}
	t.Fatalf("no group %s", name)
	return 0
}

func TestEmailInvitesHTTP(t *testing.T) {
	e := newInviteEnv(t)
	admin := e.NewUser(t, chat.RoleAdministrator)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	guest := e.NewUser(t, chat.RoleGuest)
	const path = "/api/v1/invites"

	// Required parameters, in the reference's order.
	e.do(t, request{method: "POST", path: path, user: &alice}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'invitee_emails' argument")
	e.do(t, request{method: "POST", path: path, user: &alice, params: url.Values{"invitee_emails": {"a@example.com"}}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'stream_ids' argument")
	e.do(t, request{method: "POST", path: path, user: &alice, params: url.Values{"invitee_emails": {""}, "stream_ids": {"[]"}}}).
		fails(t, 400, chat.CodeBadRequest, "You must specify at least one email address.")
	e.do(t, request{method: "POST", path: path, user: &guest, params: url.Values{"invitee_emails": {"a@example.com"}, "stream_ids": {"[]"}}}).
		fails(t, 400, chat.CodeBadRequest, "Not allowed for guest users")
	e.do(t, request{method: "POST", path: path, user: &alice, params: url.Values{"invitee_emails": {"a@example.com"}, "stream_ids": {"[]"}, "invite_as": {"200"}}}).
		fails(t, 400, chat.CodeBadRequest, "Must be an organization administrator")

	e.do(t, request{method: "POST", path: path, user: &alice, params: url.Values{
		"invitee_emails": {"one@example.com\nTwo <two@example.com>"}, "stream_ids": {"[]"}, "group_ids": {"[]"},
		"invite_expires_in_minutes": {"120"}, "invite_as": {"600"}, "include_realm_default_subscriptions": {"false"},
		"notify_referrer_on_join": {"false"}}}).ok(t, "POST", "/invites")
	mails := e.take()
	require.Len(t, mails, 2)
	assert.Equal(t, "two@example.com", mails[1].Email)
	assert.Equal(t, chat.RoleGuest, mails[0].InvitedAs)

	// The partial failure answer.
	r := e.do(t, request{method: "POST", path: path, user: &alice, params: url.Values{
		"invitee_emails": {"three@example.com, " + bob.Email}, "stream_ids": {"[]"}}})
	errs := invitationFailedHTTP(t, r, "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!", true)
	assert.Equal(t, []any{[]any{bob.Email, "Already has an account.", false}}, errs)
	require.Len(t, e.take(), 1)
	r = e.do(t, request{method: "POST", path: path, user: &alice, params: url.Values{"invitee_emails": {"bad address"}, "stream_ids": {"[]"}}})
	errs = invitationFailedHTTP(t, r, "Some emails did not validate, so we didn't send any invitations.", false)
	assert.Equal(t, []any{[]any{"bad address", "Invalid address.", false}}, errs)

	// Listing: alice sees her three, bob none, administrators all.
	r = e.do(t, request{method: "GET", path: path, user: &alice}).ok(t, "GET", "/invites")
	list := r.body["invites"].([]any)
	require.Len(t, list, 3)
	one := list[0].(map[string]any)
	assert.Equal(t, map[string]any{"id": float64(mails[0].InviteID), "invited_by_user_id": float64(alice.ID), "invited": float64(e.Clock.Now().Unix()),
		"expiry_date": float64(e.Clock.Now().Unix() + 7200), "invited_as": float64(600), "email": "one@example.com",
		"notify_referrer_on_join": false, "is_multiuse": false}, one)
	r = e.do(t, request{method: "GET", path: path, user: &bob}).ok(t, "GET", "/invites")
	assert.Equal(t, []any{}, r.body["invites"])
	r = e.do(t, request{method: "GET", path: path, user: &admin}).ok(t, "GET", "/invites")
	assert.Len(t, r.body["invites"], 3)

	// Resending and revoking.
	e.do(t, request{method: "POST", path: fmt.Sprintf("%s/%d/resend", path, mails[0].InviteID), user: &bob}).
		fails(t, 400, chat.CodeBadRequest, "Must be an organization administrator")
	e.do(t, request{method: "POST", path: fmt.Sprintf("%s/%d/resend", path, mails[0].InviteID), user: &alice}).ok(t, "POST", "/invites/{invite_id}/resend")
	resent := e.take()
	require.Len(t, resent, 1)
	assert.Equal(t, mails[0].Link, resent[0].Link)
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, mails[1].InviteID), user: &bob}).
		fails(t, 400, chat.CodeBadRequest, "Must be an organization administrator")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, mails[1].InviteID), user: &admin}).ok(t, "DELETE", "/invites/{invite_id}")
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("%s/%d", path, mails[1].InviteID), user: &alice}).
		fails(t, 400, chat.CodeBadRequest, "No such invitation")
	e.do(t, request{method: "POST", path: fmt.Sprintf("%s/%d/resend", path, mails[1].InviteID), user: &alice}).
		fails(t, 400, chat.CodeBadRequest, "No such invitation")

	// Accepting: the invited address, once.
	accept := func(key string) response {
		return e.do(t, request{method: "POST", path: "/api/v1/invites/accept", params: url.Values{
			"key": {key}, "full_name": {"Guest One"}, "password": {chattest.Password}}})
	}
	r = accept(mails[0].Key).ok(t, "", "")
	assert.Equal(t, "one@example.com", r.body["email"])
	guestOne := chattest.User{Email: "one@example.com", APIKey: r.body["api_key"].(string)}
	me := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &guestOne}).ok(t, "GET", "/users/me")
	assert.Equal(t, float64(chat.RoleGuest), me.body["role"])
	accept(mails[0].Key).fails(t, 400, chat.CodeBadRequest, "The invitation link has already been used.")
	accept(mails[1].Key).fails(t, 400, chat.CodeBadRequest, "The invitation link has been revoked.")
	e.Clock.Advance(2*time.Hour + time.Second)
	r = e.do(t, request{method: "GET", path: path, user: &alice}).ok(t, "GET", "/invites")
	list = r.body["invites"].([]any)
	require.Len(t, list, 1, "the first two are spent, the 2-hour ones would have expired; the third has the default 10 days")
	assert.Equal(t, "three@example.com", list[0].(map[string]any)["email"])

	// Another organization's host does not know the key.
	e.NewRealm(t, "http://other.example.com")
	sendNew := e.do(t, request{method: "POST", path: path, user: &alice, host: "chat.example.com",
		params: url.Values{"invitee_emails": {"four@example.com"}, "stream_ids": {"[]"}}})
	sendNew.ok(t, "POST", "/invites")
	four := e.take()[0]
	e.do(t, request{method: "POST", path: "/api/v1/invites/accept", host: "other.example.com", params: url.Values{
		"key": {four.Key}, "full_name": {"Four"}, "password": {chattest.Password}}}).
		fails(t, 400, chat.CodeBadRequest, "The invitation link is malformed or invalid.")
	assert.True(t, strings.HasSuffix(four.Link, four.Key+"/"))
	r = e.do(t, request{method: "POST", path: "/api/v1/invites/accept", host: "chat.example.com", params: url.Values{
		"key": {four.Key}, "full_name": {"Four"}, "password": {chattest.Password}}}).ok(t, "", "")
	assert.Equal(t, "four@example.com", r.body["email"])
}
