package chat

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/teamchat/chat/internal/writelane"
	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// Message types on the wire.
const (
	MessageTypeChannel = "stream"
	MessageTypeDirect  = "private"
)

// SendMessageRequest is the input of SendMessage (POST /messages).
type SendMessageRequest struct {
	// Type is "channel" (or its older name "stream") or "direct" (or
	// "private").
	Type string `json:"type"`
	// To is the recipient, in any form the reference accepts: for a
	// channel its name or ID, bare or JSON-encoded (a string, a number or
	// a one-element list); for a direct message a JSON list of user IDs,
	// a JSON list of emails, or comma-separated emails. ToChannel,
	// ToChannelID and ToUsers build the common forms.
	To *string `json:"to"`
	// Topic (or its older name Subject; not both) is required for channel
	// messages. "(no topic)" and "general chat" mean the empty topic.
	Topic   *string `json:"topic"`
	Subject *string `json:"subject"`
	Content string  `json:"content"`
	// QueueID and LocalID let the sender's event queue match the message
	// to its local echo.
	QueueID *string `json:"queue_id"`
	LocalID *string `json:"local_id"`
	// ReadBySender marks the message read for its sender; by default only
	// for the reference's interactive clients (the web app, mobile and
	// desktop apps, terminal), not for API scripts and bots.
	ReadBySender *bool `json:"read_by_sender"`
	// Client names the sending program; without it the product name of
	// UserAgent is used ("Unspecified" when there is none).
	Client    *string `json:"client"`
	UserAgent string  `json:"-" header:"User-Agent"`
}

// ToChannel is the To of a message to the channel with that name.
func ToChannel(name string) *string { return &name }

// ToChannelID is the To of a message to the channel with that ID.
func ToChannelID(id int64) *string { s := strconv.FormatInt(id, 10); return &s }

// ToUsers is the To of a direct message to these users.
func ToUsers(ids ...int64) *string {
	b, _ := json.Marshal(ids)
	s := string(b)
	return &s
}

// SendMessageResponse is the success body of SendMessage.
type SendMessageResponse struct {
	ID int64 `json:"id"`
	// AutomaticNewVisibilityPolicy is set when sending changed the
	// sender's policy for the topic (2 unmuted, 3 followed).
	AutomaticNewVisibilityPolicy *int `json:"automatic_new_visibility_policy,omitempty"`
}

// interactiveClients are the reference's clients whose messages are read
// by their sender by default (Client.default_read_by_sender).
var interactiveClients = []string{"zulipandroid", "zulipios", "zulipdesktop", "zulipmobile",
	"zulipelectron", "zulipterminal", "snipe", "website", "ios", "android"}

// clientName is the sending client's name: the client parameter, else
// the product name of the User-Agent (the reference's parse_user_agent),
// cut to 30 characters.
func clientName(param *string, userAgent string) string {
	name := "Unspecified"
	switch {
	case param != nil:
		name = *param
	case userAgent != "":
		name = userAgentName(userAgent)
	}
	if r := []rune(name); len(r) > 30 {
		name = string(r[:30])
	}
	return name
}

// userAgentName is the leading name of a User-Agent: the characters up
// to the first '/' or space, then any more that are not digits, '/' or
// '(' ("ZulipMobile/27.1 (Android)" gives "ZulipMobile").
func userAgentName(ua string) string {
	i := strings.IndexAny(ua, "/ ")
	if i < 0 {
		i = len(ua)
	}
	j := i
	for j < len(ua) && !strings.ContainsRune("0123456789/(", rune(ua[j])) {
		j++
	}
	return ua[:j]
}

// maxDirectRecipients bounds a direct message's recipients (the
// reference sets no limit; it keeps a direct message's cost bounded).
const maxDirectRecipients = 1000

