package chat

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/narrow"
	"github.com/teamchat/chat/storage"
)

// QueueParams are the registration choices of an event queue, shared by
// POST /register and by GET /events when it creates a queue.
type QueueParams struct {
	// ApplyMarkdown (default false): message events carry rendered HTML
	// rather than the Markdown source.
	ApplyMarkdown *bool `json:"apply_markdown"`
	// ClientGravatar (default true): avatar_url is null for users on
	// Gravatar whose email the client may see.
	ClientGravatar *bool `json:"client_gravatar"`
	// SlimPresence and PresenceHistoryLimitDays shape presence data.
	SlimPresence             *bool `json:"slim_presence"`
	PresenceHistoryLimitDays *int  `json:"presence_history_limit_days"`
	// EventTypes (default: all) are the event types the queue receives;
	// unknown names are ignored.
	EventTypes *[]string `json:"event_types" null:"absent"`
	// Narrow, a JSON list of [operator, operand] pairs, filters message
	// events (channel, topic, sender, is).
	Narrow *string `json:"narrow" null:"absent"`
	// AllPublicStreams (default: the user's default_all_public_streams)
	// receives every public channel's messages; guests may not.
	AllPublicStreams *bool `json:"all_public_streams"`
	// ClientCapabilities declare what the client understands (see
	// ClientCapabilities).
	ClientCapabilities *ClientCapabilities `json:"client_capabilities" null:"absent"`
	// QueueLifespanSecs keeps an unpolled queue for longer than the
	// default 600 s, up to 7 days.
	QueueLifespanSecs *int `json:"queue_lifespan_secs"`
}

// ClientCapabilities are the client_capabilities of a registration.
// NotificationSettingsNull is required when the object is given.
type ClientCapabilities struct {
	NotificationSettingsNull    *bool `json:"notification_settings_null"`
	BulkMessageDeletion         bool  `json:"bulk_message_deletion"`
	UserAvatarURLFieldOptional  bool  `json:"user_avatar_url_field_optional"`
	StreamTypingNotifications   bool  `json:"stream_typing_notifications"`
	UserSettingsObject          bool  `json:"user_settings_object"`
	LinkifierURLTemplate        bool  `json:"linkifier_url_template"`
	UserListIncomplete          bool  `json:"user_list_incomplete"`
	IncludeDeactivatedGroups    bool  `json:"include_deactivated_groups"`
	ArchivedChannels            bool  `json:"archived_channels"`
	EmptyTopicName              bool  `json:"empty_topic_name"`
	SimplifiedPresenceEvents    bool  `json:"simplified_presence_events"`
	ExternalAuthenticationUsers bool  `json:"-"`
}

// RegisterRequest is the input of Register (POST /register).
type RegisterRequest struct {
	QueueParams
	// FetchEventTypes are the event types whose initial state is returned
	// (default: EventTypes, then all).
	FetchEventTypes *[]string `json:"fetch_event_types" null:"absent"`
	// IncludeSubscribers adds each channel's subscribers.
	IncludeSubscribers *bool `json:"include_subscribers"`
}

// RegisterResponse is the success body of Register: the queue, and the
// initial state of the requested event types (State, whose keys are the
// reference's: realm_users, subscriptions, unread_msgs, ...).
type RegisterResponse struct {
	QueueID     string
	LastEventID int64
	State       map[string]any
}

// MarshalJSON writes the queue, the version keys (both names, whatever
// fetch_event_types asked for, as the reference always sends them) and
// the state as one object.
func (r RegisterResponse) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(r.State)+8)
	for k, v := range r.State {
		m[k] = v
	}
	m["queue_id"] = r.QueueID
	m["last_event_id"] = r.LastEventID
	serverVersions.put(m)
	return json.Marshal(m)
}

