package chat_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

// sharedDatabase opens Stores on one database, each call a new one: a
// SQLite file, or a PostgreSQL schema (skipped without a DSN, as the
// PostgreSQL tests are).
func sharedDatabase(t *testing.T, dialect string) func() *bunstore.Store {
	t.Helper()
	var open func() (*bunstore.Store, error)
	if dialect == bunstore.DialectSQLite {
		path := filepath.Join(t.TempDir(), "teamchat.db")
		open = func() (*bunstore.Store, error) { return bunstore.OpenSQLite(context.Background(), path) }
	} else {
		dsn, schema := bunstore.NewTestPostgresSchema(t)
		open = func() (*bunstore.Store, error) {
			return bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
		}
	}
	return func() *bunstore.Store {
		st, err := open()
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
}

// contentsIn counts the messages of the channel by content, as a reader
// of it fetches them through svc.
func contentsIn(t *testing.T, svc *chat.Service, as chattest.User, channel int64) map[string]int {
	t.Helper()
	narrow := fmt.Sprintf(`[{"operator":"channel","operand":%d}]`, channel)
	resp, err := svc.GetMessages(context.Background(), as.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"),
		NumBefore: ptr(5000), NumAfter: ptr(0), Narrow: &narrow, ApplyMarkdown: ptr(false)})
	require.NoError(t, err)
	out := map[string]int{}
	for _, m := range resp.Messages {
		out[m.Content]++
	}
	return out
}

var dialects = []string{bunstore.DialectSQLite, bunstore.DialectPostgres}

// A message due while no server runs is sent once by the next Service on
// the same database, and never again by a later one.
func TestScheduledDeliveryAcrossRestart(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			open := sharedDatabase(t, dialect)
			h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return open() }))
			alice := h.NewUser(t, chat.RoleMember)
			ch := newChannelBy(t, h, alice, "plans", false)
			id := schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch),
				Topic: ptr("t"), Content: "after the restart", ScheduledDeliveryTimestamp: in(h, time.Minute)})
			require.NoError(t, h.Service.Close())

			h.Clock.Advance(2 * time.Minute)
			for round, want := range []int{1, 0} {
				svc := chat.New(open(), chat.WithClock(h.Clock.Now))
				n, err := svc.DeliverDueScheduledMessages(ctx)
				require.NoError(t, err)
				assert.Equal(t, want, n, "server %d", round+2)
				assert.Equal(t, map[string]int{"after the restart": 1}, contentsIn(t, svc, alice, ch))
				list, err := svc.GetScheduledMessages(ctx, alice.Caller)
				require.NoError(t, err)
				assert.Empty(t, list.ScheduledMessages)
				require.NoError(t, svc.Close())
			}
			st := open()
			rec, err := st.GetScheduledMessage(ctx, h.RealmID, alice.ID, id)
			require.NoError(t, err)
			assert.True(t, rec.Delivered)
			m, err := st.GetMessage(ctx, h.RealmID, *rec.DeliveredMessageID)
			require.NoError(t, err)
			assert.Equal(t, "after the restart", m.Content, "the delivered message is the one recorded")
		})
	}
}

// A delivery whose transaction is cut off after its claim (the context
// ends before the commit, as when a server stops mid-write) leaves no
// message and the scheduled message pending; the next round sends it,
// once.
func TestScheduledClaimRolledBackIsRetried(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			open := sharedDatabase(t, dialect)
			st := open()
			h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return st }))
			alice := h.NewUser(t, chat.RoleMember)
			ch := newChannelBy(t, h, alice, "plans", false)
			schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch),
				Topic: ptr("t"), Content: "survives", ScheduledDeliveryTimestamp: in(h, time.Minute)})
			h.Clock.Advance(2 * time.Minute)

			ctx, cut := context.WithCancel(context.Background())
			var mu sync.Mutex
			claimed := false
			st.OnQuery(func(q string) {
				if strings.Contains(q, "SET delivered = TRUE") {
					mu.Lock()
					claimed = true
					mu.Unlock()
					cut()
				}
			})
			n, err := h.Service.DeliverDueScheduledMessages(ctx)
			require.Error(t, err)
			assert.Zero(t, n)
			mu.Lock()
			assert.True(t, claimed, "the claim ran before the cut")
			mu.Unlock()
			assert.Empty(t, contentsIn(t, h.Service, alice, ch), "the message rolled back with the claim")
			list := listScheduled(t, h, alice)
			require.Len(t, list, 1)
			assert.False(t, list[0].Failed, "still pending")

			assert.Equal(t, 1, deliverDue(t, h))
			assert.Zero(t, deliverDue(t, h))
			assert.Equal(t, map[string]int{"survives": 1}, contentsIn(t, h.Service, alice, ch))
		})
	}
}

// Two Services on one database deliver the same due messages at the same
// time, twice each: every message is sent exactly once (counted in the
// database), and every scheduled message records its own.
func TestScheduledTwoServersDeliverOnce(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			open := sharedDatabase(t, dialect)
			st1 := open()
			h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return st1 }))
			other := chat.New(open(), chat.WithClock(h.Clock.Now))
			t.Cleanup(func() { _ = other.Close() })
			alice := h.NewUser(t, chat.RoleMember)
			bob := h.NewUser(t, chat.RoleMember)
			ch := newChannelBy(t, h, alice, "busy", false)
			subscribe(t, h, alice, "busy", bob.ID)
			const n = 60
			base := in(h, time.Minute)
			want := map[string]int{}
			var dms []string
			for i := range n {
				from, req := alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch), Topic: ptr("t"),
					Content: fmt.Sprint("message ", i), ScheduledDeliveryTimestamp: base + int64(i%7)}
				switch i % 3 {
				case 1:
					from = bob
				case 2:
					req = chat.CreateScheduledMessageRequest{Type: "direct", To: chat.ScheduleToUsers(bob.ID), Content: fmt.Sprint("dm ", i),
						ScheduledDeliveryTimestamp: base + int64(i%5)}
					dms = append(dms, req.Content)
				}
				if req.Type == "channel" {
					want[req.Content] = 1
				}
				schedule(t, h, from, req)
			}
			h.Clock.Advance(2 * time.Minute)

			sent := deliverAtOnce(t, (*chat.Service).DeliverDueScheduledMessages, h.Service, other)
			assert.Equal(t, n, sent[0]+sent[1]+sent[2]+sent[3], "sent once in all: %v", sent)
			t.Logf("%s: sent by each call: %v", dialect, sent)
			assert.Equal(t, want, contentsIn(t, other, bob, ch))
			var gotDMs []string
			for _, m := range directMessages(t, h, bob) {
				gotDMs = append(gotDMs, m.Content)
			}
			assert.ElementsMatch(t, dms, gotDMs)

			// Each scheduled message records a message of its own.
			seen := map[int64]bool{}
			for _, u := range []chattest.User{alice, bob} {
				assert.Empty(t, listScheduled(t, h, u))
			}
			due, err := st1.ListDueScheduledMessages(ctx, 1<<40, storage.ScheduledCursor{}, 1000)
			require.NoError(t, err)
			assert.Empty(t, due)
			for id := int64(1); len(seen) < n && id < 10*n; id++ {
				for _, u := range []chattest.User{alice, bob} {
					if rec, err := st1.GetScheduledMessage(ctx, h.RealmID, u.ID, id); err == nil {
						require.True(t, rec.Delivered)
						assert.False(t, seen[*rec.DeliveredMessageID], "message %d recorded twice", *rec.DeliveredMessageID)
						seen[*rec.DeliveredMessageID] = true
					}
				}
			}
			assert.Len(t, seen, n)
		})
	}
}
