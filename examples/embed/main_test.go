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
	a, err := newApp(ctx, chat.New(store), store, "http://app.example.com")
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

// A second run on the same database finds the organization and the
// accounts of the first: a returning user logs in as before.
func TestEmbeddedSecondRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "e.db")
	login := func() int64 {
		store, err := bunstore.Open(ctx, path)
		require.NoError(t, err)
		defer store.Close()
		a, err := newApp(ctx, chat.New(store), store, "http://app.example.com")
		require.NoError(t, err)
		srv := httptest.NewServer(a.routes())
		defer srv.Close()
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar}
		resp, err := client.PostForm(srv.URL+"/login", url.Values{"name": {"ada"}})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		resp, err = client.Get(srv.URL + "/chat/api/v1/users/me")
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		require.Equal(t, 200, resp.StatusCode, body)
		return int64(body["user_id"].(float64))
	}
	first := login()
	assert.Equal(t, first, login(), "the same account on the second run")
}
