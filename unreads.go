package chat

import (
	"context"
	"errors"
	"strconv"

	"github.com/teamchat/chat/storage"
)

// Unread state: what the reader has not read, computed from their sparse
// state. A channel's unread messages are those of the spans they received
// that no read range covers (listed through the channel's index, span by
// span), plus historical rows marked unread; a direct message's are rows
// without the read flag (a partial index). The cost follows the unread
// messages, not the history.

// maxUnreadMessages caps the unread messages reported, newest first (the
// reference's MAX_UNREAD_MESSAGES).
const maxUnreadMessages = 50_000

// noUpperID is the upper bound of open spans and ranges.
const noUpperID = int64(1) << 62

// UnreadMessages is the reader's unread state in the shape of the
// reference's unread_msgs (POST /register).
type UnreadMessages struct {
	Count    int                  `json:"count"`
	PMs      []UnreadDirect       `json:"pms"`
	Streams  []UnreadChannelTopic `json:"streams"`
	Huddles  []UnreadGroupDirect  `json:"huddles"`
	Mentions []int64              `json:"mentions"`
	// OldUnreadsMissing: there were more than the 50,000 newest reported.
	OldUnreadsMissing bool `json:"old_unreads_missing"`
}

// UnreadDirect is a one-on-one conversation's unread messages.
type UnreadDirect struct {
	OtherUserID int64 `json:"other_user_id"`
	// SenderID is the deprecated copy of OtherUserID.
	SenderID         int64   `json:"sender_id"`
	UnreadMessageIDs []int64 `json:"unread_message_ids"`
}

// UnreadChannelTopic is a topic's unread messages.
type UnreadChannelTopic struct {
	StreamID         int64   `json:"stream_id"`
	Topic            string  `json:"topic"`
	UnreadMessageIDs []int64 `json:"unread_message_ids"`
}

// UnreadGroupDirect is a group conversation's unread messages;
// UserIDsString lists its members, the reader included, comma-separated.
type UnreadGroupDirect struct {
	UserIDsString    string  `json:"user_ids_string"`
	UnreadMessageIDs []int64 `json:"unread_message_ids"`
}

// GetUnreadMessagesRequest is the input of GetUnreadMessages.
type GetUnreadMessagesRequest struct {
	// AllowEmptyTopicName shows the empty topic as "" instead of its
	// display name.
	AllowEmptyTopicName *bool `json:"allow_empty_topic_name"`
}

// GetUnreadMessages computes the caller's unread messages by channel and
// topic, conversation and group conversation, with their unread mentions
// (the unread_msgs of POST /register).
func (s *Service) GetUnreadMessages(ctx context.Context, c Caller, req GetUnreadMessagesRequest) (*UnreadMessages, error) {
	return s.reads().getUnreadMessages(ctx, c, req)
}

