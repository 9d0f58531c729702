package chat

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"

	"github.com/teamchat/chat/storage"
)

// emailAudiences splits the organization by whether each role may see u's
// real email: the first audience may (u included), the second may not.
func emailAudiences(realm *storage.Realm, u *storage.User) (sees, blind Audience) {
	for _, role := range allRoles {
		viewer := &storage.User{Role: role}
		if canSeeEmail(realm, viewer, u) {
			sees.Roles = append(sees.Roles, role)
		} else {
			blind.Roles = append(blind.Roles, role)
		}
	}
	sees.Users = []int64{u.ID}
	blind.Except = []int64{u.ID}
	return sees, blind
}

// emitUserAdded tells the organization about a new account: with its real
// email to those who may see it, without to the others; a bot is also
// announced to its owner and the administrators.
func emitUserAdded(w *writeTx, realm *storage.Realm, u *storage.User, profile map[string]ProfileFieldValue) {
	emitUserAddedWith(w, realm, u, profile, nil)
}

// emitUserAddedWith is emitUserAdded for a bot with services.
func emitUserAddedWith(w *writeTx, realm *storage.Realm, u *storage.User, profile map[string]ProfileFieldValue, services []any) {
	sees, blind := emailAudiences(realm, u)
	opts := userView{profileFields: !u.IsBot, profile: map[int64]map[string]ProfileFieldValue{u.ID: profile}}
	withEmail := viewUser(realm, &storage.User{ID: u.ID}, u, opts)
	w.emit(sees, RealmUserEvent{Op: "add", Person: withEmail})
	if len(blind.Roles) > 0 {
		without := withEmail
		without.DeliveryEmail = nil
		w.emit(blind, RealmUserEvent{Op: "add", Person: without})
	}
	if u.IsBot {
		view := newBotEventView(u)
		if services != nil {
			view.Services = services
		}
		w.emit(botAudience(u), RealmBotEvent{Op: "add", Bot: view})
	}
}

// botAudience is who manages a bot: its owner and the administrators.
func botAudience(bot *storage.User) Audience {
	if bot.BotOwnerID != nil {
		return admins.plus(*bot.BotOwnerID)
	}
	return admins
}

// emitUserUpdate tells everyone one change of a user (person holds
// user_id and the changed fields).
func emitUserUpdate(w *writeTx, userID int64, fields map[string]any) {
	person := map[string]any{"user_id": userID}
	for k, v := range fields {
		person[k] = v
	}
	w.emit(everyone, RealmUserEvent{Op: "update", Person: person})
}

// emitBotUpdate tells a bot's managers one change of it.
func emitBotUpdate(w *writeTx, bot *storage.User, fields map[string]any) {
	b := map[string]any{"user_id": bot.ID}
	for k, v := range fields {
		b[k] = v
	}
	w.emit(botAudience(bot), RealmBotEvent{Op: "update", Bot: b})
}

// botEventView is a bot as realm_bot add events show it.
type botEventView struct {
	Email                       string  `json:"email"`
	UserID                      int64   `json:"user_id"`
	FullName                    string  `json:"full_name"`
	BotType                     *int    `json:"bot_type"`
	IsActive                    bool    `json:"is_active"`
	APIKey                      string  `json:"api_key"`
	DefaultSendingStream        *string `json:"default_sending_stream"`
	DefaultEventsRegisterStream *string `json:"default_events_register_stream"`
	DefaultAllPublicStreams     bool    `json:"default_all_public_streams"`
	AvatarURL                   string  `json:"avatar_url"`
	Services                    []any   `json:"services"`
	OwnerID                     *int64  `json:"owner_id"`
}

func newBotEventView(u *storage.User) botEventView {
	return botEventView{Email: u.Email, UserID: u.ID, FullName: u.FullName, BotType: u.BotType, IsActive: u.IsActive,
		APIKey: u.APIKey, AvatarURL: gravatarURL(u), Services: []any{}, OwnerID: u.BotOwnerID}
}

// isAdminID reports whether the user is an active administrator (false
// when it cannot be told).
func (r reads) isAdminID(ctx context.Context, realmID, userID int64) bool {
	u, err := r.st.GetUser(ctx, realmID, userID)
	return err == nil && u.IsActive && isAdmin(u)
}

// emitEmailChange tells those who may see the real email about the new
// one, and everyone about a changed public email.
func emitEmailChange(w *writeTx, realm *storage.Realm, old, next *storage.User) {
	sees, _ := emailAudiences(realm, next)
	w.emit(sees, RealmUserEvent{Op: "update", Person: map[string]any{"user_id": next.ID, "delivery_email": next.Email}})
	if apiEmail(realm, old) != apiEmail(realm, next) {
		emitUserUpdate(w, next.ID, map[string]any{"new_email": apiEmail(realm, next)})
	}
}

