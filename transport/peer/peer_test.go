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

// pair is two Services on one PostgreSQL database, each serving its
// peer calls over HTTP; a is the harness's.
func pair(tb testing.TB) (h *chattest.Harness, a, b *chat.Service) {
	chattest.SkipStoreRerun(tb)
	dsn, schema := bunstore.NewTestPostgresSchema(tb)
	open := func() *bunstore.Store {
		st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
		require.NoError(tb, err)
		tb.Cleanup(func() { _ = st.Close() })
		return st
	}
	tr := peer.NewTransport()
	tb.Cleanup(tr.Close)
	var svcs []*chat.Service
	for i := range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(tb, err)
		fleet := chat.WithFleet(chat.FleetConfig{Address: ln.Addr().String(), Transport: tr})
		var svc *chat.Service
		if i == 0 {
			st := open()
			h = chattest.New(tb, chattest.WithStore(func(testing.TB) storage.Store { return st }), chattest.WithServiceOptions(fleet))
			svc = h.Service
		} else {
			svc = chat.New(open(), chat.WithClock(h.Clock.Now), fleet)
			tb.Cleanup(func() { _ = svc.Close() })
		}
		srv := peer.NewServer(svc)
		go func() { _ = srv.Serve(ln) }()
		tb.Cleanup(func() { _ = srv.Close() })
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = svc.Run(ctx) }()
		tb.Cleanup(cancel)
		svcs = append(svcs, svc)
	}
	return h, svcs[0], svcs[1]
}

// A long poll of a queue held by one server, made on the other, is
// carried over HTTP/2 and woken by a send.
func TestForwardOverHTTP(t *testing.T) {
	h, a, b := pair(t)
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
