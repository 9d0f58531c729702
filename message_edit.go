package chat

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/teamchat/chat/storage"
)

// Editing and moving messages (PATCH /messages/{id}), with the
// reference's checks in its order, its permissions and time limits.
// moveMessages (message_move.go) keeps every user's state across a move;
// the notices of moves and resolved topics are sent after the edit
// commits, by the organization's notification bot.

// UpdateMessageRequest is the input of UpdateMessage.
type UpdateMessageRequest struct {
	MessageID int64   `json:"message_id"`
	Content   *string `json:"content"`
	// Topic (or its older name Subject) renames the topic; "general
	// chat" means the empty topic.
	Topic    *string `json:"topic"`
	Subject  *string `json:"subject"`
	StreamID *int64  `json:"stream_id"`
	// PropagateMode is "change_one" (default), "change_later" or
	// "change_all": which messages of the topic a move takes along.
	PropagateMode *string `json:"propagate_mode"`
	// SendNotificationToOldThread (default false) and
	// SendNotificationToNewThread (default true) leave notices of a move.
	SendNotificationToOldThread *bool `json:"send_notification_to_old_thread"`
	SendNotificationToNewThread *bool `json:"send_notification_to_new_thread"`
}

// UpdateMessageResponse is the success body of UpdateMessage.
type UpdateMessageResponse struct {
	// DetachedUploads are the caller's uploaded files that a content edit
	// left linked by no message.
	DetachedUploads []DetachedUpload `json:"detached_uploads"`
}

// DetachedUpload is an uploaded file no message links any more.
type DetachedUpload struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	PathID     string `json:"path_id"`
	Size       int64  `json:"size"`
	CreateTime int64  `json:"create_time"`
	Messages   []any  `json:"messages"`
}

// UpdateMessageEvent tells who may see messages that they changed.
type UpdateMessageEvent struct {
	UserID        *int64      `json:"user_id"`
	RenderingOnly bool        `json:"rendering_only"`
	MessageID     int64       `json:"message_id"`
	MessageIDs    []int64     `json:"message_ids"`
	Flags         []string    `json:"flags"`
	EditTimestamp int64       `json:"edit_timestamp"`
	StreamName    string      `json:"stream_name,omitempty"`
	StreamID      *int64      `json:"stream_id,omitempty"`
	NewStreamID   *int64      `json:"new_stream_id,omitempty"`
	PropagateMode string      `json:"propagate_mode,omitempty"`
	OrigSubject   *string     `json:"orig_subject,omitempty"`
	Subject       *string     `json:"subject,omitempty"`
	TopicLinks    []TopicLink `json:"topic_links,omitempty"`

	OrigContent         *string `json:"orig_content,omitempty"`
	OrigRenderedContent *string `json:"orig_rendered_content,omitempty"`
	Content             *string `json:"content,omitempty"`
	RenderedContent     *string `json:"rendered_content,omitempty"`
	IsMeMessage         *bool   `json:"is_me_message,omitempty"`
}

// EventType implements EventBody.
func (UpdateMessageEvent) EventType() string { return "update_message" }

// resolvedPrefix marks a resolved topic.
const resolvedPrefix = "✔ "

// editLimitBuffer is the grace the reference adds to edit time limits.
const editLimitBuffer = 20

// editHistoryEntry is one entry of a message's edit history.
type editHistoryEntry struct {
	UserID              *int64  `json:"user_id"`
	Timestamp           int64   `json:"timestamp"`
	PrevContent         *string `json:"prev_content,omitempty"`
	PrevRenderedContent *string `json:"prev_rendered_content,omitempty"`
	PrevStream          *int64  `json:"prev_stream,omitempty"`
	Stream              *int64  `json:"stream,omitempty"`
	PrevTopic           *string `json:"prev_topic,omitempty"`
	Topic               *string `json:"topic,omitempty"`
}

// edit is one PATCH /messages/{id} on its way.
type edit struct {
	me      *storage.User
	realm   *storage.Realm
	scope   *groupScope
	msg     *storage.Message
	mode    string
	content *string // the new content, normalized
	topic   *string // the new topic
	// resolved and unresolved: the topic edit only adds or removes the
	// resolved prefix.
	resolved, unresolved bool
	from, to             *storage.Stream // the channel before and after
	rendered             *outgoing       // the new content's rendering
	notifyOld, notifyNew bool
}

