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

// pipe is a PeerTransport that calls the other Services of the test
// directly (transport/peer tests the same over HTTP); a server marked down
// cannot be reached, like a killed process.
type pipe struct {
	mu   sync.Mutex
	svcs map[string]*chat.Service
	down map[string]bool
}

func (p *pipe) Call(ctx context.Context, addr, secret, op string, body []byte) ([]byte, error) {
	p.mu.Lock()
	svc, down := p.svcs[addr], p.down[addr]
	p.mu.Unlock()
	if svc == nil || down {
		return nil, fmt.Errorf("dial %s: connection refused", addr)
	}
	return svc.ServePeer(ctx, secret, op, body)
}

func (p *pipe) setDown(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down[addr] = true
}

// fleet is n Services on one PostgreSQL schema, each with its own Store,
// joined by a pipe; servers[0] is the harness's Service.
type fleet struct {
	h       *chattest.Harness
	servers []*chat.Service
	pipe    *pipe
	open    func(t testing.TB) *bunstore.Store
}

func newFleet(t *testing.T, n int) *fleet {
	t.Helper()
	chattest.SkipStoreRerun(t)
	dsn, schema := bunstore.NewTestPostgresSchema(t)
	f := &fleet{pipe: &pipe{svcs: map[string]*chat.Service{}, down: map[string]bool{}}}
	f.open = func(t testing.TB) *bunstore.Store {
		st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	cfg := func(i int) chat.Option {
		return chat.WithFleet(chat.FleetConfig{Address: fmt.Sprint("s", i), Transport: f.pipe, Heartbeat: time.Second})
	}
	st0 := f.open(t)
	f.h = chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return st0 }), chattest.WithServiceOptions(cfg(0)))
	f.servers = append(f.servers, f.h.Service)
	for i := 1; i < n; i++ {
		svc := chat.New(f.open(t), cfg(i), chat.WithClock(f.h.Clock.Now))
		t.Cleanup(func() { _ = svc.Close() })
		f.servers = append(f.servers, svc)
	}
	for i, svc := range f.servers {
		f.pipe.mu.Lock()
		f.pipe.svcs[fmt.Sprint("s", i)] = svc
		f.pipe.mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = svc.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		require.NoError(t, chat.AwaitEventDelivery(svc, f.h.RealmID), "server %d listens", i)
	}
	return f
}

// messages returns the contents of the message events among evs.
func messages(evs []event) []string {
	var out []string
	for _, e := range evs {
		if e.typ() == "message" {
			out = append(out, e["message"].(map[string]any)["content"].(string))
		}
	}
	return out
}

// A queue registered on one server is served by every other: polls,
// blocking and not, and its deletion, as if it were there.
func TestFleetAnyServerServesAnyQueue(t *testing.T) {
	f := newFleet(t, 3)
	h := f.h
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	c := registerOn(t, h, f.servers[0], bob, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message"}}})

	// A blocking poll through server 1, woken by a send through server 2.
	c.svc = f.servers[1]
	got := make(chan []event, 1)
	go func() { got <- c.wait() }()
	awaitWaiting(t, f.servers[0], 1)
	sendDM(t, f.servers[2], alice, bob, "through the fleet")
	select {
	case evs := <-got:
		assert.Equal(t, []string{"through the fleet"}, messages(evs))
	case <-time.After(10 * time.Second):
		t.Fatal("the forwarded long poll was not woken")
	}

	// Not blocking, through server 2; then the same answers as locally
	// for a pruned and an unknown event ID.
	c.svc = f.servers[2]
	sendDM(t, f.servers[1], alice, bob, "second")
	require.NoError(t, chat.AwaitEventDelivery(f.servers[0], h.RealmID))
	assert.Equal(t, []string{"second"}, messages(c.poll()))
	ctx := context.Background()
	_, err := f.servers[1].GetEvents(ctx, bob.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: ptr(int64(-1)), DontBlock: ptr(true)})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "An event newer than -1 has already been pruned!")
	_, err = f.servers[2].GetEvents(ctx, bob.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: ptr(c.last + 5), DontBlock: ptr(true)})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, fmt.Sprintf("Event %d was not in this queue", c.last+5))

	// Another user cannot reach it from any server.
	for _, svc := range f.servers {
		_, err := svc.GetEvents(ctx, alice.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: &c.last, DontBlock: ptr(true)})
		requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+c.queue)
		_, err = svc.DeleteEvents(ctx, alice.Caller, chat.DeleteEventsRequest{QueueID: &c.queue})
		requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+c.queue)
	}

	// DELETE /events through server 1 deletes it on server 0.
	_, err = f.servers[1].DeleteEvents(ctx, bob.Caller, chat.DeleteEventsRequest{QueueID: &c.queue})
	require.NoError(t, err)
	assert.Zero(t, f.servers[0].EventQueueStats().Queues)
	for _, svc := range f.servers {
		_, err := svc.GetEvents(ctx, bob.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: &c.last, DontBlock: ptr(true)})
		requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+c.queue)
	}
}

