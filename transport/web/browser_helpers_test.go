package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/transport/rest"
	"github.com/teamchat/chat/transport/web"
)

// waitFor bounds every wait for a condition in the page.
const waitFor = 20 * time.Second

// chromium finds the browser, or skips the test (fails it when
// TEAMCHAT_REQUIRE_BROWSER=1).
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{os.Getenv("TEAMCHAT_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if name == "" {
			continue
		}
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("TEAMCHAT_REQUIRE_BROWSER") == "1" {
		t.Fatal("no Chromium found (install Debian's chromium package, or set TEAMCHAT_CHROMIUM) and TEAMCHAT_REQUIRE_BROWSER=1")
	}
	t.Skip("no Chromium found: install Debian's chromium package to run the browser tests")
	return ""
}

// site is a real server (the Service, the REST handler and the web client
// on an httptest server) and one headless browser.
type site struct {
	h       *chattest.Harness
	url     string
	browser context.Context
}

func newSite(t testing.TB) *site {
	t.Helper()
	path := chromium(t)
	h := chattest.New(t)
	// No rate limits: every tab comes from one address.
	api := rest.NewHandler(h.Service, rest.WithRealm(h.RealmID), rest.WithRateLimit(0, time.Minute), rest.WithAddressRateLimit(0, time.Minute))
	srv := httptest.NewServer(web.NewHandler(web.WithNext(api)))
	t.Cleanup(srv.Close)
	// Cleanups run last-registered first: the browser goes, then the long
	// polls end, then the server closes.
	t.Cleanup(h.Service.StopEvents)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("lang", "en-US"),
	)
	// On a busy machine Chromium now and then exits as it starts: try
	// again, twice at most.
	var err error
	for range 3 {
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		browser, cancelBrowser := chromedp.NewContext(alloc)
		if err = chromedp.Do(browser); err == nil {
			t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
			return &site{h: h, url: srv.URL + "/", browser: browser}
		}
		cancelBrowser()
		cancelAlloc()
		t.Logf("Chromium did not start: %v", err)
	}
	t.Fatalf("start Chromium: %v", err)
	return nil
}

// call makes a REST request as u and returns the decoded answer.
func (s *site) call(t testing.TB, u chattest.User, method, path string, params url.Values) map[string]any {
	t.Helper()
	target := strings.TrimSuffix(s.url, "/") + "/api/v1" + path
	var body io.Reader
	if method == http.MethodGet {
		target += "?" + params.Encode()
	} else {
		body = strings.NewReader(params.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	require.NoError(t, err)
	req.SetBasicAuth(u.Email, u.APIKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, "success", out["result"], "%s %s: %v", method, path, out)
	return out
}

// channel creates a channel and subscribes the users to it.
func (s *site) channel(t testing.TB, name string, users ...chattest.User) int64 {
	t.Helper()
	ids := make([]int64, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	principals, _ := json.Marshal(ids)
	s.call(t, s.h.Owner, "POST", "/users/me/subscriptions", url.Values{
		"subscriptions": {fmt.Sprintf(`[{"name": %q}]`, name)}, "principals": {string(principals)},
	})
	got := s.call(t, s.h.Owner, "GET", "/get_stream_id", url.Values{"stream": {name}})
	return int64(got["stream_id"].(float64))
}

// send posts a channel message as u and returns its ID.
func (s *site) send(t testing.TB, u chattest.User, channel, topic, content string) int64 {
	t.Helper()
	got := s.call(t, u, "POST", "/messages", url.Values{"type": {"channel"}, "to": {channel}, "topic": {topic}, "content": {content}})
	return int64(got["id"].(float64))
}

// tab is one page in its own browser context (its own storage), with
// everything that would show a problem recorded: JavaScript dialogs,
// uncaught exceptions, console errors and warnings, and refused content.
type tab struct {
	t        testing.TB
	ctx      context.Context
	mu       sync.Mutex
	problems []string
	dialogs  []string
	queue    string // the queue of the last GET /events
	requests map[network.RequestID]string
	netlog   []string           // failed requests and error answers, for failure messages
	received map[string]float64 // bytes received (as sent: compressed) by "METHOD URL"
	close    func()             // closes the tab (and its browser context)
}

func (s *site) tab(t testing.TB, width, height int64, emulate ...chromedp.EmulateViewportOption) *tab {
	t.Helper()
	return s.tabWith(t, width, height, "", emulate...)
}

// tabWith is tab with a script that runs in the page before the page's
// own (a stand-in for a browser API the headless browser lacks).
func (s *site) tabWith(t testing.TB, width, height int64, script string, emulate ...chromedp.EmulateViewportOption) *tab {
	t.Helper()
	tb := &tab{t: t}
	ctx, cancel := chromedp.NewContext(s.browser, chromedp.WithNewBrowserContext(), chromedp.WithListener(tb.listen))
	t.Cleanup(cancel)
	tb.ctx, tb.close = ctx, cancel
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	if script != "" {
		tb.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
			return err
		}))
	}
	tb.do(chromedp.EmulateViewport(width, height, emulate...), chromedp.Navigate(s.url))
	tb.wait(`document.readyState === "complete"`)
	return tb
}