func (e *edit) moved() bool { return e.topic != nil || e.to != e.from }

// UpdateMessage edits a message's content, or moves it (and, with
// propagate_mode, others of its topic) to another topic or channel.
func (s *Service) UpdateMessage(ctx context.Context, c Caller, req UpdateMessageRequest) (*UpdateMessageResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if req.Topic, err = topicParam(req.Topic, req.Subject); err != nil {
		return nil, err
	}
	e := &edit{me: me, realm: realm, mode: "change_one",
		notifyOld: req.SendNotificationToOldThread != nil && *req.SendNotificationToOldThread,
		notifyNew: req.SendNotificationToNewThread == nil || *req.SendNotificationToNewThread}
	if req.PropagateMode != nil {
		switch *req.PropagateMode {
		case "change_one", "change_later", "change_all":
			e.mode = *req.PropagateMode
		default:
			return nil, BadRequest("Invalid propagate_mode")
		}
	}
	if e.scope, err = s.reads().cachedScope(ctx, realm.ID, me.ID); err != nil {
		return nil, s.internal(ctx, "update message", err)
	}
	m, _, err := s.modifiableMessage(ctx, s.reads(), realm, me, req.MessageID)
	if err != nil {
		return nil, s.internal(ctx, "update message", err)
	}
	e.msg = m
	if err := s.checkEdit(ctx, e, req); err != nil {
		return nil, err
	}
	resp := &UpdateMessageResponse{DetachedUploads: []DetachedUpload{}}
	var moved []int64
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		var err error
		moved, resp.DetachedUploads, err = s.applyEdit(ctx, w, e)
		return err
	})
	if err != nil {
		return nil, s.internal(ctx, "update message", err)
	}
	if resp.DetachedUploads == nil {
		resp.DetachedUploads = []DetachedUpload{}
	}
	if e.moved() {
		s.editNotices(ctx, e, moved)
	}
	return resp, nil
}

