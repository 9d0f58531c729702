package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/chattest"
)

// upload posts a file as u (multipart, as a client does) to path
// ("/user_uploads" or "/realm/emoji/NAME") and returns the answer.
func (s *site) upload(t testing.TB, u chattest.User, path, name, contentType string, data []byte) map[string]any {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	hdr := textproto.MIMEHeader{}
	hdr.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	hdr.Set("Content-Type", contentType)
	part, err := w.CreatePart(hdr)
	require.NoError(t, err)
	_, _ = part.Write(data)
	require.NoError(t, w.Close())
	req, err := http.NewRequest("POST", strings.TrimSuffix(s.url, "/")+"/api/v1"+path, &body)
	require.NoError(t, err)
	req.SetBasicAuth(u.Email, u.APIKey)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, "success", out["result"], "POST %s: %v", path, out)
	return out
}

// pngImage is a w×h PNG of one colour.
func pngImage(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// openedPage waits until the browser has a page whose URL contains part
// (one the page opened, in a tab of its own) and returns its URL.
func (tb *tab) openedPage(part string) string {
	tb.t.Helper()
	var found string
	tb.waitFunc(func() bool {
		ctx, cancel := context.WithTimeout(tb.ctx, waitFor)
		defer cancel()
		targets, err := chromedp.Targets(ctx)
		require.NoError(tb.t, err)
		for _, info := range targets {
			if info.Type == "page" && strings.Contains(info.URL, part) {
				found = info.URL
				return true
			}
		}
		return false
	}, "a page opened at a URL with "+part)
	return found
}

// grant gives the tab's page a permission ("clipboard-read",
// "clipboard-write", ...), as a person allowing it would.
func (tb *tab) grant(names ...string) {
	tb.t.Helper()
	origin := eval[string](tb, `location.origin`)
	c := chromedp.FromContext(tb.ctx)
	ctx, cancel := context.WithTimeout(tb.ctx, waitFor)
	defer cancel()
	for _, n := range names {
		_, err := cdp.Call(ctx, c.Browser, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: n}, Setting: browser.PermissionSettingGranted,
			Origin: origin, BrowserContextID: c.BrowserContextID,
		})
		require.NoError(tb.t, err, n)
	}
}

// evalAwait is eval for an expression whose value is a promise.
func evalAwait[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitFor)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	require.NoError(tb.t, err, expr)
	return v
}