// options checks the parameters and resolves their defaults.
func (p *QueueParams) options(me *storage.User, lim QueueLimits) (queueOptions, error) {
	o := queueOptions{clientGravatar: true, lifespan: p.lifespan(lim)}
	if p.ApplyMarkdown != nil {
		o.applyMarkdown = *p.ApplyMarkdown
	}
	if p.ClientGravatar != nil {
		o.clientGravatar = *p.ClientGravatar
	}
	// default_all_public_streams is false for every account here.
	if p.AllPublicStreams != nil {
		o.allPublicStreams = *p.AllPublicStreams
	}
	if o.allPublicStreams && me.Role == RoleGuest {
		return o, refused("User not authorized for this query")
	}
	if p.EventTypes != nil {
		o.eventTypes = map[string]bool{}
		for _, t := range *p.EventTypes {
			o.eventTypes[t] = true
		}
	}
	if p.Narrow != nil {
		terms, err := narrow.ParseEventsNarrowJSON(*p.Narrow)
		if err != nil {
			return o, narrowError(err)
		}
		o.narrow = terms
	}
	if c := p.ClientCapabilities; c != nil {
		if c.NotificationSettingsNull == nil {
			return o, BadRequest(`client_capabilities["notification_settings_null"] field is missing: Field required`)
		}
		o.bulkMessageDeletion = c.BulkMessageDeletion
		o.userSettingsObject = c.UserSettingsObject
		o.streamTyping = c.StreamTypingNotifications
		o.includeDeactivatedGroups = c.IncludeDeactivatedGroups
		o.emptyTopicName = c.EmptyTopicName
		o.linkifierURLTemplate = c.LinkifierURLTemplate
	}
	return o, nil
}

// lifespan is how long the queue may go unpolled.
func (p *QueueParams) lifespan(lim QueueLimits) time.Duration {
	if p.QueueLifespanSecs == nil || *p.QueueLifespanSecs <= 0 {
		return lim.IdleTimeout
	}
	return min(max(time.Duration(*p.QueueLifespanSecs)*time.Second, lim.IdleTimeout), lim.MaxLifespan)
}

// Register creates an event queue for the caller and returns it with the
// initial state of the requested event types, read atomically with the
// queue's start: every change committed after the state was read arrives
// as an event, and none that the state already shows.
func (s *Service) Register(ctx context.Context, c Caller, req RegisterRequest) (*RegisterResponse, error) {
	me, _, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	opts, err := req.options(me, s.queueLimit)
	if err != nil {
		return nil, err
	}
	fetch := req.EventTypes
	if req.FetchEventTypes != nil {
		fetch = req.FetchEventTypes
	}
	q, err := s.openQueue(ctx, me, opts, func(view *Service, out *queueStart) error {
		state, err := view.initialState(ctx, c, &req, &opts, fetch)
		out.state = state
		return err
	})
	if err != nil {
		return nil, err
	}
	return &RegisterResponse{QueueID: q.queue.ID(), LastEventID: -1, State: q.state}, nil
}

// queueStart is what opening a queue read from its snapshot.
type queueStart struct {
	queue *eventQueue
	state map[string]any
}

// openQueue creates a queue and, in one read snapshot, the queue's
// replica of its user's standing and whatever read wants; events that
// commit while the snapshot is being read wait in the queue and are kept
// only if the snapshot does not include them.
func (s *Service) openQueue(ctx context.Context, me *storage.User, opts queueOptions, read func(view *Service, out *queueStart) error) (*queueStart, error) {
	if err := s.listening(ctx); err != nil {
		return nil, err
	}
	hub := s.shared.hub
	q := hub.Open(me.RealmID, me.ID, opts, opts.lifespan)
	out := &queueStart{queue: q}
	var snap storage.Snapshot
	standing := eventq.Standing{Subscribed: map[int64]struct{}{}}
	err := s.store.ReadSnapshot(ctx, func(rs storage.Store, sn storage.Snapshot) error {
		snap = sn
		view := s.snapshotView(rs)
		u, err := rs.GetUser(ctx, me.RealmID, me.ID)
		if err != nil {
			return err
		}
		if !u.IsActive {
			return errUserDeactivated
		}
		standing.Role = u.Role
		subs, err := rs.ListUserSubscriptions(ctx, me.RealmID, me.ID)
		if err != nil {
			return err
		}
		for _, sub := range subs {
			if sub.Active {
				standing.Subscribed[sub.StreamID] = struct{}{}
			}
		}
		if read != nil {
			return read(view, out)
		}
		return nil
	})
	if err != nil {
		hub.Remove(q)
		return nil, s.internal(ctx, "register", err)
	}
	hub.Ready(q, snap, standing)
	return out, nil
}