// checkEdit validates the edit and the caller's right to it, as the
// reference's check_update_message, and prepares what it changes.
func (s *Service) checkEdit(ctx context.Context, e *edit, req UpdateMessageRequest) error {
	m, me, realm := e.msg, e.me, e.realm
	age := s.nowUnix() - m.DateSent
	if req.Content != nil {
		if !realm.AllowMessageEditing {
			return refused("Your organization has turned off message editing")
		}
		if m.SenderID != me.ID {
			return refused("You don't have permission to edit this message")
		}
		if lim := realm.MessageContentEditLimitSeconds; lim != nil && age > *lim+editLimitBuffer {
			return refused("The time limit for editing this message has passed")
		}
	}
	var topic *string
	if req.Topic != nil {
		t := strings.TrimSpace(*req.Topic)
		if t == EmptyTopicDisplayName {
			t = ""
		}
		if m.StreamID == nil || t != m.Topic {
			topic = &t
		}
	}
	stream := req.StreamID
	if stream != nil && m.StreamID != nil && *stream == *m.StreamID {
		stream = nil
	}
	// A move to the message's own channel is no move (the reference would
	// send notices of one).
	if topic == nil && req.Content == nil && stream == nil && (req.StreamID == nil || m.StreamID != nil) {
		return BadRequest("Nothing to change")
	}
	if m.StreamID == nil {
		if req.StreamID != nil {
			return BadRequest("Direct messages cannot be moved to channels.")
		}
		if topic != nil {
			return BadRequest("Direct messages cannot have topics.")
		}
	}
	if e.mode != "change_one" && topic == nil && stream == nil {
		return BadRequest("Invalid propagate_mode without topic edit")
	}
	if topic != nil && realm.MandatoryTopics && (*topic == "" || *topic == "(no topic)") {
		return BadRequest("Topics are required in this organization.")
	}
	if topic != nil && (*topic == strings.TrimSpace(resolvedPrefix) || *topic == resolvedPrefix+EmptyTopicDisplayName) {
		return BadRequest("General chat cannot be marked as resolved")
	}
	if topic != nil {
		for i, r := range []rune(*topic) {
			if !isPrintable(r) {
				return BadRequest("Invalid character in topic, at position %d!", i+1)
			}
		}
	}
	if req.StreamID != nil && req.Content != nil {
		return BadRequest("Cannot change message content while changing channel")
	}
	if req.Content != nil {
		content := *req.Content
		if strings.TrimRight(content, " \t\n\r") == "" {
			content = "(deleted)"
		}
		content, err := s.normalizeContent(content)
		if err != nil {
			return err
		}
		e.content = &content
	}
	if m.StreamID != nil {
		from, err := s.reads().channelByID(ctx, realm.ID, *m.StreamID)
		if err != nil {
			return s.internal(ctx, "update message", err)
		}
		e.from, e.to = from, from
	}
	if topic != nil {
		pre := *topic
		t := truncateRunes(pre, s.limits.MaxTopicLength, "...")
		e.topic = &t
		old := m.Topic
		e.resolved = strings.HasPrefix(t, resolvedPrefix) && !strings.HasPrefix(old, resolvedPrefix) &&
			strings.TrimPrefix(pre, resolvedPrefix) == old
		e.unresolved = strings.HasPrefix(old, resolvedPrefix) && !strings.HasPrefix(t, resolvedPrefix) &&
			strings.TrimLeft(old, resolvedPrefix) == t
	}
	if stream != nil {
		to, err := s.reads().channelByID(ctx, realm.ID, *stream)
		if err != nil || to.IsArchived {
			return errInvalidChannelID
		}
		ok, err := s.reads().hasContentAccess(ctx, me, e.scope, to)
		if err != nil {
			return s.internal(ctx, "update message", err)
		}
		if !ok {
			return errInvalidChannelID
		}
		e.to = to
	}
	moderator := isAdmin(me) || me.Role == RoleModerator
	if e.topic != nil {
		if e.resolved || e.unresolved {
			if !e.scope.in(realm.CanResolveTopicsGroupID) {
				return refused("You don't have permission to resolve topics.")
			}
		} else {
			if !e.scope.in(realm.CanMoveMessagesBetweenTopicsGroupID) {
				return refused("You don't have permission to edit this message")
			}
			if lim := realm.MoveMessagesWithinStreamLimitSeconds; lim != nil && !moderator && age > *lim+editLimitBuffer {
				return refused("The time limit for editing this message's topic has passed.")
			}
		}
	}
	if e.content != nil {
		o := &outgoing{me: me, realm: realm, scope: e.scope, channel: e.from,
			msg: storage.Message{RealmID: realm.ID, SenderID: m.SenderID, StreamID: m.StreamID, ConversationID: m.ConversationID,
				Topic: m.Topic, Content: *e.content}}
		if e.topic != nil {
			o.msg.Topic = *e.topic
		}
		if err := s.reads().renderOutgoing(ctx, o); err != nil {
			return err
		}
		e.rendered = o
	}
	if e.to != e.from {
		if !e.scope.in(realm.CanMoveMessagesBetweenChannelsGroupID) {
			return refused("You don't have permission to move this message")
		}
		if _, err := s.reads().checkCanSendToChannel(ctx, me, e.to); err != nil {
			return err
		}
		if lim := realm.MoveMessagesBetweenStreamsLimitSeconds; lim != nil && !moderator && age > *lim+editLimitBuffer {
			return refused("The time limit for editing this message's channel has passed")
		}
	}
	if e.mode == "change_all" && !moderator && e.moved() && !e.resolved && !e.unresolved {
		return s.checkChangeAllLimit(ctx, e)
	}
	return nil
}

