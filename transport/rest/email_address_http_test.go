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

// GET /streams/{stream_id}/email_address over HTTP: the address (with the
// reference's form, the same each time, one per sender), who may ask,
// which senders, and the empty address of a server without a gateway.
func TestStreamEmailAddressHTTP(t *testing.T) {
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithEmailGateway("Mail.Example.com")))
	e := serve(t, h)
	member, other, guest := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleGuest)
	bot, othersBot := e.NewBot(t, member), e.NewBot(t, other)
	public := newChannelHTTP(t, e, member, "dev. help", false)
	private := newChannelHTTP(t, e, other, "secret", true)
	path := func(id int64) string { return fmt.Sprintf("/api/v1/streams/%d/email_address", id) }

	r := e.do(t, request{method: "GET", path: path(public), user: &member}).ok(t, "GET", "/streams/{stream_id}/email_address")
	addr := r.body["email"].(string)
	assert.Regexp(t, `^dev-help\.[0-9a-f]{32}\.show-sender@mail\.example\.com$`, addr)
	again := e.do(t, request{method: "GET", path: path(public), user: &member}).ok(t, "GET", "/streams/{stream_id}/email_address")
	assert.Equal(t, addr, again.body["email"])
	byOther := e.do(t, request{method: "GET", path: path(public), user: &other}).ok(t, "GET", "/streams/{stream_id}/email_address")
	assert.NotEqual(t, addr, byOther.body["email"], "one address per creator")
	for _, sender := range []int64{member.ID, bot.ID} {
		r := e.do(t, request{method: "GET", path: path(public), user: &member, params: url.Values{"sender_id": {fmt.Sprint(sender)}}}).
			ok(t, "GET", "/streams/{stream_id}/email_address")
		assert.NotEqual(t, addr, r.body["email"], "sender %d", sender)
	}

	e.do(t, request{method: "GET", path: path(public), user: &member, params: url.Values{"sender_id": {fmt.Sprint(othersBot.ID)}}}).
		fails(t, 400, chat.CodeBadRequest, "Insufficient permission")
	e.do(t, request{method: "GET", path: path(public), user: &member, params: url.Values{"sender_id": {fmt.Sprint(other.ID)}}}).
		fails(t, 400, chat.CodeBadRequest, "No such bot")
	e.do(t, request{method: "GET", path: path(public), user: &member, params: url.Values{"sender_id": {"x"}}}).
		fails(t, 400, chat.CodeBadRequest, "")
	for _, c := range []struct {
		as *chattest.User
		id int64
	}{{&member, private}, {&guest, public}, {&member, 999999}} {
		e.do(t, request{method: "GET", path: path(c.id), user: c.as}).
			failsAs(t, "GET", "/streams/{stream_id}/email_address", 400, chat.CodeBadRequest, "Invalid channel ID")
	}
	e.do(t, request{method: "GET", path: path(public)}).fails(t, 401, chat.CodeUnauthorized, "")
	admin := e.NewUser(t, chat.RoleAdministrator)
	e.do(t, request{method: "DELETE", path: fmt.Sprintf("/api/v1/streams/%d", public), user: &admin}).ok(t, "DELETE", "/streams/{stream_id}")
	e.do(t, request{method: "GET", path: path(public), user: &member}).
		failsAs(t, "GET", "/streams/{stream_id}/email_address", 400, chat.CodeBadRequest, "Invalid channel ID")

	// Without a gateway the address is empty, as the reference's.
	plain := newEnv(t)
	owner := plain.Owner
	ch := newChannelHTTP(t, plain, owner, "general", false)
	r = plain.do(t, request{method: "GET", path: path(ch), user: &owner}).ok(t, "GET", "/streams/{stream_id}/email_address")
	assert.Equal(t, "", r.body["email"])
}

// newChannelHTTP makes a channel through POST /users/me/subscriptions.
func newChannelHTTP(t *testing.T, e *env, by chattest.User, name string, private bool) int64 {
	t.Helper()
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &by, params: url.Values{
		"subscriptions": {fmt.Sprintf(`[{"name": %q}]`, name)}, "invite_only": {fmt.Sprint(private)}}}).ok(t, "POST", "/users/me/subscriptions")
	r := e.do(t, request{method: "GET", path: "/api/v1/get_stream_id", user: &by, params: url.Values{"stream": {name}}}).ok(t, "GET", "/get_stream_id")
	id, ok := r.body["stream_id"].(float64)
	require.True(t, ok)
	return int64(id)
}
