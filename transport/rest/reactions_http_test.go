package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	chat "github.com/teamchat/chat"
)

func TestReactionsHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob, outsider := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "Verona"}]`}, "principals": {fmt.Sprintf("[%d, %d]", alice.ID, bob.ID)}, "invite_only": {"true"},
	}}).ok(t, "POST", "/users/me/subscriptions")
	r := e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {"t"}, "content": {"hi"}}}).ok(t, "POST", "/messages")
	id := int64(r.body["id"].(float64))
	path := fmt.Sprintf("/api/v1/messages/%d/reactions", id)

	e.do(t, request{method: "POST", path: path, user: &bob, params: url.Values{"emoji_name": {"octopus"}}}).ok(t, "POST", "/messages/{message_id}/reactions")
	e.do(t, request{method: "POST", path: path, user: &alice, params: url.Values{
		"emoji_name": {"zulip"}, "emoji_code": {"zulip"}, "reaction_type": {"service_extra_emoji"}}}).ok(t, "POST", "/messages/{message_id}/reactions")
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/messages/%d", id), user: &bob}).ok(t, "GET", "/messages/{message_id}")
	reactions := r.body["message"].(map[string]any)["reactions"].([]any)
	assert.Len(t, reactions, 2)
	assert.Equal(t, map[string]any{"emoji_name": "octopus", "emoji_code": "1f419", "reaction_type": "unicode_emoji", "user_id": float64(bob.ID)}, reactions[0])
	e.do(t, request{method: "POST", path: path, user: &bob, params: url.Values{"emoji_name": {"octopus"}}}).
		fails(t, 400, chat.CodeReactionAlreadyExists, "Reaction already exists.")
	e.do(t, request{method: "POST", path: path, user: &outsider, params: url.Values{"emoji_name": {"octopus"}}}).
		fails(t, 400, chat.CodeBadRequest, "Invalid message(s)")
	e.do(t, request{method: "POST", path: path, user: &bob, params: url.Values{"emoji_name": {"not_an_emoji"}}}).
		fails(t, 400, chat.CodeBadRequest, "Emoji 'not_an_emoji' does not exist")
	e.do(t, request{method: "POST", path: path, user: &bob}).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'emoji_name' argument")

	e.do(t, request{method: "DELETE", path: path, user: &bob, params: url.Values{"emoji_code": {"1f419"}}}).ok(t, "DELETE", "/messages/{message_id}/reactions")
	e.do(t, request{method: "DELETE", path: path, user: &bob, params: url.Values{"emoji_name": {"octopus"}}}).
		fails(t, 400, chat.CodeReactionDoesNotExist, "Reaction doesn't exist.")
	e.do(t, request{method: "DELETE", path: path, user: &bob}).
		fails(t, 400, chat.CodeBadRequest, "At least one of the following arguments must be present: emoji_name, emoji_code")
	e.do(t, request{method: "DELETE", path: path, user: &outsider, params: url.Values{"emoji_name": {"octopus"}}}).
		fails(t, 400, chat.CodeBadRequest, "Invalid message(s)")
}