// parseChannelIndicator reads a channel's To: a bare name, or JSON (a
// string, an integer, or a one-element list of either). byID tells which.
func parseChannelIndicator(to string) (name string, id int64, byID bool, err error) {
	var data any
	dec := json.NewDecoder(strings.NewReader(to))
	dec.UseNumber()
	if dec.Decode(&data) != nil || dec.More() {
		return to, 0, false, nil // not JSON: a raw channel name
	}
	if list, ok := data.([]any); ok {
		if len(list) != 1 {
			return "", 0, false, BadRequest("Expected exactly one channel")
		}
		data = list[0]
	}
	switch v := data.(type) {
	case string:
		return v, 0, false, nil
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return "", n, true, nil
		}
	}
	return "", 0, false, BadRequest("Invalid data type for channel")
}

// parseDirectRecipients reads a direct message's To: a JSON list of user
// IDs or of emails, or comma-separated emails. Emails come back trimmed,
// de-duplicated and without empty ones; IDs de-duplicated.
func parseDirectRecipients(to string) (emails []string, ids []int64, err error) {
	var data any
	dec := json.NewDecoder(strings.NewReader(to))
	dec.UseNumber()
	if dec.Decode(&data) != nil || dec.More() {
		data = to
	}
	if s, ok := data.(string); ok {
		parts := strings.Split(s, ",")
		list := make([]any, len(parts))
		for i, p := range parts {
			list[i] = p
		}
		data = list
	}
	list, ok := data.([]any)
	if !ok {
		return nil, nil, BadRequest("Invalid data type for recipients")
	}
	if len(list) == 0 {
		return nil, nil, nil
	}
	errMixed := BadRequest("Recipient lists may contain emails or user IDs, but not both.")
	switch list[0].(type) {
	case string:
		seen := map[string]bool{}
		for _, item := range list {
			s, ok := item.(string)
			if !ok {
				return nil, nil, errMixed
			}
			if s = strings.TrimSpace(s); s != "" && !seen[s] {
				seen[s] = true
				emails = append(emails, s)
			}
		}
		return emails, nil, nil
	case json.Number:
		for _, item := range list {
			n, ok := item.(json.Number)
			if !ok {
				return nil, nil, errMixed
			}
			id, err := n.Int64()
			if err != nil {
				return nil, nil, errMixed
			}
			ids = append(ids, id)
		}
		return nil, uniqueSorted(ids), nil
	}
	return nil, nil, BadRequest("Invalid data type for recipients")
}

// truncateRunes cuts s to max characters, ending with suffix, as the
// reference's truncate_content does (counting code points).
func truncateRunes(s string, max int, suffix string) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-utf8.RuneCountInString(suffix)]) + suffix
}

// normalizeContent applies the reference's rules to a message body:
// trailing whitespace and leading newlines go, an empty body or a NUL
// byte is refused, and an over-long body is truncated.
func (s *Service) normalizeContent(content string) (string, error) {
	content = strings.TrimLeft(strings.TrimRightFunc(content, unicode.IsSpace), "\n")
	if content == "" {
		return "", BadRequest("Message must not be empty")
	}
	if strings.ContainsRune(content, 0) {
		return "", BadRequest("Message must not contain null bytes")
	}
	return truncateRunes(content, s.limits.MaxMessageLength, "\n[message truncated]"), nil
}

// errTopicsRequired refuses a message to the empty topic in an
// organization that requires topics (the reference's text: no period).
var errTopicsRequired = BadRequest("Topics are required in this organization")

// normalizeTopic strips a channel message's topic, maps the names of the
// empty topic to it, refuses unprintable characters and truncates it.
func (s *Service) normalizeTopic(topic string) (string, error) {
	topic = strings.TrimSpace(topic)
	if topic == EmptyTopicDisplayName || topic == "(no topic)" {
		topic = ""
	}
	for i, r := range []rune(topic) {
		if !isPrintable(r) {
			return "", BadRequest("Invalid character in topic, at position %d!", i+1)
		}
	}
	return truncateRunes(topic, s.limits.MaxTopicLength, "..."), nil
}

