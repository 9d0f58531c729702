package chat

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/teamchat/chat/narrow"
	"github.com/teamchat/chat/storage"
)

// largerThanMaxMessageID is the anchor "newest" resolves to (the
// reference's LARGER_THAN_MAX_MESSAGE_ID).
const largerThanMaxMessageID = 10_000_000_000_000_000

// maxMessagesPerFetch bounds num_before + num_after and message_ids.
const maxMessagesPerFetch = 5000

// GetMessagesRequest is the input of GetMessages (GET /messages).
type GetMessagesRequest struct {
	// Anchor is a message ID, or "newest", "oldest" or "first_unread".
	Anchor *string `json:"anchor"`
	// IncludeAnchor (default true) includes the anchor message.
	IncludeAnchor *bool `json:"include_anchor"`
	NumBefore     *int  `json:"num_before"`
	NumAfter      *int  `json:"num_after"`
	// Narrow is the filter, as JSON (see package narrow); empty: the
	// caller's combined feed.
	Narrow *string `json:"narrow"`
	// UseFirstUnreadAnchor is the legacy form of Anchor "first_unread".
	UseFirstUnreadAnchor *bool `json:"use_first_unread_anchor"`
	// MessageIDs fetches exactly these (those the caller may read and the
	// narrow matches), instead of a window.
	MessageIDs          *[]int64 `json:"message_ids"`
	ClientGravatar      *bool    `json:"client_gravatar"`
	ApplyMarkdown       *bool    `json:"apply_markdown"`
	AllowEmptyTopicName *bool    `json:"allow_empty_topic_name"`
}

// GetMessagesResponse is the success body of GetMessages.
type GetMessagesResponse struct {
	Anchor         *int64           `json:"anchor,omitempty"`
	FoundAnchor    bool             `json:"found_anchor"`
	FoundOldest    bool             `json:"found_oldest"`
	FoundNewest    bool             `json:"found_newest"`
	HistoryLimited bool             `json:"history_limited"`
	Messages       []FetchedMessage `json:"messages"`
}

// parseAnchor is the reference's parse_anchor_value: nil means
// first_unread.
func parseAnchor(anchor *string, firstUnread bool) (*int64, error) {
	if firstUnread {
		return nil, nil
	}
	if anchor == nil {
		return nil, BadRequest("Missing 'anchor' argument.")
	}
	var v int64
	switch *anchor {
	case "oldest":
		v = 0
	case "newest":
		v = largerThanMaxMessageID
	case "first_unread":
		return nil, nil
	default:
		n, err := strconv.ParseInt(strings.TrimSpace(*anchor), 10, 64)
		if err != nil {
			if strings.TrimLeft(strings.TrimSpace(*anchor), "-0123456789") == "" && *anchor != "" {
				// An integer beyond int64: the newest (or oldest) end.
				if strings.HasPrefix(strings.TrimSpace(*anchor), "-") {
					n = 0
				} else {
					n = largerThanMaxMessageID
				}
			} else {
				return nil, BadRequest("Invalid anchor")
			}
		}
		v = min(max(n, 0), largerThanMaxMessageID)
	}
	return &v, nil
}

// GetMessages fetches the messages around an anchor that the caller may
// read and that match the narrow, with their flags (GET /messages). The
// narrow is parsed and resolved by package narrow with the reference's
// errors; see compileNarrow for the operators served so far.
func (s *Service) GetMessages(ctx context.Context, c Caller, req GetMessagesRequest) (*GetMessagesResponse, error) {
	return s.reads().getMessages(ctx, c, req)
}

