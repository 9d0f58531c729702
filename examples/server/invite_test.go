package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -invite prints a link next to a running server; the printed curl
// command makes an account there, which then works with its API key.
func TestInviteFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "teamchat.db")
	cfg := defaultConfig(db)
	cfg.invite = true
	err := printInvite(context.Background(), cfg, &bytes.Buffer{})
	require.ErrorContains(t, err, "no organization yet")

	addr, _, stop := start(t, defaultConfig(db))
	defer stop()
	var out bytes.Buffer
	require.NoError(t, printInvite(context.Background(), cfg, &out))
	text := out.String()
	assert.Contains(t, text, `Invitation link to "Teamchat"`)
	assert.Contains(t, text, "for 10 days")
	link := regexp.MustCompile(`(http://\S+/join/([a-z2-7]{24})/)`).FindStringSubmatch(text)
	require.Len(t, link, 3, text)
	assert.Equal(t, "http://"+addr+"/join/"+link[2]+"/", link[1])
	cmd := regexp.MustCompile(`curl -sS (\S+)/api/v1/invites/accept -d key=(\S+) `).FindStringSubmatch(text)
	require.Len(t, cmd, 3, text)
	assert.Equal(t, "http://"+addr, cmd[1])
	assert.Equal(t, link[2], cmd[2])

	// What the printed command sends.
	resp, err := http.PostForm(cmd[1]+"/api/v1/invites/accept", url.Values{"key": {cmd[2]}, "email": {"friend@example.com"},
		"full_name": {"A Friend"}, "password": {"a long password"}})
	require.NoError(t, err)
	var joined map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&joined))
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "%v", joined)
	assert.Equal(t, "friend@example.com", joined["email"])

	req, err := http.NewRequest("GET", cmd[1]+"/api/v1/users/me", nil)
	require.NoError(t, err)
	req.SetBasicAuth("friend@example.com", joined["api_key"].(string))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var me map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&me))
	resp.Body.Close()
	assert.Equal(t, "success", me["result"])
	assert.EqualValues(t, 400, me["role"], "a member")
	assert.Equal(t, joined["user_id"], me["user_id"])

	// A second link, for an hour; the link stays usable by others.
	cfg.inviteMinutes = 60
	out.Reset()
	require.NoError(t, printInvite(context.Background(), cfg, &out))
	assert.Contains(t, out.String(), "for 60 minutes")
	resp, err = http.PostForm(cmd[1]+"/api/v1/invites/accept", url.Values{"key": {cmd[2]}, "email": {"another@example.com"},
		"full_name": {"Another Friend"}, "password": {"a long password"}})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
}
