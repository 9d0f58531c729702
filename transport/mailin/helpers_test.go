package mailin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/smtp"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/smtptest"
	"github.com/teamchat/chat/transport/email"
	"github.com/teamchat/chat/transport/mailin"
)

// The gateway's domain in the tests.
const domain = "mail.example.com"

// syncBuffer collects the listener's and the Service's logs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// recorder sends missed-message emails through transport/email to an
// SMTP server in the test process, as a host does.
type recorder struct{ mailer *email.Sender }

func (r recorder) NotifyEmail(ctx context.Context, e chat.EmailNotification) error {
	return r.mailer.NotifyEmail(ctx, e)
}

func (recorder) NotifyPush(context.Context, chat.PushNotification) error { return nil }

// gwEnv is a harness with the gateway's listener on a loopback port and
// an outgoing SMTP server for notifications.
type gwEnv struct {
	*chattest.Harness
	addr   string
	outbox *smtptest.Server
	log    *syncBuffer
	now    *time.Time
	mu     *sync.Mutex
}

func newGateway(t testing.TB, o mailin.Options, extra ...chat.Option) *gwEnv {
	t.Helper()
	outbox := smtptest.Start(t)
	mailer, err := email.New(email.Options{Addr: outbox.Addr, From: "noreply@chat.example.com", TLS: email.TLSNone})
	require.NoError(t, err)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	opts := append([]chat.Option{chat.WithEmailGateway(domain), chat.WithNotifier(recorder{mailer}), chat.WithLogger(logger)}, extra...)
	h := chattest.New(t, chattest.WithServiceOptions(opts...))
	env := &gwEnv{Harness: h, outbox: outbox, log: logs, now: new(time.Time), mu: &sync.Mutex{}}
	*env.now = time.Unix(1_700_000_000, 0)
	o.Logger = logger
	o.Now = func() time.Time {
		env.mu.Lock()
		defer env.mu.Unlock()
		return *env.now
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	env.addr = ln.Addr().String()
	srv := mailin.New(h.Service, o)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return env
}

// advanceLimiter moves the listener's rate-limit clock.
func (e *gwEnv) advanceLimiter(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	*e.now = e.now.Add(d)
}

// step names the SMTP command that failed.
type smtpFailure struct {
	step string
	code int
	msg  string
}

func (f *smtpFailure) Error() string { return fmt.Sprintf("%s: %d %s", f.step, f.code, f.msg) }

// mailTo delivers a raw mail to the listener with net/smtp, as a sending
// server does, and returns the first refusal (nil when accepted).
func (e *gwEnv) mailTo(t testing.TB, raw string, to ...string) *smtpFailure {
	t.Helper()
	return e.mailWith(t, raw, nil, to...)
}

// mailWith is mailTo that runs between, when not nil, after the RCPTs
// and before DATA.
func (e *gwEnv) mailWith(t testing.TB, raw string, between func(), to ...string) *smtpFailure {
	t.Helper()
	c, err := smtp.Dial(e.addr)
	require.NoError(t, err)
	defer c.Close()
	fail := func(step string, err error) *smtpFailure {
		var te *textproto.Error
		require.True(t, errors.As(err, &te), "%s: %v", step, err)
		return &smtpFailure{step: step, code: te.Code, msg: te.Msg}
	}
	require.NoError(t, c.Hello("sender.example.org"))
	if err := c.Mail("ada@example.org"); err != nil {
		return fail("MAIL", err)
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt); err != nil {
			return fail("RCPT", err)
		}
	}
	if between != nil {
		between()
	}
	w, err := c.Data()
	if err != nil {
		return fail("DATA", err)
	}
	_, err = w.Write([]byte(strings.ReplaceAll(raw, "\n", "\r\n")))
	require.NoError(t, err)
	if err := w.Close(); err != nil {
		return fail("DATA", err)
	}
	require.NoError(t, c.Quit())
	return nil
}

// plainMail is a text mail with these headers.
func plainMail(subject, messageID, body string) string {
	h := "From: Ada Lovelace <ada@example.org>\nTo: somewhere@example.org\nSubject: " + subject + "\n"
	if messageID != "" {
		h += "Message-ID: " + messageID + "\n"
	}
	return h + "MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n" + body
}

// newest returns the newest messages (up to n) the user can read in the
// narrow, oldest first.
func (e *gwEnv) newest(t testing.TB, as chattest.User, narrow string, n int) []chat.FetchedMessage {
	t.Helper()
	resp, err := e.Service.GetMessages(context.Background(), as.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"),
		NumBefore: ptr(n), NumAfter: ptr(0), Narrow: &narrow, ApplyMarkdown: ptr(false)})
	require.NoError(t, err)
	return resp.Messages
}

func ptr[T any](v T) *T { return &v }

// channel makes a channel (private or not) by u, with the other users in it.
func (e *gwEnv) channel(t testing.TB, u chattest.User, name string, private bool, others ...int64) int64 {
	t.Helper()
	ctx := context.Background()
	var ps []chat.Principal
	for _, id := range append([]int64{u.ID}, others...) {
		ps = append(ps, chat.Principal{ID: id})
	}
	_, err := e.Service.Subscribe(ctx, u.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: name}},
		InviteOnly: &private, Principals: &ps})
	require.NoError(t, err)
	r, err := e.Service.GetChannelID(ctx, u.Caller, chat.GetChannelIDRequest{Stream: name})
	require.NoError(t, err)
	return r.StreamID
}

// address asks for the channel's address as u (with sender, when set).
func (e *gwEnv) address(t testing.TB, u chattest.User, channel int64, sender *int64) string {
	t.Helper()
	r, err := e.Service.GetStreamEmailAddress(context.Background(), u.Caller, chat.GetStreamEmailAddressRequest{StreamID: channel, SenderID: sender})
	require.NoError(t, err)
	require.NotEmpty(t, r.Email)
	return r.Email
}