// snapshotView is the Service reading through rs (a read snapshot), with
// caches of its own so that nothing newer than the snapshot leaks in.
func (s *Service) snapshotView(rs storage.Store) *Service {
	view := *s
	view.store = rs
	view.callers = newCallerCache(s.now)
	view.linkifiers = newLinkifierCache(view.callers, s.now)
	view.messages = newMessageCache(1 << 20)
	return &view
}

// wants reports whether the fetch list asks for an event type's state.
func wants(fetch *[]string, types ...string) bool {
	if fetch == nil {
		return true
	}
	for _, t := range types {
		if !slices.Contains(*fetch, t) {
			return false
		}
	}
	return true
}

// initialState builds the register response's state for the fetch list,
// through the Service's own getters (s reads a snapshot).
func (s *Service) initialState(ctx context.Context, c Caller, req *RegisterRequest, opts *queueOptions, fetch *[]string) (map[string]any, error) {
	st := map[string]any{}
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	var own *OwnUser
	ownUser := func() (*OwnUser, error) {
		if own == nil {
			own, err = s.GetOwnUser(ctx, c)
		}
		return own, err
	}
	if wants(fetch, "message") {
		o, err := ownUser()
		if err != nil {
			return nil, err
		}
		st["max_message_id"] = o.MaxMessageID
	}
	if wants(fetch, "message", "update_message_flags") {
		u, err := s.GetUnreadMessages(ctx, c, GetUnreadMessagesRequest{AllowEmptyTopicName: &opts.emptyTopicName})
		if err != nil {
			return nil, err
		}
		st["unread_msgs"] = u
	}
	if wants(fetch, "realm_user") {
		if err := s.realmUserState(ctx, c, me, realm, opts, st, ownUser); err != nil {
			return nil, err
		}
	}
	if wants(fetch, "subscription") {
		if err := s.subscriptionState(ctx, c, me, req, st); err != nil {
			return nil, err
		}
	}
	if wants(fetch, "stream") {
		r, err := s.GetChannels(ctx, c, GetChannelsRequest{})
		if err != nil {
			return nil, err
		}
		for i := range r.Streams {
			r.Streams[i].IsDefault = nil // a GET /streams field
		}
		st["streams"] = r.Streams
	}
	if wants(fetch, "realm") {
		if err := s.realmState(ctx, c, realm, st); err != nil {
			return nil, err
		}
	}
	if wants(fetch, "realm_user_groups") {
		// Everyone gets the groups here, guests and bots too (GET
		// /user_groups is for members).
		r, err := s.listUserGroups(ctx, realm, GetUserGroupsRequest{IncludeDeactivatedGroups: &opts.includeDeactivatedGroups})
		if err != nil {
			return nil, err
		}
		st["realm_user_groups"] = r.UserGroups
	}
	legacyDisplay := !opts.userSettingsObject && wants(fetch, "update_display_settings")
	legacyNotifications := !opts.userSettingsObject && wants(fetch, "update_global_notifications")
	if wants(fetch, "user_settings") || legacyDisplay || legacyNotifications {
		r, err := s.GetSettings(ctx, c)
		if err != nil {
			return nil, err
		}
		if wants(fetch, "user_settings") {
			st["user_settings"] = r.UserSettings
		}
		// The legacy form: the settings that predate user_settings at the
		// top level, for clients without user_settings_object.
		raw, err := json.Marshal(r.UserSettings)
		if err != nil {
			return nil, err
		}
		var flat map[string]any
		if err := json.Unmarshal(raw, &flat); err != nil {
			return nil, err
		}
		for k, v := range flat {
			if legacyDisplay && (legacyDisplaySettings[k] || k == "timezone") || legacyNotifications && legacyNotificationSettings[k] {
				st[k] = v
			}
		}
		if legacyDisplay {
			st["emojiset_choices"] = emojisetChoices()
		}
		if legacyNotifications {
			st["available_notification_sounds"] = notificationSounds()
		}
	}
	if wants(fetch, "user_topic") {
		r, err := s.GetUserTopics(ctx, c)
		if err != nil {
			return nil, err
		}
		if !opts.emptyTopicName {
			for i := range r.UserTopics {
				if r.UserTopics[i].TopicName == "" {
					r.UserTopics[i].TopicName = EmptyTopicDisplayName
				}
			}
		}
		st["user_topics"] = r.UserTopics
	}
	if wants(fetch, "drafts") {
		drafts := []Draft{}
		if settingsOf(me).EnableDraftsSynchronization {
			r, err := s.GetDrafts(ctx, c)
			if err != nil {
				return nil, err
			}
			drafts = r.Drafts
		}
		st["drafts"] = drafts
	}
	if wants(fetch, "scheduled_messages") {
		r, err := s.GetScheduledMessages(ctx, c)
		if err != nil {
			return nil, err
		}
		st["scheduled_messages"] = r.ScheduledMessages
	}
	if wants(fetch, "custom_profile_fields") {
		r, err := s.GetProfileFields(ctx, c)
		if err != nil {
			return nil, err
		}
		st["custom_profile_fields"] = r.CustomFields
		st["custom_profile_field_types"] = profileFieldTypes()
	}
	if wants(fetch, "realm_emoji") {
		r, err := s.GetCustomEmoji(ctx, c)
		if err != nil {
			return nil, err
		}
		st["realm_emoji"] = r.Emoji
	}
	if wants(fetch, "realm_bot") {
		r, err := s.GetBots(ctx, c)
		if err != nil {
			return nil, err
		}
		st["realm_bots"] = r.Bots
	}
	if wants(fetch, "alert_words") {
		words, err := s.listAlertWords(ctx, s.store, me)
		if err != nil {
			return nil, err
		}
		st["alert_words"] = words
	}
	if wants(fetch, "user_status") {
		statuses, err := s.userStatuses(ctx, me.RealmID)
		if err != nil {
			return nil, err
		}
		st["user_status"] = statuses
	}
	if wants(fetch, "muted_users") {
		list, err := mutedUsers(ctx, s.store, me.RealmID, me.ID)
		if err != nil {
			return nil, err
		}
		st["muted_users"] = list
	}
	if wants(fetch, "presence") {
		q := presenceQuery{slim: flag(req.SlimPresence, false), historyDays: req.PresenceHistoryLimitDays}
		presences, last, err := s.presences(ctx, realm, q)
		if err != nil {
			return nil, err
		}
		st["presences"], st["presence_last_update_id"], st["server_timestamp"] = presences, last, s.serverTimestamp()
	}
	if wants(fetch, "starred_messages") {
		ids, err := s.store.ListFlaggedMessageIDs(ctx, me.RealmID, me.ID, storage.FlagStarred)
		if err != nil {
			return nil, err
		}
		st["starred_messages"] = ids
	}
	if wants(fetch, "recent_private_conversations") {
		recent, err := s.recentDirectConversations(ctx, me)
		if err != nil {
			return nil, err
		}
		st["recent_private_conversations"] = recent
	}
	if wants(fetch, "default_streams") {
		no, yes := false, true
		r, err := s.GetChannels(ctx, c, GetChannelsRequest{IncludePublic: &no, IncludeSubscribed: &no, IncludeDefault: &yes})
		if err != nil {
			return nil, err
		}
		defaults := []int64{}
		for _, ch := range r.Streams {
			if ch.IsDefault != nil && *ch.IsDefault {
				defaults = append(defaults, ch.StreamID)
			}
		}
		st["realm_default_streams"] = defaults // IDs since feature level 330
	}
	if wants(fetch, "realm_user_settings_defaults") {
		// New accounts start with the server's defaults (there are no
		// per-organization ones).
		st["realm_user_settings_defaults"] = DefaultSettings
	}
	if wants(fetch, "muted_topics") && !wants(fetch, "user_topic") {
		muted, err := s.mutedTopics(ctx, s.store, me)
		if err != nil {
			return nil, err
		}
		st["muted_topics"] = muted
	}
	if wants(fetch, "stop_words") {
		words := make([]string, 0, len(stopWords))
		for w := range stopWords {
			words = append(words, w)
		}
		slices.Sort(words)
		st["stop_words"] = words
	}
	// Features this server does not have: their state is empty.
	for typ, keys := range map[string]map[string]any{
		"default_stream_groups":       {"realm_default_stream_groups": []any{}},
		"realm_domains":               {"realm_domains": []any{}},
		"realm_embedded_bots":         {"realm_embedded_bots": []any{}},
		"realm_incoming_webhook_bots": {"realm_incoming_webhook_bots": []any{}},
		"onboarding_steps":            {"onboarding_steps": []any{}, "navigation_tour_video_url": nil},
		"saved_snippets":              {"saved_snippets": []any{}},
		"video_calls":                 {"has_zoom_token": false},
		"giphy":                       {"giphy_api_key": ""},
	} {
		if wants(fetch, typ) {
			for k, v := range keys {
				st[k] = v
			}
		}
	}
	if wants(fetch, "realm_playgrounds") {
		list, err := s.realmPlaygrounds(ctx, s.store, me.RealmID)
		if err != nil {
			return nil, err
		}
		st["realm_playgrounds"] = list
	}
	if wants(fetch, "realm_linkifiers") {
		// Only clients that take URL templates get the list (the
		// reference's linkifier_url_template capability).
		list := []Linkifier{}
		if opts.linkifierURLTemplate {
			if list, err = s.realmLinkifiers(ctx, s.store, me.RealmID); err != nil {
				return nil, err
			}
		}
		st["realm_linkifiers"] = list
	}
	if wants(fetch, "realm_filters") {
		st["realm_filters"] = []any{}
	}
	return st, nil
}

