package chat

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/teamchat/chat/storage"
)

// Deleting messages, their edit history, and read receipts.

// DeleteMessageRequest is the input of DeleteMessage (DELETE
// /messages/{message_id}).
type DeleteMessageRequest struct {
	MessageID int64 `json:"message_id"`
}

// DeleteMessageEvent tells who could see messages that they are gone.
type DeleteMessageEvent struct {
	MessageIDs  []int64 `json:"message_ids"`
	MessageType string  `json:"message_type"`
	StreamID    *int64  `json:"stream_id,omitempty"`
	Topic       *string `json:"topic,omitempty"`
}

// EventType implements EventBody.
func (DeleteMessageEvent) EventType() string { return "delete_message" }

var errNoDeletePermission = refused("You don't have permission to delete this message")

// DeleteMessage deletes a message: members of can_delete_any_message_group
// any; the others their own (or their bots') within the organization's
// time limit, if they are in can_delete_own_message_group.
func (s *Service) DeleteMessage(ctx context.Context, c Caller, req DeleteMessageRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	scope, err := s.reads().cachedScope(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, s.internal(ctx, "delete message", err)
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		m, _, err := s.modifiableMessage(ctx, w.reads(), realm, me, req.MessageID)
		if err != nil {
			return err
		}
		if !scope.in(realm.CanDeleteAnyMessageGroupID) {
			own := m.SenderID == me.ID
			if !own {
				sender, err := w.GetUser(ctx, realm.ID, m.SenderID)
				if err != nil {
					return err
				}
				own = sender.BotOwnerID != nil && *sender.BotOwnerID == me.ID
			}
			if !own || !scope.in(realm.CanDeleteOwnMessageGroupID) {
				return errNoDeletePermission
			}
			if lim := realm.MessageContentDeleteLimitSeconds; lim != nil && s.nowUnix()-m.DateSent > *lim {
				return refused("The time limit for deleting this message has passed")
			}
		}
		return s.deleteMessagesIn(ctx, w, realm, me, m)
	})
	if err != nil {
		return nil, s.internal(ctx, "delete message", err)
	}
	return &EmptyResponse{}, nil
}

// deleteMessagesIn deletes the message in w and tells who could see it.
func (s *Service) deleteMessagesIn(ctx context.Context, w *writeTx, realm *storage.Realm, actor *storage.User, m *storage.Message) error {
	aud, err := w.reads().messageAudience(ctx, realm, m)
	if err != nil {
		return err
	}
	if err := w.DeleteMessages(ctx, realm.ID, []int64{m.ID}); err != nil {
		return err
	}
	if err := s.dropNotifications(ctx, w, realm.ID, []int64{m.ID}); err != nil {
		return err
	}
	ev := DeleteMessageEvent{MessageIDs: []int64{m.ID}, MessageType: "private"}
	if m.StreamID != nil {
		topic := m.Topic
		ev.MessageType, ev.StreamID, ev.Topic = "stream", m.StreamID, &topic
		ch, err := s.reads().channelByID(ctx, realm.ID, *m.StreamID)
		if err != nil {
			return err
		}
		if ptrValue(ch.FirstMessageID) == m.ID {
			if err := s.resetFirstMessageID(ctx, w, realm.ID, ch.ID); err != nil {
				return err
			}
		}
	}
	w.emit(aud.plus(actor.ID), ev)
	w.forgetMessages(m.ID)
	return nil
}

// GetMessageHistoryRequest is the input of GetMessageHistory (GET
// /messages/{message_id}/history).
type GetMessageHistoryRequest struct {
	MessageID           int64 `json:"message_id"`
	AllowEmptyTopicName *bool `json:"allow_empty_topic_name"`
}

// MessageSnapshot is a message's state after one edit (the first: as
// sent), with what the edit changed.
type MessageSnapshot struct {
	Topic               string  `json:"topic"`
	PrevTopic           *string `json:"prev_topic,omitempty"`
	Stream              *int64  `json:"stream,omitempty"`
	PrevStream          *int64  `json:"prev_stream,omitempty"`
	Content             string  `json:"content"`
	RenderedContent     string  `json:"rendered_content"`
	PrevContent         *string `json:"prev_content,omitempty"`
	PrevRenderedContent *string `json:"prev_rendered_content,omitempty"`
	UserID              *int64  `json:"user_id"`
	ContentHTMLDiff     *string `json:"content_html_diff,omitempty"`
	Timestamp           int64   `json:"timestamp"`
}

// GetMessageHistoryResponse is the success body of GetMessageHistory.
type GetMessageHistoryResponse struct {
	// MessageHistory is oldest first: the message as sent, then each edit.
	MessageHistory []MessageSnapshot `json:"message_history"`
}

// GetMessageHistory returns a message's states, oldest first, as far as
// the organization shows edit history.
func (s *Service) GetMessageHistory(ctx context.Context, c Caller, req GetMessageHistoryRequest) (*GetMessageHistoryResponse, error) {
	return s.reads().getMessageHistory(ctx, c, req)
}

