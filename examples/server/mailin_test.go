package main

import (
	"context"
	"fmt"
	"io"
	"net/smtp"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With -email-gateway the server takes mail: a channel's address from the
// API, a mail to it through a real SMTP client, the message in the
// channel. On SQLite and on PostgreSQL.
func TestServerEmailGateway(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testServerEmailGateway(t, filepath.Join(t.TempDir(), "teamchat.db")) })
	t.Run("postgres", func(t *testing.T) { testServerEmailGateway(t, postgresTestDB(t)) })
}

func testServerEmailGateway(t *testing.T, db string) {
	cfg := defaultConfig(db)
	ready := make(chan string, 1)
	cfg.gateway = gatewayConfig{addr: "127.0.0.1:0", domain: "mail.example.com", ready: ready}
	addr, out, stop := start(t, cfg)
	defer stop()
	var smtpAddr string
	select {
	case smtpAddr = <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway did not listen")
	}
	key := regexp.MustCompile(`owner API key:  ([A-Za-z0-9]{32})`).FindStringSubmatch(out.String())
	require.Len(t, key, 2)
	base := "http://" + addr
	id, status, err := get(base, key[1], "/api/v1/get_stream_id", url.Values{"stream": {"general"}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", id)
	r, status, err := get(base, key[1], fmt.Sprintf("/api/v1/streams/%v/email_address", id["stream_id"]), nil)
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", r)
	to := r["email"].(string)
	assert.Regexp(t, `^general\.[0-9a-f]{32}\.show-sender@mail\.example\.com$`, to)

	mail := "From: Ada <ada@example.org>\r\nTo: " + to + "\r\nSubject: Hello by mail\r\nMessage-ID: <m1@example.org>\r\n\r\nPosted by mail.\r\n"
	require.NoError(t, smtp.SendMail(smtpAddr, nil, "ada@example.org", []string{to}, []byte(mail)))
	err = smtp.SendMail(smtpAddr, nil, "ada@example.org", []string{"nobody@mail.example.com"}, []byte(mail))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "550")
	msgs, status, err := get(base, key[1], "/api/v1/messages", url.Values{"anchor": {"newest"}, "num_before": {"1"}, "num_after": {"0"},
		"narrow": {`[{"operator": "channel", "operand": "general"}]`}, "apply_markdown": {"false"}})
	require.NoError(t, err)
	require.Equal(t, 200, status)
	list := msgs["messages"].([]any)
	require.Len(t, list, 1)
	m := list[0].(map[string]any)
	assert.Equal(t, "Email Gateway", m["sender_full_name"])
	assert.Equal(t, "Hello by mail", m["subject"])
	assert.Equal(t, "From: Ada <ada@example.org>\nPosted by mail.", m["content"])
}

// The gateway's flags go together.
func TestServerEmailGatewayFlags(t *testing.T) {
	for _, g := range []gatewayConfig{{domain: "mail.example.com"}, {addr: "127.0.0.1:0"}} {
		cfg := defaultConfig(filepath.Join(t.TempDir(), "teamchat.db"))
		cfg.gateway = g
		err := run(context.Background(), cfg, io.Discard, io.Discard, nil)
		require.Error(t, err)
		assert.True(t, strings.Contains(err.Error(), "-email-gateway"), err.Error())
	}
}
