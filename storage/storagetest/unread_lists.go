package storagetest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// unreadOpen is the Last of a span without an end, as the Service writes
// it.
const unreadOpen = int64(1) << 62

// The unread channel messages of random spans against the messages
// written: spans open and closed, of channels busy and quiet, some
// empty, some overlapping, with limits from 1 to more than there are, so
// that the newest of many spans are found in one round or two; topics
// of every kind (empty, cased, holding the aggregate's separator), the
// channel wildcard, and senders left out.
func testUnreadChannelMessagesRandom(t *testing.T, s storage.Store) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(7, 34))
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	var channels []int64
	for _, name := range []string{"busy", "quiet", "empty", "other"} {
		channels = append(channels, newStream(t, s, realm.ID, name).ID)
	}
	topics := []string{"a", "A", "", "b\x1fc", "ünï", "d"}
	// The messages as the test compares them: the topic by name.
	type unread struct {
		ID, StreamID int64
		Topic        string
		Wildcard     bool
	}
	type msg struct {
		unread
		sender int64
	}
	var all []msg
	for range 400 {
		ch := channels[0]
		switch r := rng.IntN(10); {
		case r == 0:
			ch = channels[1]
		case r == 1:
			ch = channels[3]
		}
		sender := []int64{alice.ID, bob.ID}[rng.IntN(2)]
		topic := topics[rng.IntN(len(topics))]
		wild := rng.IntN(7) == 0
		m := &storage.Message{RealmID: realm.ID, SenderID: sender, StreamID: &ch, Topic: topic,
			Content: "hi", RenderedContent: "<p>hi</p>", DateSent: 1_700_000_000, StreamWildcard: wild}
		require.NoError(t, s.CreateMessage(ctx, m, nil))
		all = append(all, msg{unread{ID: m.ID, StreamID: ch, Topic: topic, Wildcard: wild}, sender})
	}
	lo, hi := all[0].ID, all[len(all)-1].ID
	for round := range 60 {
		var spans []storage.IDSpan
		for range 1 + rng.IntN(6) {
			first := lo - 5 + rng.Int64N(hi-lo+10)
			last := unreadOpen
			if rng.IntN(2) == 0 {
				last = first + rng.Int64N(hi-first+10)
			}
			spans = append(spans, storage.IDSpan{StreamID: channels[rng.IntN(len(channels))], First: first, Last: last})
		}
		limit := []int{1, 3, 17, 60, 250, 1000}[rng.IntN(6)]
		var except []int64
		if rng.IntN(4) == 0 {
			except = []int64{bob.ID}
		}
		want := []unread{}
		for i := len(all) - 1; i >= 0; i-- { // newest first, a span's message once per span
			m := all[i]
			for _, sp := range spans {
				if m.StreamID == sp.StreamID && m.ID >= sp.First && m.ID <= sp.Last && !slices.Contains(except, m.sender) {
					want = append(want, m.unread)
				}
			}
		}
		want = want[:min(len(want), limit)]
		ans, err := s.ListUnreadChannelMessages(ctx, realm.ID, spans, except, limit)
		require.NoError(t, err)
		got := []unread{}
		refs := map[storage.UnreadTopic]int32{}
		for _, m := range ans.Messages {
			require.Less(t, int(m.Topic), len(ans.Topics))
			topic := ans.Topics[m.Topic]
			require.Equal(t, m.StreamID, topic.StreamID, "a message's topic is of its channel")
			if ref, ok := refs[topic]; ok {
				require.Equal(t, ref, m.Topic, "round %d: one entry per channel and spelling", round)
			}
			refs[topic] = m.Topic
			got = append(got, unread{ID: m.ID, StreamID: m.StreamID, Topic: topic.Name, Wildcard: m.StreamWildcard})
		}
		require.Equal(t, want, got, "round %d: spans %v, limit %d, except %v", round, spans, limit, except)
	}
}