// getMessages is GetMessages reading through r.
func (r reads) getMessages(ctx context.Context, c Caller, req GetMessagesRequest) (*GetMessagesResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	var ids []int64
	if req.MessageIDs != nil {
		ids = nonNil(*req.MessageIDs)
	}
	firstUnread := req.UseFirstUnreadAnchor != nil && *req.UseFirstUnreadAnchor
	if ids != nil {
		if req.NumBefore != nil && *req.NumBefore != 0 || req.NumAfter != nil && *req.NumAfter != 0 || req.Anchor != nil || firstUnread {
			const params = "num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor"
			return nil, BadRequest("Unsupported parameter combination: %s", params).With("parameters", params)
		}
	}
	numBefore, numAfter := 0, 0
	if req.NumBefore != nil {
		numBefore = *req.NumBefore
	}
	if req.NumAfter != nil {
		numAfter = *req.NumAfter
	}
	if numBefore < 0 {
		return nil, BadRequest("num_before is too small")
	}
	if numAfter < 0 {
		return nil, BadRequest("num_after is too small")
	}
	var anchor *int64
	if ids == nil {
		if anchor, err = parseAnchor(req.Anchor, firstUnread); err != nil {
			return nil, err
		}
	}
	q, err := r.compileNarrow(ctx, me, realm, req.Narrow, narrowUse{})
	if err != nil {
		return nil, err
	}
	requested := numBefore + numAfter
	if ids != nil {
		requested = len(ids)
	}
	if requested > maxMessagesPerFetch {
		return nil, BadRequest("Too many messages requested (maximum %d).", maxMessagesPerFetch)
	}
	includeAnchor := req.IncludeAnchor == nil || *req.IncludeAnchor
	if numBefore > 0 && numAfter > 0 && !includeAnchor {
		return nil, BadRequest("The anchor can only be excluded at an end of the range")
	}
	resp := &GetMessagesResponse{Messages: []FetchedMessage{}}
	var rows []storage.Message
	var state map[int64]storage.WindowMessage // the reader's, read with a window
	if ids != nil {
		ids = uniqueSorted(ids)
		if len(ids) > 0 {
			filter := q.filter
			filter.IDs = intersectIDs(filter.IDs, ids)
			w := storage.MessageWindow{RealmID: realm.ID, UserID: me.ID, Scope: q.scope, Filter: filter,
				Anchor: ids[len(ids)-1], Before: len(ids), IDsOnly: true}
			if rows, _, err = r.st.ListMessageWindow(ctx, w); err != nil {
				return nil, r.s.internal(ctx, "get messages", err)
			}
		}
	} else {
		if anchor == nil {
			first, err := r.firstUnread(ctx, realm.ID, me.ID, q)
			if err != nil {
				return nil, r.s.internal(ctx, "get messages", err)
			}
			anchor = &first
		}
		resp.Anchor = anchor
		rows, state, err = r.windowWith(ctx, realm.ID, me.ID, q, *anchor, numBefore, numAfter, includeAnchor, true, resp)
		if err != nil {
			return nil, r.s.internal(ctx, "get messages", err)
		}
	}
	// The window found the IDs; the messages come from the cache or by ID.
	if rows, err = r.messagesByID(ctx, realm.ID, messageIDs(rows)); err != nil {
		return nil, r.s.internal(ctx, "get messages", err)
	}
	views, err := r.fetchedViews(ctx, realm, me, rows, viewOptions{periods: q.periods, applyMarkdown: req.ApplyMarkdown,
		allowEmptyTopic: req.AllowEmptyTopicName, clientGravatar: req.ClientGravatar, state: state})
	if err != nil {
		return nil, r.s.internal(ctx, "get messages", err)
	}
	if q.search != nil {
		// A search's results carry its matches, highlighted.
		for i := range views {
			content, subject := q.search.matchFields(rows[i].RenderedContent, rows[i].Topic)
			views[i].MatchContent, views[i].MatchSubject = &content, &subject
		}
	}
	resp.Messages = views
	return resp, nil
}

// window fetches both sides of the anchor and sets the found_* facts as
// the reference's post_process_limited_query does.
func (r reads) window(ctx context.Context, realmID, userID int64, q *fetchQuery, anchor int64, numBefore, numAfter int, includeAnchor bool, resp *GetMessagesResponse) ([]storage.Message, error) {
	rows, _, err := r.windowWith(ctx, realmID, userID, q, anchor, numBefore, numAfter, includeAnchor, false, resp)
	return rows, err
}