// realmUserState is the realm_user state: the users, and the caller's own
// account and permissions.
func (s *Service) realmUserState(ctx context.Context, c Caller, me *storage.User, realm *storage.Realm, opts *queueOptions, st map[string]any, ownUser func() (*OwnUser, error)) error {
	r, err := s.GetUsers(ctx, c, GetUsersRequest{ClientGravatar: &opts.clientGravatar, IncludeCustomProfileFields: new(true)})
	if err != nil {
		return err
	}
	active, inactive := []User{}, []User{}
	for _, u := range r.Members {
		if u.IsActive {
			active = append(active, u)
		} else {
			inactive = append(inactive, u)
		}
	}
	st["realm_users"], st["realm_non_active_users"], st["cross_realm_bots"] = active, inactive, []User{}
	o, err := ownUser()
	if err != nil {
		return err
	}
	st["user_id"], st["email"], st["delivery_email"], st["full_name"] = o.UserID, o.Email, o.DeliveryEmail, o.FullName
	st["avatar_source"], st["avatar_url"], st["avatar_url_medium"] = me.AvatarSource, o.AvatarURL, o.AvatarURL
	st["is_admin"], st["is_owner"], st["is_guest"] = o.IsAdmin, o.IsOwner, o.IsGuest
	st["is_moderator"] = me.Role == RoleModerator
	canInvite, err := s.mayInviteByEmail(ctx, realm, me)
	if err != nil {
		return err
	}
	st["can_invite_others_to_realm"] = canInvite
	return nil
}

