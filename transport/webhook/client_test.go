package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testBackoff = []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second}

// sleepRecorder stands in for Options.Sleep: it records the waits and
// returns at once.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newTestClient returns a client that may reach loopback test servers
// (AllowPrivate) and records its waits.
func newTestClient(t *testing.T, o Options) (*Client, *sleepRecorder) {
	t.Helper()
	rec := &sleepRecorder{}
	if o.Sleep == nil {
		o.Sleep = rec.sleep
	}
	if o.Backoff == nil {
		o.Backoff = testBackoff
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := New(o)
	t.Cleanup(c.CloseIdleConnections)
	return c, rec
}

// botServer is an httptest bot service that counts its requests.
type botServer struct {
	*httptest.Server
	hits atomic.Int32
}

func newBot(t *testing.T, h http.HandlerFunc) *botServer {
	t.Helper()
	b := &botServer{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(b.Close)
	return b
}

// answer is a bot handler writing status and body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func genericRequest(url string) Request {
	return Request{
		URL:       url,
		Interface: Generic,
		Payload: Payload{
			Data:        "@**Echo** hello",
			Message:     json.RawMessage(`{"id":7,"type":"stream","content":"@**Echo** hello"}`),
			BotEmail:    "echo-bot@example.com",
			BotFullName: "Echo",
			Token:       "s3cret",
			Trigger:     TriggerMention,
		},
	}
}

func TestDeliverAnswers(t *testing.T) {
	const invalidJSONOwner = "The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> Invalid JSON in response"
	const invalidFormatOwner = "The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> Invalid response format"
	tests := []struct {
		name        string
		status      int
		body        string
		want        Kind
		content     string
		widget      string
		message     string
		ownerDetail string
	}{
		{name: "content", status: 200, body: `{"content": "hi **there**"}`, want: Reply, content: "hi **there**"},
		{name: "content with widget", status: 200, body: `{"content": "poll", "widget_content": "{\"widget_type\": \"poll\"}", "red_herring": 1}`,
			want: Reply, content: "poll", widget: `"{\"widget_type\": \"poll\"}"`},
		{name: "legacy response_string", status: 200, body: `{"response_string": "legacy"}`, want: Reply, content: "legacy"},
		{name: "response_string wins over content", status: 200, body: `{"response_string": "old", "content": "new", "widget_content": "{}"}`, want: Reply, content: "old"},
		{name: "201 is success", status: 201, body: `{"content": "made"}`, want: Reply, content: "made"},
		{name: "non-string content in JSON form", status: 200, body: `{"content": 42}`, want: Reply, content: "42"},
		{name: "response_not_required", status: 200, body: `{"response_not_required": true}`, want: NoReply},
		{name: "response_not_required beats content", status: 200, body: `{"response_not_required": true, "content": "x"}`, want: NoReply},
		{name: "response_not_required truthy number", status: 200, body: `{"response_not_required": 1, "content": "x"}`, want: NoReply},
		{name: "response_not_required false", status: 200, body: `{"response_not_required": false, "content": "x"}`, want: Reply, content: "x"},
		{name: "whitespace content", status: 200, body: `{"content": "  \n\t "}`, want: NoReply},
		{name: "empty content", status: 200, body: `{"content": ""}`, want: NoReply},
		{name: "null content", status: 200, body: `{"content": null}`, want: NoReply},
		{name: "empty object", status: 200, body: `{}`, want: NoReply},
		{name: "JSON string empty", status: 200, body: `""`, want: NoReply},
		{name: "non-JSON body", status: 200, body: `this isn't valid json`, want: Failure,
			message:     "Failure! Invalid JSON in response",
			ownerDetail: invalidJSONOwner + "\nThe response contains the following payload:\n```\n\"this isn't valid json\"\n```"},
		{name: "empty body", status: 200, body: ``, want: Failure,
			message: "Failure! Invalid JSON in response", ownerDetail: invalidJSONOwner},
		{name: "trailing garbage", status: 200, body: `{"content": "x"} y`, want: Failure,
			message:     "Failure! Invalid JSON in response",
			ownerDetail: invalidJSONOwner + "\nThe response contains the following payload:\n```\n'{\"content\": \"x\"} y'\n```"},
		{name: "array", status: 200, body: `[1]`, want: Failure,
			message:     "Failure! Invalid response format",
			ownerDetail: invalidFormatOwner + "\nThe response contains the following payload:\n```\n'[1]'\n```"},
		{name: "number", status: 200, body: `5`, want: Failure,
			message:     "Failure! Invalid response format",
			ownerDetail: invalidFormatOwner + "\nThe response contains the following payload:\n```\n'5'\n```"},
		{name: "true", status: 200, body: `true`, want: Failure,
			message:     "Failure! Invalid response format",
			ownerDetail: invalidFormatOwner + "\nThe response contains the following payload:\n```\n'true'\n```"},
		{name: "non-empty JSON string", status: 200, body: `" "`, want: Failure, message: "Failure! Invalid response format",
			ownerDetail: invalidFormatOwner + "\nThe response contains the following payload:\n```\n'\" \"'\n```"},
		{name: "500", status: 500, body: `oops`, want: Failure,
			message:     "Failure! Third party responded with 500",
			ownerDetail: "The webhook got a response with status code *500*.\nThe response contains the following payload:\n```\nb'oops'\n```"},
		{name: "500 empty body", status: 500, body: ``, want: Failure,
			message: "Failure! Third party responded with 500", ownerDetail: "The webhook got a response with status code *500*."},
		{name: "400 JSON body", status: 400, body: `{"msg": "bad"}`, want: Failure,
			message:     "Failure! Third party responded with 400",
			ownerDetail: "The webhook got a response with status code *400*.\nThe response contains the following payload:\n```\nb'{\"msg\": \"bad\"}'\n```"},
		{name: "407", status: 407, body: ``, want: Failure,
			message: "Failure! Third party responded with 407", ownerDetail: "The URL configured for the webhook is for a private or disallowed network."},
		{name: "407 with body", status: 407, body: `denied`, want: Failure,
			message:     "Failure! Third party responded with 407",
			ownerDetail: "The URL configured for the webhook is for a private or disallowed network.\nThe response contains the following payload:\n```\nb'denied'\n```"},
		{name: "redirect answer not followed to success", status: 302, body: ``, want: Failure,
			message: "Failure! Third party responded with 302", ownerDetail: "The webhook got a response with status code *302*."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bot := newBot(t, answer(tt.status, tt.body))
			c, rec := newTestClient(t, Options{AllowPrivate: true})
			o, err := c.Deliver(context.Background(), genericRequest(bot.URL))
			require.NoError(t, err)
			assert.Equal(t, tt.want, o.Kind, "kind")
			assert.Equal(t, tt.content, o.Content, "content")
			if tt.widget == "" {
				assert.Nil(t, o.WidgetContent)
			} else {
				assert.JSONEq(t, tt.widget, string(o.WidgetContent))
			}
			assert.Equal(t, tt.message, o.Message, "conversation text")
			assert.Equal(t, tt.ownerDetail, o.OwnerDetail, "owner text")
			assert.Equal(t, tt.status, o.StatusCode)
			assert.Equal(t, tt.body, string(o.Body))
			assert.Equal(t, 1, o.Attempts)
			assert.EqualValues(t, 1, bot.hits.Load(), "no retry")
			assert.Empty(t, rec.got(), "no backoff")
		})
	}
}

