package chat

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/teamchat/chat/storage"
)

// MessageView is a message as clients get it (GET /messages, message
// events).
type MessageView struct {
	ID          int64  `json:"id"`
	SenderID    int64  `json:"sender_id"`
	Content     string `json:"content"`
	ContentType string `json:"content_type"`
	// RecipientID identifies the conversation: the channel's ID for a
	// channel message, directRecipientBase plus the conversation's ID for
	// a direct message (the reference's Recipient table has no
	// counterpart here).
	RecipientID      int64       `json:"recipient_id"`
	Timestamp        int64       `json:"timestamp"`
	Client           string      `json:"client"`
	Subject          string      `json:"subject"`
	TopicLinks       []TopicLink `json:"topic_links"`
	IsMeMessage      bool        `json:"is_me_message"`
	Reactions        []Reaction  `json:"reactions"`
	Submessages      []any       `json:"submessages"`
	SenderFullName   string      `json:"sender_full_name"`
	SenderEmail      string      `json:"sender_email"`
	SenderRealmStr   string      `json:"sender_realm_str"`
	DisplayRecipient any         `json:"display_recipient"`
	Type             string      `json:"type"`
	StreamID         *int64      `json:"stream_id,omitempty"`
	AvatarURL        *string     `json:"avatar_url"`
	EditHistory      []any       `json:"edit_history,omitempty"`
	LastEditTime     *int64      `json:"last_edit_timestamp,omitempty"`
	LastMovedTime    *int64      `json:"last_moved_timestamp,omitempty"`
}

// TopicLink is a link found in a topic by the organization's linkifiers.
type TopicLink struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

// Reaction is one user's emoji reaction to a message.
type Reaction struct {
	EmojiName    string `json:"emoji_name"`
	EmojiCode    string `json:"emoji_code"`
	ReactionType string `json:"reaction_type"`
	UserID       int64  `json:"user_id"`
}

// DisplayUser is a participant of a direct message in display_recipient.
type DisplayUser struct {
	ID            int64  `json:"id"`
	Email         string `json:"email"`
	FullName      string `json:"full_name"`
	IsMirrorDummy bool   `json:"is_mirror_dummy"`
}

// directRecipientBase keeps direct conversations' recipient IDs apart
// from channels' IDs.
const directRecipientBase = 1 << 40

// flagNames lists the wire names of the set flags, in the reference's
// order, with the synthetic wildcard_mentioned.
func flagNames(flags int64) []string {
	out := []string{}
	for _, f := range apiFlags {
		if flags&f.bit != 0 {
			out = append(out, f.name)
		}
	}
	if flags&(storage.FlagStreamWildcardMentioned|storage.FlagTopicWildcardMentioned) != 0 {
		out = append(out, "wildcard_mentioned")
	}
	return out
}

// messageView builds the wire form of m; participants are a direct
// message's users (sender included); avatar is the sender's avatar_url
// (nil: the client computes it from the email).
// emailOf gives a user's email as the API shows it (nil: apiEmail).
func messageView(realm *storage.Realm, sender *storage.User, m *storage.Message, channelName string, participants []*storage.User, avatar *string, emailOf func(*storage.User) string) MessageView {
	if emailOf == nil {
		emailOf = func(u *storage.User) string { return apiEmail(realm, u) }
	}
	v := MessageView{
		ID: m.ID, SenderID: m.SenderID, Content: m.RenderedContent, ContentType: "text/html",
		Timestamp: m.DateSent, Client: m.SendingClient, Subject: m.Topic, TopicLinks: []TopicLink{},
		IsMeMessage: m.IsMeMessage, Reactions: []Reaction{}, Submessages: []any{},
		SenderFullName: sender.FullName, SenderEmail: emailOf(sender),
		SenderRealmStr: realm.StringID, AvatarURL: avatar,
	}
	if m.StreamID != nil {
		v.Type, v.StreamID, v.RecipientID, v.DisplayRecipient = MessageTypeChannel, m.StreamID, *m.StreamID, channelName
		if v.Subject == "" {
			v.Subject = EmptyTopicDisplayName
		}
	} else {
		v.Type, v.RecipientID, v.Subject = MessageTypeDirect, directRecipientBase+*m.ConversationID, ""
		users := make([]DisplayUser, 0, len(participants))
		for _, u := range participants {
			users = append(users, DisplayUser{ID: u.ID, Email: emailOf(u), FullName: u.FullName})
		}
		slices.SortFunc(users, func(a, b DisplayUser) int { return int(a.ID - b.ID) })
		v.DisplayRecipient = users
	}
	if m.EditHistory != "" {
		setEditFields(&v, realm.MessageEditHistoryVisibilityPolicy, m.EditHistory)
	}
	return v
}