// checkChangeAllLimit is the reference's
// check_time_limit_for_change_all_propagate_mode: every message of the
// topic (that the caller may see) must be within the stricter limit.
func (s *Service) checkChangeAllLimit(ctx context.Context, e *edit) error {
	realm := e.realm
	var limit *int64
	pick := func(l *int64) {
		if l != nil && (limit == nil || *l+editLimitBuffer < *limit) {
			v := *l + editLimitBuffer
			limit = &v
		}
	}
	if e.topic != nil {
		pick(realm.MoveMessagesWithinStreamLimitSeconds)
	}
	if e.to != e.from {
		pick(realm.MoveMessagesBetweenStreamsLimitSeconds)
	}
	if limit == nil {
		return nil
	}
	msgs, err := s.topicMessages(ctx, s.reads(), e, 0)
	if err != nil {
		return s.internal(ctx, "update message", err)
	}
	oldest := s.nowUnix() - *limit
	var allowed []int64
	for _, m := range msgs {
		if m.DateSent > oldest {
			allowed = append(allowed, m.ID)
		}
	}
	if len(allowed) == len(msgs) {
		return nil
	}
	var first any
	if len(allowed) > 0 {
		first = allowed[0]
	}
	return errMoveTimeLimit(first, len(allowed), len(msgs))
}

// topicMessages lists the messages of the edited message's topic with IDs
// above after (ascending): every one when the caller may read the
// channel's history, else those they received or have a row for.
func (s *Service) topicMessages(ctx context.Context, r reads, e *edit, after int64) ([]storage.Message, error) {
	all, err := r.st.ListChannelMessagesIn(ctx, e.realm.ID, []storage.IDSpan{{StreamID: e.from.ID, First: after + 1, Last: noUpperID}},
		&e.msg.Topic, noUpperLimit)
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
		all[i], all[j] = all[j], all[i]
	}
	if e.from.HistoryPublicToSubscribers && (e.from.IsWebPublic || !e.from.InviteOnly && e.me.Role != RoleGuest) {
		return all, nil
	}
	ids := make([]int64, len(all))
	for i, m := range all {
		ids[i] = m.ID
	}
	rs, err := r.readerState(ctx, e.realm, e.me, ids)
	if err != nil {
		return nil, err
	}
	ok, err := s.accessible(ctx, r, e.realm, e.me, all, rs)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, m := range all {
		if ok[m.ID] {
			out = append(out, m)
		}
	}
	return out, nil
}

