package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/seed"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// BenchmarkRegister measures POST /register with the default event types
// (every event type's initial state) in a realistic organization: 1,000
// users, 100 channels of 20 to 500 subscribers (sizes drawn once,
// seeded), 200,000 messages (10% direct, 5% of the channel messages
// mentioning a subscriber, every subscriber having read the oldest 90% of
// each channel), and a reader subscribed to 30 of the channels who has
// read all but their newest 1,000 messages:
//
//	go test -run XXX -bench 'BenchmarkRegister$' -benchtime 200x -timeout 30m .
//
// "whole" goes through the REST handler without a network, one request at
// a time, and prints p50 and p99 beside the 50 ms target; then each part
// of the state alone (the Service's Register with fetch_event_types of
// that one type, its answer encoded as the handler does), slowest first,
// to name where the time goes.
//
// TEAMCHAT_BENCH_CPUPROFILE writes a CPU profile of the whole's timed
// requests alone (go tool pprof -top -cum FILE); TEAMCHAT_BENCH_REGISTER_DB
// keeps the organization in that database for later runs (see benchOrg);
// TEAMCHAT_TEST_STORE=postgres runs it on PostgreSQL.
func BenchmarkRegister(b *testing.B) {
	const readerUnread = 1000
	svc, st, realmID := benchOrg(b, "TEAMCHAT_BENCH_REGISTER_DB", "Register benchmark: 200000 messages", func(svc *chat.Service, st storage.Store) *seed.Org {
		rng := rand.New(rand.NewPCG(12, 34))
		sizes := make([]int, 100)
		for i := range sizes {
			sizes[i] = 20 + rng.IntN(481)
		}
		org, err := seed.Run(context.Background(), svc, st, seed.Config{Users: 1000, ChannelSizes: sizes, Messages: 200_000,
			DirectShare: 0.1, MentionShare: 0.05, ReadShare: 0.9, Seed: 12, Batch: 5000,
			Readers: []seed.Reader{{Channels: 30, Unread: readerUnread}}})
		check(b, err)
		return org
	})
	ctx := context.Background()
	handler := rest.NewHandler(svc, rest.WithRateLimit(0, 0), rest.WithRealm(realmID))
	email, key := seed.ReaderCredentials(0)
	reader, err := st.GetUserByEmail(ctx, realmID, email)
	check(b, err)
	b.Run("whole", func(b *testing.B) {
		var body []byte
		register := func() time.Duration {
			req := httptest.NewRequest("POST", "http://seed.example.com/api/v1/register", nil)
			req.SetBasicAuth(email, key)
			w := httptest.NewRecorder()
			t0 := time.Now()
			handler.ServeHTTP(w, req)
			d := time.Since(t0)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %.300s", w.Code, w.Body)
			}
			body = w.Body.Bytes()
			return d
		}
		register() // warm the caches, as a running server's are
		if path := os.Getenv("TEAMCHAT_BENCH_CPUPROFILE"); path != "" {
			f, err := os.Create(path)
			check(b, err)
			check(b, pprof.StartCPUProfile(f))
			defer func() {
				pprof.StopCPUProfile()
				check(b, f.Close())
			}()
		}
		all := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			all = append(all, register())
		}
		b.StopTimer()
		var resp struct {
			UnreadMsgs    chat.UnreadMessages `json:"unread_msgs"`
			Subscriptions []json.RawMessage   `json:"subscriptions"`
			RealmUsers    []json.RawMessage   `json:"realm_users"`
			Streams       []json.RawMessage   `json:"streams"`
		}
		check(b, json.Unmarshal(body, &resp))
		unread := countUnreadIDs(&resp.UnreadMsgs)
		if unread != readerUnread || len(resp.Subscriptions) != 30 || len(resp.RealmUsers) < 1000 {
			b.Fatalf("%d unread (want %d), %d subscriptions (want 30), %d users", unread, readerUnread, len(resp.Subscriptions), len(resp.RealmUsers))
		}
		p50, p99 := unreadsPercentiles(all)
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p99, "p99-ms")
		b.ReportMetric(float64(len(body)), "bytes")
		printUnreadsTarget(b, "register, every state", all, fmt.Sprintf("%d bytes: %d users, %d channels, %d subscriptions, %d unread in %d topics",
			len(body), len(resp.RealmUsers), len(resp.Streams), len(resp.Subscriptions), unread, len(resp.UnreadMsgs.Streams)))
	})
	// Each part alone, slowest first in the printed table.
	caller := chat.Caller{RealmID: realmID, UserID: reader.ID}
	registerOnly := func(types []string) {
		resp, err := svc.Register(ctx, caller, chat.RegisterRequest{FetchEventTypes: &types})
		check(b, err)
		_, err = rest.EncodeSuccess(resp, nil)
		check(b, err)
		_, err = svc.DeleteEvents(ctx, caller, chat.DeleteEventsRequest{QueueID: &resp.QueueID})
		check(b, err)
	}
	type part struct {
		name     string
		p50, p99 float64
	}
	parts := map[string]part{} // each sub-benchmark's last (its b.N) run
	for _, types := range [][]string{{"message"}, {"message", "update_message_flags"}, {"realm_user"}, {"subscription"},
		{"stream"}, {"realm"}, {"realm_user_groups"}, {"user_settings"}, {"user_topic"}, {"drafts"}, {"scheduled_messages"},
		{"custom_profile_fields"}, {"realm_emoji"}, {"realm_bot"}, {"alert_words"}, {"user_status"}, {"muted_users"},
		{"presence"}, {"starred_messages"}, {"recent_private_conversations"}, {"default_streams"}, {"realm_linkifiers"}} {
		name := types[len(types)-1]
		b.Run(name, func(b *testing.B) {
			all := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				registerOnly(types)
				all = append(all, time.Since(t0))
			}
			b.StopTimer()
			p50, p99 := unreadsPercentiles(all)
			b.ReportMetric(p50, "p50-ms")
			b.ReportMetric(p99, "p99-ms")
			parts[name] = part{name, p50, p99}
		})
	}
	sorted := slices.SortedFunc(maps.Values(parts), func(a, b part) int { return int((b.p50 - a.p50) * 1000) })
	for _, p := range sorted {
		fmt.Fprintf(os.Stderr, "  register with only %-30s p50 %6.2f ms  p99 %6.2f ms\n", p.name+":", p.p50, p.p99)
	}
}