// getMessageHistory is GetMessageHistory reading through r.
func (r reads) getMessageHistory(ctx context.Context, c Caller, req GetMessageHistoryRequest) (*GetMessageHistoryResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	policy := realm.MessageEditHistoryVisibilityPolicy
	if policy == 3 {
		return nil, refused("Message edit history is disabled in this organization")
	}
	m, err := r.st.GetMessage(ctx, realm.ID, req.MessageID)
	if err != nil {
		return nil, errInvalidMessage
	}
	ok, err := r.messageAccess(ctx, realm, me, m)
	if err != nil {
		return nil, r.s.internal(ctx, "message history", err)
	}
	if !ok {
		return nil, errInvalidMessage
	}
	entries, err := parseEditHistory(m.EditHistory)
	if err != nil {
		return nil, r.s.internal(ctx, "message history", err)
	}
	allowEmpty := req.AllowEmptyTopicName != nil && *req.AllowEmptyTopicName
	shown := func(t string) string {
		if t == "" && m.StreamID != nil && !allowEmpty {
			return EmptyTopicDisplayName
		}
		return t
	}
	content, rendered, topic := m.Content, m.RenderedContent, shown(m.Topic)
	var out []MessageSnapshot
	for _, e := range entries {
		snap := MessageSnapshot{Content: content, RenderedContent: rendered, Timestamp: e.Timestamp, Topic: topic, UserID: e.UserID}
		if e.PrevTopic != nil {
			topic = shown(*e.PrevTopic)
			snap.PrevTopic = &topic
		}
		if e.PrevContent != nil && e.PrevRenderedContent != nil {
			snap.PrevContent, snap.PrevRenderedContent = e.PrevContent, e.PrevRenderedContent
			diff := htmlDiff(*e.PrevRenderedContent, rendered)
			snap.ContentHTMLDiff = &diff
			content, rendered = *e.PrevContent, *e.PrevRenderedContent
		}
		snap.PrevStream, snap.Stream = e.PrevStream, e.Stream
		if policy == 2 && snap.PrevContent != nil {
			if snap.PrevTopic == nil && snap.PrevStream == nil {
				continue // a content edit only: not shown
			}
			snap.PrevContent, snap.PrevRenderedContent, snap.ContentHTMLDiff = nil, nil, nil
		}
		out = append(out, snap)
	}
	sender := m.SenderID
	out = append(out, MessageSnapshot{Content: content, RenderedContent: rendered, Timestamp: m.DateSent, Topic: topic, UserID: &sender})
	slices.Reverse(out)
	return &GetMessageHistoryResponse{MessageHistory: out}, nil
}

// parseEditHistory reads a message's stored edit history (newest first).
func parseEditHistory(raw string) ([]editHistoryEntry, error) {
	if raw == "" {
		return nil, nil
	}
	var out []editHistoryEntry
	err := json.Unmarshal([]byte(raw), &out)
	return out, err
}

// GetReadReceiptsRequest is the input of GetReadReceipts (GET
// /messages/{message_id}/read_receipts).
type GetReadReceiptsRequest struct {
	MessageID int64 `json:"message_id"`
}

// GetReadReceiptsResponse is the success body of GetReadReceipts.
type GetReadReceiptsResponse struct {
	UserIDs []int64 `json:"user_ids"`
}

// GetReadReceipts lists who has read a message the caller may see, but
// its sender and those who do not send read receipts (their
// send_read_receipts setting), when the organization shows them.
func (s *Service) GetReadReceipts(ctx context.Context, c Caller, req GetReadReceiptsRequest) (*GetReadReceiptsResponse, error) {
	return s.reads().getReadReceipts(ctx, c, req)
}

// getReadReceipts is GetReadReceipts reading through r.
func (r reads) getReadReceipts(ctx context.Context, c Caller, req GetReadReceiptsRequest) (*GetReadReceiptsResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	m, err := r.st.GetMessage(ctx, realm.ID, req.MessageID)
	if err != nil {
		return nil, errInvalidMessage
	}
	ok, err := r.messageAccess(ctx, realm, me, m)
	if err != nil {
		return nil, r.s.internal(ctx, "read receipts", err)
	}
	if !ok {
		return nil, errInvalidMessage
	}
	if !realm.EnableReadReceipts {
		return nil, refused("Read receipts are disabled in this organization.")
	}
	readers, err := r.st.MessageReaders(ctx, realm.ID, m)
	if err != nil {
		return nil, r.s.internal(ctx, "read receipts", err)
	}
	users, err := r.usersByID(ctx, realm, readers)
	if err != nil {
		return nil, r.s.internal(ctx, "read receipts", err)
	}
	out := []int64{}
	for _, id := range uniqueSorted(readers) {
		u := users[id]
		if u == nil || !u.IsActive || id == m.SenderID || !settingsOf(u).SendReadReceipts {
			continue
		}
		out = append(out, id)
	}
	return &GetReadReceiptsResponse{UserIDs: out}, nil
}
