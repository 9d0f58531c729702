package chat

import (
	"context"
	"slices"

	"github.com/teamchat/chat/storage"
)

// Message flags: what a reader did with messages (read, starred,
// collapsed), kept in the sparse per-user state. A channel message's
// read state is the reader's read ranges of the channel when they
// received it; everything else is a row, created only where it differs
// from the default. A channel message the reader never received has the
// reference's "historical" defaults (read, historical); changing one of
// them creates a historical row, after checking that the reader may see
// the message.

// apiFlags are the flags the API knows, in the reference's bit order
// (is_private and active_mobile_push_notification are internal).
var apiFlags = []struct {
	bit  int64
	name string
}{
	{storage.FlagRead, "read"}, {storage.FlagStarred, "starred"}, {storage.FlagCollapsed, "collapsed"},
	{storage.FlagMentioned, "mentioned"}, {storage.FlagStreamWildcardMentioned, "stream_wildcard_mentioned"},
	{storage.FlagTopicWildcardMentioned, "topic_wildcard_mentioned"}, {storage.FlagGroupMentioned, "group_mentioned"},
	{storage.FlagForceExpand, "force_expand"}, {storage.FlagForceCollapse, "force_collapse"},
	{storage.FlagHasAlertWord, "has_alert_word"}, {storage.FlagHistorical, "historical"},
}

// defaultHistoricalFlags are the flags of a message one may see but has
// no row for (the reference's DEFAULT_HISTORICAL_FLAGS).
const defaultHistoricalFlags = storage.FlagRead | storage.FlagHistorical

// UpdateMessageFlagsRequest is the input of UpdateMessageFlags (POST
// /messages/flags).
type UpdateMessageFlagsRequest struct {
	Messages []int64 `json:"messages"`
	// Op is "add" or "remove".
	Op string `json:"op"`
	// Flag is "read", "starred" or "collapsed" (the others are not
	// editable).
	Flag string `json:"flag"`
}

// UpdateMessageFlagsResponse is the success body of UpdateMessageFlags.
type UpdateMessageFlagsResponse struct {
	// Messages echoes the request, as the reference does.
	Messages []int64 `json:"messages"`
	// IgnoredBecauseNotSubscribedChannels lists the channels whose
	// messages were left read because the caller is not subscribed.
	IgnoredBecauseNotSubscribedChannels []int64 `json:"ignored_because_not_subscribed_channels"`
}

// UpdateMessageFlagsEvent tells a user their flags changed. All: every
// message was marked read (Messages is then empty). MessageDetails, on
// marking unread, describes each message for the client's unread counts.
type UpdateMessageFlagsEvent struct {
	Op             string                          `json:"op"`
	Operation      string                          `json:"operation"`
	Flag           string                          `json:"flag"`
	Messages       []int64                         `json:"messages"`
	All            bool                            `json:"all"`
	MessageDetails map[string]UnreadMessageDetails `json:"message_details,omitempty"`
}

// EventType implements EventBody.
func (UpdateMessageFlagsEvent) EventType() string { return "update_message_flags" }

// UnreadMessageDetails describes a message marked unread.
type UnreadMessageDetails struct {
	Type             string  `json:"type"`
	Mentioned        bool    `json:"mentioned,omitempty"`
	UserIDs          []int64 `json:"user_ids,omitempty"`
	StreamID         int64   `json:"stream_id,omitempty"`
	Topic            *string `json:"topic,omitempty"`
	UnmutedStreamMsg *bool   `json:"unmuted_stream_msg,omitempty"`
}

// editableFlag validates the flag and op as the reference does.
func editableFlag(flag, op string) (int64, error) {
	var bit int64
	for _, f := range apiFlags {
		if f.name == flag {
			bit = f.bit
		}
	}
	if bit == 0 {
		return 0, BadRequest("Invalid flag: '%s'", flag)
	}
	if bit != storage.FlagRead && bit != storage.FlagStarred && bit != storage.FlagCollapsed {
		return 0, BadRequest("Flag not editable: '%s'", flag)
	}
	if op != "add" && op != "remove" {
		return 0, BadRequest("Invalid message flag operation: '%s'", op)
	}
	return bit, nil
}

