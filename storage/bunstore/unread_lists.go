package bunstore

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/teamchat/chat/storage"
)

// The unread channel messages of a reader (ListUnreadChannelMessages),
// handed over a span at a time in a few values rather than a row per
// message: through the driver a row costs more than the database's own
// work for it. Of the 55–70 ms that SQLite took for the newest 50,000 of
// a reader with 100,000 unread as one compound SELECT merged by ID, the
// rows took about 30 and the merge most of the rest; PostgreSQL sorted
// the 100,000 to keep 50,000 (110 ms with the rows, 30 ms as aggregates
// per span). Each span's newest messages come as one value: their IDs (a
// channel wildcard's negated) and their topics, each list joined into one
// string in the same order (dialectOps.unreadAggregates). Go numbers the
// topics, once per channel and spelling, and merges the spans newest
// first.
//
// The newest limit of all spans are found in at most two rounds. The
// first reads up to limit/len(spans) (at least unreadFirstRound) of each
// span. A span that gave that many may hold more: the second round reads,
// of those spans only and up to limit each, what lies between the
// limit-th newest message read so far (or the span's start, when fewer
// were read) and the oldest read of the span. A message among the newest
// limit of all is newer than that bound, so it was read in the first
// round or lies in a span cut short, above the bound; a span's messages
// past the limit of the second round have limit newer ones before them.
// A reader with fewer unread than limit/len(spans) in each span costs one
// statement; the benchmark's reader (100,000 unread spread over 50
// channels) costs two, reading 50,000 messages and a few more.

// unreadFirstRound is the least that the first round reads of a span.
const unreadFirstRound = 200

// unreadTopicSep separates the topics of a span's aggregate, and
// unreadListSep its IDs from its topics. Topics hold no control character
// (the Service refuses them); a span whose topics hold one anyway is read
// row by row.
const (
	unreadTopicSep = "\x1f"
	unreadListSep  = "\x1e"
)

// openSpan is the Last of a span without an end (the Service's).
const openSpan = 1 << 62

// unreadStatement is a statement and its arguments.
type unreadStatement struct {
	query string
	args  []any
}

// unreadSpan is a span of a round: its messages with IDs below before.
type unreadSpan struct {
	storage.IDSpan
	before int64
}

// unreadSpansPerQuery bounds the spans of one statement (four values
// each, well within both databases' limits on a statement's values).
const unreadSpansPerQuery = 400

// unreadTopics numbers the topics of an answer, once per channel and
// spelling.
type unreadTopics struct {
	byStream map[int64]map[string]int32
	list     []storage.UnreadTopic
}

// ref returns the number of the channel's topic spelled name (bytes that
// may be reused after).
func (t *unreadTopics) ref(streamID int64, name []byte) int32 {
	m := t.byStream[streamID]
	if m == nil {
		m = map[string]int32{}
		t.byStream[streamID] = m
	}
	r, ok := m[string(name)] // no allocation for the lookup
	if !ok {
		r = int32(len(t.list))
		topic := string(name)
		m[topic] = r
		t.list = append(t.list, storage.UnreadTopic{StreamID: streamID, Name: topic})
	}
	return r
}

// listUnreadAggregated is ListUnreadChannelMessages.
func (s *Store) listUnreadAggregated(ctx context.Context, realmID int64, spans []storage.IDSpan, cond string, limit int) (*storage.UnreadChannelMessages, error) {
	topics := &unreadTopics{byStream: map[int64]map[string]int32{}, list: []storage.UnreadTopic{}}
	first := min(limit, max(limit/len(spans), unreadFirstRound))
	round := make([]unreadSpan, len(spans))
	for i, sp := range spans {
		round[i] = unreadSpan{sp, sp.Last + 1}
	}
	lists, err := s.aggregateUnread(ctx, realmID, round, cond, first, topics)
	if err != nil {
		return nil, err
	}
	// The spans cut short, and the limit-th newest message read so far.
	var short []int
	for i, l := range lists {
		if len(l) == first {
			short = append(short, i)
		}
	}
	if len(short) > 0 {
		bound := nthNewest(lists, limit)
		var more []unreadSpan
		var of []int
		for _, i := range short {
			// The span's end stays (an open span is read from its end,
			// past what the first round read: see unreadAggregates).
			sp := unreadSpan{spans[i], lists[i][len(lists[i])-1].ID}
			sp.First = max(sp.First, bound)
			if sp.First < sp.before {
				more, of = append(more, sp), append(of, i)
			}
		}
		rest, err := s.aggregateUnread(ctx, realmID, more, cond, limit, topics)
		if err != nil {
			return nil, err
		}
		for k, i := range of {
			lists[i] = append(lists[i], rest[k]...)
		}
	}
	return &storage.UnreadChannelMessages{Messages: mergeNewestLists(lists, limit), Topics: topics.list}, nil
}

