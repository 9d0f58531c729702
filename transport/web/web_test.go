package web_test

import (
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/transport/rest"
	"github.com/teamchat/chat/transport/web"
)

func get(t *testing.T, h http.Handler, method, path string, header ...string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func TestHandlerServesTheClientWithItsHeaders(t *testing.T) {
	h := web.NewHandler()
	for path, typ := range map[string]string{
		"/":               "text/html; charset=utf-8",
		"/web/app.css":    "text/css; charset=utf-8",
		"/web/js/main.js": "text/javascript; charset=utf-8",
		"/web/icon.svg":   "image/svg+xml",
	} {
		resp := get(t, h, "GET", path)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Equal(t, typ, resp.Header.Get("Content-Type"), path)
		assert.Equal(t, web.ContentSecurityPolicy, resp.Header.Get("Content-Security-Policy"), path)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), path)
		assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"), path)
		assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"), path)
		assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"), path)
		assert.NotEmpty(t, resp.Header.Get("ETag"), path)
	}
	body, _ := io.ReadAll(get(t, h, "GET", "/").Body)
	assert.Contains(t, string(body), `<script type="module" src="web/js/main.js"></script>`)
}

// The policy: scripts, styles, images and connections from the page's
// origin only, no inline script, no framing, Trusted Types required.
func TestContentSecurityPolicy(t *testing.T) {
	directives := map[string]string{}
	for _, d := range strings.Split(web.ContentSecurityPolicy, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	assert.Equal(t, "'none'", directives["default-src"])
	for _, name := range []string{"script-src", "style-src", "img-src", "connect-src"} {
		assert.Equal(t, "'self'", directives[name], name)
	}
	assert.Equal(t, "'none'", directives["frame-ancestors"])
	assert.Equal(t, "'none'", directives["base-uri"])
	assert.Equal(t, "'none'", directives["form-action"])
	assert.Equal(t, "'script'", directives["require-trusted-types-for"])
	assert.Equal(t, "teamchat-message", directives["trusted-types"])
	assert.NotContains(t, web.ContentSecurityPolicy, "unsafe")
	assert.NotContains(t, web.ContentSecurityPolicy, "http")
}

// Nothing in the client loads from another site or runs inline: no
// inline script or style, no handler attribute, no absolute URL, no
// innerHTML outside the one message function.
func TestClientFilesAreSelfContained(t *testing.T) {
	h := web.NewHandler()
	files := []string{"/"}
	require.NoError(t, fs.WalkDir(os.DirFS("static"), ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".css")) {
			files = append(files, "/web/"+name)
		}
		return err
	}))
	require.Greater(t, len(files), 10)
	for _, path := range files {
		resp := get(t, h, "GET", path)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		b, _ := io.ReadAll(resp.Body)
		text := string(b)
		for _, bad := range []string{"http://", "https://", "//cdn", "@import", "eval(", "new Function", "document.write"} {
			assert.NotContains(t, text, bad, path)
		}
		if path == "/" {
			assert.NotRegexp(t, `<script(?:[^>]*)>[^<]`, text, "no inline script")
			assert.NotContains(t, text, "<style")
			assert.NotRegexp(t, `\son[a-z]+=`, text, "no handler attributes")
			assert.NotContains(t, text, "style=")
		}
		if path != "/web/js/dom.js" {
			assert.NotContains(t, text, "innerHTML", path)
			assert.NotContains(t, text, "insertAdjacentHTML", path)
			assert.NotContains(t, text, "outerHTML", path)
			assert.NotContains(t, text, "createHTML", path)
			assert.NotContains(t, text, "DOMParser", path)
		}
	}
}

// Invitation links lead to the page's join form, relative to the link
// (so under a prefix too); anything else below /join/ is not found.
func TestInvitationLinksLeadToTheJoinForm(t *testing.T) {
	h := web.NewHandler()
	for path, want := range map[string]string{
		"/join/abcdefghijklmnopqrstuvwx/": "../../#join/abcdefghijklmnopqrstuvwx",
		"/join/abcdefghijklmnopqrstuvwx":  "../#join/abcdefghijklmnopqrstuvwx",
	} {
		resp := get(t, h, "GET", path)
		assert.Equal(t, http.StatusFound, resp.StatusCode, path)
		assert.Equal(t, want, resp.Header.Get("Location"), path)
		assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"), path)
		assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"), path)
		base, _ := url.Parse("http://chat.example.com/chat" + path)
		loc, _ := url.Parse(want)
		assert.Equal(t, "/chat/", base.ResolveReference(loc).Path, "the page beside the link, under a prefix")
	}
	for _, path := range []string{"/join/", "/join/a/b/", "/join/%3Cscript%3E/", "/join/a.b/"} {
		assert.Equal(t, http.StatusNotFound, get(t, h, "GET", path).StatusCode, path)
	}
	assert.Equal(t, http.StatusMethodNotAllowed, get(t, h, "POST", "/join/abc/").StatusCode)
	assert.True(t, h.Serves("/join/abc/"))
}

