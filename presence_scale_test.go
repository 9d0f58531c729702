package chat_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
)

// seedPresenceOrg adds n members to h's organization through the store,
// each with a presence row connected and active at connected (0: none).
func seedPresenceOrg(t testing.TB, h *chattest.Harness, n int, connected int64) []chat.Caller {
	t.Helper()
	ctx := context.Background()
	var callers []chat.Caller
	for start := 0; start < n; start += 1000 {
		err := h.Store.InTx(ctx, func(tx storage.Store) error {
			var rows []storage.Presence
			for i := start; i < min(n, start+1000); i++ {
				u := &storage.User{RealmID: h.RealmID, Email: fmt.Sprintf("p%d@example.com", i), FullName: fmt.Sprintf("P %d", i),
					Role: chat.RoleMember, IsActive: true, APIKey: fmt.Sprintf("p%031d", i), AvatarSource: "G", AvatarVersion: 1,
					DateJoined: chattest.Start.Unix()}
				if err := tx.CreateUser(ctx, u); err != nil {
					return err
				}
				callers = append(callers, chat.Caller{RealmID: h.RealmID, UserID: u.ID})
				if connected != 0 {
					rows = append(rows, storage.Presence{UserID: u.ID, LastActive: &connected, LastConnected: &connected})
				}
			}
			return tx.SavePresences(ctx, h.RealmID, rows)
		})
		require.NoError(t, err)
	}
	return callers
}

// presenceUsers is the organization size of the presence scale test
// (TEAMCHAT_PRESENCE_USERS overrides it).
func presenceUsers(t testing.TB) int {
	if env := os.Getenv("TEAMCHAT_PRESENCE_USERS"); env != "" {
		n, err := strconv.Atoi(env)
		require.NoError(t, err)
		return n
	}
	return 10000
}

// 10,000 users whose clients report every 60 s (spread over the minute,
// in simulated time) while the server flushes every 15 s: each user's row
// is written at most once per minute, the writes go in batches, and
// nothing is announced (they were online all along).
func TestPresencePingsCostOneWritePerUserPerInterval(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	n := presenceUsers(t)
	start := h.Clock.Now().Unix()
	callers := seedPresenceOrg(t, h, n, start-30)
	st, ok := h.Store.(interface{ OnQuery(func(string)) })
	require.True(t, ok)
	var statements, presenceWrites atomic.Int64
	st.OnQuery(func(q string) {
		statements.Add(1)
		if strings.HasPrefix(q, `INSERT INTO "user_presences"`) {
			presenceWrites.Add(1)
		}
	})
	sequence := func() int64 {
		rows, err := h.Store.ListPresences(ctx, h.RealmID, -1, 0)
		require.NoError(t, err)
		var top int64
		for _, r := range rows {
			top = max(top, r.LastUpdateID)
		}
		return top
	}
	h.Events.Take()
	seq := sequence()
	const minutes = 3
	for minute := range minutes {
		for second := range 60 {
			for i := second; i < n; i += 60 {
				_, err := h.Service.UpdatePresence(ctx, callers[i], chat.UpdatePresenceRequest{Status: "active", PingOnly: ptr(true)})
				require.NoError(t, err)
			}
			h.Clock.Advance(time.Second)
			if (second+1)%15 == 0 {
				h.Service.FlushPresence(ctx)
			}
		}
		now := sequence()
		assert.LessOrEqual(t, now-seq, int64(n), "minute %d: at most one row write per user", minute)
		seq = now
	}
	rows, err := h.Store.ListPresences(ctx, h.RealmID, -1, 0)
	require.NoError(t, err)
	require.Len(t, rows, n)
	for _, r := range rows {
		require.GreaterOrEqual(t, *r.LastActive, start+60, "every user's report reached the database")
	}
	flushes := int64(minutes * 4)
	assert.LessOrEqual(t, presenceWrites.Load(), flushes*int64((n+999)/1000+1), "writes are batched")
	t.Logf("%d users, %d minutes: %d row writes in %d INSERT statements; %d statements in all (%.2f per ping)",
		n, minutes, sequence(), presenceWrites.Load(), statements.Load(), float64(statements.Load())/float64(n*minutes))
	for _, e := range h.Events.Take() {
		assert.NotEqual(t, "presence", e.Body.EventType(), "nobody came online")
	}
}