// topicParam is the topic of a request that may name it "topic" or, in
// the older way, "subject" (not both).
func topicParam(topic, subject *string) (*string, error) {
	if topic != nil && subject != nil {
		return nil, errTopicAndSubject
	}
	if topic == nil {
		return subject, nil
	}
	return topic, nil
}

// isPrintable is the reference's is_character_printable: control
// characters and the two Unicode non-characters U+FFFE, U+FFFF are not.
func isPrintable(r rune) bool {
	return !unicode.IsControl(r) && r != '\ufffe' && r != '\uffff'
}

// SendMessage sends a channel or direct message (POST /messages), with the
// reference's validation order, errors and permissions. The message is
// stored once; each recipient gets a message event after commit.
func (s *Service) SendMessage(ctx context.Context, c Caller, req SendMessageRequest) (*SendMessageResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	return s.sendMessageAs(ctx, me, realm, req, nil)
}

// sendMessageAs is SendMessage by me in realm; inTx, when not nil, runs
// in the message's write transaction (see outgoing.inTx).
func (s *Service) sendMessageAs(ctx context.Context, me *storage.User, realm *storage.Realm, req SendMessageRequest,
	inTx func(ctx context.Context, w *writeTx, m *storage.Message) error) (*SendMessageResponse, error) {
	send, err := s.prepareMessage(ctx, me, realm, &req)
	if err != nil {
		return nil, err
	}
	send.inTx = inTx
	if err := s.storeMessage(ctx, send); err != nil {
		return nil, err
	}
	return &SendMessageResponse{ID: send.msg.ID, AutomaticNewVisibilityPolicy: send.newPolicy}, nil
}

// prepareMessage checks and renders a message of me as SendMessage does,
// without storing it.
func (s *Service) prepareMessage(ctx context.Context, me *storage.User, realm *storage.Realm, req *SendMessageRequest) (*outgoing, error) {
	topic, err := topicParam(req.Topic, req.Subject)
	if err != nil {
		return nil, err
	}
	client := clientName(req.Client, req.UserAgent)
	readBySender := slices.Contains(interactiveClients, strings.ToLower(client))
	if req.ReadBySender != nil {
		readBySender = *req.ReadBySender
	}
	send := &outgoing{me: me, realm: realm, client: client, readBySender: readBySender, req: req}
	switch req.Type {
	case "stream", "channel":
		err = s.prepareChannelMessage(ctx, send, topic)
	case "private", "direct":
		err = s.reads().prepareDirectMessage(ctx, send)
	default:
		err = BadRequest("Invalid type")
	}
	if err != nil {
		return nil, err
	}
	rctx, sp := s.span(ctx, "chat.render")
	err = s.reads().renderOutgoing(rctx, send)
	endSpan(sp, err)
	if err != nil {
		return nil, err
	}
	return send, nil
}

// outgoing is a message on its way through SendMessage.
type outgoing struct {
	me           *storage.User
	realm        *storage.Realm
	client       string
	readBySender bool
	req          *SendMessageRequest

	channel    *storage.Stream
	recipients []*storage.User // a direct message's other participants (and the sender for a self-DM)
	msg        storage.Message
	// newPolicy is the sender's topic policy the send set automatically.
	newPolicy *int
	// mentions is what rendering found that decides readers' flags.
	mentions mentions
	// scope is the sender's groups, once loaded.
	scope *groupScope
	// uploads are the path IDs of the uploaded files the message links.
	uploads []string
	// internal: a system bot's message, which no posting rule stops.
	internal bool
	// linkifiers are the ones the rendering applied (for topic_links).
	linkifiers []*markdown.Linkifier
	// mutedBy are the recipients who muted the sender: the message is
	// read for them.
	mutedBy map[int64]bool
	// inTx, when not nil, runs in storeMessage's write transaction once
	// the message is stored (its ID set), before its events: a failure
	// rolls the message back (scheduled delivery claims its row here).
	inTx func(ctx context.Context, w *writeTx, m *storage.Message) error
}

