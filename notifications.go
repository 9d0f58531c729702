package chat

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/teamchat/chat/storage"
)

// Missed-message notifications: emails and mobile pushes for people who
// are away, decided by the reference's rules and delivered through the
// host's Notifier.
//
// Who is notified of what (the reference's notification_data.py): a
// direct message notifies its other participants, a channel message those
// of its subscribers it mentions personally or through a group, those
// whose topic or channel wildcard mention settings apply, those who follow
// the topic with followed-topic notifications on, and those whose
// channel (or user-level default) email or push setting is on, in that
// order of precedence (the first that applies is the trigger). Never the
// sender, a bot, a muter of the sender; a wildcard, followed-topic or
// channel trigger never fires in a muted channel (unless the topic is
// unmuted) or a muted topic, while personal and group mentions do.
// Emails need the recipient away; a push also goes to a present recipient
// with enable_online_push_notifications on. Alert words notify no one by
// email or push (the reference uses them for desktop notifications only,
// which clients raise themselves). A message read before its notification
// goes out is not notified.
//
// Durable and exactly once: a send writes a pending row (storage's
// PendingNotification) only for the recipients its settings may concern,
// in its own transaction (write-only: planStore finds them before it,
// through indexes of those settings, never by listing a channel's
// subscribers; a channel-wide mention writes one fan-out row that a
// deliverer expands a page of subscribers at a time). Deliverers (Run
// starts RunNotifications on every server) claim due rows for a lease,
// decide again with the settings, read state and presence of the moment
// (so a change of settings applies to what has not gone out, an edit is
// sent as edited, a moved message in its new conversation), call the
// Notifier, and delete the rows in one transaction that only the claim's
// holder can commit. Emails are batched: a recipient's email rows become
// due email_notifications_batching_period_seconds after the first of them
// was queued, and then go out together, one email per conversation. A
// server that dies holding a claim leaves the rows to another once the
// lease ends; a crash in the instant between the Notifier's success and
// the deletion sends that notification again (with the same Key, unless
// more messages joined its email since), as no mail or push service can
// take part in a database transaction.

// Notifier delivers missed-message notifications for the host (an SMTP
// relay, a mobile push service; transport/email has an SMTP one). The
// Service calls it once per email (one conversation's messages for one
// recipient) and once per push. An error leaves the notification
// pending: it is tried again with a growing delay, a few times.
type Notifier interface {
	NotifyEmail(ctx context.Context, n EmailNotification) error
	NotifyPush(ctx context.Context, n PushNotification) error
}

// WithNotifier turns missed-message notifications on: sends queue them
// for the recipients they concern, and RunNotifications (started by Run)
// delivers them through n. Without a Notifier nothing is queued.
func WithNotifier(n Notifier) Option {
	return func(s *Service) { s.notifier = n }
}

// WithNotificationInterval sets how long RunNotifications waits at most
// between looks at the pending notifications (default 5 s; sends through
// this Service wake it at once).
func WithNotificationInterval(d time.Duration) Option {
	return func(s *Service) { s.notify.Every = d }
}

// NotificationConversation is where the notified messages are.
type NotificationConversation struct {
	// Type is MessageTypeChannel or MessageTypeDirect.
	Type        string
	ChannelID   int64
	ChannelName string
	Topic       string
	// UserIDs and Names are a direct message's participants other than
	// the recipient (empty for a message to oneself).
	UserIDs []int64
	Names   []string
}

// NotifiedMessage is one message of a notification.
type NotifiedMessage struct {
	ID         int64
	SenderID   int64
	SenderName string
	Timestamp  int64
	// Trigger is why it notifies (NotifyTrigger* values); empty for a
	// message shown only as context of a mention.
	Trigger string
	// Content (Markdown), HTML (rendered, links absolute) and Text (the
	// email's quoted plain form) are empty when the recipient's settings
	// keep message content out of emails.
	Content, HTML, Text string
}

// EmailNotification is one missed-message email: messages of one
// conversation that one recipient missed, with the reference's subject,
// plain text and HTML.
type EmailNotification struct {
	// Key identifies these messages for this recipient: a host may drop a
	// second email with the same Key.
	Key       string
	RealmID   int64
	RealmName string
	RealmURL  string
	UserID    int64
	// To is the recipient's delivery address, ToName their name.
	To, ToName string
	// FromName is the sender name the reference uses ("<organization>
	// notifications"); the host picks the address.
	FromName string
	// ReplyTo is the address a reply to this email is posted from
	// (Reply-To, with the organization's name), when the Service has an
	// email gateway (WithEmailGateway); empty otherwise.
	ReplyTo             string
	Subject, Text, HTML string
	Conversation        NotificationConversation
	// Messages are oldest first, context of a mention included.
	Messages []NotifiedMessage
	// Link opens the conversation; SettingsLink the recipient's
	// notification settings.
	Link, SettingsLink string
	// Reason says why the recipient got it (empty for direct messages).
	Reason string
	// ContentHidden: the recipient's message_content_in_email_notifications
	// is off, so names and content are left out.
	ContentHidden bool
}

