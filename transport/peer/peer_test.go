package peer_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/peer"
)

// Two Services on one PostgreSQL database, each serving its peer calls
// over HTTP: a long poll of a queue held by one, made on the other, is
// carried over HTTP/2 and woken by a send.
func TestForwardOverHTTP(t *testing.T) {
	chattest.SkipStoreRerun(t)
	dsn, schema := bunstore.NewTestPostgresSchema(t)
	open := func() *bunstore.Store {
		st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		return ln
	}
	lnA, lnB := listen(), listen()
	tr := peer.NewTransport()
	t.Cleanup(tr.Close)
	stA := open()
	h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return stA }),
		chattest.WithServiceOptions(chat.WithFleet(chat.FleetConfig{Address: lnA.Addr().String(), Transport: tr})))
	a := h.Service
	b := chat.New(open(), chat.WithClock(h.Clock.Now), chat.WithFleet(chat.FleetConfig{Address: lnB.Addr().String(), Transport: tr}))
	t.Cleanup(func() { _ = b.Close() })
	for _, x := range []struct {
		svc *chat.Service
		ln  net.Listener
	}{{a, lnA}, {b, lnB}} {
		srv := peer.NewServer(x.svc)
		go func() { _ = srv.Serve(x.ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = x.svc.Run(ctx) }()
		t.Cleanup(cancel)
	}
	ctx := context.Background()
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	reg, err := a.Register(ctx, bob.Caller, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message"}}})
	require.NoError(t, err)
	polled := make(chan *chat.GetEventsResponse, 1)
	go func() {
		resp, err := b.GetEvents(ctx, bob.Caller, chat.GetEventsRequest{QueueID: &reg.QueueID, LastEventID: ptr(int64(-1))})
		assert.NoError(t, err)
		polled <- resp
	}()
	require.Eventually(t, func() bool { return a.EventQueueStats().Waiting == 1 }, 10*time.Second, 5*time.Millisecond,
		"the poll made on b waits on a")
	_, err = b.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "private", To: chat.ToUsers(bob.ID), Content: "over HTTP/2"})
	require.NoError(t, err)
	select {
	case resp := <-polled:
		require.Len(t, resp.Events, 1)
		assert.Contains(t, string(resp.Events[0]), "over HTTP/2")
		assert.Equal(t, reg.QueueID, *resp.QueueID)
	case <-time.After(10 * time.Second):
		t.Fatal("the forwarded poll did not end")
	}
}

// The handler refuses calls without the fleet's secret, unknown calls
// and other methods, with JSON; the transport reports them as errors.
func TestHandlerRefusals(t *testing.T) {
	h := chattest.New(t)
	srv := peer.NewServer(h.Service)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	base := "http://" + ln.Addr().String()

	resp, err := http.Get(base + "/peer/poll")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 404, resp.StatusCode)
	assert.JSONEq(t, `{"code":"BAD_REQUEST","msg":"Not found"}`, string(body))

	resp, err = http.Post(base+"/peer/poll", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode, "a server that is not in a fleet answers no peer: %s", body)

	tr := peer.NewTransport()
	t.Cleanup(tr.Close)
	_, err = tr.Call(context.Background(), ln.Addr().String(), "wrong", "poll", []byte(`{}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")

	// A peer that is not there is an error at once.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := dead.Addr().String()
	_ = dead.Close()
	start := time.Now()
	_, err = tr.Call(context.Background(), addr, "s", "poll", []byte(`{}`))
	require.Error(t, err)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func ptr[T any](v T) *T { return &v }
