package chat_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
)

// BenchmarkScheduledDelivery measures the delivery of scheduled messages
// (on the store chattest picks: SQLite, or PostgreSQL with
// TEAMCHAT_TEST_STORE=postgres), with
//
//	go test -run XXX -bench ScheduledDelivery .
//
// Its cases:
//   - channel, direct: one round sends b.N due messages (to a channel of
//     20 subscribers; to one user), reported as msgs/s;
//   - idle-round/later=N: a round with nothing due while N messages wait
//     for later, per round (its cost must not grow with N).
func BenchmarkScheduledDelivery(b *testing.B) {
	for _, typ := range []string{"channel", "direct"} {
		b.Run(typ, func(b *testing.B) { benchDue(b, typ) })
	}
	for _, later := range []int{0, 10_000} {
		b.Run(fmt.Sprintf("idle-round/later=%d", later), func(b *testing.B) { benchIdleRound(b, later) })
	}
}

func benchDue(b *testing.B, typ string) {
	ctx := context.Background()
	h := chattest.New(b)
	alice := h.NewUser(b, chat.RoleMember)
	bob := h.NewUser(b, chat.RoleMember)
	subs := []int64{bob.ID}
	for range 18 {
		subs = append(subs, h.NewUser(b, chat.RoleMember).ID)
	}
	_, err := h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "bench"}},
		Principals: principals(alice.ID, subs...)})
	require.NoError(b, err)
	ch, err := h.Service.GetChannelID(ctx, alice.Caller, chat.GetChannelIDRequest{Stream: "bench"})
	require.NoError(b, err)
	due := h.Clock.Now().Add(time.Minute).Unix()
	for i := range b.N {
		req := chat.CreateScheduledMessageRequest{Type: typ, To: chat.ScheduleToChannel(ch.StreamID), Topic: ptr("t"),
			Content: fmt.Sprintf("scheduled **message** %d", i), ScheduledDeliveryTimestamp: due + int64(i%30)}
		if typ == "direct" {
			req.To = chat.ScheduleToUsers(bob.ID)
		}
		_, err := h.Service.CreateScheduledMessage(ctx, alice.Caller, req)
		require.NoError(b, err)
	}
	h.Clock.Advance(2 * time.Minute)
	b.ResetTimer()
	start := time.Now()
	n, err := h.Service.DeliverDueScheduledMessages(ctx)
	elapsed := time.Since(start)
	b.StopTimer()
	require.NoError(b, err)
	require.Equal(b, b.N, n)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "msgs/s")
}

func principals(first int64, rest ...int64) *[]chat.Principal {
	ps := []chat.Principal{{ID: first}}
	for _, id := range rest {
		ps = append(ps, chat.Principal{ID: id})
	}
	return &ps
}

func benchIdleRound(b *testing.B, later int) {
	ctx := context.Background()
	h := chattest.New(b)
	alice := h.NewUser(b, chat.RoleMember)
	bob := h.NewUser(b, chat.RoleMember)
	// Rows straight into the store: what is measured is the round.
	require.NoError(b, h.Store.InTx(ctx, func(tx storage.Store) error {
		for i := range later {
			m := &storage.ScheduledMessage{RealmID: h.RealmID, SenderID: alice.ID, Recipients: fmt.Sprintf("[%d]", bob.ID),
				Content: "later", RenderedContent: "<p>later</p>", ScheduledTimestamp: h.Clock.Now().Add(time.Hour).Unix() + int64(i)}
			if err := tx.CreateScheduledMessage(ctx, m); err != nil {
				return err
			}
		}
		return nil
	}))
	if st, ok := h.Store.(interface{ Analyze(context.Context) error }); ok {
		require.NoError(b, st.Analyze(ctx))
	}
	b.ResetTimer()
	for b.Loop() {
		n, err := h.Service.DeliverDueScheduledMessages(ctx)
		if err != nil || n != 0 {
			b.Fatalf("a round with nothing due: %d, %v", n, err)
		}
	}
}
