package chat

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/teamchat/chat/storage"
)

// Scheduled messages: messages a user asks to be sent later, to a channel
// or to users. Scheduling checks the message as sending it would (the
// same code: prepareMessage), and stores its Markdown and rendering;
// delivery (scheduled_delivery.go) checks and renders it again, as its
// author at the time of delivery. Each user sees, edits and deletes only
// their own; the scheduled_messages events (add, update, remove) go to
// them alone, and register gives their undelivered ones.
//
// The rules and texts are the reference's (zerver/views/
// scheduled_messages.py, zerver/actions/scheduled_messages.py, Zulip
// 10.2): the type's four names; `to` a channel ID for a channel message
// and a list of user IDs for a direct one (the other form gives "Invalid
// data type for channel ID" / "Invalid data type for recipients"); a
// delivery time strictly in the future; read_by_sender by default true
// for the interactive clients unless the message is to oneself alone; an
// edit that changes the type needs `to` (and a topic for a channel), and
// one of a failed message a new time; a missing message, or another
// user's, answers HTTP 404. Delivered messages are kept (as the
// reference keeps them): they are no longer listed and no longer
// editable, and may still be deleted.

// ScheduledRecipient is the `to` of a scheduled message on the wire: one
// integer (a channel ID) or a list of integers (user IDs).
type ScheduledRecipient struct {
	// ChannelID is set when the value is one integer.
	ChannelID *int64
	// UserIDs is set (not nil) when the value is a list.
	UserIDs []int64
}

// ScheduleToChannel is the `to` of a scheduled channel message.
func ScheduleToChannel(id int64) ScheduledRecipient { return ScheduledRecipient{ChannelID: &id} }

// ScheduleToUsers is the `to` of a scheduled direct message.
func ScheduleToUsers(ids ...int64) ScheduledRecipient {
	return ScheduledRecipient{UserIDs: append([]int64{}, ids...)}
}

func (r ScheduledRecipient) given() bool { return r.ChannelID != nil || r.UserIDs != nil }

// MarshalJSON writes the integer or the list.
func (r ScheduledRecipient) MarshalJSON() ([]byte, error) {
	if r.ChannelID != nil {
		return json.Marshal(*r.ChannelID)
	}
	return json.Marshal(nonNil(r.UserIDs))
}

// errToNotInteger is the reference's error for a `to` that is neither an
// integer nor a list of integers (its parameter is Json[int | list[int]],
// reported against the first branch).
var errToNotInteger = BadRequest(`to["int"] is not an integer`)

// UnmarshalJSON reads an integer or a list of integers.
func (r *ScheduledRecipient) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return errToNotInteger
	}
	switch v := v.(type) {
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			return errToNotInteger
		}
		*r = ScheduledRecipient{ChannelID: &n}
		return nil
	case []any:
		ids := make([]int64, 0, len(v))
		for _, item := range v {
			num, ok := item.(json.Number)
			if !ok {
				return errToNotInteger
			}
			n, err := num.Int64()
			if err != nil {
				return errToNotInteger
			}
			ids = append(ids, n)
		}
		*r = ScheduledRecipient{UserIDs: ids}
		return nil
	}
	return errToNotInteger
}

// ScheduledMessage is a scheduled message as the caller sees it (GET
// /scheduled_messages, register, events).
type ScheduledMessage struct {
	ScheduledMessageID int64 `json:"scheduled_message_id"`
	// Type is "stream" or "private".
	Type string `json:"type"`
	// To is the channel ID of a channel message, the recipients' user IDs
	// of a direct one (the sender's own for a message to oneself).
	To ScheduledRecipient `json:"to"`
	// Topic is a channel message's topic ("" is the empty topic).
	Topic                      *string `json:"topic,omitempty"`
	Content                    string  `json:"content"`
	RenderedContent            string  `json:"rendered_content"`
	ScheduledDeliveryTimestamp int64   `json:"scheduled_delivery_timestamp"`
	// Failed: delivery was tried and failed; the sender may edit it with
	// a new delivery time.
	Failed bool `json:"failed"`
}

