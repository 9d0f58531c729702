package chat

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/teamchat/chat/storage"
)

// The initial state of a registration is made by one fetcher per event
// type (or group of types that share one read), each filling the keys of
// its types when the fetch list asks for them, in the order below (a
// later fetcher's key wins; none overlap today).

// stateCtx is what the fetchers read: the caller, the registration, and
// the caller's own account once one of them has read it.
type stateCtx struct {
	ctx   context.Context
	c     Caller
	me    *storage.User
	realm *storage.Realm
	req   *RegisterRequest
	opts  *queueOptions
	fetch *[]string
	own   *OwnUser
}

// ownUser is GetOwnUser's answer, read once.
func (sc *stateCtx) ownUser(r reads) (*OwnUser, error) {
	if sc.own == nil {
		own, err := r.getOwnUser(sc.ctx, sc.c)
		if err != nil {
			return nil, err
		}
		sc.own = own
	}
	return sc.own, nil
}

// stateFetcher fills the state of the event types it is for.
type stateFetcher struct {
	// types must all be in the fetch list (see wants); wanted, when set,
	// decides instead.
	types  []string
	wanted func(sc *stateCtx) bool
	fill   func(r reads, sc *stateCtx, st map[string]any) error
}

var stateFetchers = []stateFetcher{
	{types: []string{"message"}, fill: reads.maxMessageIDState},
	{types: []string{"message", "update_message_flags"}, fill: reads.unreadMessagesState},
	{types: []string{"realm_user"}, fill: reads.realmUserState},
	{types: []string{"subscription"}, fill: reads.subscriptionState},
	// The groups before the channels and the organization, whose
	// permissions name groups: a registration's snapshot answers those
	// from the groups already read (snapshotMemo).
	{types: []string{"realm_user_groups"}, fill: reads.userGroupState},
	{types: []string{"stream"}, fill: reads.streamState},
	{types: []string{"realm"}, fill: reads.realmState},
	{wanted: wantsSettings, fill: reads.settingsState},
	{types: []string{"user_topic"}, fill: reads.userTopicState},
	{types: []string{"drafts"}, fill: reads.draftState},
	{types: []string{"scheduled_messages"}, fill: reads.scheduledState},
	{types: []string{"custom_profile_fields"}, fill: reads.profileFieldState},
	{types: []string{"realm_emoji"}, fill: reads.customEmojiState},
	{types: []string{"realm_bot"}, fill: reads.botState},
	{types: []string{"alert_words"}, fill: reads.alertWordState},
	{types: []string{"user_status"}, fill: reads.userStatusState},
	{types: []string{"muted_users"}, fill: reads.mutedUserState},
	{types: []string{"presence"}, fill: reads.presenceState},
	{types: []string{"starred_messages"}, fill: reads.starredState},
	{types: []string{"recent_private_conversations"}, fill: reads.recentConversationState},
	{types: []string{"default_streams"}, fill: reads.defaultChannelState},
	{types: []string{"realm_user_settings_defaults"}, fill: settingsDefaultsState},
	{wanted: func(sc *stateCtx) bool { return wants(sc.fetch, "muted_topics") && !wants(sc.fetch, "user_topic") },
		fill: reads.mutedTopicState},
	{types: []string{"stop_words"}, fill: stopWordState},
	{wanted: func(*stateCtx) bool { return true }, fill: absentFeatureState},
	{types: []string{"realm_playgrounds"}, fill: reads.playgroundState},
	{types: []string{"realm_linkifiers"}, fill: reads.linkifierState},
	{types: []string{"realm_filters"}, fill: func(_ reads, _ *stateCtx, st map[string]any) error {
		st["realm_filters"] = []any{}
		return nil
	}},
}

