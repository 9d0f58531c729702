package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/internal/smtptest"
)

// With -smtp the server mails a missed direct message to its recipient
// through a real SMTP server (here one in the test process), with the
// authentication of -smtp-user.
func TestServerSendsNotificationEmails(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithAuth("teamchat", "mail password"))
	db := filepath.Join(t.TempDir(), "teamchat.db")
	cfg := defaultConfig(db)
	cfg.smtp = smtpConfig{addr: srv.Addr, from: "noreply@teamchat.localhost", user: "teamchat", password: "mail password", tls: "none"}
	addr, out, stop := start(t, cfg)
	defer stop()
	key := regexp.MustCompile(`owner API key:  ([A-Za-z0-9]{32})`).FindStringSubmatch(out.String())
	require.Len(t, key, 2)
	base := "http://" + addr

	// A friend joins, and asks for emails a second after a message.
	var invite bytes.Buffer
	require.NoError(t, printInvite(context.Background(), cfg, &invite))
	join := regexp.MustCompile(`/api/v1/invites/accept -d key=(\S+) `).FindStringSubmatch(invite.String())
	require.Len(t, join, 2)
	joined, status, err := callAs("POST", base, "", "", "/api/v1/invites/accept", url.Values{"key": {join[1]}, "email": {"friend@example.com"},
		"full_name": {"A Friend"}, "password": {"a long password"}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", joined)
	friendKey := joined["api_key"].(string)
	_, status, err = callAs("PATCH", base, "friend@example.com", friendKey, "/api/v1/settings",
		url.Values{"email_notifications_batching_period_seconds": {"1"}})
	require.NoError(t, err)
	require.Equal(t, 200, status)

	body, status, err := post(base, key[1], "/api/v1/messages", url.Values{"type": {"direct"},
		"to": {fmt.Sprintf("[%d]", int64(joined["user_id"].(float64)))}, "content": {"Lunch at **noon**?"}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", body)

	m := srv.Wait(t, 1, 20*time.Second)[0]
	assert.Equal(t, []string{"friend@example.com"}, m.To)
	assert.Equal(t, "noreply@teamchat.localhost", m.From)
	assert.Equal(t, "teamchat", m.User, "authenticated")
	assert.Equal(t, "DMs with Owner", m.Subject)
	assert.Contains(t, m.Header.Get("From"), "Teamchat notifications")
	assert.Contains(t, m.Text, "> Lunch at **noon**?")
	assert.Contains(t, m.Text, base+"/#narrow/dm/")
	assert.Contains(t, m.HTML, "<strong>noon</strong>")
	assert.True(t, strings.HasSuffix(m.Text, "Manage email preferences:\n\n"+base+"/#settings/notifications\n"), m.Text)
}

func TestServerSMTPFlags(t *testing.T) {
	for _, c := range []smtpConfig{
		{addr: "localhost", from: "a@example.com"},
		{addr: "localhost:25", from: "not an address"},
		{addr: "localhost:25", from: "a@example.com", tls: "sometimes"},
	} {
		cfg := defaultConfig(filepath.Join(t.TempDir(), "x.db"))
		cfg.smtp = c
		require.ErrorContains(t, run(context.Background(), cfg, io.Discard, io.Discard, nil), "-smtp: ", "%+v", c)
	}
}