// subscriptionState is the subscription state: the channels the caller
// is in, left, and could join but never did.
func (s *Service) subscriptionState(ctx context.Context, c Caller, me *storage.User, req *RegisterRequest, st map[string]any) error {
	subs, err := s.GetSubscriptions(ctx, c, GetSubscriptionsRequest{IncludeSubscribers: req.IncludeSubscribers})
	if err != nil {
		return err
	}
	st["subscriptions"] = subs.Subscriptions
	rows, err := s.store.ListUserSubscriptions(ctx, me.RealmID, me.ID)
	if err != nil {
		return err
	}
	left := map[int64]*storage.Subscription{}
	for i := range rows {
		if !rows[i].Active {
			left[rows[i].StreamID] = &rows[i]
		}
	}
	visible, err := s.GetChannels(ctx, c, GetChannelsRequest{})
	if err != nil {
		return err
	}
	in := map[int64]bool{}
	for _, sub := range subs.Subscriptions {
		in[sub.StreamID] = true
	}
	unsubscribed, never := []SubscriptionInfo{}, []Channel{}
	for _, ch := range visible.Streams {
		ch.IsDefault = nil // a GET /streams field
		switch {
		case in[ch.StreamID]:
		case left[ch.StreamID] != nil:
			unsubscribed = append(unsubscribed, subscriptionInfo(ch, left[ch.StreamID]))
		default:
			never = append(never, ch)
		}
	}
	st["unsubscribed"], st["never_subscribed"] = unsubscribed, never
	return nil
}