func TestDeliverRequestShape(t *testing.T) {
	var got struct {
		method, ua, ct string
		body           map[string]json.RawMessage
	}
	bot := newBot(t, func(w http.ResponseWriter, r *http.Request) {
		got.method, got.ua, got.ct = r.Method, r.Header.Get("User-Agent"), r.Header.Get("Content-Type")
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&got.body))
		answer(200, `{}`)(w, r)
	})
	c, _ := newTestClient(t, Options{AllowPrivate: true, Version: "1.2.3"})
	o, err := c.Deliver(context.Background(), genericRequest(bot.URL))
	require.NoError(t, err)
	assert.Equal(t, NoReply, o.Kind)
	assert.Equal(t, http.MethodPost, got.method)
	assert.Equal(t, "ZulipOutgoingWebhook/1.2.3", got.ua)
	assert.Equal(t, "application/json", got.ct)
	want := map[string]string{
		"data":          `"@**Echo** hello"`,
		"message":       `{"id":7,"type":"stream","content":"@**Echo** hello"}`,
		"bot_email":     `"echo-bot@example.com"`,
		"bot_full_name": `"Echo"`,
		"token":         `"s3cret"`,
		"trigger":       `"mention"`,
	}
	require.Len(t, got.body, len(want))
	for k, v := range want {
		assert.JSONEq(t, v, string(got.body[k]), k)
	}

	c, _ = newTestClient(t, Options{AllowPrivate: true})
	_, err = c.Deliver(context.Background(), genericRequest(bot.URL))
	require.NoError(t, err)
	assert.Equal(t, "ZulipOutgoingWebhook/"+DefaultVersion, got.ua)
}