// aggregateUnread lists up to perSpan of the newest messages of each
// span, newest first, in the spans' order.
func (s *Store) aggregateUnread(ctx context.Context, realmID int64, spans []unreadSpan, cond string, perSpan int, topics *unreadTopics) ([][]storage.UnreadChannelMessage, error) {
	out := make([][]storage.UnreadChannelMessage, len(spans))
	for start := 0; start < len(spans); start += unreadSpansPerQuery {
		part := spans[start:min(len(spans), start+unreadSpansPerQuery)]
		for _, st := range s.ops.unreadAggregates(realmID, part, cond, perSpan) {
			if err := s.scanUnreadAggregates(ctx, realmID, part, out[start:], cond, perSpan, topics, st.query, st.args); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// scanUnreadAggregates reads the rows of a span each into out.
func (s *Store) scanUnreadAggregates(ctx context.Context, realmID int64, spans []unreadSpan, out [][]storage.UnreadChannelMessage,
	cond string, perSpan int, topics *unreadTopics, query string, args []any) error {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var v sql.RawBytes
	for rows.Next() {
		var i int
		if err := rows.Scan(&i, &v); err != nil {
			return err
		}
		if i < 0 || i >= len(spans) {
			return fmt.Errorf("the aggregate of span %d of %d", i, len(spans))
		}
		if v == nil {
			continue // no messages
		}
		ids, names, found := bytes.Cut(v, []byte(unreadListSep))
		list, ok := parseUnreadAggregate(spans[i].StreamID, ids, names, topics)
		ok = ok && found
		if !ok {
			// A topic holding the separator: this span row by row.
			if list, err = s.unreadRows(ctx, realmID, spans[i], cond, perSpan, topics); err != nil {
				return err
			}
		}
		out[i] = list
	}
	return rows.Err()
}

// parseUnreadAggregate reads a span's IDs and topics; ok is false when
// they do not pair up.
func parseUnreadAggregate(streamID int64, ids, names []byte, topics *unreadTopics) ([]storage.UnreadChannelMessage, bool) {
	list := make([]storage.UnreadChannelMessage, 0, bytes.Count(ids, []byte{','})+1)
	sorted := true
	for len(ids) > 0 {
		j := 0
		neg := ids[0] == '-'
		if neg {
			j = 1
		}
		var id int64
		for ; j < len(ids) && ids[j] != ','; j++ {
			id = id*10 + int64(ids[j]-'0')
		}
		if len(list) > 0 && list[len(list)-1].ID < id {
			sorted = false
		}
		list = append(list, storage.UnreadChannelMessage{ID: id, StreamID: streamID, StreamWildcard: neg})
		ids = ids[min(j+1, len(ids)):]
	}
	n := len(list)
	k := 0
	var last []byte
	ref := int32(-1)
	for {
		j := bytes.IndexByte(names, unreadTopicSep[0])
		name := names
		if j >= 0 {
			name = names[:j]
		}
		if k == n {
			return nil, false
		}
		if ref < 0 || !bytes.Equal(name, last) { // runs of one topic are common
			ref, last = topics.ref(streamID, name), name
		}
		list[k].Topic = ref
		k++
		if j < 0 {
			break
		}
		names = names[j+1:]
	}
	if k != n {
		return nil, false
	}
	if !sorted {
		sortNewestFirst(list)
	}
	return list, true
}

// unreadRows lists up to perSpan of a span's newest messages row by row.
func (s *Store) unreadRows(ctx context.Context, realmID int64, sp unreadSpan, cond string, perSpan int, topics *unreadTopics) ([]storage.UnreadChannelMessage, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT m.id, m.topic, m.stream_wildcard FROM messages AS m
		WHERE m.realm_id = ? AND m.stream_id = ? AND m.id >= ? AND m.id <= ? AND m.id < ? `+cond+" ORDER BY m.id DESC LIMIT ?",
		realmID, sp.StreamID, sp.First, sp.Last, sp.before, perSpan)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storage.UnreadChannelMessage
	var topic []byte
	for rows.Next() {
		m := storage.UnreadChannelMessage{StreamID: sp.StreamID}
		if err := rows.Scan(&m.ID, &topic, &m.StreamWildcard); err != nil {
			return nil, err
		}
		m.Topic = topics.ref(sp.StreamID, topic)
		out = append(out, m)
	}
	return out, rows.Err()
}

// sortNewestFirst sorts a list by ID, descending.
func sortNewestFirst(list []storage.UnreadChannelMessage) {
	slices.SortFunc(list, func(a, b storage.UnreadChannelMessage) int { return cmp.Compare(b.ID, a.ID) })
}

// mergeNewestLists merges newest-first lists into one, newest first, up
// to limit, through a heap of the lists' heads.
func mergeNewestLists(lists [][]storage.UnreadChannelMessage, limit int) []storage.UnreadChannelMessage {
	type head struct {
		id       int64
		list, at int32
	}
	total := 0
	h := make([]head, 0, len(lists))
	for i, l := range lists {
		total += len(l)
		if len(l) > 0 {
			h = append(h, head{l[0].ID, int32(i), 0})
		}
	}
	out := make([]storage.UnreadChannelMessage, 0, min(total, limit))
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && h[c+1].id > h[c].id {
				c++
			}
			if h[c].id <= h[i].id {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(out) < limit && len(h) > 0 {
		top := &h[0]
		l := lists[top.list]
		out = append(out, l[top.at])
		if top.at++; int(top.at) < len(l) {
			top.id = l[top.at].ID
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return out
}

// nthNewest returns the n-th greatest ID of the lists (0 when they hold
// fewer), by selection over their IDs.
func nthNewest(lists [][]storage.UnreadChannelMessage, n int) int64 {
	var ids []int64
	for _, l := range lists {
		for i := range l {
			ids = append(ids, l[i].ID)
		}
	}
	if len(ids) < n || n <= 0 {
		return 0
	}
	// Quickselect for the (n-1)-th of a descending order.
	k, lo, hi := n-1, 0, len(ids)-1
	for lo < hi {
		p := ids[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for ids[i] > p {
				i++
			}
			for ids[j] < p {
				j--
			}
			if i <= j {
				ids[i], ids[j] = ids[j], ids[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return ids[k]
		}
	}
	return ids[k]
}
