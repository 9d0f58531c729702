package chat

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/teamchat/chat/storage"
)

// Typing notification timing, as the reference's clients use it (sent to
// them at registration as server_typing_*_milliseconds): a typing client
// repeats "start" every TypingStartedWait, sends "stop" after
// TypingStoppedWait without typing, and a receiver forgets a "start" not
// renewed within TypingStartedExpiry.
const (
	TypingStartedWait   = 30 * time.Second
	TypingStoppedWait   = 12 * time.Second
	TypingStartedExpiry = 45 * time.Second
)

// maxChannelTypingAudience: channel typing notifications are not sent in
// channels with more subscribers (the reference's
// max_stream_size_for_typing_notifications).
const maxChannelTypingAudience = 100

// TypingRequest is the input of SetTyping (POST /typing).
type TypingRequest struct {
	// Type is "direct" (default; "private" is its old name) or "stream"
	// ("channel" is its new name).
	Type *string `json:"type"`
	// Op is "start" or "stop".
	Op string `json:"op"`
	// To lists the user IDs of a direct conversation.
	To *[]int64 `json:"to"`
	// StreamID and Topic name a channel conversation.
	StreamID *int64  `json:"stream_id"`
	Topic    *string `json:"topic"`
}

// TypingEvent tells that someone started or stopped typing.
type TypingEvent struct {
	Op          string       `json:"op"`
	MessageType string       `json:"message_type"`
	Sender      typingUser   `json:"sender"`
	Recipients  []typingUser `json:"recipients,omitempty"`
	StreamID    int64        `json:"stream_id,omitempty"`
	Topic       *string      `json:"topic,omitempty"`
}

type typingUser struct {
	UserID int64  `json:"user_id"`
	Email  string `json:"email"`
}

func (TypingEvent) EventType() string { return "typing" }

// TypingEditEvent tells that someone started or stopped editing a message.
type TypingEditEvent struct {
	Op        string          `json:"op"`
	SenderID  int64           `json:"sender_id"`
	MessageID int64           `json:"message_id"`
	Recipient typingRecipient `json:"recipient"`
}

type typingRecipient struct {
	Type      string  `json:"type"`
	ChannelID int64   `json:"channel_id,omitempty"`
	Topic     *string `json:"topic,omitempty"`
	UserIDs   []int64 `json:"user_ids,omitempty"`
}

func (TypingEditEvent) EventType() string { return "typing_edit_message" }

func checkTypingOp(op string) error {
	if op == "" {
		return MissingArgument("op")
	}
	if op != "start" && op != "stop" {
		return InvalidArgument("Invalid op")
	}
	return nil
}

// SetTyping tells the others in a conversation that the caller started
// or stopped typing. Only users who receive typing notifications get it;
// channel notifications are not sent in channels of more than 100
// subscribers, and reach only clients that declared the
// stream_typing_notifications capability.
func (s *Service) SetTyping(ctx context.Context, c Caller, req TypingRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	kind := "direct"
	if req.Type != nil {
		kind = *req.Type
	}
	switch kind {
	case "direct", "private":
		kind = "direct"
	case "stream", "channel":
		kind = "stream"
	default:
		return nil, InvalidArgument("Invalid type")
	}
	if err := checkTypingOp(req.Op); err != nil {
		return nil, err
	}
	sender := typingUser{me.ID, apiEmail(realm, me)}
	if kind == "stream" {
		if req.StreamID == nil {
			return nil, BadRequest("Missing 'stream_id' argument")
		}
		if req.Topic == nil {
			return nil, BadRequest("Missing topic")
		}
		if !settingsOf(me).SendStreamTypingNotifications {
			return nil, refused("User has disabled typing notifications for channel messages")
		}
		// The reference's access_stream_by_id: a channel whose messages
		// the caller may read.
		_, _, ch, err := s.readableChannel(ctx, c, *req.StreamID)
		if err != nil {
			return nil, err
		}
		to, err := s.reads().channelTypingAudience(ctx, realm.ID, ch.ID)
		if err != nil || to == nil {
			return &EmptyResponse{}, err
		}
		topic := *req.Topic
		return &EmptyResponse{}, s.announce(ctx, realm.ID, toUsers(to...),
			TypingEvent{Op: req.Op, MessageType: "stream", Sender: sender, StreamID: ch.ID, Topic: &topic})
	}
	if req.To == nil {
		return nil, BadRequest("Missing 'to' argument")
	}
	if len(*req.To) == 0 {
		return nil, BadRequest("Empty 'to' list")
	}
	if !settingsOf(me).SendPrivateTypingNotifications {
		return nil, refused("User has disabled typing notifications for direct messages")
	}
	ids := slices.Clone(*req.To)
	if !slices.Contains(ids, me.ID) {
		ids = append(ids, me.ID)
	}
	recipients, notify, err := s.reads().directTypingAudience(ctx, realm, ids)
	if err != nil {
		return nil, err
	}
	return &EmptyResponse{}, s.announce(ctx, realm.ID, toUsers(notify...),
		TypingEvent{Op: req.Op, MessageType: "direct", Sender: sender, Recipients: recipients})
}