func TestDeliverSlack(t *testing.T) {
	var raw string
	var ct string
	bot := newBot(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		raw, ct = string(b), r.Header.Get("Content-Type")
		answer(200, `{"text": "hey *you*", "content": "ignored"}`)(w, r)
	})
	c, _ := newTestClient(t, Options{AllowPrivate: true})
	req := Request{URL: bot.URL, Interface: Slack, Slack: SlackFields{
		Token: "abcdef", RealmID: 2, RealmHost: "chat.example.com", StreamID: 123, StreamName: "integrations",
		Timestamp: 123456, SenderID: 21, SenderFullName: "Sample User", Text: "@**test** a&b=c",
		Trigger: TriggerMention, BotID: 12,
	}}
	o, err := c.Deliver(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, Reply, o.Kind)
	assert.Equal(t, "hey *you*", o.Content)
	assert.Equal(t, "application/x-www-form-urlencoded", ct)
	assert.Equal(t, "token=abcdef&team_id=T2&team_domain=chat.example.com&channel_id=C123&channel_name=integrations"+
		"&thread_ts=123456&timestamp=123456&user_id=U21&user_name=Sample+User&text=%40%2A%2Atest%2A%2A+a%26b%3Dc"+
		"&trigger_word=mention&service_id=12", raw, "fields in the reference's order")
	form, err := url.ParseQuery(raw)
	require.NoError(t, err)
	assert.Equal(t, "@**test** a&b=c", form.Get("text"))

	for body, want := range map[string]Kind{
		`{"content": "generic key"}`:                       NoReply,
		`{"text": "  "}`:                                   NoReply,
		`{"response_not_required": true, "text": "still"}`: Reply, // Slack mode reads only text
	} {
		bot := newBot(t, answer(200, body))
		req.URL = bot.URL
		o, err := c.Deliver(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, want, o.Kind, body)
	}
}

func TestSlackDirectMessageOutcome(t *testing.T) {
	o := SlackDirectMessageOutcome()
	assert.Equal(t, Failure, o.Kind)
	assert.Equal(t, "Failure! Slack outgoing webhooks don't support direct messages.", o.Message)
	assert.Empty(t, o.OwnerMessage("http://x/#narrow", "Bot"), "the owner is not told")
}

func TestDeliverTimeoutRetries(t *testing.T) {
	release := make(chan struct{})
	bot := newBot(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices the client leaving
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release) // before bot.Close (cleanup), which waits for handlers
	c, rec := newTestClient(t, Options{AllowPrivate: true, Timeout: 250 * time.Millisecond})
	o, err := c.Deliver(context.Background(), genericRequest(bot.URL))
	require.NoError(t, err)
	assert.Equal(t, Failure, o.Kind)
	assert.Equal(t, "Failure! Bot is unavailable", o.Message)
	assert.Equal(t, "Request timed out after 0.25 seconds.", o.OwnerDetail)
	assert.Equal(t, 4, o.Attempts)
	assert.EqualValues(t, 4, bot.hits.Load(), "4 attempts in all")
	assert.Equal(t, testBackoff, rec.got(), "a wait between attempts")
	assert.Error(t, o.Err)
}

