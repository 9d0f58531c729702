package chat_test

import (
	"context"
	"fmt"
	"slices"
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

// The write path's promises under concurrency (write.go): sends of one
// conversation share transactions and run beside other conversations'
// and beside other servers', yet within a conversation message IDs
// increase in commit order and reach every queue in that order; marking
// read covers exactly what committed before it; a subscription change is
// ordered with the sends around it. Each test runs on SQLite and on
// PostgreSQL, there with two Services on one database.

// writeServices opens the dialect's database and returns a harness and
// the Services that write to it concurrently (two on PostgreSQL).
func writeServices(t *testing.T, dialect string) (*chattest.Harness, []*chat.Service) {
	t.Helper()
	open := sharedDatabase(t, dialect)
	st := open()
	h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return st }))
	svcs := []*chat.Service{h.Service}
	if dialect == bunstore.DialectPostgres {
		other := chat.New(open(), chat.WithClock(h.Clock.Now))
		t.Cleanup(func() { _ = other.Close() })
		svcs = append(svcs, other)
	}
	return h, svcs
}

// collect long-polls c until want(events) holds, or fails after 30 s.
func collect(t *testing.T, c *client, want func([]event) bool) []event {
	t.Helper()
	var got []event
	deadline := time.Now().Add(30 * time.Second)
	for !want(got) {
		require.True(t, time.Now().Before(deadline), "events still missing after 30 s (%d so far)", len(got))
		got = append(got, c.wait()...)
	}
	return got
}

// messageIDs lists the IDs of the message events, in arrival order,
// keyed by conversation ("c<channel>" or "d<sorted recipients>").
func messageIDs(evs []event) map[string][]int64 {
	out := map[string][]int64{}
	for _, e := range evs {
		if e.typ() != "message" {
			continue
		}
		m := e["message"].(map[string]any)
		key := fmt.Sprintf("c%v", m["stream_id"])
		if m["type"] == "private" {
			var ids []int64
			for _, r := range m["display_recipient"].([]any) {
				ids = append(ids, int64(r.(map[string]any)["id"].(float64)))
			}
			slices.Sort(ids)
			key = fmt.Sprintf("d%v", ids)
		}
		out[key] = append(out[key], int64(m["id"].(float64)))
	}
	return out
}

func countMessages(evs []event) int {
	n := 0
	for _, e := range evs {
		if e.typ() == "message" {
			n++
		}
	}
	return n
}

