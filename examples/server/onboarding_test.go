package main

import (
	"net/url"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first start makes the organization as the reference does, and says
// where to look: the channels it names exist, are default channels, and
// the printed command shows the Welcome Bot's greetings. A user created
// then joins them. On SQLite and on PostgreSQL.
func TestServerNewOrganization(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testServerNewOrganization(t, filepath.Join(t.TempDir(), "teamchat.db")) })
	t.Run("postgres", func(t *testing.T) { testServerNewOrganization(t, postgresTestDB(t)) })
}

func testServerNewOrganization(t *testing.T, db string) {
	addr, out, stop := start(t, defaultConfig(db))
	defer stop()
	text := out.String()
	assert.Contains(t, text, "Start in #general: the organization has the channels #general, #sandbox and #teamchat, which new users join")
	key := regexp.MustCompile(`owner API key:  ([A-Za-z0-9]{32})`).FindStringSubmatch(text)
	require.Len(t, key, 2, text)
	base := "http://" + addr

	streams, status, err := get(base, key[1], "/api/v1/streams", url.Values{"include_default": {"true"}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", streams)
	var names []string
	for _, s := range streams["streams"].([]any) {
		ch := s.(map[string]any)
		assert.Equal(t, true, ch["is_default"], ch["name"])
		names = append(names, ch["name"].(string))
	}
	assert.ElementsMatch(t, []string{"general", "sandbox", "teamchat"}, names)

	msgs, status, err := get(base, key[1], "/api/v1/messages", url.Values{"anchor": {"newest"}, "num_before": {"5"}, "num_after": {"0"},
		"narrow": {`[{"operator": "channel", "operand": "general"}]`}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", msgs)
	list := msgs["messages"].([]any)
	require.Len(t, list, 2)
	first := list[0].(map[string]any)
	assert.Equal(t, "Welcome Bot", first["sender_full_name"])
	assert.Equal(t, "greetings", first["subject"])
	assert.Contains(t, first["content"], "to your teammates")

	created, status, err := post(base, key[1], "/api/v1/users", url.Values{"email": {"ada@example.com"}, "password": {"a long password here"}, "full_name": {"Ada"}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", created)
	fetched, status, err := callAs("POST", base, "", "", "/api/v1/fetch_api_key", url.Values{"username": {"ada@example.com"}, "password": {"a long password here"}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", fetched)
	subs, status, err := callAs("GET", base, "ada@example.com", fetched["api_key"].(string), "/api/v1/users/me/subscriptions", nil)
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", subs)
	names = nil
	for _, s := range subs["subscriptions"].([]any) {
		names = append(names, s.(map[string]any)["name"].(string))
	}
	assert.ElementsMatch(t, []string{"general", "sandbox", "teamchat"}, names)
}