// ScheduledMessagesEvent: the caller scheduled messages ("add",
// ScheduledMessages), edited one or its delivery failed ("update",
// ScheduledMessage), or one was sent or deleted ("remove",
// ScheduledMessageID).
type ScheduledMessagesEvent struct {
	Op                 string             `json:"op"`
	ScheduledMessages  []ScheduledMessage `json:"scheduled_messages,omitempty"`
	ScheduledMessage   *ScheduledMessage  `json:"scheduled_message,omitempty"`
	ScheduledMessageID int64              `json:"scheduled_message_id,omitempty"`
}

// EventType implements EventBody.
func (ScheduledMessagesEvent) EventType() string { return "scheduled_messages" }

// GetScheduledMessagesResponse is the success body of GetScheduledMessages.
type GetScheduledMessagesResponse struct {
	ScheduledMessages []ScheduledMessage `json:"scheduled_messages"`
}

// CreateScheduledMessageRequest is the input of CreateScheduledMessage
// (POST /scheduled_messages), its fields in the reference's parameter
// order (which decides which missing one is reported).
type CreateScheduledMessageRequest struct {
	Content string `json:"content"`
	// ReadBySender marks the message read for its sender when it is
	// sent; by default it is for the interactive clients (as for
	// SendMessage), except for a message to oneself alone.
	ReadBySender *bool `json:"read_by_sender"`
	// To is a channel ID (ScheduleToChannel) or a list of user IDs
	// (ScheduleToUsers).
	To ScheduledRecipient `json:"to"`
	// Type is "channel" (or "stream") or "direct" (or "private").
	Type string `json:"type"`
	// ScheduledDeliveryTimestamp is when to send it (UTC seconds), which
	// must be in the future.
	ScheduledDeliveryTimestamp int64 `json:"scheduled_delivery_timestamp"`
	// Topic (or Subject; not both) is required for a channel message.
	Topic   *string `json:"topic"`
	Subject *string `json:"subject"`
	// Client and UserAgent name the scheduling client, as for
	// SendMessage; the message is sent as from it.
	Client    *string `json:"client"`
	UserAgent string  `json:"-" header:"User-Agent"`
}

// CreateScheduledMessageResponse is the success body of
// CreateScheduledMessage.
type CreateScheduledMessageResponse struct {
	// ScheduledMessageID is not the ID the message will have once sent.
	ScheduledMessageID int64 `json:"scheduled_message_id"`
}

// UpdateScheduledMessageRequest is the input of UpdateScheduledMessage
// (PATCH /scheduled_messages/{scheduled_message_id}). Every field but the
// ID is optional; at least one must be given.
type UpdateScheduledMessageRequest struct {
	ScheduledMessageID int64   `json:"scheduled_message_id"`
	Content            *string `json:"content"`
	// Type changes the message's type; To must come with it, and Topic
	// too for a channel message.
	Type                       *string             `json:"type"`
	ScheduledDeliveryTimestamp *int64              `json:"scheduled_delivery_timestamp"`
	To                         *ScheduledRecipient `json:"to"`
	// Topic (or Subject) is ignored for a direct message.
	Topic     *string `json:"topic"`
	Subject   *string `json:"subject"`
	Client    *string `json:"client"`
	UserAgent string  `json:"-" header:"User-Agent"`
}

// DeleteScheduledMessageRequest is the input of DeleteScheduledMessage
// (DELETE /scheduled_messages/{scheduled_message_id}).
type DeleteScheduledMessageRequest struct {
	ScheduledMessageID int64 `json:"scheduled_message_id"`
}

var (
	errScheduledNotFound    = NotFound("Scheduled message does not exist")
	errDeliveryTimeNotAhead = BadRequest("Scheduled delivery time must be in the future.")
	errScheduledAlreadySent = clash("Scheduled message was already sent")
)