func TestSendsOrderedPerConversation(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			h, svcs := writeServices(t, dialect)
			ctx := context.Background()
			const senders, perSender = 6, 25
			users := make([]chattest.User, senders)
			ids := make([]int64, senders)
			for i := range users {
				users[i] = h.NewUser(t, chat.RoleMember)
				ids[i] = users[i].ID
			}
			ch := newChannelBy(t, h, users[0], "busy", false)
			subscribe(t, h, users[0], "busy", ids...)
			quiet := newChannelBy(t, h, users[0], "quiet", false)
			subscribe(t, h, users[0], "quiet", ids...)
			// Every user watches, on every Service.
			var queues []*client
			for _, svc := range svcs {
				for _, u := range users {
					queues = append(queues, registerOn(t, h, svc, u, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message"}}}))
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, senders*perSender*2)
			for i, u := range users {
				svc := svcs[i%len(svcs)]
				wg.Go(func() {
					for n := range perSender {
						// Mostly the busy channel; some to the quiet one and
						// some direct messages to the next user, so that
						// lanes of one organization run side by side.
						req := chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(ch), Topic: ptr("t"), Content: fmt.Sprintf("%d-%d", i, n)}
						switch n % 5 {
						case 3:
							req.To = chat.ToChannelID(quiet)
						case 4:
							req = chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(ids[(i+1)%senders]), Content: fmt.Sprintf("%d-%d", i, n)}
						}
						_, err := svc.SendMessage(ctx, u.Caller, req)
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			channelSends := senders * perSender * 4 / 5
			for qi, q := range queues {
				// A user sees every channel message and the direct messages
				// they are in (two conversations, 5 each way).
				want := channelSends + 2*perSender/5
				evs := collect(t, q, func(evs []event) bool { return countMessages(evs) >= want })
				assert.Equal(t, want, countMessages(evs), "queue %d: every message once", qi)
				for conv, got := range messageIDs(evs) {
					assert.True(t, slices.IsSorted(got), "queue %d, conversation %s: IDs arrive in increasing order: %v", qi, conv, got)
					assert.Len(t, slices.Compact(slices.Clone(got)), len(got), "no repeats")
				}
			}
		})
	}
}

// Marking read covers only what committed before it: the reader's queue
// receives messages and their own read marks in commit order, every
// message a mark lists arrived before the mark, and in the end a message
// is read exactly when a mark listed it.
func TestMarkReadCoversWhatCommittedBefore(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			h, svcs := writeServices(t, dialect)
			ctx := context.Background()
			reader := h.NewUser(t, chat.RoleMember)
			const senders, perSender, marks = 4, 30, 12
			users := make([]chattest.User, senders)
			ids := []int64{reader.ID}
			for i := range users {
				users[i] = h.NewUser(t, chat.RoleMember)
				ids = append(ids, users[i].ID)
			}
			ch := newChannelBy(t, h, reader, "marks", false)
			subscribe(t, h, reader, "marks", ids...)
			q := registerOn(t, h, svcs[len(svcs)-1], reader, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message", "update_message_flags"}}})
			var wg sync.WaitGroup
			errs := make(chan error, senders*perSender+marks)
			for i, u := range users {
				svc := svcs[i%len(svcs)]
				wg.Go(func() {
					for n := range perSender {
						_, err := svc.SendMessage(ctx, u.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(ch),
							Topic: ptr(fmt.Sprintf("t%d", n%3)), Content: fmt.Sprintf("%d-%d", i, n)})
						errs <- err
					}
				})
			}
			wg.Go(func() {
				narrow := fmt.Sprintf(`[{"operator":"channel","operand":%d}]`, ch)
				for n := range marks {
					time.Sleep(3 * time.Millisecond)
					var err error
					if n%2 == 0 {
						_, err = svcs[0].MarkStreamAsRead(ctx, reader.Caller, chat.MarkStreamAsReadRequest{StreamID: ch})
					} else {
						_, err = svcs[0].UpdateMessageFlagsForNarrow(ctx, reader.Caller, chat.UpdateMessageFlagsForNarrowRequest{
							Anchor: "newest", NumBefore: 5000, Narrow: narrow, Op: "add", Flag: "read"})
					}
					errs <- err
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			// A last message, after every mark: once it arrives, so has
			// everything committed before it.
			last := send(t, h, reader, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(ch), Topic: ptr("t"), Content: "last"})
			evs := collect(t, q, func(evs []event) bool { return slices.Contains(messageIDs(evs)[fmt.Sprintf("c%d", ch)], last) })
			listed := map[int64]bool{} // message -> a mark listed it
			var arrived []int64
			for _, e := range evs {
				switch e.typ() {
				case "message":
					arrived = append(arrived, int64(e["message"].(map[string]any)["id"].(float64)))
				case "update_message_flags":
					require.Equal(t, "add", e["op"])
					for _, raw := range e["messages"].([]any) {
						id := int64(raw.(float64))
						assert.True(t, slices.Contains(arrived, id), "a mark lists message %d, which committed after it", id)
						listed[id] = true
					}
				}
			}
			require.Len(t, arrived, senders*perSender+1)
			read := map[int64]bool{}
			narrow := fmt.Sprintf(`[{"operator":"channel","operand":%d}]`, ch)
			resp, err := h.Service.GetMessages(ctx, reader.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"),
				NumBefore: ptr(5000), NumAfter: ptr(0), Narrow: &narrow})
			require.NoError(t, err)
			for _, m := range resp.Messages {
				read[m.ID] = slices.Contains(m.Flags, "read")
			}
			wrong := 0
			for _, id := range arrived {
				if read[id] != listed[id] {
					wrong++
					t.Errorf("message %d: read %v, listed by a mark %v", id, read[id], listed[id])
				}
			}
			assert.Zero(t, wrong)
			assert.NotEmpty(t, listed, "some marks covered messages")
		})
	}
}