// The sender's own echo (local_message_id) reaches its queue whichever
// server the send and the queue are on.
func TestFleetSenderEchoAcrossServers(t *testing.T) {
	f := newFleet(t, 2)
	h := f.h
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	c := registerOn(t, h, f.servers[0], alice, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message"}}})
	_, err := f.servers[1].SendMessage(context.Background(), alice.Caller, chat.SendMessageRequest{Type: "private",
		To: chat.ToUsers(bob.ID), Content: "echo", QueueID: &c.queue, LocalID: ptr("42.01")})
	require.NoError(t, err)
	require.NoError(t, chat.AwaitEventDelivery(f.servers[0], h.RealmID))
	c.svc = f.servers[1]
	evs := c.poll()
	require.Len(t, evs, 1)
	assert.Equal(t, "42.01", evs[0]["local_message_id"])
}

// A queue whose server is gone answers BAD_EVENT_QUEUE_ID at once from
// every other server, blocking or not.
func TestFleetQueueOfDeadServer(t *testing.T) {
	f := newFleet(t, 3)
	h := f.h
	bob := h.NewUser(t, chat.RoleMember)
	c := registerOn(t, h, f.servers[2], bob, chat.RegisterRequest{})
	f.pipe.setDown("s2")
	for _, svc := range f.servers[:2] {
		for _, dontBlock := range []bool{true, false} {
			start := time.Now()
			_, err := svc.GetEvents(context.Background(), bob.Caller, chat.GetEventsRequest{QueueID: &c.queue, LastEventID: &c.last, DontBlock: &dontBlock})
			requireError(t, err, chat.KindNotFound, chat.CodeBadEventQueueID, "Bad event queue ID: "+c.queue)
			assert.Less(t, time.Since(start), time.Second)
		}
	}
}

// A server that stops hands its queues to the others: no event is lost
// or repeated, whatever is sent meanwhile, a poll waiting on it ends
// without an error, and the queues answer from every remaining server.
func TestFleetHandOverKeepsEveryEvent(t *testing.T) {
	f := newFleet(t, 3)
	h := f.h
	alice := h.NewUser(t, chat.RoleMember)
	var users []chattest.User
	var clients []*client
	for range 6 {
		u := h.NewUser(t, chat.RoleMember)
		users = append(users, u)
		c := registerOn(t, h, f.servers[1], u, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message"}}})
		clients = append(clients, c)
	}
	// One of them waits on server 1 itself, one through server 2.
	waiting := make(chan []event, 2)
	for i, via := range []int{1, 2} {
		c := *clients[i]
		c.svc = f.servers[via]
		go func() { waiting <- c.wait() }()
	}
	awaitWaiting(t, f.servers[1], 2)
	// Every user gets a message before, during and after the handover,
	// from servers 0 and 2.
	ctx := context.Background()
	var sent sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	want := map[int64][]string{}
	sent.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			for i, u := range users {
				text := fmt.Sprintf("m%d", n)
				sendDM(t, f.servers[(n+i)%2*2], alice, u, text)
				mu.Lock()
				want[u.ID] = append(want[u.ID], text)
				mu.Unlock()
			}
		}
	})
	time.Sleep(50 * time.Millisecond) // a few sends before the handover (not a wait for a result)
	require.NoError(t, f.servers[1].DrainEvents(ctx))
	for range 2 {
		select {
		case <-waiting: // ended, with or without events (they are polled again below)
		case <-time.After(10 * time.Second):
			t.Fatal("a poll waiting on the stopping server did not end")
		}
	}
	require.NoError(t, f.servers[1].HandOverEvents(ctx))
	time.Sleep(50 * time.Millisecond)
	close(stop)
	sent.Wait()
	for _, svc := range []*chat.Service{f.servers[0], f.servers[2]} {
		require.NoError(t, chat.AwaitEventDelivery(svc, h.RealmID))
	}
	assert.Equal(t, 6, f.servers[0].EventQueueStats().Queues+f.servers[2].EventQueueStats().Queues, "spread over the two others")
	for i, c := range clients {
		c.svc = f.servers[i%2*2]
		var got []string
		c.last = -1
		got = append(got, messages(c.poll())...)
		assert.Equal(t, want[users[i].ID], got, "user %d: every message once, in order", i)
	}
}

