package chat

import (
	"context"
	"slices"

	"github.com/teamchat/chat/storage"
)

// The reader's state of messages in a write: which they received, their
// rows, their read ranges; and the arithmetic of read ranges. A range
// [first, last] says every message of the channel with an ID in it is
// read; changes replace the ranges of the region they touch, merged as
// far as no unread message separates them.

// maxUnreadScan bounds the unread messages one change of read ranges
// lists to find what separates them; past it, ranges are kept apart.
const maxUnreadScan = 20_000

// readerState is what a flag change needs to know about the reader and
// the messages: each message's state by ID, the reader's periods and
// the channels they are subscribed to.
type readerState struct {
	msgs       map[int64]*messageState
	periods    []storage.SubscriptionPeriod
	subscribed map[int64]bool
}

// readerState reads, through r, the messages, the reader's rows of them,
// their periods and the read ranges of the messages' channels.
func (r reads) readerState(ctx context.Context, realm *storage.Realm, me *storage.User, ids []int64) (*readerState, error) {
	rs := &readerState{msgs: map[int64]*messageState{}, subscribed: map[int64]bool{}}
	var err error
	if rs.periods, err = r.st.ListUserPeriods(ctx, realm.ID, me.ID); err != nil {
		return nil, err
	}
	for _, p := range rs.periods {
		if p.EndMessageID == nil {
			rs.subscribed[p.StreamID] = true
		}
	}
	if len(ids) == 0 {
		return rs, nil
	}
	msgs, err := r.st.GetMessagesByID(ctx, realm.ID, ids)
	if err != nil {
		return nil, err
	}
	rows, err := r.st.ListUserMessages(ctx, realm.ID, me.ID, ids)
	if err != nil {
		return nil, err
	}
	muted, err := r.mutedSenders(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, err
	}
	rowFlags := make(map[int64]int64, len(rows))
	for _, r := range rows {
		rowFlags[r.MessageID] = r.Flags
	}
	channels := map[int64]bool{}
	for i := range msgs {
		if msgs[i].StreamID != nil {
			channels[*msgs[i].StreamID] = true
		}
	}
	ranges := map[int64][]storage.ReadRange{}
	if len(channels) > 0 {
		all, err := r.st.ListReadRangesOf(ctx, realm.ID, me.ID, mapKeys(channels), msgs[0].ID, msgs[len(msgs)-1].ID)
		if err != nil {
			return nil, err
		}
		for _, r := range all {
			ranges[r.StreamID] = append(ranges[r.StreamID], r)
		}
	}
	for i := range msgs {
		m := &msgs[i]
		row, hasRow := rowFlags[m.ID]
		ms := &messageState{m: m, hasRow: hasRow, flags: row}
		if m.StreamID != nil {
			ms.received = periodsCover(rs.periods, *m.StreamID, m.ID)
			ms.flags = channelFlags(m, row, hasRow, ms.received, rangesCover(ranges[*m.StreamID], m.ID))
			if muted[m.SenderID] {
				ms.flags |= storage.FlagRead // read for a muter
			}
		}
		rs.msgs[m.ID] = ms
	}
	return rs, nil
}

// periodsCover says whether one of the periods of the channel covers the
// message ID (the reader received it).
func periodsCover(periods []storage.SubscriptionPeriod, streamID, id int64) bool {
	for _, p := range periods {
		if p.StreamID == streamID && id > p.StartMessageID && (p.EndMessageID == nil || id <= *p.EndMessageID) {
			return true
		}
	}
	return false
}

// rangesCover says whether one of the ranges covers the ID.
func rangesCover(ranges []storage.ReadRange, id int64) bool {
	for _, r := range ranges {
		if r.FirstID <= id && id <= r.LastID {
			return true
		}
	}
	return false
}

// receivedSpans are the channel's spans of messages the reader received
// (their periods of it) within [lo, hi].
func receivedSpans(periods []storage.SubscriptionPeriod, streamID, lo, hi int64) []storage.IDSpan {
	var out []storage.IDSpan
	for _, p := range periods {
		if p.StreamID != streamID {
			continue
		}
		first, last := max(p.StartMessageID+1, lo), hi
		if p.EndMessageID != nil {
			last = min(last, *p.EndMessageID)
		}
		if first <= last {
			out = append(out, storage.IDSpan{StreamID: streamID, First: first, Last: last})
		}
	}
	return out
}

// subtractRanges is the parts of the spans that no range covers.
func subtractRanges(spans []storage.IDSpan, ranges []storage.ReadRange) []storage.IDSpan {
	for _, r := range ranges {
		var next []storage.IDSpan
		for _, sp := range spans {
			if r.LastID < sp.First || r.FirstID > sp.Last {
				next = append(next, sp)
				continue
			}
			if sp.First < r.FirstID {
				next = append(next, storage.IDSpan{StreamID: sp.StreamID, First: sp.First, Last: r.FirstID - 1})
			}
			if r.LastID < sp.Last {
				next = append(next, storage.IDSpan{StreamID: sp.StreamID, First: r.LastID + 1, Last: sp.Last})
			}
		}
		spans = next
	}
	return spans
}

// splitRanges cuts the points (ascending) out of the ranges.
func splitRanges(ranges []storage.ReadRange, points []int64) []storage.ReadRange {
	var out []storage.ReadRange
	for _, r := range ranges {
		first := r.FirstID
		for _, p := range points {
			if p < first || p > r.LastID {
				continue
			}
			if first < p {
				out = append(out, storage.ReadRange{FirstID: first, LastID: p - 1})
			}
			first = p + 1
		}
		if first <= r.LastID {
			out = append(out, storage.ReadRange{FirstID: first, LastID: r.LastID})
		}
	}
	return out
}

