package chat

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/teamchat/chat/storage"
)

// Grouping a reader's unread messages as unread_msgs lists them: channel
// messages by channel and topic (the topic compared case-insensitively,
// shown as its oldest unread message spells it), one-on-one and group
// conversations, and the mentions. unreads.go lists the messages;
// unread_cache.go keeps a grouping with its state and extends it.

// unreadMention is the reference's rule for the mentions list: a
// personal mention, or a wildcard outside muted conversations.
func unreadMention(m *unreadMessage, muted bool) bool {
	if m.flags&storage.FlagMentioned != 0 {
		return true
	}
	wild := m.flags&(storage.FlagStreamWildcardMentioned|storage.FlagTopicWildcardMentioned) != 0
	return wild && (m.streamID == 0 || !muted)
}

// unreadGrouping is what grouping a reader's raw unread messages needs
// besides the messages: their mute state, their conversations' members,
// and the topic buckets of the raw state's topics (by channel and topic,
// the topic compared case-insensitively), in answer order. A reader with
// 50,000 unread messages may have them in tens of thousands of topics, so
// each topic entry's bucket is found once (the Store numbers the
// spellings), and a remembered state's grouping is extended with the
// topics of newer messages rather than made again (extend). Nothing in it
// changes once made.
type unreadGrouping struct {
	allowEmptyTopic bool
	mutes           *muteState
	convs           map[int64][]int64
	// byRef is each topic entry's bucket, and mutedRef whether its
	// spelling is muted for the reader (the reference asks per message);
	// byKey finds a bucket by channel and folded topic (more: those added
	// by extend).
	byRef    []int32
	mutedRef []bool
	byKey    map[foldedTopic]int32
	more     map[foldedTopic]int32
	buckets  []topicBucket
	// order lists the buckets by channel and key.
	order []int32
}

type foldedTopic struct {
	stream int64
	key    string
}

type topicBucket struct {
	stream int64
	key    string
}

// compareBuckets orders buckets by channel and key.
func compareBuckets(x, y *topicBucket) int {
	if x.stream != y.stream {
		return cmp.Compare(x.stream, y.stream)
	}
	return strings.Compare(x.key, y.key)
}

// prepareUnreads makes the grouping of raw.
func (r reads) prepareUnreads(ctx context.Context, realm *storage.Realm, me *storage.User, raw *rawUnreads, allowEmptyTopic bool) (*unreadGrouping, error) {
	mutes, err := r.loadMuteState(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, err
	}
	convs := map[int64][]int64{}
	for _, m := range raw.msgs {
		if m.conversationID != 0 {
			convs[m.conversationID] = nil
		}
	}
	if len(convs) > 0 {
		if convs, err = r.st.ConversationMembersOf(ctx, realm.ID, mapKeys(convs)); err != nil {
			return nil, err
		}
	}
	return newUnreadGrouping(mutes, convs, raw, allowEmptyTopic), nil
}

// newUnreadGrouping makes the grouping of raw, given the reader's mute
// state and their conversations' members.
func newUnreadGrouping(mutes *muteState, convs map[int64][]int64, raw *rawUnreads, allowEmptyTopic bool) *unreadGrouping {
	g := &unreadGrouping{allowEmptyTopic: allowEmptyTopic, mutes: mutes, convs: convs,
		byKey: make(map[foldedTopic]int32, min(len(raw.topics), 1<<15)), buckets: make([]topicBucket, 0, len(raw.topics))}
	g.byRef, g.mutedRef = g.resolve(raw.topics, nil, nil)
	g.order = make([]int32, len(g.buckets))
	for i := range g.order {
		g.order[i] = int32(i)
	}
	g.sortBuckets(g.order)
	return g
}

// extend returns the grouping of next, a state that g's state with newer
// channel messages added: its topic entries are g's followed by new ones.
func (g *unreadGrouping) extend(next *rawUnreads) *unreadGrouping {
	n := *g
	n.more = make(map[foldedTopic]int32, len(g.more))
	for k, b := range g.more {
		n.more[k] = b
	}
	n.buckets = g.buckets[:len(g.buckets):len(g.buckets)]
	first := len(n.buckets)
	n.byRef, n.mutedRef = n.resolve(next.topics[len(g.byRef):], g.byRef, g.mutedRef)
	if len(n.buckets) == first {
		return &n
	}
	added := make([]int32, 0, len(n.buckets)-first)
	for b := first; b < len(n.buckets); b++ {
		added = append(added, int32(b))
	}
	n.sortBuckets(added)
	// Both lists are in order: merge them.
	n.order = make([]int32, 0, len(n.buckets))
	i, j := 0, 0
	for i < len(g.order) || j < len(added) {
		if j == len(added) || i < len(g.order) && compareBuckets(&n.buckets[g.order[i]], &n.buckets[added[j]]) < 0 {
			n.order = append(n.order, g.order[i])
			i++
		} else {
			n.order = append(n.order, added[j])
			j++
		}
	}
	return &n
}

