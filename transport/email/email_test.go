package email_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/internal/smtptest"
	"github.com/teamchat/chat/transport/email"
)

func notification() chat.EmailNotification {
	return chat.EmailNotification{Key: "0123abcd", To: "bob@example.com", ToName: "Bob Böhm", FromName: "Acme notifications",
		Subject: "#général > lunch ✔", Text: "> hello\n\nLunch?\n", HTML: "<p>hello <b>Ann</b></p>"}
}

func TestSendWithoutAuth(t *testing.T) {
	srv := smtptest.Start(t)
	s, err := email.New(email.Options{Addr: srv.Addr, From: "noreply@chat.example.com"})
	require.NoError(t, err)
	require.NoError(t, s.NotifyEmail(context.Background(), notification()))
	got := srv.Wait(t, 1, 5*time.Second)[0]
	assert.Equal(t, "noreply@chat.example.com", got.From)
	assert.Equal(t, []string{"bob@example.com"}, got.To)
	assert.Equal(t, "#général > lunch ✔", got.Subject, "a non-ASCII subject survives the encoding")
	assert.Equal(t, "> hello\n\nLunch?\n", got.Text)
	assert.Equal(t, "<p>hello <b>Ann</b></p>", got.HTML)
	assert.Contains(t, got.Header.Get("From"), "Acme notifications")
	assert.Contains(t, got.Header.Get("To"), "bob@example.com")
	assert.Equal(t, "<0123abcd@chat.example.com>", got.Header.Get("Message-Id"), "the key makes the Message-ID")
	assert.Equal(t, "auto-generated", got.Header.Get("Auto-Submitted"))
	assert.Empty(t, got.User)
}

func TestSendWithAuth(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithAuth("mailer", "s3cret"))
	s, err := email.New(email.Options{Addr: srv.Addr, From: "noreply@chat.example.com", Username: "mailer", Password: "s3cret", TLS: email.TLSNone})
	require.NoError(t, err)
	require.NoError(t, s.NotifyEmail(context.Background(), notification()))
	assert.Equal(t, "mailer", srv.Wait(t, 1, 5*time.Second)[0].User)

	bad, err := email.New(email.Options{Addr: srv.Addr, From: "noreply@chat.example.com", Username: "mailer", Password: "wrong", TLS: email.TLSNone})
	require.NoError(t, err)
	assert.Error(t, bad.NotifyEmail(context.Background(), notification()))
	none, err := email.New(email.Options{Addr: srv.Addr, From: "noreply@chat.example.com"})
	require.NoError(t, err)
	assert.Error(t, none.NotifyEmail(context.Background(), notification()), "the server wants authentication")
	assert.Len(t, srv.Messages(), 1)
}

func TestSendFailures(t *testing.T) {
	srv := smtptest.Start(t)
	s, err := email.New(email.Options{Addr: srv.Addr, From: "noreply@chat.example.com"})
	require.NoError(t, err)
	srv.FailNext(1)
	assert.Error(t, s.NotifyEmail(context.Background(), notification()), "a refusal is an error")
	require.NoError(t, s.NotifyEmail(context.Background(), notification()))
	assert.Len(t, srv.Messages(), 1)

	bad := notification()
	bad.To = "not an address"
	assert.Error(t, s.NotifyEmail(context.Background(), bad))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.Error(t, s.NotifyEmail(ctx, notification()), "an ended context sends nothing")
}

func TestNewChecksOptions(t *testing.T) {
	for _, o := range []email.Options{
		{Addr: "localhost", From: "a@example.com"},
		{Addr: "localhost:0", From: "a@example.com"},
		{Addr: "localhost:25"},
		{Addr: "localhost:25", From: "not an address"},
		{Addr: "localhost:25", From: "a@example.com", TLS: "sometimes"},
	} {
		_, err := email.New(o)
		assert.Error(t, err, "%+v", o)
	}
	_, err := email.New(email.Options{Addr: "localhost:25", From: "a@example.com", TLS: email.TLSImplicit})
	assert.NoError(t, err)
}
