package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/transport/webhook"
)

// botServer is a real HTTP bot: it records what it receives and answers
// with respond.
type botServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []botRequest
	respond  func(w http.ResponseWriter, r *http.Request)
}

type botRequest struct {
	userAgent, contentType string
	body                   []byte
}

func newBotServer(t *testing.T) *botServer {
	b := &botServer{respond: func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"content": "pong"}`) }}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.requests = append(b.requests, botRequest{r.UserAgent(), r.Header.Get("Content-Type"), body})
		respond := b.respond
		b.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *botServer) answer(f func(w http.ResponseWriter, r *http.Request)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.respond = f
}

func (b *botServer) hits() []botRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]botRequest(nil), b.requests...)
}

// webhookHarness is a harness whose Service delivers outgoing webhooks
// (to loopback, without waiting between attempts), with a timeout no
// answer reaches on a busy machine.
func webhookHarness(t *testing.T, opts ...chattest.Option) *chattest.Harness {
	return webhookHarnessTimeout(t, 5*time.Second, opts...)
}

// webhookHarnessTimeout is webhookHarness with the attempts' timeout.
func webhookHarnessTimeout(t *testing.T, timeout time.Duration, opts ...chattest.Option) *chattest.Harness {
	client := webhook.New(webhook.Options{AllowPrivate: true, Timeout: timeout,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	return chattest.New(t, append(opts, chattest.WithServiceOptions(chat.WithWebhookDeliverer(webhook.NewDeliverer(client))))...)
}

// outgoingBot creates an outgoing-webhook bot of owner posting to url.
func outgoingBot(t *testing.T, h *chattest.Harness, owner chattest.User, short, url string, iface int) (int64, string) {
	t.Helper()
	ctx := context.Background()
	resp, err := h.Service.CreateBot(ctx, owner.Caller, chat.CreateBotRequest{FullName: "Bot " + short, ShortName: short,
		BotType: ptr(chat.BotTypeOutgoingWebhook), PayloadURL: &url, InterfaceType: &iface})
	require.NoError(t, err)
	bots, err := h.Service.GetBots(ctx, owner.Caller)
	require.NoError(t, err)
	for _, b := range bots.Bots {
		if b.UserID == resp.UserID {
			require.Len(t, b.Services, 1)
			raw, _ := json.Marshal(b.Services[0])
			var svc struct{ Token string }
			require.NoError(t, json.Unmarshal(raw, &svc))
			return resp.UserID, svc.Token
		}
	}
	t.Fatal("bot not listed")
	return 0, ""
}

// deliverAll runs delivery rounds until the outbox is empty, moving the
// clock past each retry's wait.
func deliverAll(t *testing.T, h *chattest.Harness) {
	t.Helper()
	for range 10 {
		n, err := h.Service.DeliverDueWebhooks(context.Background())
		require.NoError(t, err)
		var left []int64
		require.NoError(t, h.Store.InTx(context.Background(), func(st storage.Store) error {
			var e error
			_, ok, e := st.NextWebhookAt(context.Background(), 1<<40)
			if ok {
				left = append(left, 1)
			}
			return e
		}))
		if n == 0 && len(left) == 0 {
			return
		}
		h.Clock.Advance(10 * time.Second)
	}
	t.Fatal("the outbox does not empty")
}

// lastMessages returns the newest messages alice can see.
func lastMessages(t *testing.T, h *chattest.Harness, as chattest.User, n int) []chat.FetchedMessage {
	t.Helper()
	resp, err := h.Service.GetMessages(context.Background(), as.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(n), ApplyMarkdown: ptr(false)})
	require.NoError(t, err)
	return resp.Messages
}

func TestOutgoingBotServices(t *testing.T) {
	ctx := context.Background()
	h := webhookHarness(t)
	alice := h.NewUser(t, chat.RoleMember)
	h.Events.Take()
	id, token := outgoingBot(t, h, alice, "echo", "https://bot.example.com/hook", 1)
	assert.Regexp(t, "^[a-zA-Z0-9]{32}$", token)
	var add sent
	for _, e := range takeEvents(t, h) {
		if e.Type == "realm_bot" && e.Op == "add" {
			add = e
		}
	}
	require.NotNil(t, add.JSON)
	assert.Equal(t, []any{map[string]any{"base_url": "https://bot.example.com/hook", "interface": float64(1), "token": token}},
		add.JSON["bot"].(map[string]any)["services"])

	for _, tc := range []struct {
		req chat.CreateBotRequest
		msg string
	}{
		{chat.CreateBotRequest{FullName: "X", ShortName: "x", BotType: ptr(chat.BotTypeOutgoingWebhook), InterfaceType: ptr(3)}, "Invalid interface type"},
		{chat.CreateBotRequest{FullName: "X", ShortName: "x", BotType: ptr(chat.BotTypeOutgoingWebhook), PayloadURL: ptr("not a url")}, "payload_url is not a URL"},
		{chat.CreateBotRequest{FullName: "X", ShortName: "x", BotType: ptr(5)}, "Invalid bot type"},
	} {
		_, err := h.Service.CreateBot(ctx, alice.Caller, tc.req)
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, tc.msg)
	}

	// The URL and the interface change; the token stays.
	resp, err := h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: id, ServicePayloadURL: ptr("https://new.example.com/"), ServiceInterface: ptr(2)})
	require.NoError(t, err)
	assert.Equal(t, 2, *resp.ServiceInterface)
	ev := only(t, takeEvents(t, h), "realm_bot", "update")
	assert.Equal(t, []any{map[string]any{"base_url": "https://new.example.com/", "interface": float64(2), "token": token}},
		ev.JSON["bot"].(map[string]any)["services"])
	_, newToken := outgoingBot(t, h, alice, "other", "https://o.example.com/", 1)
	assert.NotEqual(t, token, newToken, "a token per bot")
	_, err = h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: id, ServicePayloadURL: ptr("https://x.example.com/"), ServiceInterface: ptr(7)})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid interface type")
	bob := h.NewUser(t, chat.RoleMember)
	_, err = h.Service.UpdateBot(ctx, bob.Caller, chat.UpdateBotRequest{BotID: id, ServicePayloadURL: ptr("https://x.example.com/")})
	require.Error(t, err, "only the owner and administrators")
	generic := h.NewBot(t, alice)
	_, err = h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: generic.ID, ServicePayloadURL: ptr("https://x.example.com/")})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "This bot has no outgoing webhook service")
}

// What triggers a bot (facts §5): a non-silent mention in a channel, any
// direct message it receives; never a bot's message. The generic payload
// carries the message with its Markdown and HTML; the reply is posted as
// the bot in the same topic, and the triggering message is read for it.
func TestOutgoingWebhookTriggersAndReply(t *testing.T) {
	ctx := context.Background()
	h := webhookHarness(t)
	alice := h.NewUser(t, chat.RoleMember)
	bot := newBotServer(t)
	botID, token := outgoingBot(t, h, alice, "echo", bot.URL, 1)
	ch := newChannel(t, h, "lab", false)
	subscribe(t, h, h.Owner, "lab", alice.ID)
	toLab := func(content string) int64 {
		return send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(ch), Topic: ptr("exp"), Content: content})
	}

	mention := toLab("@**Bot echo** ping")
	deliverAll(t, h)
	hits := bot.hits()
	require.Len(t, hits, 1)
	assert.Equal(t, "ZulipOutgoingWebhook/"+webhook.DefaultVersion, hits[0].userAgent)
	var payload map[string]any
	require.NoError(t, json.Unmarshal(hits[0].body, &payload))
	assert.Equal(t, "mention", payload["trigger"])
	assert.Equal(t, token, payload["token"])
	assert.Equal(t, "@**Bot echo** ping", payload["data"])
	assert.Equal(t, "Bot echo", payload["bot_full_name"])
	msg := payload["message"].(map[string]any)
	assert.Equal(t, float64(mention), msg["id"])
	assert.Equal(t, "@**Bot echo** ping", msg["content"])
	assert.Contains(t, msg["rendered_content"], `class="user-mention"`)
	assert.Equal(t, "exp", msg["subject"])

	last := lastMessages(t, h, alice, 1)[0]
	assert.Equal(t, botID, last.SenderID, "the reply, as the bot")
	assert.Equal(t, "pong", last.Content)
	assert.Equal(t, "exp", last.Subject, "in the same topic")
	botCaller := chat.Caller{RealmID: h.RealmID, UserID: botID}
	m, err := h.Service.GetMessage(ctx, botCaller, chat.GetMessageRequest{MessageID: mention})
	require.NoError(t, err)
	assert.Contains(t, m.Message.Flags, "read", "the trigger is read for the bot")

	// No trigger: a silent mention, a wildcard, a bot's own message.
	toLab("@_**Bot echo** quietly")
	toLab("@**all** everyone")
	deliverAll(t, h)
	assert.Len(t, bot.hits(), 1)

	// A direct message: the reply goes to the same conversation.
	bob := h.NewUser(t, chat.RoleMember)
	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(botID, bob.ID), Content: "hi both"})
	deliverAll(t, h)
	hits = bot.hits()
	require.Len(t, hits, 2)
	require.NoError(t, json.Unmarshal(hits[1].body, &payload))
	assert.Equal(t, "direct_message", payload["trigger"])
	reply := lastMessages(t, h, bob, 1)[0]
	assert.Equal(t, botID, reply.SenderID)
	assert.Greater(t, reply.ID, dm)
	assert.Equal(t, "private", reply.Type)
	assert.Len(t, reply.DisplayRecipient, 3, "the same group")

	// A private channel: only a subscribed bot hears its mention.
	newChannelBy(t, h, alice, "secret", true)
	secret := func() int64 {
		resp, err := h.Service.GetChannelID(ctx, alice.Caller, chat.GetChannelIDRequest{Stream: "secret"})
		require.NoError(t, err)
		return resp.StreamID
	}()
	toSecret := func() {
		send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(secret), Topic: ptr("x"), Content: "@**Bot echo** psst"})
		deliverAll(t, h)
	}
	toSecret()
	assert.Len(t, bot.hits(), 2, "not subscribed: not triggered")
	subscribe(t, h, alice, "secret", botID)
	toSecret()
	assert.Len(t, bot.hits(), 3)
	assert.Equal(t, botID, lastMessages(t, h, alice, 1)[0].SenderID)
}

// Each way a bot can answer or fail, through a real HTTP server.
func TestOutgoingWebhookOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		respond  func(w http.ResponseWriter, r *http.Request)
		attempts int
		posted   string // what the bot posts ("" nothing)
		owner    string // in the owner's DM ("" no DM)
	}{
		{"reply", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"content": "**done**"}`) }, 1, "**done**", ""},
		{"legacy response_string", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"response_string": "old"}`) }, 1, "old", ""},
		{"response not required", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, `{"response_not_required": true, "content": "x"}`)
		}, 1, "", ""},
		{"empty content", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"content": "  "}`) }, 1, "", ""},
		{"empty body", func(w http.ResponseWriter, _ *http.Request) {}, 1, "Failure! Invalid JSON in response", "Invalid JSON in response"},
		{"non-JSON", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `<html>`) }, 1, "Failure! Invalid JSON in response", "Invalid JSON in response"},
		{"non-object", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `[1, 2]`) }, 1, "Failure! Invalid response format", "Invalid response format"},
		{"500", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, "oops")
		}, 1, "Failure! Third party responded with 500", "The webhook got a response with status code *500*."},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}, 4, "Failure! Bot is unavailable", "Request timed out after 0.3 seconds."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			timeout := 5 * time.Second
			if tc.name == "timeout" {
				timeout = 300 * time.Millisecond
			}
			h := webhookHarnessTimeout(t, timeout)
			alice := h.NewUser(t, chat.RoleMember)
			bot := newBotServer(t)
			bot.answer(tc.respond)
			botID, _ := outgoingBot(t, h, alice, "echo", bot.URL, 1)
			before := lastMessages(t, h, alice, 1)
			dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(botID), Content: "do it"})
			deliverAll(t, h)
			assert.Len(t, bot.hits(), tc.attempts)
			msgs := lastMessages(t, h, alice, 5)
			var posted, owner []string
			for _, m := range msgs {
				if m.ID <= dm && (len(before) == 0 || m.ID != before[0].ID) {
					continue
				}
				if m.SenderID == botID {
					posted = append(posted, m.Content)
				} else if m.ID > dm {
					owner = append(owner, m.Content)
				}
			}
			if tc.posted == "" {
				assert.Empty(t, posted)
			} else {
				assert.Equal(t, []string{tc.posted}, posted)
			}
			if tc.owner == "" {
				assert.Empty(t, owner)
			} else {
				require.Len(t, owner, 1, "the owner is told")
				assert.Contains(t, owner[0], "to your bot @_**Bot echo** triggered an outgoing webhook.")
				assert.Contains(t, owner[0], "/near/"+fmt.Sprint(dm))
				assert.Contains(t, owner[0], tc.owner)
			}
		})
	}
}

