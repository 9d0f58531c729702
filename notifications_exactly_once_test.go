package chat_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
)

// deliverAtOnce calls deliver twice on each Service, all at the same
// time, and returns what each call counted.
func deliverAtOnce(t *testing.T, deliver func(*chat.Service, context.Context) (int, error), svcs ...*chat.Service) []int {
	t.Helper()
	var wg sync.WaitGroup
	sent := make([]int, 2*len(svcs))
	for i := range sent {
		wg.Go(func() {
			got, err := deliver(svcs[i%len(svcs)], context.Background())
			assert.NoError(t, err)
			sent[i] = got
		})
	}
	wg.Wait()
	return sent
}

// Two Services on one database (on PostgreSQL: two servers) deliver the
// same due notifications at the same time, twice each: every email and
// every push goes out exactly once.
func TestNotifyTwoServersExactlyOnce(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			open := sharedDatabase(t, dialect)
			srv, n1 := newNotifier(t)
			n2 := &testNotifier{mailer: n1.mailer}
			st1 := open()
			h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return st1 }),
				chattest.WithServiceOptions(chat.WithNotifier(n1)))
			other := chat.New(open(), chat.WithClock(h.Clock.Now), chat.WithNotifier(n2))
			t.Cleanup(func() { _ = other.Close() })
			e := &notifyEnv{Harness: h, smtp: srv, notifier: n1}
			alice := e.NewUser(t, chat.RoleMember)
			owner := h.Owner // may mention everyone in a large channel
			ch := newChannelBy(t, h, owner, "all-hands", false)
			const users = 30
			var ids []int64
			for range users {
				ids = append(ids, e.NewUser(t, chat.RoleMember).ID)
			}
			subscribe(t, h, owner, "all-hands", ids...)
			for i, id := range ids {
				e.dm(t, alice, fmt.Sprint("first ", i), id)
				e.dm(t, alice, fmt.Sprint("second ", i), id)
			}
			e.post(t, owner, ch, "t", "@**all** meeting")
			h.Clock.Advance(121 * time.Second)

			sent := deliverAtOnce(t, (*chat.Service).DeliverDueNotifications, h.Service, other)
			// The fan-out's rows may come due to one server after another
			// finished its round: a last round picks them up.
			for _, svc := range []*chat.Service{h.Service, other} {
				got, err := svc.DeliverDueNotifications(ctx)
				require.NoError(t, err)
				sent = append(sent, got)
			}
			t.Logf("%s: sent by each call: %v", dialect, sent)
			total := 0
			for _, k := range sent {
				total += k
			}
			e1, p1 := n1.take()
			e2, p2 := n2.take()
			emails, pushes := append(e1, e2...), append(p1, p2...)
			assert.Len(t, emails, users*2, "one DM email and one channel email per user")
			assert.Len(t, pushes, users*3, "two DM pushes and one channel push per user")
			assert.Equal(t, users*2+users*3, total, "what the calls count is what went out")
			keys := map[string]int{}
			for _, m := range emails {
				keys[m.Key]++
			}
			for _, p := range pushes {
				keys[p.Key]++
			}
			for k, n := range keys {
				assert.Equal(t, 1, n, "notification %s went out %d times", k, n)
			}
			assert.Len(t, srv.Wait(t, users*2, 10*time.Second), users*2, "the SMTP server got each email once")
			dmEmails := 0
			for _, m := range emails {
				if m.Conversation.Type == chat.MessageTypeDirect {
					dmEmails++
					assert.Len(t, m.Messages, 2, "both DMs in one email")
				}
			}
			assert.Equal(t, users, dmEmails)
			_, ok, err := st1.NextNotificationAt(ctx, 1<<40)
			require.NoError(t, err)
			assert.False(t, ok, "nothing left pending")
		})
	}
}

// Notifications survive a restart: those queued before it go out after
// it, once; those a server claimed before it died go out once its claim
// expires, by another.
func TestNotifyAcrossRestart(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			open := sharedDatabase(t, dialect)
			srv, n1 := newNotifier(t)
			h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return open() }),
				chattest.WithServiceOptions(chat.WithNotifier(n1)))
			e := &notifyEnv{Harness: h, smtp: srv, notifier: n1}
			alice := e.NewUser(t, chat.RoleMember)
			bob := e.NewUser(t, chat.RoleMember)
			carol := e.NewUser(t, chat.RoleMember)
			e.dm(t, alice, "before the restart", bob.ID)
			e.dm(t, alice, "claimed by a server that died", carol.ID)
			st := open()
			h.Clock.Advance(121 * time.Second)
			// A server claims carol's email and the pushes, and dies.
			now := h.Clock.Now().Unix()
			claimed, err := st.ClaimNotifications(ctx, storage.NotificationPush, now, now+60, "dead", 10)
			require.NoError(t, err)
			require.Len(t, claimed, 2)
			claimed, err = st.ClaimNotifications(ctx, storage.NotificationEmail, now, now+60, "dead", 10)
			require.NoError(t, err)
			require.Len(t, claimed, 2, "the claim takes both users whose email is due")
			_, err = st.RetryNotifications(ctx, []int64{claimed[0].ID}, "dead", 0, now) // bob's is handed back
			require.NoError(t, err)
			require.NoError(t, h.Service.Close())

			for round, want := range []int{1, 3, 0} {
				n := &testNotifier{mailer: n1.mailer}
				svc := chat.New(open(), chat.WithClock(h.Clock.Now), chat.WithNotifier(n))
				got, err := svc.DeliverDueNotifications(ctx)
				require.NoError(t, err)
				assert.Equal(t, want, got, "round %d", round)
				emails, pushes := n.take()
				switch round {
				case 0:
					require.Len(t, emails, 1)
					assert.Equal(t, bob.ID, emails[0].UserID)
					assert.Empty(t, pushes, "still claimed by the dead server")
				case 1:
					require.Len(t, emails, 1)
					assert.Equal(t, carol.ID, emails[0].UserID)
					assert.Len(t, pushes, 2)
				}
				require.NoError(t, svc.Close())
				h.Clock.Advance(61 * time.Second) // the dead server's claim expires
			}
			assert.Len(t, srv.Messages(), 2, "each email once")
		})
	}
}
