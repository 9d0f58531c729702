package peer_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/peer"
)

// BenchmarkForwardedPoll measures what forwarding costs a poll: the same
// non-blocking poll of a queue answered by its holder, and made on the
// other server of a two-server fleet, which forwards it over HTTP/2
// (both Services in this process, on one PostgreSQL database):
//
//	TEAMCHAT_POSTGRES_DSN=... go test -run XXX -bench ForwardedPoll ./transport/peer
func BenchmarkForwardedPoll(b *testing.B) {
	chattest.SkipStoreRerun(b)
	dsn, schema := bunstore.NewTestPostgresSchema(b)
	open := func() *bunstore.Store {
		st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
		require.NoError(b, err)
		b.Cleanup(func() { _ = st.Close() })
		return st
	}
	var svcs []*chat.Service
	tr := peer.NewTransport()
	b.Cleanup(tr.Close)
	var h *chattest.Harness
	for i := range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(b, err)
		fleet := chat.WithFleet(chat.FleetConfig{Address: ln.Addr().String(), Transport: tr})
		var svc *chat.Service
		if i == 0 {
			st := open()
			h = chattest.New(b, chattest.WithStore(func(testing.TB) storage.Store { return st }), chattest.WithServiceOptions(fleet))
			svc = h.Service
		} else {
			svc = chat.New(open(), chat.WithClock(h.Clock.Now), fleet)
			b.Cleanup(func() { _ = svc.Close() })
		}
		srv := peer.NewServer(svc)
		go func() { _ = srv.Serve(ln) }()
		b.Cleanup(func() { _ = srv.Close() })
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = svc.Run(ctx) }()
		b.Cleanup(cancel)
		svcs = append(svcs, svc)
	}
	ctx := context.Background()
	bob := h.NewUser(b, chat.RoleMember)
	reg, err := svcs[0].Register(ctx, bob.Caller, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message"}}})
	require.NoError(b, err)
	req := chat.GetEventsRequest{QueueID: &reg.QueueID, LastEventID: ptr(int64(-1)), DontBlock: ptr(true)}
	for _, bc := range []struct {
		name string
		svc  *chat.Service
	}{{"holder", svcs[0]}, {"forwarded", svcs[1]}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.svc.GetEvents(ctx, bob.Caller, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
