package rest_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func TestMessagesHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	outsider := e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "Verona"}]`}, "principals": {fmt.Sprintf("[%d, %d]", alice.ID, bob.ID)}, "invite_only": {"true"},
	}}).ok(t, "POST", "/users/me/subscriptions")

	// The forms real clients send: channel by name, topic; legacy subject.
	r := e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		header: map[string]string{"User-Agent": "ZulipMobile/27.1 (Android 14)"},
		params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {"greetings"}, "content": {"**Hi**"}, "queue_id": {"q1"}, "local_id": {"1.01"}},
	}).ok(t, "POST", "/messages")
	id := int64(r.body["id"].(float64))
	assert.Equal(t, float64(chat.TopicPolicyFollowed), r.body["automatic_new_visibility_policy"], "alice started the topic")
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/messages/%d", id), user: &bob}).ok(t, "GET", "/messages/{message_id}")
	m := r.body["message"].(map[string]any)
	assert.Equal(t, "<p><strong>Hi</strong></p>", m["content"])
	assert.Equal(t, "greetings", m["subject"])
	assert.Equal(t, "Verona", m["display_recipient"])
	assert.Equal(t, []any{}, m["flags"])
	assert.Equal(t, "**Hi**", r.body["raw_content"])
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/messages/%d", id), user: &alice}).ok(t, "GET", "/messages/{message_id}")
	assert.Equal(t, "ZulipMobile", r.body["message"].(map[string]any)["client"])
	assert.Equal(t, []any{"read"}, r.body["message"].(map[string]any)["flags"], "the mobile app reads its own messages")
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/messages/%d", id), user: &alice, params: url.Values{"apply_markdown": {"false"}}}).
		ok(t, "GET", "/messages/{message_id}")
	assert.Equal(t, "**Hi**", r.body["message"].(map[string]any)["content"])

	e.do(t, request{method: "POST", path: "/api/v1/messages", user: &bob,
		params: url.Values{"type": {"channel"}, "to": {`["Verona"]`}, "subject": {"greetings"}, "content": {"back"}}}).ok(t, "POST", "/messages")
	dm := e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"private"}, "to": {bob.Email}, "content": {"psst"}}}).ok(t, "POST", "/messages")
	e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"direct"}, "to": {fmt.Sprintf("[%d]", bob.ID)}, "content": {"psst"}}}).ok(t, "POST", "/messages")

	// Errors, and what others may not read.
	e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/messages/%d", id), user: &outsider}).
		fails(t, 400, chat.CodeBadRequest, "Invalid message(s)")
	e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/messages/%d", int64(dm.body["id"].(float64))), user: &outsider}).
		fails(t, 400, chat.CodeBadRequest, "Invalid message(s)")
	e.do(t, request{method: "POST", path: "/api/v1/messages", user: &outsider,
		params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {"t"}, "content": {"x"}}}).
		fails(t, 400, chat.CodeBadRequest, "Not authorized to send to channel 'Verona'")
	r = e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"stream"}, "to": {"Nowhere"}, "topic": {"t"}, "content": {"x"}}}).
		fails(t, 400, chat.CodeStreamDoesNotExist, "Channel 'Nowhere' does not exist")
	assert.Equal(t, "Nowhere", r.body["stream"])
	r = e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {"t"}, "subject": {"t"}, "content": {"x"}}}).
		fails(t, 400, chat.CodeRequestConfusingVar, "Can't decide between 'topic' and 'subject' arguments")
	assert.Equal(t, "topic", r.body["var_name1"])
	e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice, params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {"t"}}}).
		fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'content' argument")
	e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"direct"}, "to": {"[999999]"}, "content": {"x"}}}).
		fails(t, 400, chat.CodeBadRequest, "Invalid user ID 999999")
	e.do(t, request{method: "POST", path: "/api/v1/messages",
		params: url.Values{"type": {"direct"}, "to": {"[1]"}, "content": {"x"}}}).
		fails(t, 401, chat.CodeUnauthorized, "")
}

func TestDirectMessagePolicyHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	r := e.do(t, request{method: "GET", path: "/api/v1/user_groups", user: &alice}).ok(t, "GET", "/user_groups")
	var nobody float64
	for _, g := range r.body["user_groups"].([]any) {
		if g.(map[string]any)["name"] == chat.GroupNobody {
			nobody = g.(map[string]any)["id"].(float64)
		}
	}
	require.NotZero(t, nobody)
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &e.Owner,
		params: url.Values{"direct_message_permission_group": {fmt.Sprintf(`{"new": %d}`, int64(nobody))}}}).ok(t, "", "")
	r = e.do(t, request{method: "GET", path: "/api/v1/realm", user: &alice}).ok(t, "", "")
	assert.Equal(t, nobody, r.body["realm_direct_message_permission_group"])
	e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"direct"}, "to": {fmt.Sprintf("[%d]", bob.ID)}, "content": {"hi"}}}).
		fails(t, 400, chat.CodeBadRequest, "Direct messages are disabled in this organization.")
}

func TestGetMessagesHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "Verona"}]`}}}).ok(t, "POST", "/users/me/subscriptions")
	var ids []float64
	for _, topic := range []string{"a", "b", "a"} {
		r := e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
			params: url.Values{"type": {"stream"}, "to": {"Verona"}, "topic": {topic}, "content": {"hi " + topic}}}).ok(t, "POST", "/messages")
		ids = append(ids, r.body["id"].(float64))
	}
	r := e.do(t, request{method: "GET", path: "/api/v1/messages", user: &bob, params: url.Values{
		"anchor": {"newest"}, "num_before": {"10"}, "num_after": {"0"},
		"narrow": {`[{"operator": "channel", "operand": "Verona"}, {"operator": "topic", "operand": "a"}]`}}}).ok(t, "GET", "/messages")
	var got []float64
	for _, m := range r.body["messages"].([]any) {
		got = append(got, m.(map[string]any)["id"].(float64))
		assert.Equal(t, []any{"read", "historical"}, m.(map[string]any)["flags"], "bob never received them")
	}
	assert.Equal(t, []float64{ids[0], ids[2]}, got)
	assert.Equal(t, true, r.body["found_oldest"])
	r = e.do(t, request{method: "GET", path: "/api/v1/messages", user: &bob, params: url.Values{
		"anchor": {"newest"}, "narrow": {`[{"operator": "channel", "operand": "Nowhere"}]`}}}).
		fails(t, 400, "BAD_NARROW", "Invalid narrow operator: unknown channel Nowhere")
	assert.Equal(t, "unknown channel Nowhere", r.body["desc"])
	e.do(t, request{method: "GET", path: "/api/v1/messages", user: &bob, params: url.Values{"num_before": {"1"}}}).
		fails(t, 400, chat.CodeBadRequest, "Missing 'anchor' argument.")
}