func TestHandlerRevalidatesWithETags(t *testing.T) {
	h := web.NewHandler()
	etag := get(t, h, "GET", "/web/js/main.js").Header.Get("ETag")
	resp := get(t, h, "GET", "/web/js/main.js", "If-None-Match", etag)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	body, _ := io.ReadAll(resp.Body)
	assert.Empty(t, body)
	assert.Equal(t, http.StatusOK, get(t, h, "GET", "/web/js/main.js", "If-None-Match", `"other"`).StatusCode)
	assert.NotEqual(t, etag, get(t, h, "GET", "/web/app.css").Header.Get("ETag"), "each file its own tag")
}

func TestHandlerMethodsAndMissingFiles(t *testing.T) {
	h := web.NewHandler()
	head := get(t, h, "HEAD", "/")
	assert.Equal(t, http.StatusOK, head.StatusCode)
	assert.NotEqual(t, "0", head.Header.Get("Content-Length"))
	body, _ := io.ReadAll(head.Body)
	assert.Empty(t, body)

	post := get(t, h, "POST", "/")
	assert.Equal(t, http.StatusMethodNotAllowed, post.StatusCode)
	assert.Equal(t, "GET, HEAD", post.Header.Get("Allow"))

	missing := get(t, h, "GET", "/web/nothing.js")
	assert.Equal(t, http.StatusNotFound, missing.StatusCode)
	assert.NotEmpty(t, missing.Header.Get("Content-Security-Policy"), "errors carry the headers too")
	assert.Equal(t, http.StatusNotFound, get(t, h, "GET", "/api/v1/users/me").StatusCode, "without a next handler")
}

// With WithNext, one handler serves the site: the client's paths, and the
// API for everything else (repeated slashes included).
func TestHandlerHandsTheRestToNext(t *testing.T) {
	hr := chattest.New(t)
	site := web.NewHandler(web.WithNext(rest.NewHandler(hr.Service, rest.WithRealm(hr.RealmID))))
	for _, path := range []string{"/api/v1/server_settings", "//api/v1/server_settings"} {
		resp := get(t, site, "GET", path)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), path)
		assert.Empty(t, resp.Header.Get("Content-Security-Policy"), "the API's answers are the API's")
	}
	assert.Equal(t, "application/json", get(t, site, "GET", "/nothing").Header.Get("Content-Type"), "the API's 404")
	assert.Equal(t, "text/html; charset=utf-8", get(t, site, "GET", "/").Header.Get("Content-Type"))
	assert.True(t, site.Serves("/web/app.css"))
	assert.False(t, site.Serves("/api/v1/users"))
}

// Text files go gzipped to browsers that take it (their own ETag, Vary
// set); the rest, and other clients, get them as they are.
func TestHandlerGzipsTextFiles(t *testing.T) {
	h := web.NewHandler()
	plain := get(t, h, "GET", "/web/js/main.js")
	want, _ := io.ReadAll(plain.Body)
	assert.Empty(t, plain.Header.Get("Content-Encoding"))
	assert.Equal(t, "Accept-Encoding", plain.Header.Get("Vary"))

	zipped := get(t, h, "GET", "/web/js/main.js", "Accept-Encoding", "br, gzip;q=0.8")
	require.Equal(t, "gzip", zipped.Header.Get("Content-Encoding"))
	assert.Equal(t, "Accept-Encoding", zipped.Header.Get("Vary"))
	assert.NotEqual(t, plain.Header.Get("ETag"), zipped.Header.Get("ETag"))
	zr, err := gzip.NewReader(zipped.Body)
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	n, _ := strconv.Atoi(zipped.Header.Get("Content-Length"))
	assert.Less(t, n, len(want)/2, "smaller")
	assert.Equal(t, http.StatusNotModified, get(t, h, "GET", "/web/js/main.js", "Accept-Encoding", "gzip", "If-None-Match", zipped.Header.Get("ETag")).StatusCode)
	assert.Equal(t, http.StatusOK, get(t, h, "GET", "/web/js/main.js", "If-None-Match", zipped.Header.Get("ETag")).StatusCode, "the other variant's tag")
	assert.Empty(t, get(t, h, "GET", "/web/js/main.js", "Accept-Encoding", "gzip;q=0").Header.Get("Content-Encoding"))

	png := get(t, h, "GET", "/web/emoji/sheet.png", "Accept-Encoding", "gzip")
	assert.Empty(t, png.Header.Get("Content-Encoding"), "images are compressed already")
	assert.Equal(t, "image/png", png.Header.Get("Content-Type"))
}