// initialState builds the register response's state for the fetch list,
// through the Service's own getters (s reads a snapshot).
func (r reads) initialState(ctx context.Context, c Caller, req *RegisterRequest, opts *queueOptions, fetch *[]string) (map[string]any, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	sc := &stateCtx{ctx: ctx, c: c, me: me, realm: realm, req: req, opts: opts, fetch: fetch}
	st := map[string]any{}
	for _, f := range stateFetchers {
		if f.wanted != nil && !f.wanted(sc) || f.wanted == nil && !wants(fetch, f.types...) {
			continue
		}
		if err := f.fill(r, sc, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (r reads) maxMessageIDState(sc *stateCtx, st map[string]any) error {
	o, err := sc.ownUser(r)
	if err != nil {
		return err
	}
	st["max_message_id"] = o.MaxMessageID
	return nil
}

func (r reads) unreadMessagesState(sc *stateCtx, st map[string]any) error {
	u, err := r.getUnreadMessages(sc.ctx, sc.c, GetUnreadMessagesRequest{AllowEmptyTopicName: &sc.opts.emptyTopicName})
	st["unread_msgs"] = u
	return err
}

func (r reads) streamState(sc *stateCtx, st map[string]any) error {
	resp, err := r.getChannels(sc.ctx, sc.c, GetChannelsRequest{})
	if err != nil {
		return err
	}
	for i := range resp.Streams {
		resp.Streams[i].IsDefault = nil // a GET /streams field
	}
	st["streams"] = resp.Streams
	return nil
}

// userGroupState: everyone gets the groups here, guests and bots too (GET
// /user_groups is for members).
func (r reads) userGroupState(sc *stateCtx, st map[string]any) error {
	resp, err := r.listUserGroups(sc.ctx, sc.realm, GetUserGroupsRequest{IncludeDeactivatedGroups: &sc.opts.includeDeactivatedGroups})
	if err != nil {
		return err
	}
	st["realm_user_groups"] = resp.UserGroups
	return nil
}

// The legacy forms of the settings: those that predate user_settings at
// the top level, for clients without user_settings_object.
func legacySettings(sc *stateCtx) (display, notifications bool) {
	return !sc.opts.userSettingsObject && wants(sc.fetch, "update_display_settings"),
		!sc.opts.userSettingsObject && wants(sc.fetch, "update_global_notifications")
}

func wantsSettings(sc *stateCtx) bool {
	display, notifications := legacySettings(sc)
	return wants(sc.fetch, "user_settings") || display || notifications
}

func (r reads) settingsState(sc *stateCtx, st map[string]any) error {
	resp, err := r.getSettings(sc.ctx, sc.c)
	if err != nil {
		return err
	}
	if wants(sc.fetch, "user_settings") {
		st["user_settings"] = resp.UserSettings
	}
	display, notifications := legacySettings(sc)
	raw, err := json.Marshal(resp.UserSettings)
	if err != nil {
		return err
	}
	var flat map[string]any
	if err := json.Unmarshal(raw, &flat); err != nil {
		return err
	}
	for k, v := range flat {
		if display && (legacyDisplaySettings[k] || k == "timezone") || notifications && legacyNotificationSettings[k] {
			st[k] = v
		}
	}
	if display {
		st["emojiset_choices"] = emojisetChoices()
	}
	if notifications {
		st["available_notification_sounds"] = notificationSounds()
	}
	return nil
}

func (r reads) userTopicState(sc *stateCtx, st map[string]any) error {
	resp, err := r.getUserTopics(sc.ctx, sc.c)
	if err != nil {
		return err
	}
	if !sc.opts.emptyTopicName {
		for i := range resp.UserTopics {
			if resp.UserTopics[i].TopicName == "" {
				resp.UserTopics[i].TopicName = EmptyTopicDisplayName
			}
		}
	}
	st["user_topics"] = resp.UserTopics
	return nil
}

func (r reads) draftState(sc *stateCtx, st map[string]any) error {
	drafts := []Draft{}
	if settingsOf(sc.me).EnableDraftsSynchronization {
		resp, err := r.getDrafts(sc.ctx, sc.c)
		if err != nil {
			return err
		}
		drafts = resp.Drafts
	}
	st["drafts"] = drafts
	return nil
}

func (r reads) scheduledState(sc *stateCtx, st map[string]any) error {
	resp, err := r.getScheduledMessages(sc.ctx, sc.c)
	if err != nil {
		return err
	}
	st["scheduled_messages"] = resp.ScheduledMessages
	return nil
}

func (r reads) profileFieldState(sc *stateCtx, st map[string]any) error {
	resp, err := r.getProfileFields(sc.ctx, sc.c)
	if err != nil {
		return err
	}
	st["custom_profile_fields"] = resp.CustomFields
	st["custom_profile_field_types"] = profileFieldTypes()
	return nil
}

func (r reads) customEmojiState(sc *stateCtx, st map[string]any) error {
	resp, err := r.getCustomEmoji(sc.ctx, sc.c)
	if err != nil {
		return err
	}
	st["realm_emoji"] = resp.Emoji
	return nil
}

func (r reads) botState(sc *stateCtx, st map[string]any) error {
	resp, err := r.getBots(sc.ctx, sc.c)
	if err != nil {
		return err
	}
	st["realm_bots"] = resp.Bots
	return nil
}

func (r reads) alertWordState(sc *stateCtx, st map[string]any) error {
	words, err := r.listAlertWords(sc.ctx, sc.me)
	st["alert_words"] = words
	return err
}

func (r reads) userStatusState(sc *stateCtx, st map[string]any) error {
	statuses, err := r.userStatuses(sc.ctx, sc.me.RealmID)
	st["user_status"] = statuses
	return err
}

func (r reads) mutedUserState(sc *stateCtx, st map[string]any) error {
	list, err := r.mutedUsers(sc.ctx, sc.me.RealmID, sc.me.ID)
	st["muted_users"] = list
	return err
}

func (r reads) presenceState(sc *stateCtx, st map[string]any) error {
	q := presenceQuery{slim: flag(sc.req.SlimPresence, false), historyDays: sc.req.PresenceHistoryLimitDays}
	presences, last, err := r.presences(sc.ctx, sc.realm, q)
	if err != nil {
		return err
	}
	st["presences"], st["presence_last_update_id"], st["server_timestamp"] = presences, last, r.s.serverTimestamp()
	return nil
}

func (r reads) starredState(sc *stateCtx, st map[string]any) error {
	ids, err := r.st.ListFlaggedMessageIDs(sc.ctx, sc.me.RealmID, sc.me.ID, storage.FlagStarred)
	st["starred_messages"] = ids
	return err
}

func (r reads) recentConversationState(sc *stateCtx, st map[string]any) error {
	recent, err := r.recentDirectConversations(sc.ctx, sc.me)
	st["recent_private_conversations"] = recent
	return err
}

func (r reads) defaultChannelState(sc *stateCtx, st map[string]any) error {
	no, yes := false, true
	resp, err := r.getChannels(sc.ctx, sc.c, GetChannelsRequest{IncludePublic: &no, IncludeSubscribed: &no, IncludeDefault: &yes})
	if err != nil {
		return err
	}
	defaults := []int64{}
	for _, ch := range resp.Streams {
		if ch.IsDefault != nil && *ch.IsDefault {
			defaults = append(defaults, ch.StreamID)
		}
	}
	st["realm_default_streams"] = defaults // IDs since feature level 330
	return nil
}

// settingsDefaultsState: new accounts start with the server's defaults
// (there are no per-organization ones).
func settingsDefaultsState(_ reads, _ *stateCtx, st map[string]any) error {
	st["realm_user_settings_defaults"] = DefaultSettings
	return nil
}

func (r reads) mutedTopicState(sc *stateCtx, st map[string]any) error {
	muted, err := r.s.mutedTopics(sc.ctx, r, sc.me)
	st["muted_topics"] = muted
	return err
}

func stopWordState(_ reads, _ *stateCtx, st map[string]any) error {
	words := make([]string, 0, len(stopWords))
	for w := range stopWords {
		words = append(words, w)
	}
	slices.Sort(words)
	st["stop_words"] = words
	return nil
}

// absentFeatures are the state of features this server does not have:
// empty, by event type.
var absentFeatures = map[string]map[string]any{
	"default_stream_groups":       {"realm_default_stream_groups": []any{}},
	"realm_domains":               {"realm_domains": []any{}},
	"realm_embedded_bots":         {"realm_embedded_bots": []any{}},
	"realm_incoming_webhook_bots": {"realm_incoming_webhook_bots": []any{}},
	"onboarding_steps":            {"onboarding_steps": []any{}, "navigation_tour_video_url": nil},
	"saved_snippets":              {"saved_snippets": []any{}},
	"video_calls":                 {"has_zoom_token": false},
	"giphy":                       {"giphy_api_key": ""},
}

func absentFeatureState(_ reads, sc *stateCtx, st map[string]any) error {
	for typ, keys := range absentFeatures {
		if wants(sc.fetch, typ) {
			for k, v := range keys {
				st[k] = v
			}
		}
	}
	return nil
}

func (r reads) playgroundState(sc *stateCtx, st map[string]any) error {
	list, err := r.realmPlaygrounds(sc.ctx, sc.me.RealmID)
	st["realm_playgrounds"] = list
	return err
}

// linkifierState: only clients that take URL templates get the list (the
// reference's linkifier_url_template capability).
func (r reads) linkifierState(sc *stateCtx, st map[string]any) error {
	list := []Linkifier{}
	if sc.opts.linkifierURLTemplate {
		var err error
		if list, err = r.realmLinkifiers(sc.ctx, sc.me.RealmID); err != nil {
			return err
		}
	}
	st["realm_linkifiers"] = list
	return nil
}

// realmUserState is the realm_user state: the users, and the caller's own
// account and permissions.
func (r reads) realmUserState(sc *stateCtx, st map[string]any) error {
	ctx, me, realm := sc.ctx, sc.me, sc.realm
	members, bots, err := r.listUsers(ctx, sc.c, GetUsersRequest{ClientGravatar: &sc.opts.clientGravatar, IncludeCustomProfileFields: new(true)})
	if err != nil {
		return err
	}
	active, inactive := []User{}, []User{}
	for _, u := range members {
		if u.IsActive {
			active = append(active, u)
		} else {
			inactive = append(inactive, u)
		}
	}
	st["realm_users"], st["realm_non_active_users"], st["cross_realm_bots"] = active, inactive, bots
	o, err := sc.ownUser(r)
	if err != nil {
		return err
	}
	st["user_id"], st["email"], st["delivery_email"], st["full_name"] = o.UserID, o.Email, o.DeliveryEmail, o.FullName
	st["avatar_source"], st["avatar_url"], st["avatar_url_medium"] = me.AvatarSource, o.AvatarURL, o.AvatarURL
	st["is_admin"], st["is_owner"], st["is_guest"] = o.IsAdmin, o.IsOwner, o.IsGuest
	st["is_moderator"] = me.Role == RoleModerator
	canInvite, err := r.mayInviteByEmail(ctx, realm, me)
	if err != nil {
		return err
	}
	st["can_invite_others_to_realm"] = canInvite
	return nil
}

// subscriptionState is the subscription state: the channels the caller
// is in, left, and could join but never did.
func (r reads) subscriptionState(sc *stateCtx, st map[string]any) error {
	ctx, c, me := sc.ctx, sc.c, sc.me
	subs, err := r.getSubscriptions(ctx, c, GetSubscriptionsRequest{IncludeSubscribers: sc.req.IncludeSubscribers})
	if err != nil {
		return err
	}
	st["subscriptions"] = subs.Subscriptions
	rows, err := r.st.ListUserSubscriptions(ctx, me.RealmID, me.ID)
	if err != nil {
		return err
	}
	left := map[int64]*storage.Subscription{}
	for i := range rows {
		if !rows[i].Active {
			left[rows[i].StreamID] = &rows[i]
		}
	}
	visible, err := r.getChannels(ctx, c, GetChannelsRequest{})
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
func (r reads) realmState(sc *stateCtx, st map[string]any) error {
	ctx, realm := sc.ctx, sc.realm
	resp, err := r.getRealmSettings(ctx, sc.c)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(resp)
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
	l := r.s.limits
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
	if err := r.realmRegisterExtras(ctx, realm, st); err != nil {
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
func (r reads) recentDirectConversations(ctx context.Context, me *storage.User) ([]RecentConversation, error) {
	refs, err := r.st.ListRecentDirectMessages(ctx, me.RealmID, me.ID, recentConversationMessages)
	if err != nil {
		return nil, err
	}
	var order []int64
	newest := map[int64]int64{}
	for _, ref := range refs {
		if _, ok := newest[ref.ConversationID]; !ok {
			order = append(order, ref.ConversationID)
			newest[ref.ConversationID] = ref.MessageID
		}
	}
	members, err := r.st.ConversationMembersOf(ctx, me.RealmID, order)
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