// Mentions over HTTP: the flags a mentioned reader fetches, the group and
// wildcard permissions with their codes, and the realm setting that opens
// wildcards in large channels.
func TestMentionsHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	principals := []int64{alice.ID, bob.ID}
	for range 15 {
		principals = append(principals, e.NewUser(t, chat.RoleMember).ID)
	}
	ids, _ := json.Marshal(principals)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "crowd"}]`}, "principals": {string(ids)}}}).ok(t, "POST", "/users/me/subscriptions")
	sendAs := func(u *chattest.User, content string) response {
		return e.do(t, request{method: "POST", path: "/api/v1/messages", user: u,
			params: url.Values{"type": {"stream"}, "to": {"crowd"}, "topic": {"t"}, "content": {content}}})
	}
	r := sendAs(&alice, fmt.Sprintf("hey @**%s**", bob.FullName)).ok(t, "POST", "/messages")
	id := int64(r.body["id"].(float64))
	r = e.do(t, request{method: "GET", path: fmt.Sprintf("/api/v1/messages/%d", id), user: &bob}).ok(t, "GET", "/messages/{message_id}")
	assert.Equal(t, []any{"mentioned"}, r.body["message"].(map[string]any)["flags"])
	r = e.do(t, request{method: "GET", path: "/api/v1/messages", user: &bob, params: url.Values{
		"anchor": {"newest"}, "num_before": {"10"}, "num_after": {"0"}, "narrow": {`[["is", "mentioned"]]`}}}).ok(t, "GET", "/messages")
	require.Len(t, r.body["messages"], 1)

	sendAs(&alice, "@**all**").failsAs(t, "POST", "/messages", 400, chat.CodeStreamWildcardMentionNotAllowed,
		"You do not have permission to use channel wildcard mentions in this channel.")
	r = e.do(t, request{method: "POST", path: "/api/v1/user_groups/create", user: &alice, params: url.Values{
		"name": {"crew"}, "description": {"c"}, "members": {fmt.Sprintf("[%d]", bob.ID)},
		"can_mention_group": {fmt.Sprintf("%d", groupIDByName(t, e, chat.GroupAdministrators))}}}).ok(t, "POST", "/user_groups/create")
	sendAs(&alice, "@*crew*").failsAs(t, "POST", "/messages", 400, chat.CodeBadRequest, "You are not allowed to mention user group 'crew'.")

	members := groupIDByName(t, e, chat.GroupMembers)
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &e.Owner,
		params: url.Values{"can_mention_many_users_group": {fmt.Sprintf(`{"new": %d}`, members)}}}).ok(t, "", "")
	r = e.do(t, request{method: "GET", path: "/api/v1/realm", user: &alice}).ok(t, "", "")
	assert.Equal(t, float64(members), r.body["realm_can_mention_many_users_group"])
	sendAs(&alice, "@**all**").ok(t, "POST", "/messages")
}

func groupIDByName(t *testing.T, e *env, name string) int64 {
	t.Helper()
	r := e.do(t, request{method: "GET", path: "/api/v1/user_groups", user: &e.Owner}).ok(t, "GET", "/user_groups")
	for _, g := range r.body["user_groups"].([]any) {
		if g.(map[string]any)["name"] == name {
			return int64(g.(map[string]any)["id"].(float64))
		}
	}
	t.Fatalf("no group %s", name)
	return 0
}

func TestMatchesNarrowHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "food"}]`}}}).ok(t, "POST", "/users/me/subscriptions")
	r := e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"stream"}, "to": {"food"}, "topic": {"Lunch"}, "content": {"lunch at noon"}}}).ok(t, "POST", "/messages")
	id := int64(r.body["id"].(float64))
	r = e.do(t, request{method: "GET", path: "/api/v1/messages/matches_narrow", user: &alice, params: url.Values{
		"msg_ids": {fmt.Sprintf("[%d]", id)}, "narrow": {`[{"operator": "search", "operand": "lunch"}]`}}}).
		ok(t, "GET", "/messages/matches_narrow")
	assert.Equal(t, map[string]any{fmt.Sprint(id): map[string]any{
		"match_content": `<p><span class="highlight">lunch</span> at noon</p>`,
		"match_subject": `<span class="highlight">Lunch</span>`}}, r.body["messages"])
	r = e.do(t, request{method: "GET", path: "/api/v1/messages", user: &alice, params: url.Values{
		"anchor": {"newest"}, "num_before": {"5"}, "narrow": {`[["search", "noon"]]`}}}).ok(t, "GET", "/messages")
	m := r.body["messages"].([]any)[0].(map[string]any)
	assert.Equal(t, `<p>lunch at <span class="highlight">noon</span></p>`, m["match_content"])
	assert.Equal(t, "Lunch", m["match_subject"])
	e.do(t, request{method: "GET", path: "/api/v1/messages/matches_narrow", user: &alice, params: url.Values{
		"narrow": {`[]`}}}).fails(t, 400, chat.CodeRequestVariableMissing, "Missing 'msg_ids' argument")
	e.do(t, request{method: "GET", path: "/api/v1/messages/matches_narrow", user: &alice, params: url.Values{
		"msg_ids": {"[1]"}, "narrow": {`[{"operator": "bogus", "operand": "x"}]`}}}).
		fails(t, 400, "BAD_NARROW", "Invalid narrow operator: unknown operator bogus")
	e.do(t, request{method: "GET", path: "/api/v1/messages/matches_narrow", params: url.Values{
		"msg_ids": {"[1]"}, "narrow": {`[]`}}}).fails(t, 401, chat.CodeUnauthorized, "")
}

