package rest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

// POST /users/me/avatar takes one image and answers its URL, served
// without credentials; DELETE goes back to Gravatar and the file goes.
// (The reference's OpenAPI leaves these out: the success bodies are
// checked against the common envelope.)
func TestAvatarHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	png := "\x89PNG\r\n\x1a\nface"
	body, ct := multipartFiles(t, map[string]string{"face.png": png}, nil)
	r := e.do(t, request{method: "POST", path: "/api/v1/users/me/avatar", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).ok(t, "POST", "")
	url := r.body["avatar_url"].(string)
	require.True(t, strings.HasPrefix(url, "/user_avatars/"), url)
	status, header, content := e.getRaw(t, url, nil)
	assert.Equal(t, 200, status, "avatars are public")
	assert.Equal(t, png, content)
	assert.Equal(t, "image/png", header.Get("Content-Type"))
	me := e.do(t, request{method: "GET", path: "/api/v1/users/me", user: &alice}).ok(t, "GET", "/users/me")
	assert.Equal(t, url, me.body["avatar_url"])

	body, ct = multipartFiles(t, map[string]string{"a.png": png, "b.png": png}, nil)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/avatar", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		fails(t, 400, chat.CodeBadRequest, "You must upload exactly one avatar.")
	body, ct = multipartFiles(t, map[string]string{"big.png": strings.Repeat("x", 6<<20)}, nil)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/avatar", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		fails(t, 400, chat.CodeBadRequest, "Uploaded file is larger than the allowed limit of 5 MiB")
	body, ct = multipartFiles(t, map[string]string{"page.html": "<script>alert(1)</script>"}, nil)
	e.do(t, request{method: "POST", path: "/api/v1/users/me/avatar", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		fails(t, 400, chat.CodeBadRequest, "Invalid image format")
	e.do(t, request{method: "POST", path: "/api/v1/users/me/avatar", body: strings.NewReader(""), header: map[string]string{"Content-Type": ct}}).
		fails(t, 401, chat.CodeUnauthorized, "")

	r = e.do(t, request{method: "DELETE", path: "/api/v1/users/me/avatar", user: &alice}).ok(t, "DELETE", "")
	assert.Contains(t, r.body["avatar_url"], "gravatar.com")
	status, _, _ = e.getRaw(t, url, nil)
	assert.Equal(t, 404, status)
	status, _, _ = e.getRaw(t, "/user_avatars/1/avatars/..%2f..%2fx", nil)
	assert.Equal(t, 404, status)
}
