package rest_test

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// multipartFiles encodes files (name -> content) and form values.
func multipartFiles(t *testing.T, files map[string]string, values url.Values) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, content := range files {
		// As a browser does: the type its extension says.
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file-%s"; filename="%s"`, name, name))
		if ct := mime.TypeByExtension(path.Ext(name)); ct != "" && !strings.HasPrefix(ct, "text/") {
			h.Set("Content-Type", ct)
		}
		fw, err := mw.CreatePart(h)
		require.NoError(t, err)
		_, err = io.WriteString(fw, content)
		require.NoError(t, err)
	}
	for k, vs := range values {
		for _, v := range vs {
			require.NoError(t, mw.WriteField(k, v))
		}
	}
	require.NoError(t, mw.Close())
	return &buf, mw.FormDataContentType()
}

// getRaw fetches a non-JSON resource.
func (e *env) getRaw(t *testing.T, path string, user *chattest.User) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", e.srv.URL+path, nil)
	require.NoError(t, err)
	if user != nil {
		req.SetBasicAuth(user.Email, user.APIKey)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

func TestUploadsHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	body, ct := multipartFiles(t, map[string]string{"notes.txt": "hello file"}, nil)
	r := e.do(t, request{method: "POST", path: "/api/v1/user_uploads", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		ok(t, "POST", "/user_uploads")
	u := r.body["url"].(string)
	assert.Equal(t, u, r.body["uri"])
	assert.Equal(t, "notes.txt", r.body["filename"])

	status, header, content := e.getRaw(t, u, &alice)
	assert.Equal(t, 200, status)
	assert.Equal(t, "hello file", content)
	assert.Equal(t, "text/plain", header.Get("Content-Type"), "guessed from the name when the client gives none")
	assert.Contains(t, header.Get("Content-Disposition"), `attachment; filename=notes.txt`)
	status, _, _ = e.getRaw(t, u, &bob)
	assert.Equal(t, 403, status, "not linked yet")
	status, _, _ = e.getRaw(t, u, nil)
	assert.Equal(t, 401, status)
	status, _, _ = e.getRaw(t, u+"x", &alice)
	assert.Equal(t, 404, status)

	e.do(t, request{method: "POST", path: "/api/v1/messages", user: &alice,
		params: url.Values{"type": {"direct"}, "to": {fmt.Sprintf("[%d]", bob.ID)}, "content": {fmt.Sprintf("see [notes](%s)", u)}}}).ok(t, "POST", "/messages")
	status, _, content = e.getRaw(t, u, &bob)
	assert.Equal(t, 200, status)
	assert.Equal(t, "hello file", content)

	r = e.do(t, request{method: "GET", path: "/api/v1" + u, user: &bob}).ok(t, "GET", "/user_uploads/{realm_id_str}/{filename}")
	tmp := r.body["url"].(string)
	status, _, content = e.getRaw(t, tmp, nil)
	assert.Equal(t, 200, status, "a temporary URL needs no credentials")
	assert.Equal(t, "hello file", content)

	// Errors.
	body, ct = multipartFiles(t, nil, url.Values{"x": {"1"}})
	e.do(t, request{method: "POST", path: "/api/v1/user_uploads", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		fails(t, 400, chat.CodeBadRequest, "You must specify a file to upload")
	body, ct = multipartFiles(t, map[string]string{"a.txt": "a", "b.txt": "b"}, nil)
	e.do(t, request{method: "POST", path: "/api/v1/user_uploads", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		fails(t, 400, chat.CodeBadRequest, "You may only upload one file at a time")
	body, ct = multipartFiles(t, map[string]string{"big.bin": strings.Repeat("x", 27<<20)}, nil)
	e.do(t, request{method: "POST", path: "/api/v1/user_uploads", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		fails(t, 400, chat.CodeBadRequest, "File is larger than this server's configured maximum upload size (25 MiB).")
}

func TestCustomEmojiHTTP(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	png := "\x89PNG\r\n\x1a\nimage"
	body, ct := multipartFiles(t, map[string]string{"dance.png": png}, nil)
	e.do(t, request{method: "POST", path: "/api/v1/realm/emoji/teamdance", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		ok(t, "POST", "/realm/emoji/{emoji_name}")
	r := e.do(t, request{method: "GET", path: "/api/v1/realm/emoji", user: &bob}).ok(t, "GET", "/realm/emoji")
	emoji := r.body["emoji"].(map[string]any)
	require.Len(t, emoji, 1)
	var src string
	for _, v := range emoji {
		src = v.(map[string]any)["source_url"].(string)
		assert.Equal(t, "teamdance", v.(map[string]any)["name"])
	}
	status, header, content := e.getRaw(t, src, nil)
	assert.Equal(t, 200, status, "emoji images are public")
	assert.Equal(t, png, content)
	assert.Equal(t, "image/png", header.Get("Content-Type"))

	body, ct = multipartFiles(t, map[string]string{"a.png": png, "b.png": png}, nil)
	e.do(t, request{method: "POST", path: "/api/v1/realm/emoji/two", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		fails(t, 400, chat.CodeBadRequest, "You must upload exactly one file.")
	body, ct = multipartFiles(t, map[string]string{"big.png": strings.Repeat("x", 7<<20)}, nil)
	e.do(t, request{method: "POST", path: "/api/v1/realm/emoji/big", user: &alice, body: body, header: map[string]string{"Content-Type": ct}}).
		fails(t, 400, chat.CodeBadRequest, "Uploaded file is larger than the allowed limit of 5 MiB")
	e.do(t, request{method: "DELETE", path: "/api/v1/realm/emoji/teamdance", user: &bob}).
		fails(t, 400, chat.CodeBadRequest, "Must be an organization administrator or emoji author")
	e.do(t, request{method: "DELETE", path: "/api/v1/realm/emoji/teamdance", user: &alice}).ok(t, "DELETE", "/realm/emoji/{emoji_name}")
	e.do(t, request{method: "DELETE", path: "/api/v1/realm/emoji/teamdance", user: &alice}).
		fails(t, 404, chat.CodeBadRequest, "Emoji 'teamdance' does not exist")
}