// Integer and numeric-string operands through HTTP (issue 22): the query
// string and the form body carry the narrow as JSON text.
func TestNarrowIntegerOperandsHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
		"subscriptions": {`[{"name": "food"}]`}}}).ok(t, "POST", "/users/me/subscriptions")
	var ids []int64
	for _, topic := range []string{"a", "b"} {
		r := e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
			params: url.Values{"type": {"stream"}, "to": {"food"}, "topic": {topic}, "content": {"x"}}}).ok(t, "POST", "/messages")
		ids = append(ids, int64(r.body["id"].(float64)))
	}
	for _, narrow := range []string{
		fmt.Sprintf(`[{"operator": "id", "operand": %d}]`, ids[0]),
		fmt.Sprintf(`[{"operator": "id", "operand": "%d"}]`, ids[0]),
		fmt.Sprintf(`[{"operator": "with", "operand": %d}]`, ids[0]),
		fmt.Sprintf(`[{"operator": "topic", "operand": "a"}, {"operator": "near", "operand": "%d"}]`, ids[1]),
	} {
		r := e.do(t, request{method: "GET", path: "/api/v1/messages", user: &alice, params: url.Values{
			"anchor": {"newest"}, "num_before": {"5"}, "narrow": {narrow}}}).ok(t, "GET", "/messages")
		got := r.body["messages"].([]any)
		assert.Len(t, got, 1, narrow)
		assert.EqualValues(t, ids[0], got[0].(map[string]any)["id"], narrow)
	}
	r := e.do(t, request{method: "POST", path: "/api/v1/messages/flags/narrow", user: &alice, params: url.Values{
		"anchor": {"oldest"}, "num_before": {"0"}, "num_after": {"5"}, "op": {"add"}, "flag": {"starred"},
		"narrow": {fmt.Sprintf(`[{"operator": "id", "operand": %d}]`, ids[1])}}}).ok(t, "POST", "/messages/flags/narrow")
	assert.EqualValues(t, 1, r.body["updated_count"])
	e.do(t, request{method: "GET", path: "/api/v1/messages", user: &alice, params: url.Values{
		"anchor": {"newest"}, "num_before": {"5"}, "narrow": {fmt.Sprintf(`[{"operator": "near", "operand": %d}]`, ids[1])}}}).
		fails(t, 400, chat.CodeBadRequest, "operand is not a string")
	e.do(t, request{method: "GET", path: "/api/v1/messages", user: &alice, params: url.Values{
		"anchor": {"newest"}, "num_before": {"5"}, "narrow": {`[{"operator": "id", "operand": "x1"}]`}}}).
		fails(t, 400, "BAD_NARROW", "Invalid narrow operator: Invalid message ID")
}