// directTypingAudience is a direct message's recipients (ids) as typing
// events name them, and those of them who receive typing notifications;
// an unknown ID is refused.
func (r reads) directTypingAudience(ctx context.Context, realm *storage.Realm, ids []int64) ([]typingUser, []int64, error) {
	users, err := r.st.FindUsers(ctx, realm.ID, storage.UserFilter{IDs: ids})
	if err != nil {
		return nil, nil, r.s.internal(ctx, "typing", err)
	}
	byID := map[int64]*storage.User{}
	for i := range users {
		byID[users[i].ID] = &users[i]
	}
	recipients := make([]typingUser, 0, len(ids))
	var notify []int64
	for _, id := range ids {
		u := byID[id]
		if u == nil {
			return nil, nil, noSuch("Invalid user ID %d", id)
		}
		recipients = append(recipients, typingUser{u.ID, apiEmail(realm, u)})
		if receivesTyping(u) {
			notify = append(notify, u.ID)
		}
	}
	return recipients, notify, nil
}

// channelTypingAudience lists the channel's subscribers who receive typing
// notifications; nil when the channel is too large for them.
func (r reads) channelTypingAudience(ctx context.Context, realmID, channelID int64) ([]int64, error) {
	subs, err := r.st.ListActiveSubscribers(ctx, realmID, []int64{channelID})
	if err != nil {
		return nil, r.s.internal(ctx, "typing", err)
	}
	if len(subs) > maxChannelTypingAudience {
		return nil, nil
	}
	ids := make([]int64, len(subs))
	for i, sub := range subs {
		ids[i] = sub.UserID
	}
	return r.typingReceivers(ctx, realmID, ids)
}

// receivesTyping: the user is active and wants typing notifications.
func receivesTyping(u *storage.User) bool {
	return u.IsActive && settingsOf(u).ReceivesTypingNotifications
}

// typingReceivers keeps the users among ids who receive typing
// notifications.
func (r reads) typingReceivers(ctx context.Context, realmID int64, ids []int64) ([]int64, error) {
	users, err := r.st.FindUsers(ctx, realmID, storage.UserFilter{IDs: ids})
	if err != nil {
		return nil, r.s.internal(ctx, "typing", err)
	}
	to := []int64{}
	for i := range users {
		if receivesTyping(&users[i]) {
			to = append(to, users[i].ID)
		}
	}
	return to, nil
}

// TypingEditRequest is the input of SetEditTyping
// (POST /messages/{message_id}/typing).
type TypingEditRequest struct {
	MessageID int64  `json:"message_id"`
	Op        string `json:"op"`
}

// SetEditTyping tells those who would see an edit of the message that
// the caller started or stopped editing it.
func (s *Service) SetEditTyping(ctx context.Context, c Caller, req TypingEditRequest) (*EmptyResponse, error) {
	r := s.reads()
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := checkTypingOp(req.Op); err != nil {
		return nil, err
	}
	m, _, err := s.modifiableMessage(ctx, r, realm, me, req.MessageID)
	if err != nil {
		return nil, s.internal(ctx, "edit typing", err)
	}
	recipient, to, err := r.editTypingAudience(ctx, realm, me, m)
	if err != nil {
		return nil, err
	}
	if to == nil {
		return &EmptyResponse{}, nil
	}
	ev := TypingEditEvent{Op: req.Op, SenderID: me.ID, MessageID: m.ID, Recipient: recipient}
	return &EmptyResponse{}, s.announce(ctx, realm.ID, toUsers(to...), ev)
}

// editTypingAudience is where an edit of m happens, as typing events
// name it, and who is told of me editing it: nil when nobody (a channel
// too large for typing notifications). A sender who turned typing
// notifications off for the message's kind is refused.
func (r reads) editTypingAudience(ctx context.Context, realm *storage.Realm, me *storage.User, m *storage.Message) (typingRecipient, []int64, error) {
	if m.StreamID != nil {
		if !settingsOf(me).SendStreamTypingNotifications {
			return typingRecipient{}, nil, refused("User has disabled typing notifications for channel messages")
		}
		topic := m.Topic
		to, err := r.channelTypingAudience(ctx, realm.ID, *m.StreamID)
		return typingRecipient{Type: "channel", ChannelID: *m.StreamID, Topic: &topic}, to, err
	}
	if !settingsOf(me).SendPrivateTypingNotifications {
		return typingRecipient{}, nil, refused("User has disabled typing notifications for direct messages")
	}
	members, err := r.st.ConversationMembers(ctx, realm.ID, *m.ConversationID)
	if err != nil {
		return typingRecipient{}, nil, r.s.internal(ctx, "edit typing", err)
	}
	to, err := r.typingReceivers(ctx, realm.ID, members)
	return typingRecipient{Type: "direct", UserIDs: members}, to, err
}

// announce publishes an event that changes nothing stored (typing): it
// travels the event bus like a write's, in a transaction of its own that
// writes nothing.
func (s *Service) announce(ctx context.Context, realmID int64, aud Audience, body EventBody) error {
	if len(aud.Users) == 0 && len(aud.Roles) == 0 && len(aud.Subscribers) == 0 && len(aud.Groups) == 0 {
		return nil
	}
	w := &writeTx{realmID: realmID, svc: s, callersKept: true}
	w.emit(aud, body)
	payload, err := s.busPayload(w)
	if err != nil {
		return s.internal(ctx, "announce", err)
	}
	err = s.publishOnBus(ctx, payload)
	if err != nil {
		return s.internal(ctx, "announce", fmt.Errorf("publish %s event: %w", body.EventType(), err))
	}
	s.publish(w.events)
	return nil
}