// UpdateMessageFlags adds or removes a flag of the caller's messages
// (POST /messages/flags). Marking unread leaves out the messages of
// channels the caller is not subscribed to; changing a flag of a message
// the caller never received needs access to it ("Invalid message(s)").
func (s *Service) UpdateMessageFlags(ctx context.Context, c Caller, req UpdateMessageFlagsRequest) (*UpdateMessageFlagsResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	bit, err := editableFlag(req.Flag, req.Op)
	if err != nil {
		return nil, err
	}
	var res flagChange
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		res, err = s.changeFlags(ctx, w, realm, me, req.Op == "add", bit, req.Flag, req.Messages)
		return err
	})
	if err != nil {
		return nil, s.internal(ctx, "update message flags", err)
	}
	return &UpdateMessageFlagsResponse{Messages: nonNil(req.Messages), IgnoredBecauseNotSubscribedChannels: res.ignored}, nil
}

// flagChange is what changeFlags did: the messages whose flag changed
// and the channels left out.
type flagChange struct {
	changed []int64
	ignored []int64
}

// messageState is a reader's view of one message for a flag change.
type messageState struct {
	m        *storage.Message
	flags    int64
	hasRow   bool
	received bool // a channel message a subscription period covers
}

// changeFlags is the reference's do_update_message_flags in w.
func (s *Service) changeFlags(ctx context.Context, w *writeTx, realm *storage.Realm, me *storage.User, add bool, bit int64, flag string, ids []int64) (flagChange, error) {
	var res flagChange
	res.ignored = []int64{}
	ids = uniqueInOrder(ids)
	st, err := w.reads().readerState(ctx, realm, me, ids)
	if err != nil {
		return res, err
	}
	if bit == storage.FlagRead && !add {
		// Unread channel messages must be in subscribed channels.
		ignored := map[int64]bool{}
		ids = slices.DeleteFunc(ids, func(id int64) bool {
			ms := st.msgs[id]
			if ms == nil || ms.m.StreamID == nil || st.subscribed[*ms.m.StreamID] {
				return false
			}
			ignored[*ms.m.StreamID] = true
			return true
		})
		res.ignored = uniqueSorted(mapKeys(ignored))
	}
	var changed, historical []int64
	for _, id := range ids {
		flags := defaultHistoricalFlags
		if ms := st.msgs[id]; ms != nil && (ms.hasRow || ms.received) {
			flags = ms.flags
		}
		if (flags&bit != 0) == add {
			continue
		}
		changed = append(changed, id)
		if ms := st.msgs[id]; ms == nil || !ms.hasRow && !ms.received {
			historical = append(historical, id)
		}
	}
	if len(historical) > 0 {
		var msgs []storage.Message
		for _, id := range historical {
			if ms := st.msgs[id]; ms != nil {
				msgs = append(msgs, *ms.m)
			}
		}
		ok, err := s.accessible(ctx, w.reads(), realm, me, msgs, st)
		if err != nil {
			return res, err
		}
		if len(ok) != len(historical) {
			return res, errInvalidMessage
		}
	}
	if err := s.applyFlagChange(ctx, w, realm, me, st, add, bit, changed); err != nil {
		return res, err
	}
	res.changed = nonNil(changed)
	ev := UpdateMessageFlagsEvent{Op: opName(add), Operation: opName(add), Flag: flag, Messages: res.changed}
	if bit == storage.FlagRead && !add {
		if ev.MessageDetails, err = w.reads().unreadDetails(ctx, realm, me, st, changed); err != nil {
			return res, err
		}
	}
	w.emit(Audience{Users: []int64{me.ID}}, ev)
	return res, nil
}

func opName(add bool) string {
	if add {
		return "add"
	}
	return "remove"
}

