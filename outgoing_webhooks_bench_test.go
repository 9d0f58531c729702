package chat_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/transport/webhook"
)

// BenchmarkSendWithSlowBot measures the send latency of a channel message
// that mentions an outgoing-webhook bot whose server takes 10 s to answer,
// while the deliverers (RunWebhooks) are busy with it, beside the same
// send without the mention in the same run (the ceiling: a bot must not
// slow a send).
//
//	go test -run XXX -bench SendWithSlowBot -benchtime 200x .
func BenchmarkSendWithSlowBot(b *testing.B) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
			_, _ = w.Write([]byte(`{"response_not_required": true}`))
		}
	}))
	defer slow.Close()
	client := webhook.New(webhook.Options{AllowPrivate: true, Timeout: 15 * time.Second})
	h := chattest.New(b, chattest.WithServiceOptions(chat.WithWebhookDeliverer(webhook.NewDeliverer(client))))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = h.Service.RunWebhooks(ctx) }()
	alice := h.NewUser(b, chat.RoleMember)
	url := slow.URL
	iface := 1
	resp, err := h.Service.CreateBot(ctx, alice.Caller, chat.CreateBotRequest{FullName: "Slow bot", ShortName: "slow",
		BotType: ptr(chat.BotTypeOutgoingWebhook), PayloadURL: &url, InterfaceType: &iface})
	check(b, err)
	_ = resp
	_, err = h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "lab"}}})
	check(b, err)
	id, err := h.Service.GetChannelID(ctx, alice.Caller, chat.GetChannelIDRequest{Stream: "lab"})
	check(b, err)
	sendOne := func(content string) time.Duration {
		start := time.Now()
		_, err := h.Service.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id.StreamID),
			Topic: ptr("t"), Content: content})
		check(b, err)
		return time.Since(start)
	}
	pct := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[int(float64(len(d)-1)*p)].Microseconds()) / 1000
	}
	var with, without []time.Duration
	for b.Loop() {
		with = append(with, sendOne("@**Slow bot** are you there?"))
		without = append(without, sendOne("no bot here"))
	}
	b.ReportMetric(pct(with, 0.5), "ms-p50-with-bot")
	b.ReportMetric(pct(with, 0.99), "ms-p99-with-bot")
	b.ReportMetric(pct(without, 0.5), "ms-p50-without")
	b.ReportMetric(pct(without, 0.99), "ms-p99-without")
}
