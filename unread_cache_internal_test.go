package chat

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// A remembered state with newer channel messages added (mergeUnreads) and
// its grouping extended (extend) answer as the merged state grouped from
// scratch does: over random rounds of new messages in old and new topics
// (spelled in several cases, the empty topic among them, some muted),
// with direct messages beside them and a small limit, so that the oldest
// messages, and with them whole topics, fall out of the answer.
func TestRememberedUnreadsGroupAsFromScratch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 34))
	names := []string{"alpha", "Alpha", "ALPHA", "beta", "", "general chat", "gamma", "Gamma"}
	mutes := &muteState{channels: map[int64]bool{3: true},
		topics: map[int64]map[string]int{1: {"beta": TopicPolicyMuted}, 3: {"gamma": TopicPolicyFollowed}}}
	convs := map[int64][]int64{100: {1, 2}, 101: {1, 2, 3}}
	const limit = 60
	// nextID grows across every channel, as message IDs do.
	nextID := int64(1)
	// newMessages makes n channel messages as the store lists them: newest
	// first, each naming an entry of its own topic list.
	newMessages := func(n int) *storage.UnreadChannelMessages {
		got := &storage.UnreadChannelMessages{}
		for range n {
			stream := int64(1 + rng.IntN(3))
			got.Topics = append(got.Topics, storage.UnreadTopic{StreamID: stream, Name: names[rng.IntN(len(names))]})
			got.Messages = append(got.Messages, storage.UnreadChannelMessage{ID: nextID, StreamID: stream,
				Topic: int32(len(got.Topics) - 1), StreamWildcard: rng.IntN(5) == 0})
			nextID++
		}
		slices.Reverse(got.Messages)
		return got
	}
	for _, allowEmpty := range []bool{false, true} {
		for round := range 20 {
			// The state listed from scratch: channel messages and direct
			// ones (which only a listing from scratch has).
			raw := &rawUnreads{}
			first := newMessages(10 + rng.IntN(40))
			raw.topics = first.Topics
			for _, m := range first.Messages {
				raw.msgs = append(raw.msgs, unreadMessage{id: m.ID, streamID: m.StreamID, topic: m.Topic, streamWildcard: m.StreamWildcard})
			}
			for range 1 + rng.IntN(5) {
				conv := int64(100 + rng.IntN(2))
				raw.msgs = append([]unreadMessage{{id: nextID, conversationID: conv, senderID: int64(2 + rng.IntN(2)),
					flags: int64(rng.IntN(2)) * storage.FlagMentioned}}, raw.msgs...)
				nextID++
			}
			var ids []int64 // every message's, newest first
			for _, m := range raw.msgs {
				ids = append(ids, m.id)
			}
			g := newUnreadGrouping(mutes, convs, raw, allowEmpty)
			for step := range 8 {
				got := newMessages(1 + rng.IntN(15))
				for _, m := range slices.Backward(got.Messages) {
					ids = append([]int64{m.ID}, ids...)
				}
				raw = mergeUnreads(raw, got, limit)
				// The newest limit of all, and whether there were more.
				var kept []int64
				for _, m := range raw.msgs {
					kept = append(kept, m.id)
				}
				require.Equal(t, ids[:min(limit, len(ids))], kept)
				require.Equal(t, len(ids) >= limit, raw.missing)
				g = g.extend(raw)
				want := newUnreadGrouping(mutes, convs, raw, allowEmpty).emit(1, raw)
				require.Equal(t, want, g.emit(1, raw), "round %d, step %d (allow empty topic %v)", round, step, allowEmpty)
				require.LessOrEqual(t, len(raw.msgs), limit)
			}
		}
	}
}
