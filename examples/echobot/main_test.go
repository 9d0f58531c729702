package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/transport/webhook"
)

func payload(token, data, trigger string) webhook.Payload {
	msg, _ := json.Marshal(map[string]any{"id": 42, "type": "stream", "content": data, "sender_full_name": "Iago"})
	return webhook.Payload{
		Data: data, Message: msg, BotEmail: "echo-bot@example.com", BotFullName: "Echo Bot",
		Token: token, Trigger: trigger,
	}
}

// send posts p to the bot the way the server does, returning status and body.
func send(t *testing.T, url string, p webhook.Payload) (int, string) {
	t.Helper()
	b, err := json.Marshal(p)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestEchoBot(t *testing.T) {
	srv := httptest.NewServer(newHandler("tok3n"))
	defer srv.Close()

	tests := []struct {
		name, token, data, trigger string
		status                     int
		body                       string
	}{
		{"mention", "tok3n", "@**Echo Bot** hello there", webhook.TriggerMention, 200, `{"content": "hello there"}`},
		{"mention in the middle", "tok3n", "hey @**Echo Bot** what's up", webhook.TriggerMention, 200, `{"content": "hey what's up"}`},
		{"direct message", "tok3n", "just between us", webhook.TriggerDirectMessage, 200, `{"content": "just between us"}`},
		{"mention alone", "tok3n", "@**Echo Bot**", webhook.TriggerMention, 200, `{"response_not_required": true}`},
		{"invalid token", "guess", "@**Echo Bot** hello", webhook.TriggerMention, 401, `{"msg": "invalid token"}`},
		{"empty token", "", "@**Echo Bot** hello", webhook.TriggerMention, 401, `{"msg": "invalid token"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := send(t, srv.URL, payload(tt.token, tt.data, tt.trigger))
			assert.Equal(t, tt.status, status)
			assert.JSONEq(t, tt.body, body)
		})
	}

	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// TestEchoBotWithClient delivers to the bot with the server's client.
func TestEchoBotWithClient(t *testing.T) {
	srv := httptest.NewServer(newHandler("tok3n"))
	defer srv.Close()
	c := webhook.New(webhook.Options{AllowPrivate: true, Logger: slog.New(slog.DiscardHandler)})
	defer c.CloseIdleConnections()

	o, err := c.Deliver(context.Background(), webhook.Request{URL: srv.URL, Interface: webhook.Generic,
		Payload: payload("tok3n", "@**Echo Bot** ping", webhook.TriggerMention)})
	require.NoError(t, err)
	assert.Equal(t, webhook.Reply, o.Kind)
	assert.Equal(t, "ping", o.Content)

	o, err = c.Deliver(context.Background(), webhook.Request{URL: srv.URL, Interface: webhook.Generic,
		Payload: payload("wrong", "@**Echo Bot** ping", webhook.TriggerMention)})
	require.NoError(t, err)
	assert.Equal(t, webhook.Failure, o.Kind)
	assert.Equal(t, "Failure! Third party responded with 401", o.Message)
}

func TestRunStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", "tok3n") }()
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
}

func TestRunReportsListenError(t *testing.T) {
	err := run(context.Background(), "127.0.0.1:-1", "tok3n")
	assert.Error(t, err)
}