// benchOrg is the organization of a benchmark and a Service over it:
// seeded by seedFn into a new temporary store (SQLite, or PostgreSQL with
// TEAMCHAT_TEST_STORE=postgres), or, when the environment variable env
// names a database (a SQLite file or a postgres:// DSN), into it on the
// first run, named marker once complete, and reused by later runs (so
// that two builds can be measured on the same data). Its planner
// statistics are refreshed after seeding.
func benchOrg(b *testing.B, env, marker string, seedFn func(*chat.Service, storage.Store) *seed.Org) (*chat.Service, storage.Store, int64) {
	ctx := context.Background()
	var svc *chat.Service
	var st storage.Store
	path := os.Getenv(env)
	if path == "" {
		h := chattest.New(&keepAlive{B: b}) // outlives the benchmark
		svc, st = h.Service, h.Store
	} else {
		bs, err := bunstore.Open(ctx, path)
		check(b, err)
		svc, st = chat.New(bs), bs
		realms, err := bs.ListRealms(ctx)
		check(b, err)
		for _, r := range realms {
			if r.Name != marker {
				b.Fatalf("%s holds another organization (%q): give an empty database", env, r.Name)
			}
			fmt.Fprintf(os.Stderr, "reusing %q in %s\n", marker, env)
			return svc, st, r.ID
		}
	}
	start := time.Now()
	org := seedFn(svc, st)
	if a, ok := st.(interface{ Analyze(context.Context) error }); ok {
		check(b, a.Analyze(ctx))
	}
	realm, err := st.GetRealm(ctx, org.RealmID)
	check(b, err)
	realm.Name = marker
	check(b, st.UpdateRealm(ctx, realm, "name"))
	fmt.Fprintf(os.Stderr, "seeded %d messages (%d direct) in %d channels in %v\n",
		org.Messages, org.Direct, len(org.Channels), time.Since(start).Round(time.Second))
	return svc, st, org.RealmID
}