// emitSettingsChanges tells the user about each changed setting, and
// everyone about a changed name or time zone.
func emitSettingsChanges(w *writeTx, realm *storage.Realm, old, next *storage.User, before, after Settings) {
	if next.FullName != old.FullName {
		emitUserUpdate(w, next.ID, map[string]any{"full_name": next.FullName})
	}
	me := toUsers(next.ID)
	if next.Timezone != old.Timezone {
		emitUserUpdate(w, next.ID, map[string]any{"email": apiEmail(realm, next), "timezone": next.Timezone})
		w.emit(me, UserSettingsEvent{Op: "update", Property: "timezone", Value: next.Timezone})
		w.emit(me, UpdateDisplaySettingsEvent{User: apiEmail(realm, next), SettingName: "timezone", Setting: next.Timezone})
	}
	b, a := settingsMap(before), settingsMap(after)
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if reflect.DeepEqual(a[k], b[k]) {
			continue
		}
		ev := UserSettingsEvent{Op: "update", Property: k, Value: a[k]}
		var lang *string
		if k == "default_language" {
			name := languageName(after.DefaultLanguage)
			lang = &name
		}
		ev.LanguageName = lang
		w.emit(me, ev)
		if legacyNotificationSettings[k] {
			w.emit(me, UpdateGlobalNotificationsEvent{User: apiEmail(realm, next), NotificationName: k, Setting: a[k]})
		}
		if legacyDisplaySettings[k] {
			w.emit(me, UpdateDisplaySettingsEvent{User: apiEmail(realm, next), SettingName: k, Setting: a[k], LanguageName: lang})
		}
	}
}

// settingsMap is the settings as their wire names and values.
func settingsMap(s Settings) map[string]any {
	raw, _ := json.Marshal(s)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// The settings that predate the user_settings event, which the reference
// still announces in the legacy forms too.
var (
	legacyDisplaySettings = setOf("color_scheme", "default_language", "web_home_view", "demote_inactive_streams",
		"emojiset", "enable_drafts_synchronization", "enter_sends", "fluid_layout_width", "high_contrast_mode",
		"left_side_userlist", "starred_message_counts", "translate_emoticons", "twenty_four_hour_time")
	legacyNotificationSettings = setOf("desktop_icon_count_display", "email_notifications_batching_period_seconds",
		"enable_desktop_notifications", "enable_digest_emails", "enable_login_emails", "enable_marketing_emails",
		"enable_offline_email_notifications", "enable_offline_push_notifications", "enable_online_push_notifications",
		"enable_sounds", "enable_stream_audible_notifications", "enable_stream_desktop_notifications",
		"enable_stream_email_notifications", "enable_stream_push_notifications", "message_content_in_email_notifications",
		"notification_sound", "pm_content_in_desktop_notifications", "presence_enabled",
		"realm_name_in_email_notifications_policy", "wildcard_mentions_notify")
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// emitReactivation tells the organization what a reactivated user is back
// in, as the reference does (do_reactivate_user): peer_add for each
// channel they are still subscribed to, add_members for each named group
// they are a direct member of, and the new value of each group setting
// held by an anonymous group they are a direct member of (deactivated
// users are left out of every member list and setting value). The
// reference announces settings of groups and of the organization; this
// Service also announces those of channels, whose values changed the same
// way. Called inside the write, after the user is active again.
func emitReactivation(ctx context.Context, w *writeTx, realm *storage.Realm, u *storage.User) error {
	subs, err := w.ListUserSubscriptions(ctx, realm.ID, u.ID)
	if err != nil {
		return err
	}
	var streamIDs []int64
	for _, sub := range subs {
		if sub.Active {
			streamIDs = append(streamIDs, sub.StreamID)
		}
	}
	if len(streamIDs) > 0 {
		streams, err := w.GetStreamsByID(ctx, realm.ID, streamIDs)
		if err != nil {
			return err
		}
		for i := range streams {
			if ch := &streams[i]; !ch.IsArchived {
				aud := channelAudience(ch)
				aud.Except = []int64{u.ID}
				w.emit(aud, SubscriptionEvent{Op: "peer_add", StreamIDs: []int64{ch.ID}, UserIDs: []int64{u.ID}})
			}
		}
	}

	direct, err := w.UserGroupIDs(ctx, realm.ID, u.ID)
	if err != nil || len(direct) == 0 {
		return err
	}
	scope := newGroupScope(nil)
	if err := scope.load(ctx, w, realm.ID, direct...); err != nil {
		return err
	}
	var anonymous []int64
	for _, id := range uniqueSorted(direct) {
		if g := scope.groups[id]; g == nil || g.Deactivated {
			continue
		} else if g.Name != "" {
			w.emit(everyone, UserGroupEvent{Op: "add_members", GroupID: id, UserIDs: []int64{u.ID}})
		} else {
			anonymous = append(anonymous, id)
		}
	}
	if len(anonymous) == 0 {
		return nil
	}
	holds := func(id int64) bool { return slices.Contains(anonymous, id) }

	groups, err := w.ListGroupsUsingGroups(ctx, realm.ID, anonymous)
	if err != nil {
		return err
	}
	for i := range groups {
		for _, set := range userGroupSettings {
			if id := *set.field(&groups[i]); holds(id) {
				w.emit(everyone, UserGroupEvent{Op: "update", GroupID: groups[i].ID, Data: map[string]any{set.name: scope.value(id)}})
			}
		}
	}
	for _, set := range realmGroupSettings {
		if id := *set.field(realm); holds(id) {
			w.emit(everyone, RealmEvent{Op: "update_dict", Property: "default", Data: map[string]any{set.name: scope.value(id)}})
		}
	}
	streams, err := w.ListStreamsUsingGroups(ctx, realm.ID, anonymous)
	if err != nil {
		return err
	}
	for i := range streams {
		for _, set := range channelSettings {
			if id := *set.field(&streams[i]); holds(id) {
				w.emit(channelAudience(&streams[i]), StreamEvent{Op: "update", StreamID: streams[i].ID, Name: streams[i].Name, Property: set.name, Value: scope.value(id)})
			}
		}
	}
	return nil
}