// PushNotification is one mobile push notification, with the reference's
// alert fields.
type PushNotification struct {
	Key       string
	RealmID   int64
	RealmName string
	RealmURL  string
	UserID    int64
	MessageID int64
	Trigger   string
	// Title, Subtitle and Body are the reference's APNs alert; Body is the
	// message's text, cut to 200 characters (BodyTruncated).
	Title, Subtitle, Body string
	BodyTruncated         bool
	SenderID              int64
	SenderEmail           string
	SenderName            string
	Conversation          NotificationConversation
	Timestamp             int64
	// Link opens the message in its conversation.
	Link string
	// MentionedGroupID and MentionedGroupName: the group through which the
	// message mentioned the recipient (0 and "" when it named them).
	MentionedGroupID   int64
	MentionedGroupName string
}

// Notification triggers (the reference's NotificationTriggers).
const (
	NotifyTriggerDirect                  = "direct_message"
	NotifyTriggerMention                 = "mentioned"
	NotifyTriggerTopicWildcard           = "topic_wildcard_mentioned"
	NotifyTriggerChannelWildcard         = "stream_wildcard_mentioned"
	NotifyTriggerChannelEmail            = "stream_email_notify"
	NotifyTriggerChannelPush             = "stream_push_notify"
	NotifyTriggerFollowedEmail           = "followed_topic_email_notify"
	NotifyTriggerFollowedPush            = "followed_topic_push_notify"
	NotifyTriggerTopicWildcardFollowed   = "topic_wildcard_mentioned_in_followed_topic"
	NotifyTriggerChannelWildcardFollowed = "stream_wildcard_mentioned_in_followed_topic"
)

func (s *Service) wakeNotifications() { s.notify.Poke() }

// notifyCase is what decides whether a message notifies one recipient.
type notifyCase struct {
	direct bool
	// flags are the recipient's flags of the message (mentions).
	flags int64
	set   Settings
	// sub is a channel message's recipient's subscription (nil: none);
	// policy their policy for the topic.
	sub    *storage.Subscription
	policy int
	// self: the recipient acted (sent, or edited); bot: the recipient
	// is a bot or deactivated; senderMuted: they muted the sender.
	self, bot, senderMuted bool
}

// allows is the reference's user_allows_notifications_in_StreamTopic: a
// muted channel (unless the topic is unmuted) or topic allows nothing;
// else the subscription's setting, or the user-level default.
func (c *notifyCase) allows(subSetting *bool, global bool) bool {
	if c.sub == nil || !c.sub.Active {
		return false
	}
	if c.sub.IsMuted && c.policy != TopicPolicyUnmuted || c.policy == TopicPolicyMuted {
		return false
	}
	if subSetting != nil {
		return *subSetting
	}
	return global
}