// setEditFields sets last_edit_timestamp (the last content edit),
// last_moved_timestamp (the last move, resolving aside) and the edit
// history as far as the organization shows it (policy 1 all, 2 moves
// only, 3 none), as the reference's messages_for_ids does.
func setEditFields(v *MessageView, policy int, raw string) {
	entries, err := parseEditHistory(raw)
	if err != nil {
		return
	}
	var edited, moved int64
	shown := []any{}
	for _, e := range entries {
		if e.PrevStream != nil || e.PrevTopic != nil && e.Topic != nil && !resolveToggled(*e.Topic, *e.PrevTopic) {
			moved = max(moved, e.Timestamp)
		}
		if e.PrevContent != nil {
			edited = max(edited, e.Timestamp)
			if policy == 2 {
				if e.PrevTopic == nil && e.PrevStream == nil {
					continue
				}
				e.PrevContent, e.PrevRenderedContent = nil, nil
			}
		}
		shown = append(shown, e)
	}
	if edited != 0 {
		v.LastEditTime = &edited
	}
	if moved != 0 {
		v.LastMovedTime = &moved
	}
	if policy != 3 {
		v.EditHistory = shown
	}
}

// resolveToggled says whether a topic change only added or removed the
// resolved prefix.
func resolveToggled(topic, prev string) bool {
	return strings.TrimPrefix(topic, resolvedPrefix) == strings.TrimPrefix(prev, resolvedPrefix) &&
		strings.HasPrefix(topic, resolvedPrefix) != strings.HasPrefix(prev, resolvedPrefix)
}

// MessageEvent announces a new message to one of its recipients.
type MessageEvent struct {
	Message MessageView `json:"message"`
	Flags   []string    `json:"flags"`
	// variants is what the event queues need to show the message in each
	// queue's own form (apply_markdown, client_gravatar, empty_topic_name,
	// local_message_id); it is not part of the event.
	variants *messageVariants
}

// messageVariants is what a message event's per-queue forms differ by.
type messageVariants struct {
	// Raw is the Markdown source (apply_markdown false).
	Raw string `json:"raw"`
	// GravatarNull: who shows avatar_url null under client_gravatar (those
	// who may see the sender's email, when the sender is on Gravatar).
	GravatarNull *Audience `json:"gn,omitempty"`
	// EmptyTopic: the topic is the empty one, shown as "general chat"
	// except to clients with the empty_topic_name capability.
	EmptyTopic bool `json:"et,omitempty"`
	// PublicChannel: a public channel's message, which queues registered
	// with all_public_streams receive.
	PublicChannel bool `json:"pub,omitempty"`
	// QueueID and LocalID: the sender's queue gets local_message_id.
	QueueID string `json:"q,omitempty"`
	LocalID string `json:"l,omitempty"`
}

func (MessageEvent) EventType() string { return "message" }

// emitMessage sends each recipient the message with their flags: the
// channel's subscribers (as they are on delivery), or the participants
// of a direct message; the sender always.
func (s *Service) emitMessage(w *writeTx, o *outgoing, readers []storage.UserMessage) {
	m := &o.msg
	name := ""
	if o.channel != nil {
		name = o.channel.Name
	}
	participants := []*storage.User{o.me}
	for _, u := range o.recipients {
		if u.ID != o.me.ID {
			participants = append(participants, u)
		}
	}
	avatar := avatarURL(o.me)
	view := messageView(o.realm, o.me, m, name, participants, &avatar, nil)
	view.TopicLinks = topicLinks(o.linkifiers, m.Topic) // the linkifiers the rendering applied
	variants := &messageVariants{Raw: m.Content, EmptyTopic: m.StreamID != nil && m.Topic == "",
		PublicChannel: o.channel != nil && !o.channel.InviteOnly,
		QueueID:       ptrValue(o.req.QueueID), LocalID: ptrValue(o.req.LocalID)}
	if o.me.AvatarSource != "U" {
		seers := Audience{Users: []int64{o.me.ID}}
		for _, r := range allRoles {
			if canSeeEmail(o.realm, &storage.User{Role: r}, o.me) {
				seers.Roles = append(seers.Roles, r)
			}
		}
		variants.GravatarNull = &seers
	}
	flagsOf := map[int64]int64{}
	for _, r := range readers {
		flagsOf[r.UserID] = r.Flags
	}
	var base int64 // a channel reader's flags without a row
	if m.StreamID != nil && m.StreamWildcard {
		base = storage.FlagStreamWildcardMentioned
	}
	if m.StreamID != nil {
		flagsOf[o.me.ID] |= base
		if o.readBySender {
			flagsOf[o.me.ID] |= storage.FlagRead
		}
	}
	w.emit(toUsers(o.me.ID), MessageEvent{Message: view, Flags: flagNames(flagsOf[o.me.ID]), variants: variants})
	except := []int64{o.me.ID}
	for _, r := range readers {
		if r.UserID != o.me.ID {
			flags := r.Flags
			if o.mutedBy[r.UserID] {
				flags |= storage.FlagRead
			}
			w.emit(toUsers(r.UserID), MessageEvent{Message: view, Flags: flagNames(flags), variants: variants})
			except = append(except, r.UserID)
		}
	}
	// Subscribers who muted the sender and have no row: read for them.
	muters := mapKeys(o.mutedBy)
	slices.Sort(muters)
	for _, id := range muters {
		if _, ok := flagsOf[id]; !ok && id != o.me.ID && m.StreamID != nil {
			w.emit(toUsers(id), MessageEvent{Message: view, Flags: flagNames(base | storage.FlagRead), variants: variants})
			except = append(except, id)
		}
	}
	if m.StreamID != nil {
		w.emit(Audience{Subscribers: []int64{*m.StreamID}, Except: except}, MessageEvent{Message: view, Flags: flagNames(base), variants: variants})
	}
}