// applyFlagChange writes the change of bit for the messages whose flag
// changes: read ranges for received channel messages' read flag, rows
// for the rest (created with the historical defaults where missing).
func (s *Service) applyFlagChange(ctx context.Context, w *writeTx, realm *storage.Realm, me *storage.User, st *readerState, add bool, bit int64, ids []int64) error {
	var update []int64
	var insert []storage.UserMessage
	byChannel := map[int64][]int64{}
	for _, id := range ids {
		ms := st.msgs[id]
		switch {
		case ms != nil && ms.received && bit == storage.FlagRead:
			byChannel[*ms.m.StreamID] = append(byChannel[*ms.m.StreamID], id)
		case ms != nil && ms.hasRow:
			update = append(update, id)
		case ms != nil && ms.received:
			// A received channel message's first row: read stays in ranges.
			insert = append(insert, storage.UserMessage{RealmID: realm.ID, UserID: me.ID, MessageID: id, Flags: bit})
		default:
			flags := defaultHistoricalFlags &^ bit
			if add {
				flags |= bit
			}
			insert = append(insert, storage.UserMessage{RealmID: realm.ID, UserID: me.ID, MessageID: id, Flags: flags})
		}
	}
	if len(update) > 0 {
		var set, clear int64
		if add {
			set = bit
		} else {
			clear = bit
		}
		if err := w.UpdateUserMessageFlags(ctx, realm.ID, me.ID, update, set, clear); err != nil {
			return err
		}
	}
	if err := w.InsertUserMessages(ctx, insert); err != nil {
		return err
	}
	for _, ch := range uniqueSorted(mapKeys(byChannel)) {
		var err error
		if add {
			err = s.markChannelIDsRead(ctx, w, realm.ID, me.ID, ch, st.periods, byChannel[ch])
		} else {
			err = s.markChannelIDsUnread(ctx, w, realm.ID, me.ID, ch, byChannel[ch])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// uniqueInOrder drops repeated IDs, keeping the first of each.
func uniqueInOrder(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// MarkAllAsReadResponse is the success body of MarkAllAsRead.
type MarkAllAsReadResponse struct {
	// Complete is false when the request stopped after its share of
	// batches; the client repeats it.
	Complete bool `json:"complete"`
}

// markAllBatches bounds the batches one MarkAllAsRead runs (the
// reference stops after 50 seconds instead).
const markAllBatches = 25

// WithMarkAllAsReadBatch sets how many unread rows or channels one
// transaction of MarkAllAsRead marks read (default 2,000); a request runs
// at most 25 such batches before answering complete: false.
func WithMarkAllAsReadBatch(n int) Option {
	return func(s *Service) {
		if n > 0 {
			s.markAllBatch = n
		}
	}
}

// MarkAllAsRead marks every message read for the caller (POST
// /mark_all_as_read), in batches of bounded transactions: first the
// unread direct and historical rows, newest first, then each channel
// with unread messages, which becomes one read range. The work follows
// the caller's unread state, not the history.
func (s *Service) MarkAllAsRead(ctx context.Context, c Caller) (*MarkAllAsReadResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	for range markAllBatches {
		done := false
		err := s.write(ctx, realm.ID, func(w *writeTx) error {
			w.keepCallers()
			var err error
			done, err = s.markAllBatchIn(ctx, w, realm.ID, me.ID, s.markAllBatch)
			if err == nil && done {
				w.emit(Audience{Users: []int64{me.ID}}, UpdateMessageFlagsEvent{Op: "add", Operation: "add", Flag: "read", Messages: []int64{}, All: true})
			}
			return err
		})
		if err != nil {
			return nil, s.internal(ctx, "mark all as read", err)
		}
		if done {
			return &MarkAllAsReadResponse{Complete: true}, nil
		}
	}
	return &MarkAllAsReadResponse{Complete: false}, nil
}

// markAllBatchIn marks up to n unread rows, or else up to n channels,
// read; done says nothing unread is left.
func (s *Service) markAllBatchIn(ctx context.Context, w *writeTx, realmID, userID int64, n int) (done bool, err error) {
	rows, err := w.ListUnreadRows(ctx, realmID, userID, nil, n)
	if err != nil {
		return false, err
	}
	if len(rows) > 0 {
		return false, w.UpdateUserMessageFlags(ctx, realmID, userID, flaggedIDs(rows), storage.FlagRead, 0)
	}
	periods, err := w.ListUserPeriods(ctx, realmID, userID)
	if err != nil {
		return false, err
	}
	channels := map[int64]bool{}
	for _, p := range periods {
		channels[p.StreamID] = true
	}
	gaps, err := w.reads().unreadGaps(ctx, realmID, userID, periods, mapKeys(channels))
	if err != nil || len(gaps) == 0 {
		return err == nil, err
	}
	maxID, err := w.MaxMessageID(ctx)
	if err != nil {
		return false, err
	}
	var unread []int64
	for _, g := range gaps {
		if g.First <= maxID && (len(unread) == 0 || unread[len(unread)-1] != g.StreamID) {
			unread = append(unread, g.StreamID)
		}
	}
	batch := unread[:min(len(unread), n)]
	if err := w.ResetReadRanges(ctx, realmID, userID, batch, maxID); err != nil {
		return false, err
	}
	return len(batch) == len(unread), nil
}

// maxMessagesPerUpdate bounds the messages one flags/narrow request
// changes (the reference's MAX_MESSAGES_PER_UPDATE).
const maxMessagesPerUpdate = 5000

// UpdateMessageFlagsForNarrowRequest is the input of
// UpdateMessageFlagsForNarrow (POST /messages/flags/narrow).
type UpdateMessageFlagsForNarrowRequest struct {
	// Anchor is a message ID, "newest" or "oldest" ("first_unread" too).
	Anchor        string `json:"anchor"`
	IncludeAnchor *bool  `json:"include_anchor"`
	NumBefore     int    `json:"num_before"`
	NumAfter      int    `json:"num_after"`
	// Narrow is the filter as JSON, in either form; "[]" is every message.
	Narrow string `json:"narrow"`
	Op     string `json:"op"`
	Flag   string `json:"flag"`
}

// UpdateMessageFlagsForNarrowResponse is the success body of
// UpdateMessageFlagsForNarrow.
type UpdateMessageFlagsForNarrowResponse struct {
	ProcessedCount                      int     `json:"processed_count"`
	UpdatedCount                        int     `json:"updated_count"`
	FirstProcessedID                    *int64  `json:"first_processed_id"`
	LastProcessedID                     *int64  `json:"last_processed_id"`
	FoundOldest                         bool    `json:"found_oldest"`
	FoundNewest                         bool    `json:"found_newest"`
	IgnoredBecauseNotSubscribedChannels []int64 `json:"ignored_because_not_subscribed_channels"`
}

// UpdateMessageFlagsForNarrow changes a flag of the messages of a window
// of a narrow, like GetMessages would fetch it. The window is clamped to
// 5,000 messages, as in the reference; the client continues from
// last_processed_id.
func (s *Service) UpdateMessageFlagsForNarrow(ctx context.Context, c Caller, req UpdateMessageFlagsForNarrowRequest) (*UpdateMessageFlagsForNarrowResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if req.NumBefore < 0 {
		return nil, BadRequest("num_before is too small")
	}
	if req.NumAfter < 0 {
		return nil, BadRequest("num_after is too small")
	}
	anchor, err := parseAnchor(&req.Anchor, false)
	if err != nil {
		return nil, err
	}
	includeAnchor := req.IncludeAnchor == nil || *req.IncludeAnchor
	if req.NumBefore > 0 && req.NumAfter > 0 && !includeAnchor {
		return nil, BadRequest("The anchor can only be excluded at an end of the range")
	}
	bit, err := editableFlag(req.Flag, req.Op)
	if err != nil {
		return nil, err
	}
	numBefore := min(req.NumBefore, max(maxMessagesPerUpdate-req.NumAfter, maxMessagesPerUpdate/2))
	numAfter := min(req.NumAfter, maxMessagesPerUpdate-numBefore)
	q, err := s.reads().compileNarrow(ctx, me, realm, &req.Narrow, narrowUse{})
	if err != nil {
		return nil, err
	}
	if anchor == nil {
		first, err := s.reads().firstUnread(ctx, realm.ID, me.ID, q)
		if err != nil {
			return nil, s.internal(ctx, "update message flags for narrow", err)
		}
		anchor = &first
	}
	var window GetMessagesResponse
	rows, err := s.reads().window(ctx, realm.ID, me.ID, q, *anchor, numBefore, numAfter, includeAnchor, &window)
	if err != nil {
		return nil, s.internal(ctx, "update message flags for narrow", err)
	}
	ids := messageIDs(rows)
	var res flagChange
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		res, err = s.changeFlags(ctx, w, realm, me, req.Op == "add", bit, req.Flag, ids)
		return err
	})
	if err != nil {
		return nil, s.internal(ctx, "update message flags for narrow", err)
	}
	out := &UpdateMessageFlagsForNarrowResponse{ProcessedCount: len(ids), UpdatedCount: len(res.changed),
		FoundOldest: window.FoundOldest, FoundNewest: window.FoundNewest, IgnoredBecauseNotSubscribedChannels: res.ignored}
	if len(ids) > 0 {
		out.FirstProcessedID, out.LastProcessedID = &ids[0], &ids[len(ids)-1]
	}
	return out, nil
}