func (s *Service) prepareChannelMessage(ctx context.Context, o *outgoing, topic *string) error {
	if o.req.To == nil {
		return BadRequest("Missing channel")
	}
	name, id, byID, err := parseChannelIndicator(*o.req.To)
	if err != nil {
		return err
	}
	if topic == nil {
		return BadRequest("Missing topic")
	}
	t, err := s.normalizeTopic(*topic)
	if err != nil {
		return err
	}
	content, err := s.normalizeContent(o.req.Content)
	if err != nil {
		return err
	}
	var ch *storage.Stream
	if byID {
		ch, err = s.reads().channelByID(ctx, o.realm.ID, id)
		if errors.Is(err, storage.ErrNotFound) {
			return noSuchChannelID(id)
		}
	} else {
		name, err = s.checkChannelName(name)
		if err != nil {
			return err
		}
		ch, err = s.reads().channelByName(ctx, o.realm.ID, name)
		if errors.Is(err, storage.ErrNotFound) {
			return noSuchChannelName(name)
		}
	}
	if err != nil {
		return s.internal(ctx, "send message", err)
	}
	if o.internal {
		if o.scope, err = s.reads().cachedScope(ctx, o.realm.ID, o.me.ID); err != nil {
			return s.internal(ctx, "send message", err)
		}
	} else if o.scope, err = s.reads().checkCanSendToChannel(ctx, o.me, ch); err != nil {
		return err
	}
	if t == "" && o.realm.MandatoryTopics && !o.internal {
		return errTopicsRequired
	}
	o.channel = ch
	o.msg = storage.Message{RealmID: o.realm.ID, SenderID: o.me.ID, StreamID: &ch.ID, Topic: t, Content: content}
	return nil
}

// checkCanSendToChannel is the reference's access_stream_for_send_message:
// the channel's can_send_message_group (a bot may use its owner's
// membership), archived channels, and who may post in private channels.
// It returns the sender's groups, which rendering uses again.
func (r reads) checkCanSendToChannel(ctx context.Context, me *storage.User, ch *storage.Stream) (*groupScope, error) {
	inGroup := func(u *storage.User) (bool, *groupScope, error) {
		scope, err := r.cachedScope(ctx, ch.RealmID, u.ID)
		if err != nil {
			return false, nil, r.s.internal(ctx, "send message", err)
		}
		return scope.in(ch.CanSendMessageGroupID), scope, nil
	}
	ok, scope, err := inGroup(me)
	if err != nil {
		return nil, err
	}
	var owner *storage.User
	if me.IsBot && me.BotOwnerID != nil {
		if owner, err = r.st.GetUser(ctx, ch.RealmID, *me.BotOwnerID); err != nil {
			return nil, r.s.internal(ctx, "send message", err)
		}
	}
	if !ok {
		if owner == nil {
			return nil, refused("You do not have permission to post in this channel.")
		}
		if ok, _, err = inGroup(owner); err != nil {
			return nil, err
		} else if !ok {
			return nil, refused("You do not have permission to post in this channel.")
		}
	}
	errNotAuthorized := refused("Not authorized to send to channel '%s'", ch.Name)
	if ch.IsArchived {
		return nil, errNotAuthorized
	}
	if ch.IsWebPublic || !ch.InviteOnly && me.Role != RoleGuest {
		return scope, nil
	}
	subscribed := func(u *storage.User) (bool, error) {
		sub, err := r.st.GetSubscription(ctx, ch.RealmID, u.ID, ch.ID)
		if errors.Is(err, storage.ErrNotFound) {
			return false, nil
		}
		return err == nil && sub.Active, err
	}
	if yes, err := subscribed(me); err != nil {
		return nil, r.s.internal(ctx, "send message", err)
	} else if yes {
		return scope, nil
	}
	if owner != nil {
		if yes, err := subscribed(owner); err != nil {
			return nil, r.s.internal(ctx, "send message", err)
		} else if yes {
			return scope, nil
		}
	}
	// Those who may subscribe themselves (or add subscribers) may post
	// to a private channel whose history is open to subscribers.
	if ch.HistoryPublicToSubscribers && me.Role != RoleGuest &&
		(scope.in(ch.CanSubscribeGroupID) || scope.in(ch.CanAddSubscribersGroupID)) {
		return scope, nil
	}
	return nil, errNotAuthorized
}

