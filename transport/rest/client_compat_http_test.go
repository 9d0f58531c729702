package rest_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

// What real clients of the reference read under its names (issue 22),
// through HTTP: the version fields, zulip_extra_emoji, the reaction
// event's user object and max_message_id.
func TestReferenceNamesHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)

	r := e.do(t, request{method: "GET", path: "/api/v1/server_settings"}).ok(t, "GET", "/server_settings")
	for _, prefix := range []string{"zulip", "service"} {
		assert.Equal(t, chat.Version, r.body[prefix+"_version"])
		assert.EqualValues(t, chat.FeatureLevel, r.body[prefix+"_feature_level"])
		assert.Equal(t, chat.Version, r.body[prefix+"_merge_base"])
	}

	// The reference's terminal client asks for zulip_version among its
	// fetch_event_types.
	r = e.do(t, request{method: "POST", path: "/api/v1/register", user: &bob, params: url.Values{
		"event_types":       {`["message", "reaction"]`},
		"fetch_event_types": {`["zulip_version", "message"]`},
	}}).ok(t, "POST", "/register")
	queue := r.body["queue_id"].(string)
	assert.Equal(t, chat.Version, r.body["zulip_version"])
	assert.EqualValues(t, chat.FeatureLevel, r.body["zulip_feature_level"])
	assert.EqualValues(t, -1, r.body["max_message_id"])
	assert.NotContains(t, r.body, "realm_users")

	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "Verona"}]`}, "principals": {fmt.Sprintf("[%d, %d]", alice.ID, bob.ID)}}}).ok(t, "POST", "/users/me/subscriptions")
	r = e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {"t"}, "content": {"hi"}}}).ok(t, "POST", "/messages")
	id := int64(r.body["id"].(float64))
	r = e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &bob}).ok(t, "GET", "/users/me")
	assert.EqualValues(t, id, r.body["max_message_id"])

	path := fmt.Sprintf("/api/v1/messages/%d/reactions", id)
	e.do(t, request{method: "POST", path: path, user: &alice, params: url.Values{
		"emoji_name": {"zulip"}, "emoji_code": {"zulip"}, "reaction_type": {"zulip_extra_emoji"}}}).ok(t, "POST", "/messages/{message_id}/reactions")
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/messages/%d", id), user: &bob}).ok(t, "GET", "/messages/{message_id}")
	reactions := r.body["message"].(map[string]any)["reactions"].([]any)
	assert.Equal(t, []any{map[string]any{"emoji_name": "zulip", "emoji_code": "zulip", "reaction_type": "service_extra_emoji", "user_id": float64(alice.ID)}}, reactions)
	e.do(t, request{method: "DELETE", path: path, user: &alice, params: url.Values{
		"emoji_code": {"zulip"}, "reaction_type": {"zulip_extra_emoji"}}}).ok(t, "DELETE", "/messages/{message_id}/reactions")

	// Both reaction events reach bob's queue (delivery runs after the
	// commit, on the event bus).
	var reactionEvents []map[string]any
	require.Eventually(t, func() bool {
		got := e.do(t, request{method: "GET", path: "/api/v1/events", user: &bob, params: url.Values{
			"queue_id": {queue}, "last_event_id": {"-1"}, "dont_block": {"true"}}}).ok(t, "GET", "/events")
		reactionEvents = reactionEvents[:0]
		for _, ev := range got.body["events"].([]any) {
			if ev := ev.(map[string]any); ev["type"] == "reaction" {
				reactionEvents = append(reactionEvents, ev)
			}
		}
		return len(reactionEvents) >= 2
	}, 5*time.Second, 10*time.Millisecond)
	require.Len(t, reactionEvents, 2)
	for _, ev := range reactionEvents {
		assert.Equal(t, map[string]any{"user_id": float64(alice.ID), "email": alice.Email, "full_name": alice.FullName}, ev["user"])
	}
}