// listen runs in the tab's event loop: it only records.
func (tb *tab) listen(ev any) {
	switch e := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		tb.record(&tb.dialogs, fmt.Sprintf("%s dialog: %q", e.Type, e.Message))
	case *runtime.EventExceptionThrown:
		msg := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
		tb.record(&tb.problems, "exception: "+msg)
	case *runtime.EventConsoleAPICalled:
		switch e.Type {
		case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeWarning, runtime.ConsoleAPICalledTypeAssert:
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			tb.record(&tb.problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
		}
	case *network.EventResponseReceived:
		if e.Response.Status >= 400 {
			tb.record(&tb.netlog, fmt.Sprintf("%d %s", e.Response.Status, e.Response.URL))
		}
	case *network.EventLoadingFinished:
		tb.mu.Lock()
		if tb.received == nil {
			tb.received = map[string]float64{}
		}
		tb.received[tb.requests[e.RequestID]] += e.EncodedDataLength
		tb.mu.Unlock()
	case *network.EventLoadingFailed:
		tb.mu.Lock()
		u := tb.requests[e.RequestID]
		tb.mu.Unlock()
		tb.record(&tb.netlog, fmt.Sprintf("failed (%s, canceled %v) %s", e.ErrorText, e.Canceled, u))
	case *network.EventRequestWillBeSent:
		tb.mu.Lock()
		if tb.requests == nil {
			tb.requests = map[network.RequestID]string{}
		}
		tb.requests[e.RequestID] = e.Request.Method + " " + e.Request.URL
		tb.mu.Unlock()
		if u, err := url.Parse(e.Request.URL); err == nil && strings.HasSuffix(u.Path, "/api/v1/events") && e.Request.Method == "GET" {
			tb.mu.Lock()
			tb.queue = u.Query().Get("queue_id")
			tb.mu.Unlock()
		}
	case *cdplog.EventEntryAdded:
		// Failed requests (the 401 of a wrong password) are the network's;
		// every other error counts (a refused script, style or Trusted
		// Types assignment).
		if e.Entry.Level == cdplog.EntryLevelError && e.Entry.Source != cdplog.EntrySourceNetwork {
			tb.record(&tb.problems, fmt.Sprintf("log %s: %s", e.Entry.Source, e.Entry.Text))
		}
	}
}

func (tb *tab) record(list *[]string, what string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	*list = append(*list, what)
}

// clean fails the test if the page showed a dialog or an error.
func (tb *tab) clean() {
	tb.t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	require.Empty(tb.t, tb.dialogs, "JavaScript dialogs")
	require.Empty(tb.t, tb.problems, "errors in the page")
}

func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitFor)
	defer cancel()
	require.NoError(tb.t, chromedp.Do(ctx, actions...))
}