func (r reads) prepareDirectMessage(ctx context.Context, o *outgoing) error {
	var emails []string
	var ids []int64
	if o.req.To != nil {
		var err error
		if emails, ids, err = parseDirectRecipients(*o.req.To); err != nil {
			return err
		}
	}
	if len(emails) == 0 && len(ids) == 0 {
		return BadRequest("Message must have recipients")
	}
	if len(emails)+len(ids) > maxDirectRecipients {
		return BadRequest("Too many recipients (limit: %d).", maxDirectRecipients)
	}
	var users []*storage.User
	for _, email := range emails {
		u, err := r.userByAPIOrRealEmail(ctx, o.realm, o.me, email)
		if err != nil {
			if errors.Is(err, errNoSuchUser) {
				return noSuch("Invalid email '%s'", email)
			}
			return err
		}
		users = append(users, u)
	}
	if len(ids) > 0 {
		found, err := r.st.FindUsers(ctx, o.realm.ID, storage.UserFilter{IDs: ids})
		if err != nil {
			return r.s.internal(ctx, "send message", err)
		}
		if missing, ok := firstMissing(ids, found, func(u storage.User) int64 { return u.ID }); ok {
			return noSuch("Invalid user ID %d", missing)
		}
		for i := range found {
			users = append(users, &found[i])
		}
	}
	content, err := r.s.normalizeContent(o.req.Content)
	if err != nil {
		return err
	}
	participants := []int64{o.me.ID}
	seen := map[int64]bool{}
	for _, u := range users {
		if !u.IsActive {
			return BadRequest("'%s' is no longer using Zulip.", apiEmail(o.realm, u))
		}
		if !seen[u.ID] {
			seen[u.ID] = true
			o.recipients = append(o.recipients, u)
			participants = append(participants, u.ID)
		}
	}
	if err := r.checkCanSendDirect(ctx, o, participants); err != nil {
		return err
	}
	conv, err := r.st.DirectConversation(ctx, o.realm.ID, participants)
	if err != nil {
		return r.s.internal(ctx, "send message", err)
	}
	o.msg = storage.Message{RealmID: o.realm.ID, SenderID: o.me.ID, ConversationID: &conv, Content: content}
	return nil
}