// getUnreadMessages is GetUnreadMessages reading through r.
func (r reads) getUnreadMessages(ctx context.Context, c Caller, req GetUnreadMessagesRequest) (*UnreadMessages, error) {
	// The generations of a remembered state are read before anything
	// else (a registration read them before its snapshot began).
	var gens unreadGens
	if r.unreadAt != nil {
		gens = *r.unreadAt
	} else {
		gens = r.s.unread.gens(c.RealmID, c.UserID)
	}
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	allowEmptyTopic := req.AllowEmptyTopicName != nil && *req.AllowEmptyTopicName
	out, err := r.unreadsRemembered(ctx, realm, me, gens, allowEmptyTopic)
	if err != nil {
		return nil, r.s.internal(ctx, "unread messages", err)
	}
	if out != nil {
		return out, nil
	}
	raw, err := r.unreadState(ctx, realm, me, maxUnreadMessages)
	if err != nil {
		return nil, r.s.internal(ctx, "unread messages", err)
	}
	if r.tx || len(raw.msgs) < r.s.unread.min {
		g, err := r.prepareUnreads(ctx, realm, me, raw, allowEmptyTopic)
		if err != nil {
			return nil, r.s.internal(ctx, "unread messages", err)
		}
		return g.emit(me.ID, raw), nil
	}
	e := newUnreadEntry(gens, raw)
	if out, err = r.rememberedAnswer(ctx, realm, me, e, allowEmptyTopic); err != nil {
		return nil, r.s.internal(ctx, "unread messages", err)
	}
	r.s.unread.store(realm.ID, me.ID, e)
	return out, nil
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// unreadMessage is one unread message with the reader's flags: a
// channel message (streamID set, its topic an index into the answer's
// topics) or a direct message. It holds no pointer: a reader may have
// 50,000, which the garbage collector then need not scan.
type unreadMessage struct {
	id, streamID, conversationID, senderID int64
	topic                                  int32
	streamWildcard                         bool
	flags                                  int64
}

// unreadOf is the unread form of a stored message with the reader's flags
// (with no topic).
func unreadOf(m *storage.Message, flags int64) unreadMessage {
	return unreadMessage{id: m.ID, streamID: ptrValue(m.StreamID), conversationID: ptrValue(m.ConversationID),
		senderID: m.SenderID, streamWildcard: m.StreamWildcard, flags: flags}
}

// rawUnreads is the newest unread messages (newest first), the topics
// their channel messages name, and whether older ones were left out.
type rawUnreads struct {
	msgs    []unreadMessage
	topics  []storage.UnreadTopic
	missing bool
	// gaps and muted are what the channel messages were listed from: the
	// reader's unread spans and the senders they muted.
	gaps  []storage.IDSpan
	muted []int64
}

// unreadState lists up to limit of the reader's newest unread messages
// in their subscribed channels and their conversations.
func (r reads) unreadState(ctx context.Context, realm *storage.Realm, me *storage.User, limit int) (*rawUnreads, error) {
	periods, err := r.st.ListUserPeriods(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, err
	}
	active := map[int64]bool{}
	for _, p := range periods {
		if p.EndMessageID == nil {
			active[p.StreamID] = true
		}
	}
	gaps, err := r.unreadGaps(ctx, realm.ID, me.ID, periods, mapKeys(active))
	if err != nil {
		return nil, err
	}
	muted, err := r.mutedSenders(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, err
	}
	mutedIDs := mapKeys(muted)
	ch, err := r.st.ListUnreadChannelMessages(ctx, realm.ID, gaps, mutedIDs, limit)
	if err != nil {
		return nil, err
	}
	chMsgs, topics := ch.Messages, ch.Topics
	rows, err := r.st.ListUnreadRows(ctx, realm.ID, me.ID, nil, limit)
	if err != nil {
		return nil, err
	}
	all := make([]unreadMessage, 0, min(limit, len(chMsgs)+len(rows)))
	i, j := 0, 0
	for len(all) < limit && (i < len(chMsgs) || j < len(rows)) {
		if j == len(rows) || i < len(chMsgs) && chMsgs[i].ID > rows[j].ID {
			c := &chMsgs[i]
			all = append(all, unreadMessage{id: c.ID, streamID: c.StreamID, topic: c.Topic, streamWildcard: c.StreamWildcard})
			i++
			continue
		}
		r := rows[j]
		j++
		if r.StreamID != nil && !active[*r.StreamID] {
			continue // an unsubscribed channel's historical row
		}
		if r.StreamID != nil && muted[r.SenderID] {
			continue // read for a muter (direct messages arrive read instead)
		}
		m := unreadOf(&r.Message, r.Flags)
		if r.StreamID != nil {
			m.topic = int32(len(topics))
			topics = append(topics, storage.UnreadTopic{StreamID: *r.StreamID, Name: r.Topic})
		}
		all = append(all, m)
	}
	raw := &rawUnreads{msgs: all, topics: topics, missing: len(all) == limit, gaps: gaps, muted: mutedIDs}
	if len(all) == 0 {
		return raw, nil
	}
	// The channel messages' flags: mention rows, and wildcards of the
	// message (they all were received).
	mentions, err := r.st.ListMentionRows(ctx, realm.ID, me.ID, all[len(all)-1].id)
	if err != nil {
		return nil, err
	}
	mentionFlags := make(map[int64]int64, len(mentions))
	for _, r := range mentions {
		mentionFlags[r.MessageID] = r.Flags
	}
	for k := range all {
		m := &all[k]
		if m.streamID != 0 && m.flags == 0 {
			m.flags = mentionFlags[m.id]
			if m.streamWildcard {
				m.flags |= storage.FlagStreamWildcardMentioned
			}
		}
	}
	return raw, nil
}

// unreadGaps is the parts of the reader's received spans of the channels
// that no read range covers.
func (r reads) unreadGaps(ctx context.Context, realmID, userID int64, periods []storage.SubscriptionPeriod, channels []int64) ([]storage.IDSpan, error) {
	if len(channels) == 0 {
		return nil, nil
	}
	ranges, err := r.st.ListReadRangesOf(ctx, realmID, userID, channels, 0, noUpperID)
	if err != nil {
		return nil, err
	}
	byChannel := map[int64][]storage.ReadRange{}
	for _, rg := range ranges {
		byChannel[rg.StreamID] = append(byChannel[rg.StreamID], rg)
	}
	var gaps []storage.IDSpan
	for _, ch := range uniqueSorted(channels) {
		gaps = append(gaps, subtractRanges(receivedSpans(periods, ch, 1, noUpperID), byChannel[ch])...)
	}
	return gaps, nil
}

// muteState answers whether a channel message is muted for the reader:
// a muted topic, or a topic of a muted channel not unmuted or followed.
type muteState struct {
	channels map[int64]bool
	topics   map[int64]map[string]int
}

func (r reads) loadMuteState(ctx context.Context, realmID, userID int64) (*muteState, error) {
	ms := &muteState{channels: map[int64]bool{}, topics: map[int64]map[string]int{}}
	subs, err := r.st.ListUserSubscriptions(ctx, realmID, userID)
	if err != nil {
		return nil, err
	}
	for _, sub := range subs {
		if sub.Active && sub.IsMuted {
			ms.channels[sub.StreamID] = true
		}
	}
	topics, err := r.st.ListUserTopics(ctx, realmID, userID)
	if err != nil {
		return nil, err
	}
	for _, t := range topics {
		if ms.topics[t.StreamID] == nil {
			ms.topics[t.StreamID] = map[string]int{}
		}
		ms.topics[t.StreamID][storage.Fold(t.TopicName)] = t.VisibilityPolicy
	}
	return ms, nil
}

// any says whether the reader muted the channel or set a policy on one
// of its topics (else none of its topics is muted).
func (ms *muteState) any(streamID int64) bool {
	return ms.channels[streamID] || len(ms.topics[streamID]) > 0
}

func (ms *muteState) muted(streamID int64, topic string) bool {
	policy := ms.topics[streamID][storage.Fold(topic)]
	if ms.channels[streamID] {
		return policy != TopicPolicyUnmuted && policy != TopicPolicyFollowed
	}
	return policy == TopicPolicyMuted
}

// unreadDetails describes messages just marked unread for the client's
// unread counts (the event's message_details).
func (r reads) unreadDetails(ctx context.Context, realm *storage.Realm, me *storage.User, rs *readerState, ids []int64) (map[string]UnreadMessageDetails, error) {
	out := map[string]UnreadMessageDetails{}
	if len(ids) == 0 {
		return out, nil
	}
	mutes, err := r.loadMuteState(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, err
	}
	convs := map[int64][]int64{}
	for _, id := range ids {
		if m := rs.msgs[id].m; m.ConversationID != nil {
			convs[*m.ConversationID] = nil
		}
	}
	if len(convs) > 0 {
		if convs, err = r.st.ConversationMembersOf(ctx, realm.ID, mapKeys(convs)); err != nil {
			return nil, err
		}
	}
	for _, id := range ids {
		ms := rs.msgs[id]
		um := unreadOf(ms.m, ms.flags)
		d := UnreadMessageDetails{}
		muted := false
		if ms.m.StreamID != nil {
			muted = mutes.muted(*ms.m.StreamID, ms.m.Topic)
			topic, unmuted := ms.m.Topic, !muted
			d = UnreadMessageDetails{Type: "stream", StreamID: *ms.m.StreamID, Topic: &topic, UnmutedStreamMsg: &unmuted}
		} else {
			d.Type, d.UserIDs = "private", []int64{}
			for _, u := range convs[*ms.m.ConversationID] {
				if u != me.ID {
					d.UserIDs = append(d.UserIDs, u)
				}
			}
		}
		d.Mentioned = unreadMention(&um, muted)
		out[strconv.FormatInt(id, 10)] = d
	}
	return out, nil
}

// MarkStreamAsReadRequest is the input of MarkStreamAsRead.
type MarkStreamAsReadRequest struct {
	StreamID int64 `json:"stream_id"`
}

// MarkStreamAsRead marks every message of a channel read for the caller
// (POST /mark_stream_as_read).
func (s *Service) MarkStreamAsRead(ctx context.Context, c Caller, req MarkStreamAsReadRequest) (*EmptyResponse, error) {
	me, realm, ch, err := s.readableChannel(ctx, c, req.StreamID)
	if err != nil {
		return nil, err
	}
	if err := s.markChannelRead(ctx, realm, me, ch.ID, nil); err != nil {
		return nil, s.internal(ctx, "mark channel as read", err)
	}
	return &EmptyResponse{}, nil
}

// MarkTopicAsReadRequest is the input of MarkTopicAsRead.
type MarkTopicAsReadRequest struct {
	StreamID  int64  `json:"stream_id"`
	TopicName string `json:"topic_name"`
}

// MarkTopicAsRead marks a topic's messages read for the caller (POST
// /mark_topic_as_read). A topic of which the caller has no message gives
// "No such topic"; an empty topic name marks the whole channel, as in
// the reference.
func (s *Service) MarkTopicAsRead(ctx context.Context, c Caller, req MarkTopicAsReadRequest) (*EmptyResponse, error) {
	me, realm, ch, err := s.readableChannel(ctx, c, req.StreamID)
	if err != nil {
		return nil, err
	}
	var topic *string
	if req.TopicName != "" {
		if topic, err = s.reads().receivedTopic(ctx, realm.ID, me.ID, ch.ID, req.TopicName); err != nil {
			return nil, err
		}
	}
	if err := s.markChannelRead(ctx, realm, me, ch.ID, topic); err != nil {
		return nil, s.internal(ctx, "mark topic as read", err)
	}
	return &EmptyResponse{}, nil
}

// receivedTopic is a topic name of MarkTopicAsRead as stored (nil for
// the empty topic), if the user received a message of it in the
// channel; NotFound otherwise.
func (r reads) receivedTopic(ctx context.Context, realmID, userID, channelID int64, topicName string) (*string, error) {
	name := topicName
	if name == EmptyTopicDisplayName {
		name = ""
	}
	periods, err := r.userPeriods(ctx, realmID, userID)
	if err != nil {
		return nil, r.s.internal(ctx, "mark topic as read", err)
	}
	found, err := r.st.ListChannelMessagesIn(ctx, realmID, receivedSpans(periods, channelID, 1, noUpperID), &name, 1)
	if err != nil {
		return nil, r.s.internal(ctx, "mark topic as read", err)
	}
	if len(found) == 0 {
		return nil, noSuch("No such topic '%s'", name)
	}
	if name == "" {
		return nil, nil
	}
	return &name, nil
}

// readableChannel loads a channel whose messages the caller may read
// (the reference's access_stream_by_id): "Invalid channel ID" otherwise.
func (s *Service) readableChannel(ctx context.Context, c Caller, id int64) (*storage.User, *storage.Realm, *storage.Stream, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, nil, nil, err
	}
	ch, err := s.reads().channelByID(ctx, realm.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, nil, errInvalidChannelID
	} else if err != nil {
		return nil, nil, nil, s.internal(ctx, "load channel", err)
	}
	scope, err := s.reads().cachedScope(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, nil, nil, s.internal(ctx, "load channel", err)
	}
	ok, err := s.reads().hasContentAccess(ctx, me, scope, ch)
	if err != nil {
		return nil, nil, nil, s.internal(ctx, "load channel", err)
	}
	if !ok {
		return nil, nil, nil, errInvalidChannelID
	}
	return me, realm, ch, nil
}