// GetMessageRequest is the input of GetMessage (GET /messages/{id}).
type GetMessageRequest struct {
	MessageID int64 `json:"message_id"`
	// ApplyMarkdown (default true) returns the rendered HTML; false, the
	// Markdown source.
	ApplyMarkdown *bool `json:"apply_markdown"`
	// AllowEmptyTopicName (default false) shows the empty topic as "";
	// otherwise it is shown as "general chat".
	AllowEmptyTopicName *bool `json:"allow_empty_topic_name"`
}

// FetchedMessage is a message as a reader fetches it: with their flags.
type FetchedMessage struct {
	MessageView
	Flags []string `json:"flags"`
	// MatchContent and MatchSubject are set in the results of a search:
	// the HTML and the escaped topic with the matches highlighted.
	MatchContent *string `json:"match_content,omitempty"`
	MatchSubject *string `json:"match_subject,omitempty"`
}

// GetMessageResponse is the success body of GetMessage.
type GetMessageResponse struct {
	Message FetchedMessage `json:"message"`
	// RawContent is the Markdown source (deprecated by the reference).
	RawContent string `json:"raw_content"`
}

var errInvalidMessage = noSuch("Invalid message(s)")

// GetMessage returns one message the caller may read, with their flags;
// a missing message and one they may not read answer alike.
func (s *Service) GetMessage(ctx context.Context, c Caller, req GetMessageRequest) (*GetMessageResponse, error) {
	return s.reads().getMessage(ctx, c, req)
}

// getMessage is GetMessage reading through r.
func (r reads) getMessage(ctx context.Context, c Caller, req GetMessageRequest) (*GetMessageResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	m, err := r.st.GetMessage(ctx, realm.ID, req.MessageID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errInvalidMessage
	} else if err != nil {
		return nil, r.s.internal(ctx, "get message", err)
	}
	ok, err := r.messageAccess(ctx, realm, me, m)
	if err != nil {
		return nil, r.s.internal(ctx, "get message", err)
	}
	if !ok {
		return nil, errInvalidMessage
	}
	views, err := r.fetchedViews(ctx, realm, me, []storage.Message{*m}, viewOptions{applyMarkdown: req.ApplyMarkdown,
		allowEmptyTopic: req.AllowEmptyTopicName, clientGravatar: new(false)})
	if err != nil {
		return nil, r.s.internal(ctx, "get message", err)
	}
	v := views[0]
	return &GetMessageResponse{Message: v, RawContent: m.Content}, nil
}

// messageAccess decides whether me may read m (the reference's
// has_message_access).
//
// A direct message is readable by its participants. A channel message is
// readable by those who received it (a subscription period covers it, or
// they sent it) or have a row for it, provided they still may read the
// channel; when the channel's history is public to subscribers, also by
// those who may read the channel now: subscribers, and any member (not
// guest) for a public channel.
func (r reads) messageAccess(ctx context.Context, realm *storage.Realm, me *storage.User, m *storage.Message) (bool, error) {
	rows, err := r.st.ListUserMessages(ctx, realm.ID, me.ID, []int64{m.ID})
	if err != nil {
		return false, err
	}
	hasRow := len(rows) > 0
	if m.ConversationID != nil {
		return hasRow, nil
	}
	ch, err := r.channelByID(ctx, realm.ID, *m.StreamID)
	if err != nil {
		return false, err
	}
	periods, err := r.st.ListSubscriptionPeriods(ctx, realm.ID, me.ID, ch.ID)
	if err != nil {
		return false, err
	}
	received, subscribed := m.SenderID == me.ID, false
	for _, p := range periods {
		if p.EndMessageID == nil {
			subscribed = true
		}
		if m.ID > p.StartMessageID && (p.EndMessageID == nil || m.ID <= *p.EndMessageID) {
			received = true
		}
	}
	return channelAccess(ch, me, received, hasRow, subscribed), nil
}