// windowWith is window, with the reader's state of each message (by ID)
// read with it when withState is set (nil otherwise): one statement on
// PostgreSQL (see storage.ListMessageWindowState).
func (r reads) windowWith(ctx context.Context, realmID, userID int64, q *fetchQuery, anchor int64, numBefore, numAfter int, includeAnchor, withState bool, resp *GetMessagesResponse) ([]storage.Message, map[int64]storage.WindowMessage, error) {
	anchoredLeft := anchor == 0
	anchoredRight := anchor >= largerThanMaxMessageID
	if anchoredRight {
		numAfter = 0
	}
	w := storage.MessageWindow{RealmID: realmID, UserID: userID, Scope: q.scope, Filter: q.filter, Anchor: anchor,
		Before: numBefore, After: numAfter, IDsOnly: true}
	if numBefore == 0 && numAfter == 0 {
		w.Before = 0 // the anchor alone
	}
	var older, newer []storage.Message
	var state map[int64]storage.WindowMessage
	if withState {
		olderState, newerState, err := r.st.ListMessageWindowState(ctx, w)
		if err != nil {
			return nil, nil, err
		}
		state = make(map[int64]storage.WindowMessage, len(olderState)+len(newerState))
		older, newer = make([]storage.Message, len(olderState)), make([]storage.Message, len(newerState))
		for i, m := range olderState {
			older[i].ID, state[m.ID] = m.ID, m
		}
		for i, m := range newerState {
			newer[i].ID, state[m.ID] = m.ID, m
		}
	} else {
		var err error
		if older, newer, err = r.st.ListMessageWindow(ctx, w); err != nil {
			return nil, nil, err
		}
	}
	var before, at []storage.Message
	for _, m := range older {
		if m.ID == anchor && !anchoredRight {
			at = append(at, m)
		} else {
			before = append(before, m)
		}
	}
	if anchoredRight {
		before = older
	}
	if len(before) > numBefore {
		before = before[len(before)-numBefore:]
	}
	after := newer
	if len(after) > numAfter {
		after = after[:numAfter]
	}
	if !includeAnchor {
		at = nil
	}
	resp.FoundAnchor = len(at) == 1
	resp.FoundOldest = anchoredLeft || len(before) < numBefore
	resp.FoundNewest = anchoredRight || len(after) < numAfter
	return slices.Concat(before, at, after), state, nil
}

// firstUnread is the oldest unread message of the query, or the newest
// end when there is none (the reference's find_first_unread_anchor). Like
// the reference, it skips muted topics and muted channels (their topics
// not unmuted or followed); when the narrow names a channel, negated or
// not, only that channel's muted topics.
func (r reads) firstUnread(ctx context.Context, realmID, userID int64, q *fetchQuery) (int64, error) {
	filter := q.filter
	muted := storage.MessageFilter{Muted: true}
	if q.mutingChannel != nil {
		muted = storage.MessageFilter{MutedTopic: true, StreamID: q.mutingChannel}
	}
	filter.Not = append(slices.Clone(filter.Not), muted)
	id, err := r.st.FirstUnreadMessage(ctx, storage.MessageWindow{RealmID: realmID, UserID: userID, Scope: q.scope, Filter: filter})
	if err != nil || id == 0 {
		return largerThanMaxMessageID, err
	}
	return id, nil
}

// channelFlags computes a reader's flags of a channel message from their
// row (if any), whether one of their subscription periods covers it, and
// whether a read range does: what the reference's per-user row would say
// (callers add read when the reader muted the sender).
func channelFlags(m *storage.Message, row int64, hasRow, received, readRange bool) int64 {
	if !received && !hasRow {
		return storage.FlagRead | storage.FlagHistorical
	}
	flags := row
	if received && readRange {
		flags |= storage.FlagRead
	}
	if received && m.StreamWildcard {
		flags |= storage.FlagStreamWildcardMentioned
	}
	return flags
}

// fetchedViews builds the messages' wire forms with the reader's flags,
// reading what they need in a few set-based queries: the reader's rows
// and periods, the read ranges of the channels in the answer, the
// channels, the conversations' members and the users.
// viewOptions say how fetchedViews shows messages: the reader's periods
// (nil: read them), apply_markdown (default true), allow_empty_topic_name
// (default false) and client_gravatar (default true: avatar_url is null
// for senders on Gravatar whose email the reader may see).
type viewOptions struct {
	periods                                        []storage.SubscriptionPeriod
	applyMarkdown, allowEmptyTopic, clientGravatar *bool
	// state is the reader's state of each message, read with the window
	// (nil: read it here).
	state map[int64]storage.WindowMessage
}