// checkCanSendDirect applies the organization's direct-message policy
// (the reference's check_can_send_direct_message): bots, and messages
// only to bots or oneself, are always allowed; otherwise one participant
// must be in direct_message_permission_group, and a new conversation may
// be started only by a member of direct_message_initiator_group.
func (r reads) checkCanSendDirect(ctx context.Context, o *outgoing, participants []int64) error {
	if o.me.IsBot {
		return nil
	}
	onlyBots := true
	for _, u := range o.recipients {
		if !u.IsBot && u.ID != o.me.ID {
			onlyBots = false
		}
	}
	if onlyBots {
		return nil
	}
	groups, err := r.st.GetGroupsByID(ctx, o.realm.ID, []int64{o.realm.DirectMessagePermissionGroupID, o.realm.DirectMessageInitiatorGroupID})
	if err != nil {
		return r.s.internal(ctx, "send message", err)
	}
	nameOf := func(id int64) string {
		for _, g := range groups {
			if g.ID == id {
				return g.Name
			}
		}
		return ""
	}
	if permission := o.realm.DirectMessagePermissionGroupID; nameOf(permission) != GroupEveryone {
		allowed := false
		for _, id := range participants {
			in, err := r.userInGroup(ctx, o.realm.ID, id, permission)
			if err != nil {
				return err
			}
			if in {
				allowed = true
				break
			}
		}
		if !allowed {
			if nameOf(permission) == GroupNobody {
				return refused("Direct messages are disabled in this organization.")
			}
			return refused("This conversation does not include any users who can authorize it.")
		}
	}
	if initiator := o.realm.DirectMessageInitiatorGroupID; nameOf(initiator) != GroupEveryone {
		in, err := r.userInGroup(ctx, o.realm.ID, o.me.ID, initiator)
		if err != nil || in {
			return err
		}
		// Replying in a conversation that already has messages is fine.
		conv, err := r.st.FindDirectConversation(ctx, o.realm.ID, participants)
		if errors.Is(err, storage.ErrNotFound) {
			return refused("You do not have permission to initiate direct message conversations.")
		} else if err != nil {
			return r.s.internal(ctx, "send message", err)
		}
		older, _, err := r.st.ListMessageWindow(ctx, storage.MessageWindow{RealmID: o.realm.ID, UserID: o.me.ID,
			Scope: storage.MessageScope{Direct: true}, Filter: storage.MessageFilter{ConversationID: &conv}, Anchor: largerThanMaxMessageID})
		if err != nil {
			return r.s.internal(ctx, "send message", err)
		}
		if len(older) == 0 {
			return refused("You do not have permission to initiate direct message conversations.")
		}
	}
	return nil
}

// userInGroup reports whether the user is in the group, directly or
// through subgroups (one recursive query for the user's groups).
func (r reads) userInGroup(ctx context.Context, realmID, userID, groupID int64) (bool, error) {
	scope, err := r.cachedScope(ctx, realmID, userID)
	if err != nil {
		return false, r.s.internal(ctx, "send message", err)
	}
	return scope.in(groupID), nil
}

// lane is the write lane of the message's conversation.
func (o *outgoing) lane() writelane.Key {
	if o.msg.StreamID != nil {
		return channelLane(o.realm.ID, *o.msg.StreamID)
	}
	return directLane(o.realm.ID, *o.msg.ConversationID)
}

// storeMessage stores the rendered message with its readers' rows and
// emits the message events, in one write. What the write needs to read
// (its readers, the webhooks it triggers, topic policies) is read first,
// outside the transaction, so that the transaction itself only writes.
func (s *Service) storeMessage(ctx context.Context, o *outgoing) error {
	m := &o.msg
	m.DateSent = s.nowUnix()
	m.SendingClient = o.client
	plan, err := s.planStore(ctx, o)
	if err != nil {
		return s.internal(ctx, "send message", err)
	}
	// Sends of one conversation may share a transaction (inTx claims a
	// row of its own, so those run alone); the function can run twice.
	err = s.writeIn(ctx, o.lane(), o.inTx == nil, func(w *writeTx) error {
		if m.StreamID == nil || o.channel.FirstMessageID != nil {
			w.keepCallers() // nothing cached changes (the first message sets the channel's first_message_id)
		}
		id, err := w.newMessageID(ctx)
		if err != nil {
			return err
		}
		m.ID = id
		if err := w.CreateMessage(ctx, m, plan.readers); err != nil {
			return err
		}
		if err := s.queueWebhooks(ctx, w, o, plan.webhooks); err != nil {
			return err
		}
		if err := s.queueNotifications(ctx, w, m.ID, plan.notifications); err != nil {
			return err
		}
		if err := s.claimUploads(ctx, w, o.realm, o.me, m.ID, o.uploads); err != nil {
			return err
		}
		if m.StreamID != nil && o.readBySender {
			if err := w.ExtendReadRange(ctx, o.realm.ID, o.me.ID, *m.StreamID, m.ID); err != nil {
				return err
			}
		}
		if err := s.setTopicPolicies(ctx, w, o, plan.policies); err != nil {
			return err
		}
		if m.StreamID != nil && o.channel.FirstMessageID == nil {
			// The channel may come from a cache: read it again before
			// recording its first message.
			ch, err := w.GetStream(ctx, o.realm.ID, o.channel.ID)
			if err != nil {
				return err
			}
			if ch.FirstMessageID == nil {
				ch.FirstMessageID = &m.ID
				if err := w.UpdateStream(ctx, ch, "first_message_id"); err != nil {
					return err
				}
			}
		}
		if o.inTx != nil {
			if err := o.inTx(ctx, w, m); err != nil {
				return err
			}
		}
		s.emitMessage(w, o, plan.readers)
		return nil
	})
	if err != nil {
		return s.internal(ctx, "send message", err)
	}
	return nil
}