func TestTimeoutDetailDefault(t *testing.T) {
	assert.Equal(t, "Request timed out after 10 seconds.", timeoutDetail(DefaultTimeout))
}

func TestDeliverConnectionRefusedRetries(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	c, rec := newTestClient(t, Options{AllowPrivate: true})
	o, err := c.Deliver(context.Background(), genericRequest("http://"+addr+"/bot"))
	require.NoError(t, err)
	assert.Equal(t, Failure, o.Kind)
	assert.Equal(t, "Failure! Bot is unavailable", o.Message)
	assert.Equal(t, "A connection error occurred. Is my bot server down?", o.OwnerDetail)
	assert.Equal(t, 4, o.Attempts)
	assert.Equal(t, testBackoff, rec.got())
}

// closingListener accepts connections and closes them at once, counting
// them: a bot server that drops the request.
func closingListener(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String(), &n
}

func TestDeliverConnectionDroppedRetries(t *testing.T) {
	addr, accepted := closingListener(t)
	c, rec := newTestClient(t, Options{AllowPrivate: true, Backoff: []time.Duration{time.Minute}})
	o, err := c.Deliver(context.Background(), genericRequest("http://"+addr+"/"))
	require.NoError(t, err)
	assert.Equal(t, Failure, o.Kind)
	assert.Equal(t, "Failure! Bot is unavailable", o.Message)
	assert.Equal(t, "A connection error occurred. Is my bot server down?", o.OwnerDetail)
	assert.EqualValues(t, 4, accepted.Load(), "4 connections in all")
	assert.Equal(t, []time.Duration{time.Minute, time.Minute, time.Minute}, rec.got(), "the last backoff serves again")
}

func TestDeliverRecoversAfterRetries(t *testing.T) {
	var n atomic.Int32
	bot := newBot(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			hj, ok := w.(http.Hijacker)
			require.True(t, ok)
			conn, _, err := hj.Hijack()
			require.NoError(t, err)
			_ = conn.Close()
			return
		}
		answer(200, `{"content": "third time"}`)(w, r)
	})
	c, rec := newTestClient(t, Options{AllowPrivate: true})
	o, err := c.Deliver(context.Background(), genericRequest(bot.URL))
	require.NoError(t, err)
	assert.Equal(t, Reply, o.Kind)
	assert.Equal(t, "third time", o.Content)
	assert.Equal(t, 3, o.Attempts)
	assert.Equal(t, testBackoff[:2], rec.got())
}

func TestAttemptRetryAndExhausted(t *testing.T) {
	addr, _ := closingListener(t)
	c, rec := newTestClient(t, Options{AllowPrivate: true})
	o, err := c.Attempt(context.Background(), genericRequest("http://"+addr))
	require.NoError(t, err)
	assert.Equal(t, Retry, o.Kind)
	assert.Equal(t, 1, o.Attempts)
	assert.Empty(t, rec.got(), "Attempt never waits")
	f := o.Exhausted()
	assert.Equal(t, Failure, f.Kind)
	assert.Equal(t, BotUnavailable, f.Message)
	assert.Equal(t, "A connection error occurred. Is my bot server down?", f.OwnerDetail)

	assert.Equal(t, testBackoff[0], c.Backoff(1))
	assert.Equal(t, testBackoff[2], c.Backoff(3))
	assert.Equal(t, testBackoff[2], c.Backoff(9))
	assert.Equal(t, DefaultBackoff, New(Options{}).backoff)
}