func (r reads) fetchedViews(ctx context.Context, realm *storage.Realm, me *storage.User, rows []storage.Message, opts viewOptions) ([]FetchedMessage, error) {
	periods := opts.periods
	out := make([]FetchedMessage, 0, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]int64, len(rows))
	userIDs := []int64{}
	channelIDs := []int64{}
	convs := map[int64][]int64{}
	lo, hi := rows[0].ID, rows[len(rows)-1].ID
	linkifiers, err := r.compiledLinkifiers(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	for i, m := range rows {
		ids[i] = m.ID
		userIDs = append(userIDs, m.SenderID)
		if m.StreamID != nil {
			channelIDs = append(channelIDs, *m.StreamID)
		} else {
			convs[*m.ConversationID] = nil
		}
	}
	if len(convs) > 0 {
		var err error
		if convs, err = r.st.ConversationMembersOf(ctx, realm.ID, mapKeys(convs)); err != nil {
			return nil, err
		}
		for _, members := range convs {
			userIDs = append(userIDs, members...)
		}
	}
	byID, err := r.usersByID(ctx, realm, userIDs)
	if err != nil {
		return nil, err
	}
	channelIDs = uniqueSorted(channelIDs)
	streams, err := r.channelsByID(ctx, realm.ID, channelIDs)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(streams))
	for _, ch := range streams {
		names[ch.ID] = ch.Name
	}
	var userRows []storage.UserMessage
	if opts.state == nil {
		if userRows, err = r.st.ListUserMessages(ctx, realm.ID, me.ID, ids); err != nil {
			return nil, err
		}
	}
	reactions, err := r.reactionsByID(ctx, realm.ID, ids)
	if err != nil {
		return nil, err
	}
	byMessage := map[int64][]Reaction{}
	for id, rs := range reactions {
		for _, x := range rs {
			byMessage[id] = append(byMessage[id], Reaction{EmojiName: x.EmojiName, EmojiCode: x.EmojiCode, ReactionType: x.ReactionType, UserID: x.UserID})
		}
	}
	rowFlags := make(map[int64]int64, len(userRows))
	for _, row := range userRows {
		rowFlags[row.MessageID] = row.Flags
	}
	if periods == nil {
		if periods, err = r.userPeriods(ctx, realm.ID, me.ID); err != nil {
			return nil, err
		}
	}
	muted, err := r.mutedSenders(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, err
	}
	ranges := map[int64][]storage.ReadRange{}
	if len(channelIDs) > 0 && opts.state == nil {
		all, err := r.st.ListReadRangesOf(ctx, realm.ID, me.ID, channelIDs, lo, hi)
		if err != nil {
			return nil, err
		}
		for _, rg := range all {
			ranges[rg.StreamID] = append(ranges[rg.StreamID], rg)
		}
	}
	clientGravatar := opts.clientGravatar == nil || *opts.clientGravatar
	avatars := map[int64]*string{}      // by sender
	emails := map[int64]string{}        // as the API shows them, by user
	linksOf := map[string][]TopicLink{} // by topic
	emailOf := func(u *storage.User) string {
		e, ok := emails[u.ID]
		if !ok {
			e = apiEmail(realm, u)
			emails[u.ID] = e
		}
		return e
	}
	for i := range rows {
		m := &rows[i]
		sender := byID[m.SenderID]
		if sender == nil {
			sender = &storage.User{ID: m.SenderID}
		}
		var participants []*storage.User
		var flags int64
		row, hasRow := rowFlags[m.ID]
		inRange := false
		if st, ok := opts.state[m.ID]; ok {
			row, hasRow, inRange = st.Flags, st.HasRow, st.InReadRange
		} else if m.StreamID != nil {
			inRange = rangesCover(ranges[*m.StreamID], m.ID)
		}
		if m.StreamID != nil {
			flags = channelFlags(m, row, hasRow, periodsCover(periods, *m.StreamID, m.ID), inRange)
			if muted[m.SenderID] {
				flags |= storage.FlagRead // read for a muter
			}
		} else {
			for _, id := range convs[*m.ConversationID] {
				if u := byID[id]; u != nil {
					participants = append(participants, u)
				}
			}
			flags = row &^ storage.FlagPrivate
		}
		avatar, ok := avatars[sender.ID]
		if !ok {
			if !(clientGravatar && canSeeEmail(realm, me, sender) && sender.AvatarSource != "U") {
				url := avatarURL(sender)
				avatar = &url
			}
			avatars[sender.ID] = avatar
		}
		v := FetchedMessage{MessageView: messageView(realm, sender, m, names[ptrValue(m.StreamID)], participants, avatar, emailOf), Flags: flagNames(flags)}
		links, ok := linksOf[m.Topic]
		if !ok { // a window's messages share few topics
			links = topicLinks(linkifiers, m.Topic)
			linksOf[m.Topic] = links
		}
		v.TopicLinks = links
		if rs := byMessage[m.ID]; rs != nil {
			v.Reactions = rs
		}
		if opts.applyMarkdown != nil && !*opts.applyMarkdown {
			v.Content, v.ContentType = m.Content, "text/x-markdown"
		}
		if m.StreamID != nil && m.Topic == "" && opts.allowEmptyTopic != nil && *opts.allowEmptyTopic {
			v.Subject = ""
		}
		out = append(out, v)
	}
	return out, nil
}