// storePlan is what a send decided before its transaction.
type storePlan struct {
	// readers are the rows of the message's readers whose state differs
	// from the default.
	readers []storage.UserMessage
	// webhooks are the outgoing-webhook deliveries it triggers (their
	// MessageID unset).
	webhooks []storage.WebhookDelivery
	// policies are the topic visibility policies it sets, by user.
	policies []topicPolicyChange
	// notifications are the missed-message notifications it queues
	// (their MessageID unset).
	notifications []storage.PendingNotification
}

// topicPolicyChange sets a user's policy for the message's topic.
type topicPolicyChange struct {
	userID int64
	policy int
	// sender: the sender's own (the send's answer reports it).
	sender bool
}

// planStore reads what storing o needs, outside its transaction: the
// readers' rows, those who muted the sender, the webhooks it triggers and
// the topic policies it sets. A change racing with the send (a
// subscription or policy changed meanwhile) is ordered before or after it
// as it would be between two requests.
func (s *Service) planStore(ctx context.Context, o *outgoing) (*storePlan, error) {
	m := &o.msg
	plan := &storePlan{}
	var err error
	if m.StreamID != nil {
		if plan.readers, err = s.reads().channelReaders(ctx, o); err != nil {
			return nil, err
		}
	} else {
		plan.readers = directReaders(o)
	}
	if err := s.applyMutes(ctx, s.reads(), o, plan.readers); err != nil {
		return nil, err
	}
	if plan.webhooks, err = s.plannedWebhooks(ctx, s.reads(), o); err != nil {
		return nil, err
	}
	if plan.notifications, err = s.plannedNotifications(ctx, s.reads(), o, plan.readers); err != nil {
		return nil, err
	}
	if m.StreamID != nil && !o.me.IsBot {
		policy, err := s.autoTopicPolicy(ctx, s.reads(), o)
		if err != nil {
			return nil, err
		}
		if policy != 0 {
			plan.policies = append(plan.policies, topicPolicyChange{userID: o.me.ID, policy: policy, sender: true})
		}
	}
	if m.StreamID != nil {
		follow, err := s.reads().followWhereMentioned(ctx, o, plan.readers)
		if err != nil {
			return nil, err
		}
		for _, id := range follow {
			plan.policies = append(plan.policies, topicPolicyChange{userID: id, policy: TopicPolicyFollowed})
		}
	}
	return plan, nil
}

// directReaders are a direct message's rows: one per participant.
func directReaders(o *outgoing) []storage.UserMessage {
	m := &o.msg
	base := storage.FlagPrivate
	if m.StreamWildcard {
		base |= storage.FlagStreamWildcardMentioned
	}
	mentioned := func(id int64) int64 {
		var f int64
		if o.mentions.users[id] {
			f |= storage.FlagMentioned
		}
		if o.mentions.alerted[id] {
			f |= storage.FlagHasAlertWord
		}
		return f
	}
	flags := base | mentioned(o.me.ID)
	if o.readBySender {
		flags |= storage.FlagRead
	}
	readers := []storage.UserMessage{{UserID: o.me.ID, Flags: flags}}
	for _, u := range o.recipients {
		if u.ID != o.me.ID {
			readers = append(readers, storage.UserMessage{UserID: u.ID, Flags: base | mentioned(u.ID)})
		}
	}
	return readers
}
