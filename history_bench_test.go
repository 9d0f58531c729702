package chat_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/seed"
	"github.com/teamchat/chat/storage"
)

// BenchmarkHistory measures reads over a large history: an organization of
// 1,000 users, channels of 1,000, 100 and 10 subscribers (and more), and
// TEAMCHAT_BENCH_MESSAGES messages (default 200,000; the target is
// measured with 1000000), 10% direct messages:
//
//	TEAMCHAT_BENCH_MESSAGES=1000000 go test -run XXX -bench History -benchtime 2000x -timeout 30m .
//
// It reports the combined feed's newest 100 messages, a search window,
// and a send, with the seeding time.
func BenchmarkHistory(b *testing.B) {
	n := 200_000
	if env := os.Getenv("TEAMCHAT_BENCH_MESSAGES"); env != "" {
		var err error
		if n, err = strconv.Atoi(env); err != nil {
			b.Fatal(err)
		}
	}
	o := seedHistory(b, n)
	ctx := context.Background()
	b.Run("FeedNewest100", func(b *testing.B) {
		for b.Loop() {
			resp, err := o.h.Service.GetMessages(ctx, o.org.Owner, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100)})
			check(b, err)
			if len(resp.Messages) != 100 {
				b.Fatalf("%d messages", len(resp.Messages))
			}
		}
	})
	b.Run("FeedFirstUnread", func(b *testing.B) {
		for b.Loop() {
			_, err := o.h.Service.GetMessages(ctx, o.org.Owner, chat.GetMessagesRequest{Anchor: ptr("first_unread"), NumBefore: ptr(50), NumAfter: ptr(50)})
			check(b, err)
		}
	})
	for _, q := range []string{"lunch", "deploy budget"} {
		b.Run("SearchNewest100/"+q, func(b *testing.B) {
			for b.Loop() {
				_, _, err := o.h.Store.ListMessageWindow(ctx, storage.MessageWindow{RealmID: o.org.RealmID, UserID: o.org.Users[0],
					Scope:  storage.MessageScope{FullChannels: channelIDs(o.org)},
					Filter: storage.MessageFilter{Search: q}, Anchor: o.org.MaxID + 1, Before: 100})
				check(b, err)
			}
		})
	}
	b.Run("SendToLargestChannel", func(b *testing.B) {
		for b.Loop() {
			_, err := o.h.Service.SendMessage(ctx, o.org.Owner, chat.SendMessageRequest{Type: "channel",
				To: chat.ToChannelID(o.org.Channels[0].ID), Topic: ptr("bench"), Content: "hello", ReadBySender: ptr(true)})
			check(b, err)
		}
	})
}

type seededHistory struct {
	h   *chattest.Harness
	org *seed.Org
}

var (
	historyMu   sync.Mutex
	historySeed = map[int]*seededHistory{}
)

func seedHistory(b *testing.B, messages int) *seededHistory {
	historyMu.Lock()
	defer historyMu.Unlock()
	if o := historySeed[messages]; o != nil {
		return o
	}
	h := chattest.New(&keepAlive{B: b})
	start := time.Now()
	org, err := seed.Run(context.Background(), h.Service, h.Store, seed.Config{Users: 1000,
		ChannelSizes: []int{1000, 100, 10, 500, 50, 20, 5, 200}, Messages: messages,
		DirectShare: 0.1, MentionShare: 0.05, ReadShare: 0.9, Seed: 7, Batch: 5000})
	check(b, err)
	if st, ok := h.Store.(interface{ Analyze(context.Context) error }); ok {
		check(b, st.Analyze(context.Background()))
	}
	fmt.Fprintf(os.Stderr, "seeded %d messages (%d direct) in %v\n", org.Messages, org.Direct, time.Since(start).Round(time.Second))
	o := &seededHistory{h: h, org: org}
	historySeed[messages] = o
	return o
}

func channelIDs(org *seed.Org) []int64 {
	out := make([]int64, len(org.Channels))
	for i, c := range org.Channels {
		out[i] = c.ID
	}
	return out
}