// intersectIDs is the asked IDs that a narrow's own id terms (narrow; nil:
// none) also keep.
func intersectIDs(narrow, asked []int64) []int64 {
	if narrow == nil {
		return asked
	}
	out := []int64{}
	for _, id := range asked {
		if slices.Contains(narrow, id) {
			out = append(out, id)
		}
	}
	return out
}

// messageIDs are the messages' IDs, in order.
func messageIDs(ms []storage.Message) []int64 {
	out := make([]int64, len(ms))
	for i := range ms {
		out[i] = ms[i].ID
	}
	return out
}

// ptrValue is *p, or the zero value for nil.
func ptrValue[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// MatchesNarrowRequest is the input of MatchesNarrow
// (GET /messages/matches_narrow).
type MatchesNarrowRequest struct {
	MsgIDs *[]int64 `json:"msg_ids"`
	// Narrow is the filter, as JSON (see package narrow).
	Narrow *string `json:"narrow"`
}

// MessageMatch is how a message matches a narrow: its HTML and its
// (escaped) topic, with a search's matches highlighted.
type MessageMatch struct {
	MatchContent string `json:"match_content"`
	MatchSubject string `json:"match_subject"`
}

// MatchesNarrowResponse is the success body of MatchesNarrow.
type MatchesNarrowResponse struct {
	// Messages are the given messages that match, by ID (as a string).
	Messages map[string]MessageMatch `json:"messages"`
}

// MatchesNarrow says which of the given messages, among those the caller
// received, match the narrow (the reference's messages_in_narrow, which
// clients use to check whether a new message belongs in a view). Shared
// channel history does not count: only messages the caller received.
func (s *Service) MatchesNarrow(ctx context.Context, c Caller, req MatchesNarrowRequest) (*MatchesNarrowResponse, error) {
	return s.reads().matchesNarrow(ctx, c, req)
}

// matchesNarrow is MatchesNarrow reading through r.
func (r reads) matchesNarrow(ctx context.Context, c Caller, req MatchesNarrowRequest) (*MatchesNarrowResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if req.MsgIDs == nil {
		return nil, MissingArgument("msg_ids")
	}
	if req.Narrow == nil {
		return nil, MissingArgument("narrow")
	}
	if _, err := narrow.ParseRequired(*req.Narrow); err != nil {
		return nil, narrowError(err) // here the narrow may not be null or empty
	}
	ids := uniqueSorted(nonNil(*req.MsgIDs))
	if len(ids) > maxMessagesPerFetch {
		return nil, BadRequest("Too many messages requested (maximum %d).", maxMessagesPerFetch)
	}
	q, err := r.compileNarrow(ctx, me, realm, req.Narrow, narrowUse{personal: true})
	if err != nil {
		return nil, err
	}
	resp := &MatchesNarrowResponse{Messages: map[string]MessageMatch{}}
	if len(ids) == 0 {
		return resp, nil
	}
	filter := q.filter
	filter.IDs = intersectIDs(filter.IDs, ids)
	rows, _, err := r.st.ListMessageWindow(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: me.ID, Scope: q.scope,
		Filter: filter, Anchor: ids[len(ids)-1], Before: len(ids), IDsOnly: true})
	if err == nil {
		rows, err = r.messagesByID(ctx, realm.ID, messageIDs(rows))
	}
	if err != nil {
		return nil, r.s.internal(ctx, "match narrow", err)
	}
	for _, m := range rows {
		content, subject := q.search.matchFields(m.RenderedContent, m.Topic)
		resp.Messages[strconv.FormatInt(m.ID, 10)] = MessageMatch{MatchContent: content, MatchSubject: subject}
	}
	return resp, nil
}
