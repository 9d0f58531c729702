package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

func TestMandatoryTopicsHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	_, err := e.Service.Subscribe(ctxBg, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "ops"}}})
	require.NoError(t, err)
	on := url.Values{"mandatory_topics": {"true"}}
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &alice, params: on}).
		fails(t, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &e.Owner, params: on}).ok(t, "", "")
	r := e.do(t, request{method: "POST", path: "/api/v1/register", user: &alice, params: url.Values{
		"fetch_event_types": {`["realm"]`}}}).ok(t, "POST", "/register")
	assert.Equal(t, true, r.body["realm_mandatory_topics"])
	r = e.do(t, request{method: "GET", path: "/api/v1/realm", user: &alice}).ok(t, "", "")
	assert.Equal(t, true, r.body["realm_mandatory_topics"])

	post := func(topic string) response {
		return e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice, params: url.Values{
			"type": {"stream"}, "to": {"ops"}, "topic": {topic}, "content": {"hi"}}})
	}
	post("(no topic)").fails(t, 400, chat.CodeBadRequest, "Topics are required in this organization")
	r = post("deploys").ok(t, "POST", "/messages")
	id := int64(r.body["id"].(float64))
	e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/messages/%d", id), user: &alice, params: url.Values{"topic": {""}}}).
		fails(t, 400, chat.CodeBadRequest, "Topics are required in this organization.")
	e.do(t, request{method: "PATCH", path: "/api/v1/realm", user: &e.Owner, params: url.Values{"mandatory_topics": {"false"}}}).ok(t, "", "")
	post("").ok(t, "POST", "/messages")
}