// A refused connection is retried, 4 attempts in all; a Slack-mode bot
// gets the form and its text is posted, but is never called for a DM.
func TestOutgoingWebhookRefusedAndSlack(t *testing.T) {
	h := webhookHarness(t)
	alice := h.NewUser(t, chat.RoleMember)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadURL := "http://" + ln.Addr().String() + "/"
	require.NoError(t, ln.Close())
	deadID, _ := outgoingBot(t, h, alice, "dead", deadURL, 1)
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(deadID), Content: "anyone?"})
	deliverAll(t, h)
	msgs := lastMessages(t, h, alice, 2)
	assert.Equal(t, "Failure! Bot is unavailable", msgs[0].Content)
	assert.Contains(t, msgs[1].Content, "A connection error occurred. Is my bot server down?")

	// A bot without a URL: an exception, not retried; both are told.
	nowhereID, _ := outgoingBot(t, h, alice, "nowhere", "", 1)
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(nowhereID), Content: "lost?"})
	deliverAll(t, h)
	msgs = lastMessages(t, h, alice, 2)
	assert.True(t, strings.HasPrefix(msgs[0].Content, "Failure! An exception of type *"), msgs[0].Content)
	assert.Contains(t, msgs[0].Content, "`lost?`")
	assert.Contains(t, msgs[1].Content, "an exception of type")

	bot := newBotServer(t)
	bot.answer(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"text": "from slack"}`) })
	slackID, token := outgoingBot(t, h, alice, "slacky", bot.URL, 2)
	ch := newChannel(t, h, "ops", false)
	subscribe(t, h, h.Owner, "ops", alice.ID)
	send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(ch), Topic: ptr("t"), Content: "@**Bot slacky** status"})
	deliverAll(t, h)
	hits := bot.hits()
	require.Len(t, hits, 1)
	assert.Equal(t, "application/x-www-form-urlencoded", hits[0].contentType)
	form, err := url.ParseQuery(string(hits[0].body))
	require.NoError(t, err)
	assert.Equal(t, token, form.Get("token"))
	assert.Equal(t, fmt.Sprintf("C%d", ch), form.Get("channel_id"))
	assert.Equal(t, "@**Bot slacky** status", form.Get("text"))
	assert.Equal(t, "from slack", lastMessages(t, h, alice, 1)[0].Content)

	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(slackID), Content: "psst"})
	deliverAll(t, h)
	assert.Len(t, bot.hits(), 1, "not called for a direct message")
	assert.Equal(t, "Failure! Slack outgoing webhooks don't support direct messages.", lastMessages(t, h, alice, 1)[0].Content)
}

// The default client refuses a bot on a private address (the SSRF rule):
// the conversation and the owner are told.
func TestOutgoingWebhookPrivateAddressRefused(t *testing.T) {
	client := webhook.New(webhook.Options{Timeout: 300 * time.Millisecond, Sleep: func(context.Context, time.Duration) error { return nil }})
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithWebhookDeliverer(webhook.NewDeliverer(client))))
	alice := h.NewUser(t, chat.RoleMember)
	bot := newBotServer(t)
	botID, _ := outgoingBot(t, h, alice, "inside", bot.URL, 1)
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(botID), Content: "hello"})
	deliverAll(t, h)
	assert.Empty(t, bot.hits(), "never reached")
	msgs := lastMessages(t, h, alice, 2)
	assert.Equal(t, "Failure! Third party responded with 407", msgs[0].Content)
	assert.Contains(t, msgs[1].Content, "private or disallowed network")
}

// Exactly once, on each database: a delivery claimed by a server that
// died is taken again, once its claim expires, by a new Service on its
// own connection to the same database; and two Services delivering at
// once call the bot once per trigger and post each answer once.
func TestOutgoingWebhookExactlyOnce(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			open := sharedDatabase(t, dialect)
			// A timeout long enough that no attempt times out on a busy
			// machine: a timed-out call is retried, and this test counts
			// calls.
			client := webhook.New(webhook.Options{AllowPrivate: true, Timeout: 10 * time.Second})
			h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return open() }),
				chattest.WithServiceOptions(chat.WithWebhookDeliverer(webhook.NewDeliverer(client))))
			alice := h.NewUser(t, chat.RoleMember)
			bot := newBotServer(t)
			botID, _ := outgoingBot(t, h, alice, "echo", bot.URL, 1)
			send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(botID), Content: "one"})
			// A server claims it and dies before calling the bot.
			claimed, err := h.Store.ClaimWebhooks(ctx, h.Clock.Now().Unix(), h.Clock.Now().Unix()+60, "dead-server", 10)
			require.NoError(t, err)
			require.Len(t, claimed, 1)
			n, err := h.Service.DeliverDueWebhooks(ctx)
			require.NoError(t, err)
			assert.Zero(t, n, "still claimed")
			// A restarted Service, after the claim expired.
			restarted := chat.New(open(), chat.WithClock(h.Clock.Now), chat.WithWebhookDeliverer(webhook.NewDeliverer(client)))
			h.Clock.Advance(61 * time.Second)
			n, err = restarted.DeliverDueWebhooks(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, n)
			n, err = restarted.DeliverDueWebhooks(ctx)
			require.NoError(t, err)
			assert.Zero(t, n)
			assert.Len(t, bot.hits(), 1)
			ok, err := h.Store.FinishWebhook(ctx, claimed[0].ID, "dead-server")
			require.NoError(t, err)
			assert.False(t, ok, "the dead server's claim is void")
			assert.Equal(t, "pong", lastMessages(t, h, alice, 1)[0].Content)

			// Two Services at once.
			var replies atomic.Int64
			bot.answer(func(w http.ResponseWriter, _ *http.Request) {
				replies.Add(1)
				time.Sleep(5 * time.Millisecond)
				_, _ = io.WriteString(w, `{"content": "ack"}`)
			})
			const triggers = 30
			for i := range triggers {
				send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(botID), Content: fmt.Sprint("n", i)})
			}
			var wg sync.WaitGroup
			for _, svc := range []*chat.Service{h.Service, restarted} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						n, err := svc.DeliverDueWebhooks(ctx)
						if !assert.NoError(t, err) || n == 0 {
							return
						}
					}
				}()
			}
			wg.Wait()
			assert.EqualValues(t, triggers, replies.Load(), "each trigger delivered once")
			acks := 0
			for _, m := range lastMessages(t, h, alice, 100) {
				if m.SenderID == botID && m.Content == "ack" {
					acks++
				}
			}
			assert.Equal(t, triggers, acks, "each reply posted once")
		})
	}
}

// RunWebhooks delivers on its own: a send wakes it.
func TestRunWebhooksDeliversOnSend(t *testing.T) {
	h := webhookHarness(t, chattest.WithServiceOptions(chat.WithWebhookInterval(time.Hour)))
	alice := h.NewUser(t, chat.RoleMember)
	bot := newBotServer(t)
	botID, _ := outgoingBot(t, h, alice, "echo", bot.URL, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Service.RunWebhooks(ctx) }()
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(botID), Content: "wake up"})
	require.Eventually(t, func() bool {
		m := lastMessages(t, h, alice, 1)
		return len(m) == 1 && m[0].SenderID == botID
	}, 5*time.Second, 10*time.Millisecond, "the reply came without waiting for the hour")
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

// stallingDeliverer answers only when its context ends, as a bot that
// never answers behind a deliverer with a very long timeout.
type stallingDeliverer struct {
	mu    sync.Mutex
	calls []error // the context's error when each attempt ended
}

func (d *stallingDeliverer) Attempt(ctx context.Context, _ chat.WebhookCall) chat.WebhookResult {
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
	}
	d.mu.Lock()
	d.calls = append(d.calls, ctx.Err())
	d.mu.Unlock()
	return chat.WebhookResult{Kind: chat.WebhookRetry}
}

func (d *stallingDeliverer) Backoff(int) time.Duration { return time.Second }

func (d *stallingDeliverer) ended() []error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]error(nil), d.calls...)
}

// An attempt never outlives its claim: the Service ends it before the
// lease runs out (so no other server takes the row meanwhile) and counts
// it as a timed-out attempt; a delivery whose turn comes too late is
// handed back untried.
func TestWebhookAttemptEndsBeforeItsClaim(t *testing.T) {
	ctx := context.Background()
	d := &stallingDeliverer{}
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithWebhookDeliverer(d)))
	alice := h.NewUser(t, chat.RoleMember)
	botID, _ := outgoingBot(t, h, alice, "slow", "http://bot.example/", 1)

	// Too late to start: handed back, not tried.
	chat.SetWebhookAttemptBudget(h.Service, time.Nanosecond)
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(botID), Content: "hello"})
	n, err := h.Service.DeliverDueWebhooks(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Empty(t, d.ended(), "not tried")

	// Started in time, ended at the budget's end: a retry is due later.
	chat.SetWebhookAttemptBudget(h.Service, 100*time.Millisecond)
	n, err = h.Service.DeliverDueWebhooks(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the handed-back delivery is due at once")
	assert.Equal(t, []error{context.DeadlineExceeded}, d.ended())
	n, err = h.Service.DeliverDueWebhooks(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "the retry waits for its backoff")
	h.Clock.Advance(2 * time.Second)
	n, err = h.Service.DeliverDueWebhooks(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Len(t, d.ended(), 2, "the second attempt")
}
