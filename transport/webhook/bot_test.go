package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/transport/webhook"
)

const payloadJSON = `{
	"data": "@**Echo** hello",
	"message": {"id": 7, "type": "stream", "sender_id": 3, "sender_email": "iago@example.com",
		"sender_full_name": "Iago", "content": "@**Echo** hello", "rendered_content": "<p>hi</p>",
		"display_recipient": "Verona", "stream_id": 5, "subject": "Foo", "timestamp": 1700000000, "recipient_id": 9},
	"bot_email": "echo-bot@example.com",
	"bot_full_name": "Echo",
	"token": "s3cret",
	"trigger": "mention"
}`

func post(body, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

func TestDecodePayload(t *testing.T) {
	p, err := webhook.DecodePayload(post(payloadJSON, "application/json"), 0)
	require.NoError(t, err)
	assert.Equal(t, "@**Echo** hello", p.Data)
	assert.Equal(t, "echo-bot@example.com", p.BotEmail)
	assert.Equal(t, "Echo", p.BotFullName)
	assert.Equal(t, "s3cret", p.Token)
	assert.Equal(t, webhook.TriggerMention, p.Trigger)
	m, err := p.DecodeMessage()
	require.NoError(t, err)
	assert.Equal(t, webhook.Message{
		ID: 7, Type: "stream", SenderID: 3, SenderEmail: "iago@example.com", SenderFullName: "Iago",
		Content: "@**Echo** hello", RenderedContent: "<p>hi</p>", DisplayRecipient: json.RawMessage(`"Verona"`),
		StreamID: 5, Subject: "Foo", Timestamp: 1700000000, RecipientID: 9,
	}, *m)

	_, err = webhook.DecodePayload(post(payloadJSON, ""), 0)
	assert.NoError(t, err, "no content type is accepted")
	_, err = webhook.DecodePayload(post(payloadJSON, "application/json; charset=utf-8"), 0)
	assert.NoError(t, err)

	tests := []struct {
		name   string
		req    *http.Request
		max    int64
		status int
		msg    string
	}{
		{"GET", httptest.NewRequest(http.MethodGet, "/", nil), 0, 405, "method GET not allowed"},
		{"form body", post("token=x", "application/x-www-form-urlencoded"), 0, 415, "is not JSON"},
		{"empty", post("", "application/json"), 0, 400, "empty body"},
		{"blank", post(" \n", "application/json"), 0, 400, "empty body"},
		{"not JSON", post("{nope", "application/json"), 0, 400, "invalid JSON payload"},
		{"not an object", post("[1]", "application/json"), 0, 400, "invalid JSON payload"},
		{"wrong field type", post(`{"token": 5}`, "application/json"), 0, 400, "invalid JSON payload"},
		{"too large", post(payloadJSON, "application/json"), 64, 413, "body exceeds 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := webhook.DecodePayload(tt.req, tt.max)
			assert.Nil(t, p)
			var pe *webhook.PayloadError
			require.True(t, errors.As(err, &pe), "%v", err)
			assert.Equal(t, tt.status, pe.Status)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestVerifyToken(t *testing.T) {
	p := &webhook.Payload{Token: "s3cret"}
	assert.True(t, webhook.VerifyToken(p, "s3cret"))
	assert.False(t, webhook.VerifyToken(p, "s3cres"))
	assert.False(t, webhook.VerifyToken(p, "s3cret2"))
	assert.False(t, webhook.VerifyToken(p, ""))
	assert.False(t, webhook.VerifyToken(&webhook.Payload{}, ""), "an empty token never matches")
	assert.False(t, webhook.VerifyToken(nil, "s3cret"))
}

func TestWriteReplies(t *testing.T) {
	w := httptest.NewRecorder()
	require.NoError(t, webhook.WriteReply(w, "a <b> & c"))
	assert.Equal(t, 200, w.Code)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.Equal(t, `{"content":"a <b> & c"}`+"\n", w.Body.String())

	w = httptest.NewRecorder()
	require.NoError(t, webhook.WriteNoReply(w))
	assert.Equal(t, 200, w.Code)
	assert.JSONEq(t, `{"response_not_required": true}`, w.Body.String())
}

func TestHandler(t *testing.T) {
	var seen *webhook.Payload
	h := webhook.NewHandler("s3cret", func(ctx context.Context, p *webhook.Payload) (string, error) {
		seen = p
		switch cmd := webhook.StripMention(p.Data, p.BotFullName); cmd {
		case "fail":
			return "", errors.New("database down")
		case "quiet":
			return "  ", nil
		default:
			return "you said " + cmd, nil
		}
	})
	h.Logger = slog.New(slog.DiscardHandler)

	serve := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := serve(post(payloadJSON, "application/json"))
	assert.Equal(t, 200, w.Code)
	assert.JSONEq(t, `{"content": "you said hello"}`, w.Body.String())
	require.NotNil(t, seen)
	assert.Equal(t, "echo-bot@example.com", seen.BotEmail)

	w = serve(post(strings.Replace(payloadJSON, "hello", "quiet", 1), "application/json"))
	assert.Equal(t, 200, w.Code)
	assert.JSONEq(t, `{"response_not_required": true}`, w.Body.String())

	w = serve(post(strings.Replace(payloadJSON, "hello", "fail", 1), "application/json"))
	assert.Equal(t, 500, w.Code)
	assert.JSONEq(t, `{"msg": "internal error"}`, w.Body.String(), "the error is not shown to the server")

	seen = nil
	w = serve(post(strings.Replace(payloadJSON, "s3cret", "guess", 1), "application/json"))
	assert.Equal(t, 401, w.Code)
	assert.JSONEq(t, `{"msg": "invalid token"}`, w.Body.String())
	assert.Nil(t, seen, "not called with a wrong token")

	w = serve(httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, 405, w.Code)
	assert.Equal(t, "POST", w.Header().Get("Allow"))

	h.MaxPayloadBytes = 10
	w = serve(post(payloadJSON, "application/json"))
	assert.Equal(t, 413, w.Code)

	assert.Panics(t, func() {
		webhook.NewHandler("", func(context.Context, *webhook.Payload) (string, error) { return "", nil })
	})
	assert.Panics(t, func() { webhook.NewHandler("t", nil) })
}

// TestHandlerWithClient runs both sides together: the client delivers to
// a Handler.
func TestHandlerWithClient(t *testing.T) {
	srv := httptest.NewServer(webhook.NewHandler("s3cret", func(ctx context.Context, p *webhook.Payload) (string, error) {
		return strings.ToUpper(webhook.StripMention(p.Data, p.BotFullName)), nil
	}))
	defer srv.Close()
	c := webhook.New(webhook.Options{AllowPrivate: true, Logger: slog.New(slog.DiscardHandler)})
	defer c.CloseIdleConnections()
	req := webhook.Request{URL: srv.URL, Interface: webhook.Generic, Payload: webhook.Payload{
		Data: "@**Echo** hello", Message: json.RawMessage(`{}`), BotFullName: "Echo", Token: "s3cret", Trigger: webhook.TriggerMention,
	}}
	o, err := c.Deliver(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, webhook.Reply, o.Kind)
	assert.Equal(t, "HELLO", o.Content)

	req.Payload.Token = "wrong"
	o, err = c.Deliver(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, webhook.Failure, o.Kind)
	assert.Equal(t, "Failure! Third party responded with 401", o.Message)
	assert.Equal(t, "The webhook got a response with status code *401*.\nThe response contains the following payload:\n```\nb'{\"msg\":\"invalid token\"}\\n'\n```", o.OwnerDetail)
}
