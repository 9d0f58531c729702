package rest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

// Outgoing-webhook bots over HTTP: payload_url as the reference's clients
// send it (JSON-encoded), the service in GET /bots, PATCH of the service.
func TestOutgoingBotsHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	r := e.do(t, request{method: "POST", path: "/api/v1/bots", user: &alice, params: url.Values{
		"full_name": {"Echo"}, "short_name": {"echo"}, "bot_type": {"3"},
		"payload_url": {`"https://bot.example.com/hook"`}, "interface_type": {"2"}}}).ok(t, "", "")
	id := int64(r.body["user_id"].(float64))
	r = e.do(t, request{method: "GET", path: "/api/v1/bots", user: &alice}).ok(t, "", "")
	bots := r.body["bots"].([]any)
	require.Len(t, bots, 1)
	services := bots[0].(map[string]any)["services"].([]any)
	require.Len(t, services, 1)
	svc := services[0].(map[string]any)
	assert.Equal(t, "https://bot.example.com/hook", svc["base_url"])
	assert.Equal(t, float64(2), svc["interface"])
	assert.Len(t, svc["token"], 32)

	r = e.do(t, request{method: "PATCH", path: fmt.Sprintf("/api/v1/bots/%d", id), user: &alice, params: url.Values{
		"service_payload_url": {`"https://elsewhere.example.com/"`}, "service_interface": {"1"}}}).ok(t, "", "")
	assert.Equal(t, "https://elsewhere.example.com/", r.body["service_payload_url"])
	e.do(t, request{method: "POST", path: "/api/v1/bots", user: &alice, params: url.Values{
		"full_name": {"Bad"}, "short_name": {"bad"}, "bot_type": {"3"}, "payload_url": {`"ftp://x"`}}}).
		fails(t, 400, chat.CodeBadRequest, "payload_url is not a URL")
	e.do(t, request{method: "POST", path: "/api/v1/bots", user: &alice, params: url.Values{
		"full_name": {"Bad"}, "short_name": {"bad"}, "bot_type": {"3"}, "interface_type": {"9"}}}).
		fails(t, 400, chat.CodeBadRequest, "Invalid interface type")
}