// scheduledType is the stored type of a request's type name ("" for an
// unknown one).
func scheduledType(name string) string {
	switch name {
	case "stream", "channel":
		return MessageTypeChannel
	case "private", "direct":
		return MessageTypeDirect
	}
	return ""
}

// scheduledView is the caller's view of a stored scheduled message.
func scheduledView(m *storage.ScheduledMessage) ScheduledMessage {
	v := ScheduledMessage{ScheduledMessageID: m.ID, Content: m.Content, RenderedContent: m.RenderedContent,
		ScheduledDeliveryTimestamp: m.ScheduledTimestamp, Failed: m.Failed}
	if m.StreamID != nil {
		v.Type, v.To = MessageTypeChannel, ScheduleToChannel(*m.StreamID)
		topic := m.Topic
		v.Topic = &topic
	} else {
		v.Type, v.To = MessageTypeDirect, ScheduleToUsers(scheduledRecipients(m)...)
	}
	return v
}

// scheduledRecipients are a stored direct message's recipients.
func scheduledRecipients(m *storage.ScheduledMessage) []int64 {
	var ids []int64
	if m.Recipients != "" {
		_ = json.Unmarshal([]byte(m.Recipients), &ids)
	}
	return nonNil(ids)
}

// scheduledSendRequest is the SendMessage request of a scheduled message
// of type typ to `to`: its form is checked as the reference's
// extract_stream_id and extract_direct_message_recipient_ids do.
func scheduledSendRequest(typ string, to ScheduledRecipient, topic *string, content string) (SendMessageRequest, error) {
	req := SendMessageRequest{Type: typ, Content: content}
	if typ == MessageTypeChannel {
		if to.ChannelID == nil {
			return req, BadRequest("Invalid data type for channel ID")
		}
		req.To, req.Topic = ToChannelID(*to.ChannelID), topic
		return req, nil
	}
	if to.UserIDs == nil {
		return req, BadRequest("Invalid data type for recipients")
	}
	req.To = ToUsers(uniqueSorted(slices.Clone(to.UserIDs))...)
	return req, nil
}

// setScheduledRecipient stores where the checked message o goes.
func setScheduledRecipient(m *storage.ScheduledMessage, o *outgoing) {
	if o.channel != nil {
		id := o.channel.ID
		m.StreamID, m.Topic, m.Recipients = &id, o.msg.Topic, ""
		return
	}
	var others []int64
	for _, u := range o.recipients {
		if u.ID != o.me.ID {
			others = append(others, u.ID)
		}
	}
	if len(others) == 0 {
		others = []int64{o.me.ID}
	}
	b, _ := json.Marshal(uniqueSorted(others))
	m.StreamID, m.Topic, m.Recipients = nil, "", string(b)
}

// toSelfOnly reports whether the checked message o is a direct message to
// its sender alone (the reference's is_message_to_self).
func toSelfOnly(o *outgoing) bool {
	if o.channel != nil {
		return false
	}
	for _, u := range o.recipients {
		if u.ID != o.me.ID {
			return false
		}
	}
	return true
}

// checkDeliveryTime refuses a delivery time that is not after now.
func (s *Service) checkDeliveryTime(ts int64) error {
	if !time.Unix(ts, 0).After(s.now()) {
		return errDeliveryTimeNotAhead
	}
	return nil
}

// GetScheduledMessages lists the caller's undelivered scheduled messages
// (failed ones included) by delivery time.
func (s *Service) GetScheduledMessages(ctx context.Context, c Caller) (*GetScheduledMessagesResponse, error) {
	return s.reads().getScheduledMessages(ctx, c)
}

