package chat

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// plainUnreads is UnreadMessages without its MarshalJSON: encoding/json's
// own encoding of the same fields.
type plainUnreads UnreadMessages

func randomUnreads(r *rand.Rand) *UnreadMessages {
	ids := func() []int64 {
		if r.IntN(8) == 0 {
			return nil
		}
		out := []int64{}
		for range r.IntN(4) {
			out = append(out, r.Int64N(1<<50)-1<<20)
		}
		return out
	}
	u := &UnreadMessages{Count: r.IntN(60000), OldUnreadsMissing: r.IntN(2) == 0, Mentions: ids()}
	if r.IntN(6) > 0 {
		u.PMs = []UnreadDirect{}
		for range r.IntN(3) {
			u.PMs = append(u.PMs, UnreadDirect{OtherUserID: r.Int64N(1000), SenderID: r.Int64N(1000), UnreadMessageIDs: ids()})
		}
	}
	if r.IntN(6) > 0 {
		u.Streams = []UnreadChannelTopic{}
		for range r.IntN(4) {
			u.Streams = append(u.Streams, UnreadChannelTopic{StreamID: r.Int64N(1000), Topic: randomCorner(r), UnreadMessageIDs: ids()})
		}
	}
	if r.IntN(6) > 0 {
		u.Huddles = []UnreadGroupDirect{}
		for range r.IntN(3) {
			u.Huddles = append(u.Huddles, UnreadGroupDirect{UserIDsString: randomCorner(r), UnreadMessageIDs: ids()})
		}
	}
	return u
}

func TestUnreadJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		u := randomUnreads(r)
		want, err := marshalNoEscape((*plainUnreads)(u))
		require.NoError(t, err)
		require.Equal(t, string(want), string(u.appendJSON(nil)), "round %d", round)
		got, err := marshalNoEscape(u)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "round %d: through MarshalJSON", round)
		// In a registration's answer, beside other state.
		resp := RegisterResponse{QueueID: randomCorner(r), LastEventID: -1, State: map[string]any{"unread_msgs": u, "z": randomCorner(r), "a": []int{1}}}
		plain := resp.object()
		plain["unread_msgs"] = (*plainUnreads)(u)
		want, err = marshalNoEscape(plain)
		require.NoError(t, err)
		got, err = resp.AppendJSON(nil)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "round %d: the registration", round)
	}
}

// randomCorner is one of the strings that exercise escaping.
func randomCorner(r *rand.Rand) string { return jsonCorners[r.IntN(len(jsonCorners))] }