// trigger is the reference's get_email_notification_trigger (push false)
// or get_push_notification_trigger (push true), for a recipient idle or
// not: the most salient reason the message notifies them, or "".
func (c *notifyCase) trigger(push, idle bool) string {
	set := c.set
	if !idle && (!push || !set.EnableOnlinePushNotifications) {
		return ""
	}
	if c.self || c.bot || c.senderMuted {
		return ""
	}
	offline, followed, channel := set.EnableOfflineEmailNotifications, set.EnableFollowedTopicEmailNotifications, set.EnableStreamEmailNotifications
	followedTrigger, channelTrigger := NotifyTriggerFollowedEmail, NotifyTriggerChannelEmail
	var subSetting *bool
	if c.sub != nil {
		subSetting = c.sub.EmailNotifications
	}
	if push {
		offline, followed, channel = set.EnableOfflinePushNotifications, set.EnableFollowedTopicPushNotifications, set.EnableStreamPushNotifications
		followedTrigger, channelTrigger = NotifyTriggerFollowedPush, NotifyTriggerChannelPush
		subSetting = nil
		if c.sub != nil {
			subSetting = c.sub.PushNotifications
		}
	}
	if c.direct {
		if offline {
			return NotifyTriggerDirect
		}
		return ""
	}
	isFollowed := c.policy == TopicPolicyFollowed && c.sub != nil && c.sub.Active
	topicWildcard := c.flags&storage.FlagTopicWildcardMentioned != 0
	channelWildcard := c.flags&storage.FlagStreamWildcardMentioned != 0
	wildcardsInFollowed := isFollowed && set.EnableFollowedTopicWildcardMentionsNotify
	var wildcardSetting *bool
	if c.sub != nil {
		wildcardSetting = c.sub.WildcardMentionsNotify
	}
	wildcards := c.allows(wildcardSetting, set.WildcardMentionsNotify)
	switch {
	case c.flags&storage.FlagMentioned != 0 && offline:
		return NotifyTriggerMention
	case topicWildcard && offline && wildcardsInFollowed:
		return NotifyTriggerTopicWildcardFollowed
	case channelWildcard && offline && wildcardsInFollowed:
		return NotifyTriggerChannelWildcardFollowed
	case topicWildcard && offline && wildcards:
		return NotifyTriggerTopicWildcard
	case channelWildcard && offline && wildcards:
		return NotifyTriggerChannelWildcard
	case isFollowed && followed:
		return followedTrigger
	case c.allows(subSetting, channel):
		return channelTrigger
	}
	return ""
}

// isMentionTrigger reports a trigger of a mention (personal, group or
// wildcard).
func isMentionTrigger(t string) bool {
	switch t {
	case NotifyTriggerMention, NotifyTriggerTopicWildcard, NotifyTriggerChannelWildcard,
		NotifyTriggerTopicWildcardFollowed, NotifyTriggerChannelWildcardFollowed:
		return true
	}
	return false
}

// mentionFlags are the flags of a recipient that may make a channel
// message concern them by itself.
const mentionFlags = storage.FlagMentioned | storage.FlagTopicWildcardMentioned

// Fan-out rows say what expands them in Trigger.
const (
	fanoutSend = "send" // a channel-wide mention when sent
	fanoutEdit = "edit" // added by an edit: channel notifications already went
)

// noteGroup records, for the members of a mentioned group that the
// message does not name, the smallest mentioned group they are in (the
// reference's get_user_group_mentions_data).
func (m *mentions) noteGroup(groupID int64, members []storage.GroupMembership, named []int64) {
	if m.viaGroup == nil {
		m.viaGroup = map[int64]int64{}
		m.groupSize = map[int64]int{}
	}
	m.groupSize[groupID] = len(members)
	for _, mem := range members {
		if slices.Contains(named, mem.UserID) {
			continue
		}
		if prev, ok := m.viaGroup[mem.UserID]; !ok || m.groupSize[prev] > len(members) {
			m.viaGroup[mem.UserID] = groupID
		}
	}
}

// plannedNotifications are the pending notifications a send queues
// (MessageID unset), read before its transaction: for a direct message
// its other participants' (already loaded), for a channel message those
// of the subscribers it mentions and of the few that
// ChannelNotificationCandidates finds by their settings, plus one fan-out
// row for a channel-wide mention. Without a Notifier, nothing.
func (s *Service) plannedNotifications(ctx context.Context, r reads, o *outgoing, readers []storage.UserMessage) ([]storage.PendingNotification, error) {
	if s.notifier == nil {
		return nil, nil
	}
	m := &o.msg
	var rows []storage.PendingNotification
	if m.StreamID == nil {
		for _, u := range o.recipients {
			c := notifyCase{direct: true, set: settingsOf(u), self: u.ID == o.me.ID, bot: u.IsBot || !u.IsActive, senderMuted: o.mutedBy[u.ID]}
			rows = appendNotifications(rows, o.realm.ID, u.ID, m.DateSent, &c, 0)
		}
		return rows, nil
	}
	if m.StreamWildcard {
		rows = append(rows, storage.PendingNotification{RealmID: o.realm.ID, Kind: storage.NotificationFanout,
			Trigger: fanoutSend, DueAt: m.DateSent, CreatedAt: m.DateSent})
	}
	flags := map[int64]int64{}
	for _, r := range readers {
		if r.Flags&mentionFlags != 0 {
			flags[r.UserID] = r.Flags
		}
	}
	ids, err := r.st.ChannelNotificationCandidates(ctx, o.realm.ID, *m.StreamID, m.Topic)
	if err != nil {
		return nil, err
	}
	ids = uniqueSorted(append(ids, mapKeys(flags)...))
	if len(ids) == 0 {
		return rows, nil
	}
	cases, err := s.channelNotifyCases(ctx, r, o.realm, *m.StreamID, m.Topic, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		c := cases[id]
		if c == nil {
			continue
		}
		c.flags = flags[id]
		if m.StreamWildcard {
			c.flags |= storage.FlagStreamWildcardMentioned
		}
		c.self, c.senderMuted = id == o.me.ID, o.mutedBy[id]
		rows = appendNotifications(rows, o.realm.ID, id, m.DateSent, c, o.mentions.viaGroup[id])
	}
	return rows, nil
}