// getScheduledMessages is GetScheduledMessages reading through r.
func (r reads) getScheduledMessages(ctx context.Context, c Caller) (*GetScheduledMessagesResponse, error) {
	me, _, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	rows, err := r.st.ListScheduledMessages(ctx, me.RealmID, me.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get scheduled messages", err)
	}
	resp := &GetScheduledMessagesResponse{ScheduledMessages: make([]ScheduledMessage, 0, len(rows))}
	for i := range rows {
		resp.ScheduledMessages = append(resp.ScheduledMessages, scheduledView(&rows[i]))
	}
	return resp, nil
}

// CreateScheduledMessage schedules a message, checked (channel, topic,
// recipients, content, permissions, mentions) and rendered as SendMessage
// would now; it is checked again when it is sent.
func (s *Service) CreateScheduledMessage(ctx context.Context, c Caller, req CreateScheduledMessageRequest) (*CreateScheduledMessageResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	typ := scheduledType(req.Type)
	if typ == "" {
		return nil, BadRequest("Invalid type")
	}
	if !req.To.given() {
		return nil, MissingArgument("to")
	}
	topic, err := topicParam(req.Topic, req.Subject)
	if err != nil {
		return nil, err
	}
	if err := s.checkDeliveryTime(req.ScheduledDeliveryTimestamp); err != nil {
		return nil, err
	}
	send, err := scheduledSendRequest(typ, req.To, topic, req.Content)
	if err != nil {
		return nil, err
	}
	send.Client, send.UserAgent, send.ReadBySender = req.Client, req.UserAgent, req.ReadBySender
	o, err := s.prepareMessage(ctx, me, realm, &send)
	if err != nil {
		return nil, err
	}
	readBySender := o.readBySender
	if req.ReadBySender == nil && toSelfOnly(o) {
		readBySender = false
	}
	m := storage.ScheduledMessage{RealmID: realm.ID, SenderID: me.ID, Content: o.msg.Content,
		RenderedContent: o.msg.RenderedContent, ScheduledTimestamp: req.ScheduledDeliveryTimestamp,
		ReadBySender: readBySender, SendingClient: o.client}
	setScheduledRecipient(&m, o)
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		if err := w.CreateScheduledMessage(ctx, &m); err != nil {
			return err
		}
		w.emit(toUsers(me.ID), ScheduledMessagesEvent{Op: "add", ScheduledMessages: []ScheduledMessage{scheduledView(&m)}})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "create scheduled message", err)
	}
	s.wakeScheduler()
	return &CreateScheduledMessageResponse{ScheduledMessageID: m.ID}, nil
}

// maxScheduledEditAttempts bounds how often an edit is checked again
// because the message changed (another edit, a failed delivery) between
// its reading and its writing.
const maxScheduledEditAttempts = 5

// UpdateScheduledMessage edits one of the caller's scheduled messages:
// its type and recipient, topic, content or delivery time. Changing the
// type, recipient or content checks the message again as SendMessage
// would; a topic alone is only normalized (as the reference does). The
// message is sent as from the client that edited it last; a failed one
// is pending again.
func (s *Service) UpdateScheduledMessage(ctx context.Context, c Caller, req UpdateScheduledMessageRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	topic, err := topicParam(req.Topic, req.Subject)
	if err != nil {
		return nil, err
	}
	newType := ""
	if req.Type != nil {
		if newType = scheduledType(*req.Type); newType == "" {
			return nil, BadRequest("Invalid type")
		}
	}
	switch {
	case req.Type == nil && req.To == nil && topic == nil && req.Content == nil && req.ScheduledDeliveryTimestamp == nil:
		return nil, BadRequest("Nothing to change")
	case req.Type != nil && req.To == nil:
		return nil, BadRequest("Recipient required when updating type of scheduled message.")
	case newType == MessageTypeChannel && topic == nil:
		return nil, BadRequest("Topic required when updating scheduled message type to channel.")
	}
	if req.To != nil && !req.To.given() {
		return nil, MissingArgument("to")
	}
	if req.ScheduledDeliveryTimestamp != nil {
		if err := s.checkDeliveryTime(*req.ScheduledDeliveryTimestamp); err != nil {
			return nil, err
		}
	}
	for range maxScheduledEditAttempts {
		m, err := s.reads().editedScheduledMessage(ctx, me, realm, &req, newType, topic)
		if err != nil {
			return nil, err
		}
		err = s.write(ctx, realm.ID, func(w *writeTx) error {
			w.keepCallers()
			if err := w.UpdateScheduledMessage(ctx, m); err != nil {
				return err
			}
			view := scheduledView(m)
			w.emit(toUsers(me.ID), ScheduledMessagesEvent{Op: "update", ScheduledMessage: &view})
			return nil
		})
		if errors.Is(err, storage.ErrNotFound) {
			continue // changed (or gone) since it was read: look again
		} else if err != nil {
			return nil, s.internal(ctx, "update scheduled message", err)
		}
		s.wakeScheduler()
		return &EmptyResponse{}, nil
	}
	return nil, s.internal(ctx, "update scheduled message", errors.New("the scheduled message kept changing"))
}

