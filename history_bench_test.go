package chat_test

import (
	"context"
	"fmt"
	"os"
	"slices"
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
// It reports the combined feed's newest 100 messages, a channel's newest
// 100 from 4 concurrent readers (the target: at least 1,500
// requests/s with a p99 of at most 10 ms), searches through the Service
// (target: p99 at most 50 ms for one and two words), a search window of
// the store alone, and a send, with the seeding time. Latency percentiles
// are reported as p50-ms and p99-ms; the targets are printed beside them.
func BenchmarkHistory(b *testing.B) {
	n := benchMessages(b)
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
	channelNarrow := ptr(fmt.Sprintf(`[{"operator": "channel", "operand": %d}]`, o.org.Channels[0].ID))
	for _, clients := range []int{1, 4} {
		b.Run(fmt.Sprintf("ChannelNewest100/clients=%d", clients), func(b *testing.B) {
			fmt.Fprintf(os.Stderr, "ChannelNewest100/clients=%d target (4 clients): >= 1500 req/s, p99 <= 10 ms\n", clients)
			latencies(b, clients, func() {
				resp, err := o.h.Service.GetMessages(ctx, o.org.Owner, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100),
					Narrow: channelNarrow})
				check(b, err)
				if len(resp.Messages) != 100 {
					b.Fatalf("%d messages", len(resp.Messages))
				}
			})
		})
	}
	for _, q := range []string{"lunch", "deploy budget"} {
		b.Run("Search/"+q, func(b *testing.B) {
			fmt.Fprintf(os.Stderr, "Search/%s target: p99 <= 50 ms\n", q)
			narrow := ptr(fmt.Sprintf(`[{"operator": "search", "operand": %q}]`, q))
			latencies(b, 1, func() {
				_, err := o.h.Service.GetMessages(ctx, o.org.Owner, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100),
					Narrow: narrow})
				check(b, err)
			})
		})
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

// latencies runs fn b.N times from the given number of goroutines and
// reports requests per second and the p50 and p99 latencies.
func latencies(b *testing.B, workers int, fn func()) {
	b.Helper()
	var mu sync.Mutex
	var all []time.Duration
	next := make(chan struct{})
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for range next {
				t0 := time.Now()
				fn()
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	for range b.N {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(all)
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

type seededHistory struct {
	h   *chattest.Harness
	org *seed.Org
}

var (
	historyMu   sync.Mutex
	historySeed = map[int]*seededHistory{}
)

// benchMessages is the history size of the benchmarks:
// TEAMCHAT_BENCH_MESSAGES, 200,000 by default.
func benchMessages(b *testing.B) int {
	n := 200_000
	if env := os.Getenv("TEAMCHAT_BENCH_MESSAGES"); env != "" {
		var err error
		if n, err = strconv.Atoi(env); err != nil {
			b.Fatal(err)
		}
	}
	return n
}

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