// channelNotifyCases reads what decides whether a message of the topic
// notifies these users (their settings, subscriptions and topic
// policies), flags and sender aside; users that are gone are left out.
func (s *Service) channelNotifyCases(ctx context.Context, r reads, realm *storage.Realm, streamID int64, topic string, ids []int64) (map[int64]*notifyCase, error) {
	users, err := r.usersByID(ctx, realm, ids)
	if err != nil {
		return nil, err
	}
	subs, err := r.st.ListSubscriptionsOf(ctx, realm.ID, streamID, ids)
	if err != nil {
		return nil, err
	}
	policies, err := r.st.ListTopicPolicies(ctx, realm.ID, streamID, topic)
	if err != nil {
		return nil, err
	}
	out := map[int64]*notifyCase{}
	for _, id := range ids {
		if u := users[id]; u != nil {
			out[id] = &notifyCase{set: settingsOf(u), bot: u.IsBot || !u.IsActive}
		}
	}
	for i := range subs {
		if c := out[subs[i].UserID]; c != nil {
			c.sub = &subs[i]
		}
	}
	for _, p := range policies {
		if c := out[p.UserID]; c != nil {
			c.policy = p.VisibilityPolicy
		}
	}
	return out, nil
}

// appendNotifications adds the user's email and push rows for a message
// sent at sent, as far as c makes it notify them when they are away. An
// email is due after the user's batching period, a push at once.
func appendNotifications(rows []storage.PendingNotification, realmID, userID, sent int64, c *notifyCase, group int64) []storage.PendingNotification {
	row := storage.PendingNotification{RealmID: realmID, UserID: userID, CreatedAt: sent}
	if t := c.trigger(false, true); t != "" {
		r := row
		r.Kind, r.Trigger, r.DueAt = storage.NotificationEmail, t, sent+int64(c.set.EmailNotificationsBatchingPeriodSeconds)
		if t == NotifyTriggerMention {
			r.MentionedGroupID = group
		}
		rows = append(rows, r)
	}
	if t := c.trigger(true, true); t != "" {
		r := row
		r.Kind, r.Trigger, r.DueAt = storage.NotificationPush, t, sent
		if t == NotifyTriggerMention {
			r.MentionedGroupID = group
		}
		rows = append(rows, r)
	}
	return rows
}

// queueNotifications writes a send's planned notifications in its
// transaction (write-only) and wakes the deliverer after the commit.
func (s *Service) queueNotifications(ctx context.Context, w *writeTx, messageID int64, planned []storage.PendingNotification) error {
	if len(planned) == 0 {
		return nil
	}
	rows := slices.Clone(planned)
	for i := range rows {
		rows[i].MessageID = messageID
	}
	if err := w.QueueNotifications(ctx, rows); err != nil {
		return err
	}
	w.afterCommit(s.wakeNotifications)
	return nil
}