// editedScheduledMessage reads the caller's message and returns it with
// the edit applied and checked (the reference's edit_scheduled_message).
func (r reads) editedScheduledMessage(ctx context.Context, me *storage.User, realm *storage.Realm,
	req *UpdateScheduledMessageRequest, newType string, topic *string) (*storage.ScheduledMessage, error) {
	m, err := r.st.GetScheduledMessage(ctx, realm.ID, me.ID, req.ScheduledMessageID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errScheduledNotFound
	} else if err != nil {
		return nil, r.s.internal(ctx, "update scheduled message", err)
	}
	if m.Delivered {
		return nil, errScheduledAlreadySent
	}
	if m.Failed && req.ScheduledDeliveryTimestamp == nil {
		return nil, errDeliveryTimeNotAhead
	}
	current := scheduledView(m)
	if req.Type != nil || req.To != nil || req.Content != nil {
		typ, to, content, t := current.Type, current.To, m.Content, topic
		if newType != "" {
			typ = newType
		}
		if req.To != nil {
			to = *req.To
		}
		if req.Content != nil {
			content = *req.Content
		}
		if t == nil {
			t = &m.Topic
		}
		send, err := scheduledSendRequest(typ, to, t, content)
		if err != nil {
			return nil, err
		}
		send.Client, send.UserAgent = req.Client, req.UserAgent
		o, err := r.s.prepareMessage(ctx, me, realm, &send)
		if err != nil {
			return nil, err
		}
		if req.Type != nil || req.To != nil {
			setScheduledRecipient(m, o)
		} else if topic != nil && m.StreamID != nil {
			m.Topic = o.msg.Topic
		}
		if req.Content != nil {
			m.Content, m.RenderedContent = o.msg.Content, o.msg.RenderedContent
		}
	} else if topic != nil && m.StreamID != nil {
		if m.Topic, err = r.s.normalizeTopic(*topic); err != nil {
			return nil, err
		}
		if m.Topic == "" && realm.MandatoryTopics {
			return nil, errTopicsRequired
		}
	}
	if req.ScheduledDeliveryTimestamp != nil {
		m.ScheduledTimestamp = *req.ScheduledDeliveryTimestamp
	}
	m.SendingClient = clientName(req.Client, req.UserAgent)
	m.Failed, m.FailureMessage = false, nil
	return m, nil
}

// DeleteScheduledMessage deletes (so cancels) one of the caller's
// scheduled messages.
func (s *Service) DeleteScheduledMessage(ctx context.Context, c Caller, req DeleteScheduledMessageRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		if err := w.DeleteScheduledMessage(ctx, realm.ID, me.ID, req.ScheduledMessageID); err != nil {
			return err
		}
		w.emit(toUsers(me.ID), ScheduledMessagesEvent{Op: "remove", ScheduledMessageID: req.ScheduledMessageID})
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errScheduledNotFound
	} else if err != nil {
		return nil, s.internal(ctx, "delete scheduled message", err)
	}
	return &EmptyResponse{}, nil
}