// A message sent while someone subscribes and unsubscribes is in their
// history exactly when their queue received it: two mechanisms (the
// subscription periods' message-ID bounds, and event delivery in commit
// order) agree on when each send happened.
func TestSubscriptionChangesOrderedWithSends(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			h, svcs := writeServices(t, dialect)
			ctx := context.Background()
			admin := h.NewUser(t, chat.RoleAdministrator)
			flipper := h.NewUser(t, chat.RoleMember)
			const senders, perSender, flips = 3, 30, 10
			users := make([]chattest.User, senders)
			ids := []int64{admin.ID, flipper.ID}
			for i := range users {
				users[i] = h.NewUser(t, chat.RoleMember)
				ids = append(ids, users[i].ID)
			}
			// A private channel whose history is not shared: a subscriber
			// reads only what was sent while they were subscribed.
			_, err := h.Service.Subscribe(ctx, admin.Caller, chat.SubscribeRequest{
				Subscriptions: []chat.ChannelSpec{{Name: "flips"}}, InviteOnly: ptr(true),
				HistoryPublicToSubscribers: ptr(false), Principals: principals(ids[0], ids[1:]...)})
			require.NoError(t, err)
			got, err := h.Service.GetChannelID(ctx, admin.Caller, chat.GetChannelIDRequest{Stream: "flips"})
			require.NoError(t, err)
			ch := got.StreamID
			q := registerOn(t, h, svcs[len(svcs)-1], flipper, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message", "subscription"}}})
			var wg sync.WaitGroup
			errs := make(chan error, senders*perSender+2*flips)
			for i, u := range users {
				svc := svcs[i%len(svcs)]
				wg.Go(func() {
					for n := range perSender {
						_, err := svc.SendMessage(ctx, u.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(ch),
							Topic: ptr("t"), Content: fmt.Sprintf("%d-%d", i, n)})
						errs <- err
					}
				})
			}
			wg.Go(func() {
				for range flips {
					_, err := svcs[0].Unsubscribe(ctx, admin.Caller, chat.UnsubscribeRequest{
						Subscriptions: []string{"flips"}, Principals: principals(flipper.ID)})
					errs <- err
					time.Sleep(2 * time.Millisecond)
					_, err = svcs[0].Subscribe(ctx, admin.Caller, chat.SubscribeRequest{
						Subscriptions: []chat.ChannelSpec{{Name: "flips"}}, Principals: principals(flipper.ID)})
					errs <- err
					time.Sleep(2 * time.Millisecond)
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			// The flipper ends subscribed; a last message, once it
			// arrives, follows everything committed before it.
			last := send(t, h, admin, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(ch), Topic: ptr("t"), Content: "last"})
			evs := collect(t, q, func(evs []event) bool { return slices.Contains(messageIDs(evs)[fmt.Sprintf("c%d", ch)], last) })
			received := map[int64]bool{}
			for _, e := range evs {
				if e.typ() == "message" {
					received[int64(e["message"].(map[string]any)["id"].(float64))] = true
				}
			}
			// The flipper's history of the channel: what they received
			// while subscribed.
			all, err := h.Service.GetMessages(ctx, admin.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"),
				NumBefore: ptr(5000), NumAfter: ptr(0), Narrow: ptr(fmt.Sprintf(`[{"operator":"channel","operand":%d}]`, ch))})
			require.NoError(t, err)
			require.Len(t, all.Messages, senders*perSender+1)
			visible := map[int64]bool{}
			for _, m := range all.Messages {
				_, err := h.Service.GetMessage(ctx, flipper.Caller, chat.GetMessageRequest{MessageID: m.ID})
				visible[m.ID] = err == nil
			}
			for _, m := range all.Messages {
				assert.Equal(t, received[m.ID], visible[m.ID], "message %d: received live %v, in history %v", m.ID, received[m.ID], visible[m.ID])
			}
			assert.NotEmpty(t, received, "some messages were sent while subscribed")
		})
	}
}