func TestDeliverExceptions(t *testing.T) {
	bot := newBot(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect) // to itself, forever
	})
	ftp := newBot(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://files.example.com/x", http.StatusFound)
	})
	tests := []struct {
		name, url, typ string
		hits           *atomic.Int32
		wantHits       int32
	}{
		{name: "missing scheme", url: "bot.example.com/hook", typ: "MissingSchema"},
		{name: "ftp scheme", url: "ftp://bot.example.com/hook", typ: "InvalidSchema"},
		{name: "no host", url: "http:///hook", typ: "InvalidURL"},
		{name: "bad URL", url: "http://[::1", typ: "InvalidURL"},
		{name: "redirect loop", url: bot.URL + "/loop", typ: "TooManyRedirects", hits: &bot.hits, wantHits: maxRedirects},
		{name: "redirect to ftp", url: ftp.URL, typ: "InvalidSchema", hits: &ftp.hits, wantHits: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec := newTestClient(t, Options{AllowPrivate: true})
			before := int32(0)
			if tt.hits != nil {
				before = tt.hits.Load()
			}
			o, err := c.Deliver(context.Background(), genericRequest(tt.url))
			require.NoError(t, err)
			assert.Equal(t, Failure, o.Kind)
			assert.Equal(t, "Failure! An exception of type *"+tt.typ+"* occurred for message `@**Echo** hello`! See the Zulip server logs for more information.", o.Message)
			assert.Equal(t, "When trying to send a request to the webhook service, an exception of type "+tt.typ+" occurred:\n```\n"+o.Err.Error()+"\n```", o.OwnerDetail)
			assert.Equal(t, 1, o.Attempts)
			assert.Empty(t, rec.got())
			if tt.hits != nil {
				assert.Equal(t, tt.wantHits, tt.hits.Load()-before)
			}
		})
	}
}

func TestDeliverResponseTooLarge(t *testing.T) {
	bot := newBot(t, answer(200, `{"content": "`+string(make([]byte, 100))+`"}`))
	c, _ := newTestClient(t, Options{AllowPrivate: true, MaxResponseBytes: 64})
	o, err := c.Deliver(context.Background(), genericRequest(bot.URL))
	require.NoError(t, err)
	assert.Equal(t, Failure, o.Kind)
	assert.Contains(t, o.Message, "*ContentTooLarge*")
	assert.Contains(t, o.OwnerDetail, "exceeds 64 bytes")
}

func TestDeliverContextEnds(t *testing.T) {
	t.Run("canceled before", func(t *testing.T) {
		c, _ := newTestClient(t, Options{AllowPrivate: true})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Deliver(ctx, genericRequest("http://127.0.0.1:9/"))
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("canceled during the request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		release := make(chan struct{})
		bot := newBot(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			cancel()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release)
		c, rec := newTestClient(t, Options{AllowPrivate: true})
		_, err := c.Deliver(ctx, genericRequest(bot.URL))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, rec.got(), "not a retry")
	})
	t.Run("canceled during the wait", func(t *testing.T) {
		addr, accepted := closingListener(t)
		c, _ := newTestClient(t, Options{AllowPrivate: true, Sleep: func(ctx context.Context, d time.Duration) error {
			return context.Canceled
		}})
		_, err := c.Deliver(context.Background(), genericRequest("http://"+addr))
		assert.ErrorIs(t, err, context.Canceled)
		assert.EqualValues(t, 1, accepted.Load())
	})
}

func TestSleepCtx(t *testing.T) {
	assert.NoError(t, sleepCtx(context.Background(), time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, sleepCtx(ctx, time.Hour), context.Canceled)
}

func TestErrorsAreClassified(t *testing.T) {
	// A refusal wrapped the way net/http wraps dial errors stays a refusal.
	err := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &ForbiddenAddressError{Addr: "10.0.0.1:80"}}}
	assert.True(t, errors.Is(err, ErrForbiddenAddress))
	c, _ := newTestClient(t, Options{})
	r := genericRequest("http://x")
	o, e := c.transportFailure(context.Background(), &r, err)
	require.NoError(t, e)
	assert.Equal(t, Failure, o.Kind)
	assert.Equal(t, "Failure! Third party responded with 407", o.Message)
}

func TestDeliverSlackException(t *testing.T) {
	c, _ := newTestClient(t, Options{AllowPrivate: true})
	o, err := c.Deliver(context.Background(), Request{URL: "gopher://x", Interface: Slack, Slack: SlackFields{Text: "slack text"}})
	require.NoError(t, err)
	assert.Equal(t, "Failure! An exception of type *InvalidSchema* occurred for message `slack text`! See the Zulip server logs for more information.", o.Message)
	assert.Equal(t, o, o.Exhausted(), "a final outcome stays as it is")
}