// wait polls a JavaScript expression until it is true; args are
// substituted into it (with %s) as JSON literals.
func (tb *tab) wait(expr string, args ...any) {
	tb.t.Helper()
	expr = fmt.Sprintf(expr, quoteAll(args)...)
	ctx, cancel := context.WithTimeout(tb.ctx, waitFor)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		text, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 3000)`))
		articles, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[[]string](`[document.visibilityState, document.hasFocus() ? "focused" : "unfocused", ...[...document.querySelectorAll("#message-list article")].map(a => a.dataset.id + ": " + a.className)]`))
		tb.mu.Lock()
		problems, netlog := tb.problems, tb.netlog
		tb.mu.Unlock()
		tb.t.Fatalf("waiting for %s: %v\npage text:\n%s\nmessages shown (id: classes): %q\nproblems: %v\nrequests that failed: %v", expr, err, text, articles, problems, netlog)
	}
}

// eval evaluates a JavaScript expression, args substituted as in wait.
func eval[T any](tb *tab, expr string, args ...any) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitFor)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](fmt.Sprintf(expr, quoteAll(args)...)))
	require.NoError(tb.t, err, expr)
	return v
}

// quoteAll turns arguments into JavaScript literals (JSON).
func quoteAll(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		b, _ := json.Marshal(a)
		out[i] = string(b)
	}
	return out
}

// text is the text of the first element matching a selector ("" if none).
func (tb *tab) text(selector string) string {
	tb.t.Helper()
	return eval[string](tb, `(document.querySelector(%s) || {textContent: ""}).textContent`, selector)
}

// count counts the elements matching a selector.
func (tb *tab) count(selector string) int {
	tb.t.Helper()
	return eval[int](tb, `document.querySelectorAll(%s).length`, selector)
}

// click clicks an element with the mouse, as a person would. When the
// page replaced the element between finding and clicking it (a list
// redrawn by an event), it clicks the one that is there now.
func (tb *tab) click(selector string) {
	tb.t.Helper()
	var err error
	for range 5 {
		ctx, cancel := context.WithTimeout(tb.ctx, waitFor)
		err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
		cancel()
		if err == nil || !strings.Contains(err.Error(), "Could not find node") && !strings.Contains(err.Error(), "detached") {
			break
		}
	}
	require.NoError(tb.t, err, "click %s", selector)
}

// typeInto focuses a field and types into it with key events; a final
// "\r" presses Enter (as a keyboard does: SendKeys would add the
// character "\r" after a keydown the page cancels).
func (tb *tab) typeInto(selector, text string) {
	tb.t.Helper()
	enter := strings.HasSuffix(text, "\r")
	text = strings.TrimSuffix(text, "\r")
	tb.do(chromedp.Focus(chromedp.CSS(selector)), chromedp.SendKeys(chromedp.CSS(selector), text))
	if enter {
		tb.press("Enter")
	}
}

// press presses and releases a key on whatever has the focus ("Enter",
// "Tab", "Escape", "End"), Shift held when asked. Enter's keydown carries
// its text, so the browser's own default (submitting a form, pressing a
// button) happens unless the page cancels the keydown.
func (tb *tab) press(key string, shift ...bool) {
	tb.t.Helper()
	codes := map[string]int64{"Enter": 13, "Tab": 9, "Escape": 27, "End": 35, "ArrowUp": 38, "ArrowDown": 40, "ArrowLeft": 37, "ArrowRight": 39}
	text := map[string]string{"Enter": "\r"}[key]
	if len(key) == 1 {
		text = key // a character: its keydown carries it, as a keyboard's does
	}
	var mods int64
	if len(shift) > 0 && shift[0] {
		mods = 8 // Shift
	}
	tb.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		down := input.DispatchKeyEventTypeRawKeyDown
		if text != "" {
			down = input.DispatchKeyEventTypeKeyDown
		}
		for _, typ := range []input.DispatchKeyEventType{down, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: key, Code: key, Modifiers: mods,
				WindowsVirtualKeyCode: codes[key], NativeVirtualKeyCode: codes[key]}
			if typ == down {
				p.Text, p.UnmodifiedText = text, text
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, p); err != nil {
				return err
			}
		}
		return nil
	}))
}

// tabTo presses Tab (Shift+Tab when back) until the focused element
// matches a selector, at most 60 times.
func (tb *tab) tabTo(selector string, back bool) {
	tb.t.Helper()
	for range 60 {
		if eval[bool](tb, `document.activeElement !== null && document.activeElement.matches(%s)`, selector) {
			return
		}
		tb.press("Tab", back)
	}
	tb.t.Fatalf("Tab never reached %s (focus is on %s)", selector,
		eval[string](tb, `document.activeElement ? document.activeElement.outerHTML.slice(0, 200) : "nothing"`))
}

// keys types into whatever has the focus.
func (tb *tab) keys(text string) {
	tb.t.Helper()
	tb.do(chromedp.KeyEvent(text))
}

// setValue replaces a field's value (no key events).
func (tb *tab) setValue(selector, value string) {
	tb.t.Helper()
	tb.do(chromedp.SetValue(chromedp.CSS(selector), value))
}

func (tb *tab) login(u chattest.User) {
	tb.t.Helper()
	tb.wait(`!document.getElementById("login-view").hidden`)
	tb.setValue("#login-email", u.Email)
	tb.setValue("#login-password", u.Password)
	tb.click(`#login-form button[type=submit]`)
	tb.wait(`!document.getElementById("app-view").hidden && document.querySelector("#people-list [data-user-id]") !== null`)
}

// open goes to a view by its address, as a link would.
func (tb *tab) open(hash string) {
	tb.t.Helper()
	eval[chromedp.Void](tb, `location.hash = %s`, hash)
}

// polledQueue is the event queue the page last polled, waiting for one.
func (tb *tab) polledQueue() string {
	tb.t.Helper()
	var q string
	tb.waitFunc(func() bool {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		q = tb.queue
		return q != ""
	}, "a poll of GET /events")
	return q
}

// waitFunc waits until cond holds, checking every 20 ms.
func (tb *tab) waitFunc(cond func() bool, what string) {
	tb.t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			tb.t.Fatalf("waited %v for %s", waitFor, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkNames fails the test if a control of the page (as the browser's
// accessibility tree sees it) has no accessible name.
func (tb *tab) checkNames() {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitFor)
	defer cancel()
	tree, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	require.NoError(tb.t, err)
	controls := map[string]bool{"button": true, "link": true, "textbox": true, "searchbox": true, "combobox": true,
		"checkbox": true, "radio": true, "menuitem": true, "listbox": true, "slider": true, "switch": true, "tab": true}
	seen := 0
	for _, n := range tree.Nodes {
		if n.Ignored || n.Role == nil {
			continue
		}
		var role, name string
		_ = json.Unmarshal(n.Role.Value, &role)
		if !controls[role] {
			continue
		}
		seen++
		if n.Name != nil {
			_ = json.Unmarshal(n.Name.Value, &name)
		}
		assert.NotEmpty(tb.t, strings.TrimSpace(name), "a %s without a name (DOM node %d)", role, n.BackendDOMNodeID)
	}
	require.NotZero(tb.t, seen, "the accessibility tree has controls")
}
