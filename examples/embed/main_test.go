package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage/bunstore"
)

func TestEmbeddedWithHostSessions(t *testing.T) {
	ctx := context.Background()
	store, err := bunstore.Open(ctx, filepath.Join(t.TempDir(), "e.db"))
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	a, err := newApp(ctx, chat.New(store), "http://app.example.com")
	require.NoError(t, err)
	srv := httptest.NewServer(a.routes())
	t.Cleanup(srv.Close)

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	get := func() (int, map[string]any) {
		resp, err := client.Get(srv.URL + "/chat/api/v1/users/me")
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	status, body := get()
	assert.Equal(t, 401, status)
	assert.Equal(t, "Not logged in", body["msg"])

	resp, err := client.PostForm(srv.URL+"/login", url.Values{"name": {"ada"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	status, body = get()
	require.Equal(t, 200, status, body)
	assert.Equal(t, "ada@app.example.com", body["email"])
	assert.Equal(t, "ada", body["full_name"])
}