// realmState is the realm state: the organization's settings and the
// server's limits.
func (s *Service) realmState(ctx context.Context, c Caller, realm *storage.Realm, st map[string]any) error {
	r, err := s.GetRealmSettings(ctx, c)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var settings map[string]any
	if err := json.Unmarshal(raw, &settings); err != nil {
		return err
	}
	for k, v := range settings {
		switch k {
		case "realm_email_address_visibility", "realm_rendered_description":
			// GET /realm's; registration has neither (the visibility is
			// each user's email_address_visibility setting now).
		default:
			st[k] = v
		}
	}
	l := s.limits
	st["max_message_length"] = l.MaxMessageLength
	st["max_topic_length"] = l.MaxTopicLength
	st["max_stream_name_length"] = l.MaxStreamNameLength
	st["max_stream_description_length"] = l.MaxStreamDescLength
	st["max_file_upload_size_mib"] = l.MaxFileUploadSizeMiB
	st["realm_empty_topic_display_name"] = EmptyTopicDisplayName
	st["server_typing_started_wait_period_milliseconds"] = TypingStartedWait.Milliseconds()
	st["server_typing_stopped_wait_period_milliseconds"] = TypingStoppedWait.Milliseconds()
	st["server_typing_started_expiry_period_milliseconds"] = TypingStartedExpiry.Milliseconds()
	st["event_queue_longpoll_timeout_seconds"] = 90
	st["realm_url"] = realm.URL
	st["realm_uri"] = st["realm_url"]
	if err := s.realmRegisterExtras(ctx, realm, st); err != nil {
		return err
	}
	return nil
}

// profileFieldTypes describes the custom profile field types, by the
// reference's names.
func profileFieldTypes() map[string]any {
	type ft struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	return map[string]any{
		"SHORT_TEXT":       ft{FieldShortText, "Text (short)"},
		"LONG_TEXT":        ft{FieldLongText, "Text (long)"},
		"SELECT":           ft{FieldSelect, "List of options"},
		"DATE":             ft{FieldDate, "Date"},
		"URL":              ft{FieldURL, "Link"},
		"USER":             ft{FieldUser, "Users"},
		"EXTERNAL_ACCOUNT": ft{FieldExternalAccount, "External account"},
		"PRONOUNS":         ft{FieldPronouns, "Pronouns"},
	}
}

// emojisetChoices are the emoji sets a user may pick, with their names.
func emojisetChoices() []map[string]string {
	return []map[string]string{
		{"key": "google", "text": "Google"},
		{"key": "twitter", "text": "Twitter"},
		{"key": "text", "text": "Plain text"},
		{"key": "google-blob", "text": "Google blobs"},
	}
}

// notificationSounds are the sounds notification_sound may name (besides
// "none").
func notificationSounds() []string { return []string{"chime", "ding", "pling", "vibrate", "zulip"} }

// recentConversationMessages is how many of the newest direct messages
// recent_private_conversations looks at (the reference's limit).
const recentConversationMessages = 1000

// RecentConversation is a direct conversation with its newest message.
type RecentConversation struct {
	MaxMessageID int64 `json:"max_message_id"`
	// UserIDs are the other participants (none for a conversation with
	// oneself), ascending.
	UserIDs []int64 `json:"user_ids"`
}

// recentDirectConversations lists the conversations of the user's newest
// direct messages, most recent first.
func (s *Service) recentDirectConversations(ctx context.Context, me *storage.User) ([]RecentConversation, error) {
	refs, err := s.store.ListRecentDirectMessages(ctx, me.RealmID, me.ID, recentConversationMessages)
	if err != nil {
		return nil, err
	}
	var order []int64
	newest := map[int64]int64{}
	for _, r := range refs {
		if _, ok := newest[r.ConversationID]; !ok {
			order = append(order, r.ConversationID)
			newest[r.ConversationID] = r.MessageID
		}
	}
	members, err := s.store.ConversationMembersOf(ctx, me.RealmID, order)
	if err != nil {
		return nil, err
	}
	out := make([]RecentConversation, 0, len(order))
	for _, conv := range order {
		others := []int64{}
		for _, id := range members[conv] {
			if id != me.ID {
				others = append(others, id)
			}
		}
		out = append(out, RecentConversation{MaxMessageID: newest[conv], UserIDs: others})
	}
	return out, nil
}
