package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oddPaths are spellings of API paths with dot segments, doubled slashes
// and their escaped forms, as outside checks send them.
var oddPaths = []struct{ method, path string }{
	{"GET", "/api/v1/../api/v1/users/me"},
	{"GET", "/api/v1/./users/me"},
	{"GET", "/api/v1//users//me"},
	{"GET", "//api/v1/users/me"},
	{"GET", "///api/v1/users/me"},
	{"GET", "/api/v1/fetch_api_key/../users/me"},
	{"POST", "/api/v1/fetch_api_key/../users/me"},
	{"PATCH", "/api/v1/users/.."},
	{"DELETE", "/api/v1/drafts/.."},
	{"DELETE", "/api/v1/drafts/."},
	{"GET", "/api/v1/users/me/.."},
	{"GET", "/api/v1/users/me/."},
	{"GET", "/api/v1/users/me/../../server_settings"},
	{"GET", "/api/v1/server_settings/../users/me"},
	{"GET", "/api/v1/.."},
	{"GET", "/api/v1/."},
	{"GET", "/api/v1/../"},
	{"GET", "/api/v1/..%2fapi/v1/users/me"},
	{"GET", "/api/v1/%2e%2e/api/v1/users/me"},
	{"GET", "/api/v1/%2e/users/me"},
	{"GET", "/api/v1/users/%2e%2e"},
	{"GET", "/api/v1/users%2fme"},
	{"POST", "/api/v1/messages/.."},
	{"POST", "/api/v1/users/me/subscriptions/../../../messages"},
	{"HEAD", "/api/v1/./users/me"},
	{"OPTIONS", "/api/v1/../api/v1/users"},
	{"GET", "/./api/v1/users/me"},
	{"GET", "/web/../api/v1/users/me"},
	{"GET", "/web/js/../../api/v1/users/me"},
	{"GET", "/healthz/../api/v1/users/me"},
	{"GET", "/user_uploads/../api/v1/users/me"},
	{"GET", "/user_avatars/../api/v1/users/me"},
}

// rawRequest sends a request with exactly this path (no client-side cleaning).
func rawRequest(t *testing.T, base, method, p, email, key string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base, nil)
	require.NoError(t, err)
	req.URL.Opaque = p // written as is on the request line
	if email != "" {
		req.SetBasicAuth(email, key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, body
}

// Every answer to a path below /api/v1, however it is spelled, is the
// API's JSON; nothing is reached through an odd spelling that its plain
// spelling would not reach with the same credentials (with them and
// without); /healthz, /readyz and the web client are still served. Through
// examples/server's whole handler stack.
// On SQLite and on PostgreSQL, as the outside checks ran.
func TestOddPathsAnswerJSON(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testOddPathsAnswerJSON(t, filepath.Join(t.TempDir(), "teamchat.db")) })
	t.Run("postgres", func(t *testing.T) { testOddPathsAnswerJSON(t, postgresTestDB(t)) })
}

func testOddPathsAnswerJSON(t *testing.T, db string) {
	addr, out, stop := start(t, defaultConfig(db))
	defer stop()
	key := regexp.MustCompile(`owner API key:  ([A-Za-z0-9]{32})`).FindStringSubmatch(out.String())
	require.Len(t, key, 2)
	base := "http://" + addr
	for _, creds := range []struct{ name, email, key string }{{"anonymous", "", ""}, {"owner", "owner@teamchat.localhost", key[1]}} {
		for _, c := range oddPaths {
			t.Run(creds.name+" "+c.method+" "+c.path, func(t *testing.T) {
				status, header, body := rawRequest(t, base, c.method, c.path, creds.email, creds.key)
				clean := path.Clean("/" + strings.TrimLeft(c.path, "/"))
				api := strings.HasPrefix(strings.TrimLeft(c.path, "/"), "api/v1") || strings.HasPrefix(clean, "/api/v1")
				if api && c.method != "HEAD" && status != http.StatusNoContent {
					assert.Equal(t, "application/json", header.Get("Content-Type"), "%d %s", status, body)
					var env map[string]any
					require.NoError(t, json.Unmarshal(body, &env), "%d %s", status, body)
					assert.Contains(t, []any{"success", "error"}, env["result"], "%s", body)
				}
				assert.NotContains(t, []int{301, 302, 307, 308}, status, "no redirect: %s", header.Get("Location"))
				if status >= 200 && status < 300 {
					// Whatever succeeded succeeds as the plain spelling too:
					// the route the odd one reached is one of the plain paths.
					plain, _, _ := rawRequest(t, base, c.method, clean, creds.email, creds.key)
					collapsed, _, _ := rawRequest(t, base, c.method, "/"+strings.Join(strings.FieldsFunc(c.path, func(r rune) bool { return r == '/' }), "/"),
						creds.email, creds.key)
					assert.True(t, plain < 300 || collapsed < 300, "%s %s answered %d, its plain spellings %d and %d", c.method, c.path, status, plain, collapsed)
				}
			})
		}
	}
	for p, want := range map[string]string{"/healthz": "text/plain; charset=utf-8", "/readyz": "text/plain; charset=utf-8",
		"/": "text/html; charset=utf-8", "/web/js/main.js": "text/javascript; charset=utf-8"} {
		status, header, _ := rawRequest(t, base, "GET", p, "", "")
		assert.Equal(t, 200, status, p)
		assert.Equal(t, want, header.Get("Content-Type"), p)
	}
}