// markChannelRead marks the caller's unread messages of the channel (of
// the topic, when not nil) read, and tells them which.
func (s *Service) markChannelRead(ctx context.Context, realm *storage.Realm, me *storage.User, streamID int64, topic *string) error {
	return s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		ids, err := s.markChannelReadIn(ctx, w, realm.ID, me.ID, streamID, topic)
		if err != nil || len(ids) == 0 {
			return err
		}
		w.emit(Audience{Users: []int64{me.ID}}, UpdateMessageFlagsEvent{Op: "add", Operation: "add", Flag: "read", Messages: ids})
		return nil
	})
}

// markChannelReadIn marks the channel (or topic) read in st and returns
// the IDs that were unread, ascending. A whole channel becomes one range.
func (s *Service) markChannelReadIn(ctx context.Context, w *writeTx, realmID, userID, streamID int64, topic *string) ([]int64, error) {
	periods, err := w.ListUserPeriods(ctx, realmID, userID)
	if err != nil {
		return nil, err
	}
	gaps, err := w.reads().unreadGaps(ctx, realmID, userID, periods, []int64{streamID})
	if err != nil {
		return nil, err
	}
	unread, err := w.ListChannelMessagesIn(ctx, realmID, gaps, topic, noUpperLimit)
	if err != nil {
		return nil, err
	}
	rows, err := w.ListUnreadRows(ctx, realmID, userID, &streamID, noUpperLimit)
	if err != nil {
		return nil, err
	}
	var ids, rowIDs []int64
	for _, m := range unread {
		ids = append(ids, m.ID)
	}
	for _, r := range rows {
		if topic == nil || storage.Fold(r.Topic) == storage.Fold(*topic) {
			rowIDs = append(rowIDs, r.ID)
		}
	}
	if len(rowIDs) > 0 {
		if err := w.UpdateUserMessageFlags(ctx, realmID, userID, rowIDs, storage.FlagRead, 0); err != nil {
			return nil, err
		}
	}
	if topic != nil {
		if err := s.markChannelIDsRead(ctx, w, realmID, userID, streamID, periods, ids); err != nil {
			return nil, err
		}
	} else if len(gaps) > 0 {
		if err := w.reads().coverChannel(ctx, realmID, userID, streamID); err != nil {
			return nil, err
		}
	}
	return uniqueSorted(append(ids, rowIDs...)), nil
}

// coverChannel makes one read range of the user cover the whole channel.
func (r reads) coverChannel(ctx context.Context, realmID, userID, streamID int64) error {
	maxID, err := r.st.MaxMessageID(ctx)
	if err != nil || maxID == 0 {
		return err
	}
	return r.st.ResetReadRanges(ctx, realmID, userID, []int64{streamID}, maxID)
}

// flaggedIDs lists the rows' message IDs.
func flaggedIDs(rows []storage.FlaggedMessage) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// leaveChannelRead marks the channel read for a user who leaves it, as
// the reference does on unsubscribing (without listing the messages: the
// client drops the channel's unread counts with the subscription).
func leaveChannelRead(ctx context.Context, w *writeTx, realmID, userID, streamID int64) error {
	rows, err := w.ListUnreadRows(ctx, realmID, userID, &streamID, noUpperLimit)
	if err != nil {
		return err
	}
	if err := w.UpdateUserMessageFlags(ctx, realmID, userID, flaggedIDs(rows), storage.FlagRead, 0); err != nil {
		return err
	}
	return w.reads().coverChannel(ctx, realmID, userID, streamID)
}

// noUpperLimit lists without a cap.
const noUpperLimit = 1 << 40