// resolve returns byRef and mutedRef followed by the buckets of topics
// and whether they are muted, adding the buckets it does not find.
func (g *unreadGrouping) resolve(topics []storage.UnreadTopic, byRef []int32, mutedRef []bool) ([]int32, []bool) {
	out := make([]int32, len(byRef), len(byRef)+len(topics))
	copy(out, byRef)
	muted := make([]bool, len(mutedRef), len(mutedRef)+len(topics))
	copy(muted, mutedRef)
	for _, topic := range topics {
		muted = append(muted, g.mutes.any(topic.StreamID) && g.mutes.muted(topic.StreamID, topic.Name))
		name := topic.Name
		if name == "" && !g.allowEmptyTopic {
			name = EmptyTopicDisplayName
		}
		k := foldedTopic{topic.StreamID, strings.ToLower(name)}
		b, ok := g.byKey[k]
		if !ok && g.more != nil {
			b, ok = g.more[k]
		}
		if !ok {
			b = int32(len(g.buckets))
			if g.more != nil {
				g.more[k] = b
			} else {
				g.byKey[k] = b
			}
			g.buckets = append(g.buckets, topicBucket{stream: topic.StreamID, key: k.key})
		}
		out = append(out, b)
	}
	return out, muted
}

// sortBuckets sorts buckets by channel and key.
func (g *unreadGrouping) sortBuckets(buckets []int32) {
	// Moving small keys rather than indexes into the buckets: with tens of
	// thousands of topics, following an index to compare cost twice as
	// much.
	keys := make([]bucketOrder, len(buckets))
	for i, b := range buckets {
		keys[i] = bucketOrder{g.buckets[b], b}
	}
	slices.SortFunc(keys, func(x, y bucketOrder) int { return compareBuckets(&x.topicBucket, &y.topicBucket) })
	for i, k := range keys {
		buckets[i] = k.b
	}
}

// emit groups raw (whose grouping g is) as unread_msgs does: each topic
// shown as its oldest unread message spells it, each list of IDs
// ascending.
func (g *unreadGrouping) emit(me int64, raw *rawUnreads) *UnreadMessages {
	out := &UnreadMessages{PMs: []UnreadDirect{}, Streams: []UnreadChannelTopic{}, Huddles: []UnreadGroupDirect{},
		Mentions: []int64{}, OldUnreadsMissing: raw.missing}
	count := make([]int32, len(g.buckets))
	oldest := make([]int32, len(g.buckets)) // the topic entry of each bucket's oldest message
	direct := map[int64]*UnreadDirect{}
	groups := map[string]*UnreadGroupDirect{}
	channelMessages := 0
	for i := len(raw.msgs) - 1; i >= 0; i-- { // oldest first: IDs ascend
		m := &raw.msgs[i]
		muted := false
		switch {
		case m.streamID != 0:
			b := g.byRef[m.topic]
			if count[b] == 0 {
				oldest[b] = m.topic
			}
			count[b]++
			channelMessages++
			muted = g.mutedRef[m.topic]
			if !muted {
				out.Count++
			}
		default:
			out.Count++
			members := g.convs[m.conversationID]
			if len(members) <= 2 {
				other := m.senderID
				if other == me {
					for _, id := range members {
						if id != me {
							other = id
						}
					}
				}
				if direct[other] == nil {
					direct[other] = &UnreadDirect{OtherUserID: other, SenderID: other}
				}
				direct[other].UnreadMessageIDs = append(direct[other].UnreadMessageIDs, m.id)
				break
			}
			key := joinIDs(members)
			if groups[key] == nil {
				groups[key] = &UnreadGroupDirect{UserIDsString: key}
			}
			groups[key].UnreadMessageIDs = append(groups[key].UnreadMessageIDs, m.id)
		}
		if unreadMention(m, muted) {
			out.Mentions = append(out.Mentions, m.id)
		}
	}
	// Each bucket's place in out and its IDs in one array shared by all
	// buckets, counted first.
	at := make([]int32, len(g.buckets))
	all := make([]int64, channelMessages)
	next := 0
	for _, b := range g.order {
		if count[b] == 0 {
			continue
		}
		at[b] = int32(len(out.Streams))
		name := raw.topics[oldest[b]].Name
		if name == "" && !g.allowEmptyTopic {
			name = EmptyTopicDisplayName
		}
		n := int(count[b])
		out.Streams = append(out.Streams, UnreadChannelTopic{StreamID: g.buckets[b].stream, Topic: name, UnreadMessageIDs: all[next : next : next+n]})
		next += n
	}
	for i := len(raw.msgs) - 1; i >= 0; i-- {
		m := &raw.msgs[i]
		if m.streamID != 0 {
			t := &out.Streams[at[g.byRef[m.topic]]]
			t.UnreadMessageIDs = append(t.UnreadMessageIDs, m.id)
		}
	}
	for _, k := range sortedKeys(direct, cmp.Compare[int64]) {
		out.PMs = append(out.PMs, *direct[k])
	}
	for _, k := range sortedKeys(groups, strings.Compare) {
		out.Huddles = append(out.Huddles, *groups[k])
	}
	return out
}

// bucketOrder is a topic bucket's sort key and its index.
type bucketOrder struct {
	topicBucket
	b int32
}

// sortedKeys returns the map's keys in cmp's order.
func sortedKeys[K comparable, V any](m map[K]V, cmp func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp)
	return keys
}

// joinIDs joins ascending IDs with commas.
func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}
