package peer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

// BenchmarkForwardedPoll measures what forwarding costs a poll: the same
// non-blocking poll of a queue answered by its holder, and made on the
// other server of a two-server fleet, which forwards it over HTTP/2
// (both Services in this process, on one PostgreSQL database):
//
//	TEAMCHAT_POSTGRES_DSN=... go test -run XXX -bench ForwardedPoll ./transport/peer
func BenchmarkForwardedPoll(b *testing.B) {
	h, holder, other := pair(b)
	ctx := context.Background()
	bob := h.NewUser(b, chat.RoleMember)
	reg, err := holder.Register(ctx, bob.Caller, chat.RegisterRequest{QueueParams: chat.QueueParams{EventTypes: &[]string{"message"}}})
	require.NoError(b, err)
	req := chat.GetEventsRequest{QueueID: &reg.QueueID, LastEventID: ptr(int64(-1)), DontBlock: ptr(true)}
	for _, bc := range []struct {
		name string
		svc  *chat.Service
	}{{"holder", holder}, {"forwarded", other}} {
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