// notifyEdit queues, inside an edit's transaction, the notifications of
// the users a content edit newly mentions, as the reference's
// maybe_enqueue_notifications_for_message_update: not for direct messages
// (their participants were told of the message), not for users mentioned
// before the edit, nor for those its channel or followed-topic settings
// already notified. A notification still pending needs nothing: it is
// decided when it goes out, with the message as it is then.
func (s *Service) notifyEdit(ctx context.Context, w *writeTx, e *edit) error {
	m, o := e.msg, e.rendered
	if s.notifier == nil || m.StreamID == nil || o == nil {
		return nil
	}
	var rows []storage.PendingNotification
	now := s.nowUnix()
	if o.msg.StreamWildcard && !m.StreamWildcard {
		rows = append(rows, storage.PendingNotification{RealmID: e.realm.ID, MessageID: m.ID, Kind: storage.NotificationFanout,
			Trigger: fanoutEdit, DueAt: now, CreatedAt: now})
	}
	readers, err := w.reads().channelReaders(ctx, o)
	if err != nil {
		return err
	}
	flags := map[int64]int64{}
	for _, r := range readers {
		if r.Flags&mentionFlags != 0 {
			flags[r.UserID] = r.Flags
		}
	}
	ids := mapKeys(flags)
	if len(ids) > 0 && !m.StreamWildcard {
		cases, err := s.channelNotifyCases(ctx, w.reads(), e.realm, *m.StreamID, m.Topic, ids)
		if err != nil {
			return err
		}
		muted, err := w.reads().muters(ctx, e.realm.ID, m.SenderID)
		if err != nil {
			return err
		}
		for _, id := range uniqueSorted(ids) {
			c := cases[id]
			if c == nil {
				continue
			}
			prior, err := w.ListUserMessages(ctx, e.realm.ID, id, []int64{m.ID})
			if err != nil {
				return err
			}
			if len(prior) > 0 && prior[0].Flags&mentionFlags != 0 || alreadyNotified(c) {
				continue
			}
			c.flags, c.self, c.senderMuted = flags[id], id == e.me.ID, slices.Contains(muted, id)
			rows = appendNotifications(rows, e.realm.ID, id, now, c, 0)
		}
	}
	for i := range rows {
		rows[i].MessageID = m.ID
	}
	if len(rows) == 0 {
		return nil
	}
	if err := w.QueueNotifications(ctx, rows); err != nil {
		return err
	}
	w.afterCommit(s.wakeNotifications)
	return nil
}

// alreadyNotified reports that the recipient's channel or followed-topic
// settings made the message notify them when it was sent.
func alreadyNotified(c *notifyCase) bool {
	plain := *c
	plain.flags = 0
	return plain.trigger(false, true) != "" || plain.trigger(true, true) != ""
}

// dropNotifications drops the pending notifications of deleted messages,
// in the deletion's transaction.
func (s *Service) dropNotifications(ctx context.Context, w *writeTx, realmID int64, ids []int64) error {
	return w.DeleteMessageNotifications(ctx, realmID, ids)
}

// notificationSettingsChanged follows a change of a user's settings in
// its transaction: the channel-message defaults that
// ChannelNotificationCandidates reads, and the due time of their pending
// emails when the batching period changed.
func (s *Service) notificationSettingsChanged(ctx context.Context, w *writeTx, u *storage.User, before, after Settings) error {
	if before.EnableStreamEmailNotifications != after.EnableStreamEmailNotifications ||
		before.EnableStreamPushNotifications != after.EnableStreamPushNotifications {
		if err := w.SetChannelNotificationDefaults(ctx, u.RealmID, u.ID, after.EnableStreamEmailNotifications, after.EnableStreamPushNotifications); err != nil {
			return err
		}
	}
	if before.EmailNotificationsBatchingPeriodSeconds != after.EmailNotificationsBatchingPeriodSeconds {
		if err := w.RescheduleNotifications(ctx, u.RealmID, u.ID, storage.NotificationEmail, s.nowUnix(),
			int64(after.EmailNotificationsBatchingPeriodSeconds)); err != nil {
			return err
		}
		w.afterCommit(s.wakeNotifications)
	}
	return nil
}

// isAway is the one place that decides whether a user is away, as the
// reference does for missed-message notifications (receiver_is_off_zulip,
// or presence-idle): no event queue of theirs accepts messages, or no
// client reported them active within the offline threshold (unless the
// organization turned presence off, or the user, whose reports are then
// not kept). With several servers, every live one is asked (fleet.go):
// a user whose client polls another server is here.
func (r reads) isAway(ctx context.Context, realm *storage.Realm, user *storage.User) (bool, error) {
	queue, held := r.s.userHere(ctx, realm.ID, user.ID)
	if !queue {
		return true, nil
	}
	if realm.PresenceDisabled || !settingsOf(user).PresenceEnabled {
		return false, nil
	}
	times, _, err := r.storedPresence(ctx, realm.ID, user.ID)
	if err != nil {
		return false, err
	}
	times = times.Merge(held)
	return times.Active == nil || r.s.nowUnix()-*times.Active > presenceOfflineThresholdSeconds, nil
}

// userHasMessageQueue reports whether the user has an event queue on this
// server that accepts message events (the reference's accepts_messages).
func (s *Service) userHasMessageQueue(realmID, userID int64) bool {
	return s.hub.UserHasQueue(realmID, userID, func(o *queueOptions) bool {
		return o.eventTypes == nil || o.eventTypes["message"]
	})
}

// errNotificationClaimLost rolls back a transaction of a deliverer whose
// claim expired and was taken by another.
var errNotificationClaimLost = errors.New("notification claim lost")