// With no peer to take them, a stopping server saves its queues, and the
// next one to start on the database serves them: the same IDs, the events
// not yet acknowledged, and what is sent after.
func TestHandOverToStorage(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			var open func(t testing.TB) storage.Store
			if pg {
				chattest.SkipStoreRerun(t)
				dsn, schema := bunstore.NewTestPostgresSchema(t)
				open = func(t testing.TB) storage.Store {
					st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
					require.NoError(t, err)
					return st
				}
			} else {
				path := t.TempDir() + "/chat.db"
				open = func(t testing.TB) storage.Store {
					st, err := bunstore.OpenSQLite(context.Background(), path)
					require.NoError(t, err)
					return st
				}
			}
			st := open(t)
			h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return st }))
			alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
			narrowed := registerOn(t, h, h.Service, bob, chat.RegisterRequest{QueueParams: chat.QueueParams{
				EventTypes: &[]string{"message"}, Narrow: ptr(`[["is", "dm"]]`),
				ClientCapabilities: &chat.ClientCapabilities{NotificationSettingsNull: ptr(false), BulkMessageDeletion: true}}})
			all := registerOn(t, h, h.Service, bob, chat.RegisterRequest{})
			sendDM(t, h.Service, alice, bob, "before")
			require.NoError(t, chat.AwaitEventDelivery(h.Service, h.RealmID))
			assert.Equal(t, []string{"before"}, messages(narrowed.poll()))
			sendDM(t, h.Service, alice, bob, "unacknowledged")
			ctx := context.Background()
			require.NoError(t, h.Service.DrainEvents(ctx))
			require.NoError(t, h.Service.HandOverEvents(ctx))
			require.NoError(t, h.Service.Close())

			next := chat.New(open(t))
			t.Cleanup(func() { _ = next.Close() })
			go func() { _ = next.Run(t.Context()) }()
			require.NoError(t, chat.AwaitEventDelivery(next, h.RealmID))
			assert.Equal(t, 2, next.EventQueueStats().Queues)
			sendDM(t, next, alice, bob, "after")
			require.NoError(t, chat.AwaitEventDelivery(next, h.RealmID))
			narrowed.svc, all.svc = next, next
			assert.Equal(t, []string{"unacknowledged", "after"}, messages(narrowed.poll()))
			evs := all.poll()
			assert.Equal(t, []string{"before", "unacknowledged", "after"}, messages(evs))
			ids := make([]int64, len(evs))
			for i, e := range evs {
				ids[i] = int64(e["id"].(float64))
			}
			assert.True(t, slices.IsSorted(ids))
		})
	}
}

// "Is this user here" sees a client that polls another server.
func TestFleetAwaySeesEveryServer(t *testing.T) {
	f := newFleet(t, 2)
	h := f.h
	bob := h.NewUser(t, chat.RoleMember)
	here, err := chat.UserHere(f.servers[0], h.RealmID, bob.ID)
	require.NoError(t, err)
	assert.False(t, here)
	c := registerOn(t, h, f.servers[1], bob, chat.RegisterRequest{})
	// Within a heartbeat: server 0 may not know server 1 yet.
	require.Eventually(t, func() bool {
		here, err := chat.UserHere(f.servers[0], h.RealmID, bob.ID)
		return err == nil && here
	}, 5*time.Second, 10*time.Millisecond, "a queue on the other server")
	c.svc = f.servers[0]
	_, err = c.svc.DeleteEvents(context.Background(), bob.Caller, chat.DeleteEventsRequest{QueueID: &c.queue})
	require.NoError(t, err)
	here, err = chat.UserHere(f.servers[0], h.RealmID, bob.ID)
	require.NoError(t, err)
	assert.False(t, here)
}

// sendDM sends a direct message through svc.
func sendDM(t *testing.T, svc *chat.Service, from, to chattest.User, content string) int64 {
	t.Helper()
	resp, err := svc.SendMessage(context.Background(), from.Caller, chat.SendMessageRequest{Type: "private",
		To: chat.ToUsers(to.ID), Content: content})
	require.NoError(t, err)
	return resp.ID
}

// A write that makes other servers' caches stale answers once they have
// applied it: the next request, on any server, sees it (a balancer sends
// it to another server).
func TestFleetReadYourWrites(t *testing.T) {
	f := newFleet(t, 3)
	h := f.h
	ctx := context.Background()
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	// Every server knows every other (the heartbeat has run).
	require.Eventually(t, func() bool {
		for _, svc := range f.servers {
			if n, _ := chat.FleetPeers(svc); n != 2 {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)
	msg := sendDM(t, f.servers[0], alice, bob, "before")
	for round := range 20 {
		// Each server has the key and the message cached.
		for _, svc := range f.servers {
			_, err := svc.Authenticate(ctx, h.RealmID, alice.Email, alice.APIKey)
			require.NoError(t, err)
			r, err := svc.GetMessages(ctx, bob.Caller, chat.GetMessagesRequest{MessageIDs: &[]int64{msg}, ApplyMarkdown: ptr(false)})
			require.NoError(t, err)
			require.Len(t, r.Messages, 1)
		}
		writer, reader := f.servers[round%3], f.servers[(round+1)%3]
		resp, err := writer.RegenerateAPIKey(ctx, alice.Caller)
		require.NoError(t, err)
		_, err = reader.Authenticate(ctx, h.RealmID, alice.Email, alice.APIKey)
		require.Error(t, err, "round %d: the old key is refused on the next server at once", round)
		alice.APIKey = resp.APIKey
		_, err = reader.Authenticate(ctx, h.RealmID, alice.Email, alice.APIKey)
		require.NoError(t, err)

		text := fmt.Sprint("edit ", round)
		_, err = writer.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: msg, Content: &text})
		require.NoError(t, err)
		r, err := reader.GetMessages(ctx, bob.Caller, chat.GetMessagesRequest{MessageIDs: &[]int64{msg}, ApplyMarkdown: ptr(false)})
		require.NoError(t, err)
		require.Equal(t, text, r.Messages[0].Content, "round %d: the edit is read on the next server at once", round)
	}
}