// BenchmarkPresence measures, in an organization of 10,000 users who all
// have presence (TEAMCHAT_PRESENCE_USERS overrides the size), a ping of an
// online user that moves their times (Ping), a ping of a user coming back
// online, written at once (PingComingOnline), the flush of 10,000 pings
// (Flush, per row), GET /realm/presence (RealmPresence, legacy form of
// everyone), a first modern fetch (ModernFirstFetch) and an incremental
// one with one change (ModernIncremental); GetOwnUser runs alongside as
// the floor every request pays.
//
//	go test -run XXX -bench Presence -benchtime 2s .
func BenchmarkPresence(b *testing.B) {
	ctx := context.Background()
	h := chattest.New(b)
	n := presenceUsers(b)
	start := h.Clock.Now().Unix()
	callers := seedPresenceOrg(b, h, n, start-100)
	if st, ok := h.Store.(interface{ Analyze(context.Context) error }); ok {
		check(b, st.Analyze(ctx))
	}
	me := callers[0]
	b.Run("GetOwnUser", func(b *testing.B) {
		for b.Loop() {
			_, err := h.Service.GetOwnUser(ctx, me)
			check(b, err)
		}
	})
	ping := func(b *testing.B, c chat.Caller, status string) {
		_, err := h.Service.UpdatePresence(ctx, c, chat.UpdatePresenceRequest{Status: status, PingOnly: ptr(true)})
		check(b, err)
	}
	// Every user online: their pings move their times in memory.
	for _, c := range callers {
		ping(b, c, "active")
	}
	h.Service.FlushPresence(ctx)
	// Round the users across the runs of b.Loop, a minute a round: every
	// user stays online, and every ping moves its user's times.
	k := 0
	b.Run("Ping", func(b *testing.B) {
		for b.Loop() {
			if k%n == 0 {
				h.Clock.Advance(time.Minute)
			}
			ping(b, callers[k%n], "active")
			k++
		}
		b.StopTimer()
		h.Service.FlushPresence(ctx)
	})
	b.Run("PingComingOnline", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if i%n == 0 {
				h.Clock.Advance(10 * time.Minute) // everyone was away: a ping is written at once
			}
			ping(b, callers[i%n], "active")
			i++
		}
	})
	b.Run("Flush", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			h.Clock.Advance(time.Minute)
			for _, c := range callers {
				_, err := h.Service.UpdatePresence(ctx, c, chat.UpdatePresenceRequest{Status: "idle", PingOnly: ptr(true)})
				check(b, err)
			}
			b.StartTimer()
			h.Service.FlushPresence(ctx)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
	})
	b.Run("RealmPresence", func(b *testing.B) {
		for b.Loop() {
			resp, err := h.Service.GetRealmPresence(ctx, me)
			check(b, err)
			if len(resp.Presences) != n {
				b.Fatalf("%d presences, want %d", len(resp.Presences), n)
			}
		}
	})
	b.Run("ModernFirstFetch", func(b *testing.B) {
		for b.Loop() {
			_, err := h.Service.UpdatePresence(ctx, me, chat.UpdatePresenceRequest{Status: "active", LastUpdateID: ptr[int64](-1)})
			check(b, err)
		}
	})
	b.Run("ModernIncremental", func(b *testing.B) {
		first, err := h.Service.UpdatePresence(ctx, me, chat.UpdatePresenceRequest{Status: "active", LastUpdateID: ptr[int64](-1)})
		check(b, err)
		last := *first.PresenceLastUpdateID
		for b.Loop() {
			b.StopTimer()
			h.Clock.Advance(time.Minute)
			_, err := h.Service.UpdatePresence(ctx, callers[1], chat.UpdatePresenceRequest{Status: "active", PingOnly: ptr(true)})
			check(b, err)
			h.Service.FlushPresence(ctx)
			b.StartTimer()
			resp, err := h.Service.UpdatePresence(ctx, me, chat.UpdatePresenceRequest{Status: "idle", LastUpdateID: &last})
			check(b, err)
			last = *resp.PresenceLastUpdateID
		}
	})
}