// markChannelIDsRead marks the channel messages ids (received, unread)
// read: the region from the range before them to the range after them
// becomes one range, cut only at the unread messages that stay unread.
func (s *Service) markChannelIDsRead(ctx context.Context, w *writeTx, realmID, userID, streamID int64, periods []storage.SubscriptionPeriod, ids []int64) error {
	ids = uniqueSorted(ids)
	if len(ids) == 0 {
		return nil
	}
	first, last := ids[0], ids[len(ids)-1]
	prev, next, err := w.ChannelNeighbours(ctx, realmID, streamID, first, last)
	if err != nil {
		return err
	}
	if next == 0 {
		next = last
	}
	ranges, err := w.ListReadRanges(ctx, realmID, userID, streamID, max(prev, 1), next)
	if err != nil {
		return err
	}
	lo, hi := first, last
	for _, r := range ranges {
		lo, hi = min(lo, r.FirstID), max(hi, r.LastID)
	}
	gaps := subtractRanges(receivedSpans(periods, streamID, first, last), ranges)
	unread, err := w.ListChannelMessagesIn(ctx, realmID, gaps, nil, maxUnreadScan)
	if err != nil {
		return err
	}
	var stay []int64
	for _, m := range unread {
		if _, found := slices.BinarySearch(ids, m.ID); !found {
			stay = append(stay, m.ID)
		}
	}
	slices.Sort(stay)
	next2 := splitRanges([]storage.ReadRange{{FirstID: lo, LastID: hi}}, stay)
	if len(unread) == maxUnreadScan {
		// Too many to know what lies between: each message its own
		// range, next to the ranges that were there.
		next2 = slices.Clone(ranges)
		for _, id := range ids {
			next2 = append(next2, storage.ReadRange{FirstID: id, LastID: id})
		}
		next2 = mergeTouching(next2)
	}
	return w.ReplaceReadRanges(ctx, realmID, userID, streamID, lo, hi, next2)
}

// mergeTouching merges ranges that overlap or whose IDs are adjacent.
func mergeTouching(ranges []storage.ReadRange) []storage.ReadRange {
	slices.SortFunc(ranges, func(a, b storage.ReadRange) int { return int(a.FirstID - b.FirstID) })
	var out []storage.ReadRange
	for _, r := range ranges {
		if n := len(out); n > 0 && r.FirstID <= out[n-1].LastID+1 {
			out[n-1].LastID = max(out[n-1].LastID, r.LastID)
			continue
		}
		out = append(out, storage.ReadRange{FirstID: r.FirstID, LastID: r.LastID})
	}
	return out
}

// markChannelIDsUnread cuts the ids out of the ranges that cover them.
func (s *Service) markChannelIDsUnread(ctx context.Context, w *writeTx, realmID, userID, streamID int64, ids []int64) error {
	ids = uniqueSorted(ids)
	if len(ids) == 0 {
		return nil
	}
	ranges, err := w.ListReadRanges(ctx, realmID, userID, streamID, ids[0], ids[len(ids)-1])
	if err != nil || len(ranges) == 0 {
		return err
	}
	lo, hi := ranges[0].FirstID, ranges[len(ranges)-1].LastID
	return w.ReplaceReadRanges(ctx, realmID, userID, streamID, lo, hi, splitRanges(ranges, ids))
}

// channelAccess is the reference's has_message_access for a channel
// message: received is whether the reader received it (a period covers
// it, or they sent it), hasRow whether they have a row for it.
func channelAccess(ch *storage.Stream, me *storage.User, received, hasRow, subscribed bool) bool {
	if !ch.HistoryPublicToSubscribers && !received && !hasRow {
		return false
	}
	publicToMe := !ch.InviteOnly && me.Role != RoleGuest || ch.IsWebPublic
	return publicToMe || subscribed
}

// accessible returns the IDs of the messages the reader may see.
func (s *Service) accessible(ctx context.Context, r reads, realm *storage.Realm, me *storage.User, msgs []storage.Message, rs *readerState) (map[int64]bool, error) {
	ok := map[int64]bool{}
	for i := range msgs {
		m := &msgs[i]
		ms := rs.msgs[m.ID]
		hasRow := ms != nil && ms.hasRow
		if m.ConversationID != nil {
			if hasRow {
				ok[m.ID] = true
			}
			continue
		}
		ch, err := r.channelByID(ctx, realm.ID, *m.StreamID)
		if err != nil {
			return nil, err
		}
		received := m.SenderID == me.ID || periodsCover(rs.periods, ch.ID, m.ID)
		if channelAccess(ch, me, received, hasRow, rs.subscribed[ch.ID]) {
			ok[m.ID] = true
		}
	}
	return ok, nil
}

// modifiableMessage loads a message the caller may see and act on (not
// in an archived channel): "Invalid message(s)" otherwise, as for a
// missing one.
func (s *Service) modifiableMessage(ctx context.Context, r reads, realm *storage.Realm, me *storage.User, id int64) (*storage.Message, *readerState, error) {
	rs, err := r.readerState(ctx, realm, me, []int64{id})
	if err != nil {
		return nil, nil, err
	}
	ms := rs.msgs[id]
	if ms == nil {
		return nil, nil, errInvalidMessage
	}
	ok, err := s.accessible(ctx, r, realm, me, []storage.Message{*ms.m}, rs)
	if err != nil {
		return nil, nil, err
	}
	if !ok[id] {
		return nil, nil, errInvalidMessage
	}
	if ms.m.StreamID != nil {
		ch, err := r.channelByID(ctx, realm.ID, *ms.m.StreamID)
		if err != nil {
			return nil, nil, err
		}
		if ch.IsArchived {
			return nil, nil, errInvalidMessage
		}
	}
	return ms.m, rs, nil
}