// applyEdit writes the edit in w: the messages it changes and their
// history, the readers' flags and state, upload links; and emits the
// events. It returns the moved messages' IDs and the detached uploads.
func (s *Service) applyEdit(ctx context.Context, w *writeTx, e *edit) ([]int64, []DetachedUpload, error) {
	m := e.msg
	now := s.nowUnix()
	// The other messages' history gets the move only; the edited
	// message's also the content change.
	moveEntry := editHistoryEntry{UserID: &e.me.ID, Timestamp: now}
	if e.topic != nil {
		moveEntry.PrevTopic, moveEntry.Topic = &m.Topic, e.topic
	}
	if e.to != e.from {
		moveEntry.PrevStream, moveEntry.Stream = &e.from.ID, &e.to.ID
	}
	entry := moveEntry
	ev := UpdateMessageEvent{UserID: &e.me.ID, MessageID: m.ID, EditTimestamp: now, Flags: []string{}}
	change := storage.MessageEdit{Topic: e.topic, LastEditTime: now}
	if e.to != e.from {
		change.StreamID = &e.to.ID
	}
	var detached []DetachedUpload
	if e.content != nil {
		r := e.rendered.msg
		entry.PrevContent, entry.PrevRenderedContent = &m.Content, &m.RenderedContent
		change.Content = &r
		ev.OrigContent, ev.OrigRenderedContent = &m.Content, &m.RenderedContent
		ev.Content, ev.RenderedContent, ev.IsMeMessage = &r.Content, &r.RenderedContent, &r.IsMeMessage
		if err := s.notifyEdit(ctx, w, e); err != nil {
			return nil, nil, err
		}
		if err := s.updateMentionFlags(ctx, w, e); err != nil {
			return nil, nil, err
		}
		var err error
		if detached, err = s.relinkUploads(ctx, w, e); err != nil {
			return nil, nil, err
		}
	}
	ids := []int64{m.ID}
	if e.moved() && e.mode != "change_one" {
		after := int64(0)
		if e.mode == "change_later" {
			after = m.ID - 1
		}
		var msgs []storage.Message
		var err error
		if e.to != e.from {
			msgs, err = s.topicMessages(ctx, w.reads(), e, after)
		} else {
			// Within a channel, a topic moves whole, history one may
			// not see included, to keep topics together.
			msgs, err = w.ListChannelMessagesIn(ctx, e.realm.ID, []storage.IDSpan{{StreamID: e.from.ID, First: after + 1, Last: noUpperID}},
				&m.Topic, noUpperLimit)
		}
		if err != nil {
			return nil, nil, err
		}
		for _, x := range msgs {
			if x.ID != m.ID {
				ids = append(ids, x.ID)
			}
		}
	}
	ids = uniqueSorted(ids)
	one, _ := json.Marshal(entry)
	change.HistoryEntry = string(one)
	if err := w.EditMessages(ctx, e.realm.ID, []int64{m.ID}, change); err != nil {
		return nil, nil, err
	}
	if len(ids) > 1 {
		others := make([]int64, 0, len(ids)-1)
		for _, id := range ids {
			if id != m.ID {
				others = append(others, id)
			}
		}
		rest, _ := json.Marshal(moveEntry)
		if err := w.EditMessages(ctx, e.realm.ID, others, storage.MessageEdit{StreamID: change.StreamID, Topic: e.topic,
			HistoryEntry: string(rest), LastEditTime: now}); err != nil {
			return nil, nil, err
		}
	}
	ev.MessageIDs = ids
	var aud Audience
	var err error
	if m.StreamID == nil {
		aud, err = w.reads().messageAudience(ctx, e.realm, m)
	} else {
		ev.StreamName, ev.StreamID = e.from.Name, &e.from.ID
		if e.moved() {
			ev.PropagateMode = e.mode
			ev.OrigSubject = &m.Topic
			topic := m.Topic
			if e.topic != nil {
				topic = *e.topic
			}
			linkifiers, err := w.reads().compiledLinkifiers(ctx, e.realm.ID)
			if err != nil {
				return nil, nil, err
			}
			ev.Subject, ev.TopicLinks = &topic, topicLinks(linkifiers, topic)
		}
		if e.to != e.from {
			ev.NewStreamID = &e.to.ID
			if err := s.reads().moveState(ctx, w, e, ids); err != nil {
				return nil, nil, err
			}
		}
		aud, err = w.reads().messageAudience(ctx, e.realm, m)
		if e.to != e.from && err == nil {
			aud.Subscribers = append(aud.Subscribers, e.to.ID)
		}
		if err == nil && e.moved() && (e.mode == "change_all" || e.topic != nil) {
			err = s.moveTopicPolicies(ctx, w, e, ids)
		}
		if err == nil {
			err = s.fixFirstMessageIDs(ctx, w, e)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	w.emit(aud, ev)
	w.forgetMessages(ids...)
	return ids, detached, nil
}

// updateMentionFlags recomputes the readers' mention and alert-word
// flags after a content edit: rows gain or lose those bits; users newly
// mentioned or alerted get a row.
func (s *Service) updateMentionFlags(ctx context.Context, w *writeTx, e *edit) error {
	m, o := e.msg, e.rendered
	const mentionBits = storage.FlagMentioned | storage.FlagStreamWildcardMentioned | storage.FlagTopicWildcardMentioned | storage.FlagHasAlertWord
	if m.ConversationID != nil {
		members, err := w.ConversationMembers(ctx, e.realm.ID, *m.ConversationID)
		if err != nil {
			return err
		}
		for _, id := range members {
			var flags int64
			if o.mentions.users[id] {
				flags |= storage.FlagMentioned
			}
			if o.msg.StreamWildcard {
				flags |= storage.FlagStreamWildcardMentioned
			}
			if o.mentions.alerted[id] {
				flags |= storage.FlagHasAlertWord
			}
			if err := w.UpdateUserMessageFlags(ctx, e.realm.ID, id, []int64{m.ID}, flags, mentionBits&^flags); err != nil {
				return err
			}
		}
		return nil
	}
	readers, err := w.reads().channelReaders(ctx, o)
	if err != nil {
		return err
	}
	had, err := w.MessageRowUsers(ctx, e.realm.ID, m.ID)
	if err != nil {
		return err
	}
	hasRow := map[int64]bool{}
	for _, id := range had {
		hasRow[id] = true
	}
	mentioned := map[int64]int64{}
	for _, r := range readers {
		mentioned[r.UserID] = r.Flags
	}
	for _, id := range had {
		f := mentioned[id]
		if err := w.UpdateUserMessageFlags(ctx, e.realm.ID, id, []int64{m.ID}, f, mentionBits&^f); err != nil {
			return err
		}
	}
	var rows []storage.UserMessage
	for _, r := range readers {
		if !hasRow[r.UserID] {
			rows = append(rows, storage.UserMessage{RealmID: e.realm.ID, UserID: r.UserID, MessageID: m.ID, Flags: r.Flags})
		}
	}
	return w.InsertUserMessages(ctx, rows)
}

// relinkUploads links the uploads the new content links and unlinks the
// others; the sender's files no message links any more are detached.
func (s *Service) relinkUploads(ctx context.Context, w *writeTx, e *edit) ([]DetachedUpload, error) {
	m := e.msg
	if err := s.claimUploads(ctx, w, e.realm, e.me, m.ID, e.rendered.uploads); err != nil {
		return nil, err
	}
	linked, err := w.ListMessageAttachments(ctx, e.realm.ID, m.ID)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, p := range e.rendered.uploads {
		keep[p] = true
	}
	var gone []int64
	out := []DetachedUpload{}
	for _, a := range linked {
		if keep[a.PathID] {
			continue
		}
		gone = append(gone, a.ID)
	}
	if err := w.UnlinkAttachments(ctx, e.realm.ID, m.ID, gone); err != nil {
		return nil, err
	}
	for _, a := range linked {
		if keep[a.PathID] || a.OwnerID != e.me.ID {
			continue
		}
		still, err := w.ListAttachmentMessages(ctx, e.realm.ID, a.ID, 1)
		if err != nil {
			return nil, err
		}
		if len(still) == 0 {
			out = append(out, DetachedUpload{ID: a.ID, Name: a.FileName, PathID: a.PathID, Size: a.Size,
				CreateTime: a.CreateTime * 1000, Messages: []any{}})
		}
	}
	return out, nil
}

// fixFirstMessageIDs keeps the channels' first_message_id right after a
// move: the source may have lost its first message, the destination
// gained an older one.
func (s *Service) fixFirstMessageIDs(ctx context.Context, w *writeTx, e *edit) error {
	if e.to == e.from {
		return nil
	}
	for _, id := range []int64{e.from.ID, e.to.ID} {
		if err := s.resetFirstMessageID(ctx, w, e.realm.ID, id); err != nil {
			return err
		}
	}
	return nil
}

// resetFirstMessageID sets the channel's first_message_id to its oldest
// message now, announcing a change to its subscribers.
func (s *Service) resetFirstMessageID(ctx context.Context, w *writeTx, realmID, streamID int64) error {
	_, oldest, err := w.ChannelNeighbours(ctx, realmID, streamID, 1, 0)
	if err != nil {
		return err
	}
	ch, err := w.GetStream(ctx, realmID, streamID)
	if err != nil {
		return err
	}
	var first *int64
	if oldest != 0 {
		first = &oldest
	}
	if ptrValue(first) == ptrValue(ch.FirstMessageID) {
		return nil
	}
	ch.FirstMessageID = first
	if err := w.UpdateStream(ctx, ch, "first_message_id"); err != nil {
		return err
	}
	w.emit(channelAudience(ch), StreamEvent{Op: "update", StreamID: ch.ID, Name: ch.Name, Property: "first_message_id", Value: first})
	return nil
}

// editNotices sends, after the edit, the notification bot's messages of
// a move or of a resolved topic (the reference's breadcrumbs).
func (s *Service) editNotices(ctx context.Context, e *edit, moved []int64) {
	if err := s.sendEditNotices(ctx, e, moved); err != nil {
		s.log.WarnContext(ctx, "edit notices", "err", err)
	}
}
