package chat

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// RealmSettings are the organization settings, with the reference's names.
type RealmSettings struct {
	RealmName        string `json:"realm_name"`
	RealmDescription string `json:"realm_description"`
	// RealmRenderedDescription is the description as HTML.
	RealmRenderedDescription string `json:"realm_rendered_description"`
	// RealmEmailAddressVisibility caps who may see users' real emails.
	RealmEmailAddressVisibility      int               `json:"realm_email_address_visibility"`
	RealmNameChangesDisabled         bool              `json:"realm_name_changes_disabled"`
	RealmEmailChangesDisabled        bool              `json:"realm_email_changes_disabled"`
	RealmWaitingPeriodThreshold      int               `json:"realm_waiting_period_threshold"`
	RealmCanCreateBotsGroup          GroupSettingValue `json:"realm_can_create_bots_group"`
	RealmCanCreateWriteOnlyBotsGroup GroupSettingValue `json:"realm_can_create_write_only_bots_group"`
	// RealmDirectMessagePermissionGroup: a direct message needs one
	// participant in it; RealmDirectMessageInitiatorGroup may start new
	// conversations.
	RealmDirectMessagePermissionGroup GroupSettingValue `json:"realm_direct_message_permission_group"`
	RealmDirectMessageInitiatorGroup  GroupSettingValue `json:"realm_direct_message_initiator_group"`
	// RealmCanMentionManyUsersGroup may use wildcard mentions in channels
	// with more than 15 subscribers and topics with more than 15
	// participants.
	RealmCanMentionManyUsersGroup GroupSettingValue `json:"realm_can_mention_many_users_group"`
	// Message actions: who may add custom emoji, delete any message or
	// their own, move messages between channels or topics, resolve
	// topics; whether and for how long (seconds, null: no limit) messages
	// may be edited, deleted and moved; who sees edit history; read
	// receipts.
	RealmCanAddCustomEmojiGroup                 GroupSettingValue `json:"realm_can_add_custom_emoji_group"`
	RealmCanDeleteAnyMessageGroup               GroupSettingValue `json:"realm_can_delete_any_message_group"`
	RealmCanDeleteOwnMessageGroup               GroupSettingValue `json:"realm_can_delete_own_message_group"`
	RealmCanMoveMessagesBetweenChannelsGroup    GroupSettingValue `json:"realm_can_move_messages_between_channels_group"`
	RealmCanMoveMessagesBetweenTopicsGroup      GroupSettingValue `json:"realm_can_move_messages_between_topics_group"`
	RealmCanResolveTopicsGroup                  GroupSettingValue `json:"realm_can_resolve_topics_group"`
	RealmCanInviteUsersGroup                    GroupSettingValue `json:"realm_can_invite_users_group"`
	RealmCreateMultiuseInviteGroup              GroupSettingValue `json:"realm_create_multiuse_invite_group"`
	RealmAllowMessageEditing                    bool              `json:"realm_allow_message_editing"`
	RealmMessageContentEditLimitSeconds         *int64            `json:"realm_message_content_edit_limit_seconds"`
	RealmMessageContentDeleteLimitSeconds       *int64            `json:"realm_message_content_delete_limit_seconds"`
	RealmMoveMessagesWithinStreamLimitSeconds   *int64            `json:"realm_move_messages_within_stream_limit_seconds"`
	RealmMoveMessagesBetweenStreamsLimitSeconds *int64            `json:"realm_move_messages_between_streams_limit_seconds"`
	RealmMessageEditHistoryVisibilityPolicy     string            `json:"realm_message_edit_history_visibility_policy"`
	RealmEnableReadReceipts                     bool              `json:"realm_enable_read_receipts"`
	RealmPresenceDisabled                       bool              `json:"realm_presence_disabled"`
	RealmMandatoryTopics                        bool              `json:"realm_mandatory_topics"`
}

// editHistoryPolicies are the names of message_edit_history_visibility_policy.
var editHistoryPolicies = map[int]string{1: "all", 2: "moves", 3: "none"}

// TimeLimit is a time-limit setting in a request: a positive number of
// seconds, or "unlimited".
type TimeLimit struct {
	raw string
}

// UnmarshalJSON keeps the value for UpdateRealm to check with its name.
func (t *TimeLimit) UnmarshalJSON(b []byte) error {
	t.raw = string(b)
	return nil
}

// seconds is the limit (nil: unlimited), or the reference's error naming
// the setting.
func (t *TimeLimit) seconds(name string) (*int64, error) {
	var word string
	if err := json.Unmarshal([]byte(t.raw), &word); err == nil {
		if word == "unlimited" {
			return nil, nil
		}
		return nil, badValue(name, word)
	}
	var n int64
	if err := json.Unmarshal([]byte(t.raw), &n); err != nil || n <= 0 {
		return nil, badValue(name, t.raw)
	}
	return &n, nil
}

// GetRealmSettingsResponse is the success body of GetRealmSettings.
type GetRealmSettingsResponse struct {
	RealmSettings
}

// GetRealmSettings returns the organization settings. Every user may read them.
func (s *Service) GetRealmSettings(ctx context.Context, c Caller) (*GetRealmSettingsResponse, error) {
	return s.reads().getRealmSettings(ctx, c)
}

// getRealmSettings is GetRealmSettings reading through r.
func (r reads) getRealmSettings(ctx context.Context, c Caller) (*GetRealmSettingsResponse, error) {
	_, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	rs := RealmSettings{
		RealmName: realm.Name, RealmDescription: realm.Description,
		RealmRenderedDescription:    markdown.Render(realm.Description),
		RealmEmailAddressVisibility: realm.EmailAddressVisibility,
		RealmNameChangesDisabled:    realm.NameChangesDisabled, RealmEmailChangesDisabled: realm.EmailChangesDisabled,
		RealmWaitingPeriodThreshold:                 realm.WaitingPeriodThreshold,
		RealmAllowMessageEditing:                    realm.AllowMessageEditing,
		RealmMessageContentEditLimitSeconds:         realm.MessageContentEditLimitSeconds,
		RealmMessageContentDeleteLimitSeconds:       realm.MessageContentDeleteLimitSeconds,
		RealmMoveMessagesWithinStreamLimitSeconds:   realm.MoveMessagesWithinStreamLimitSeconds,
		RealmMoveMessagesBetweenStreamsLimitSeconds: realm.MoveMessagesBetweenStreamsLimitSeconds,
		RealmMessageEditHistoryVisibilityPolicy:     editHistoryPolicies[realm.MessageEditHistoryVisibilityPolicy],
		RealmEnableReadReceipts:                     realm.EnableReadReceipts,
		RealmPresenceDisabled:                       realm.PresenceDisabled,
		RealmMandatoryTopics:                        realm.MandatoryTopics,
	}
	ids := make([]int64, len(realmGroupSettings))
	for i, set := range realmGroupSettings {
		ids[i] = *set.field(realm)
	}
	values, err := r.realmGroupSettingValues(ctx, realm, ids...)
	if err != nil {
		return nil, r.s.internal(ctx, "get realm settings", err)
	}
	for i, v := range values {
		*realmSettingsViewField[i](&rs) = v
	}
	return &GetRealmSettingsResponse{rs}, nil
}

// realmGroupSettingValues are the wire values of realm permissions held
// by the groups ids (0: unset, which is administrators), in their order:
// the groups read in one query (and their contents in two more when some
// are anonymous), the administrators' group looked up once if needed.
func (r reads) realmGroupSettingValues(ctx context.Context, realm *storage.Realm, ids ...int64) ([]GroupSettingValue, error) {
	ids = slices.Clone(ids)
	var admins int64
	for i := range ids {
		if ids[i] != 0 {
			continue
		}
		if admins == 0 {
			var err error
			if admins, err = r.systemGroupID(ctx, realm.ID, GroupAdministrators); err != nil {
				return nil, err
			}
		}
		ids[i] = admins
	}
	scope := newGroupScope(nil)
	if err := scope.load(ctx, r.st, realm.ID, ids...); err != nil {
		return nil, err
	}
	out := make([]GroupSettingValue, len(ids))
	for i, id := range ids {
		out[i] = scope.value(id)
	}
	return out, nil
}

// realmGroupSettings are the organization's group-based permissions.
var realmGroupSettings = []settingDescriptor[storage.Realm]{
	newSetting[storage.Realm]("can_create_bots_group", GroupMembers, GroupInternet, GroupEveryone),
	newSetting[storage.Realm]("can_create_write_only_bots_group", GroupMembers, GroupInternet, GroupEveryone),
	newSetting[storage.Realm]("direct_message_permission_group", GroupEveryone, GroupInternet),
	newSetting[storage.Realm]("direct_message_initiator_group", GroupEveryone, GroupInternet),
	newSetting[storage.Realm]("can_mention_many_users_group", GroupAdministrators, GroupInternet),
	newSetting[storage.Realm]("can_add_custom_emoji_group", GroupMembers, GroupInternet, GroupEveryone),
	newSetting[storage.Realm]("can_delete_any_message_group", GroupAdministrators, GroupInternet, GroupEveryone),
	newSetting[storage.Realm]("can_delete_own_message_group", GroupEveryone, GroupInternet),
	newSetting[storage.Realm]("can_move_messages_between_channels_group", GroupMembers, GroupInternet, GroupEveryone),
	newSetting[storage.Realm]("can_move_messages_between_topics_group", GroupEveryone, GroupInternet),
	newSetting[storage.Realm]("can_resolve_topics_group", GroupEveryone, GroupInternet),
	newSetting[storage.Realm]("can_invite_users_group", GroupMembers, GroupInternet, GroupEveryone),
	newSetting[storage.Realm]("create_multiuse_invite_group", GroupAdministrators, GroupInternet, GroupEveryone),
}

var (
	realmUpdateField       = settingFields[*GroupSettingUpdate, UpdateRealmRequest](realmGroupSettings)
	realmSettingsViewField = func() []func(*RealmSettings) *GroupSettingValue {
		out := make([]func(*RealmSettings) *GroupSettingValue, len(realmGroupSettings))
		for i, set := range realmGroupSettings {
			out[i] = fieldByTag[GroupSettingValue, RealmSettings]("json", "realm_"+set.name)
		}
		return out
	}()
)

// realmGroupSetting is the wire value of a realm permission (0: administrators).
func (r reads) realmGroupSetting(ctx context.Context, realm *storage.Realm, id int64) (GroupSettingValue, error) {
	values, err := r.realmGroupSettingValues(ctx, realm, id)
	if err != nil {
		return GroupSettingValue{}, err
	}
	return values[0], nil
}

// UpdateRealmRequest is the input of UpdateRealm; every field is optional.
type UpdateRealmRequest struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	// EmailAddressVisibility caps who may see users' real emails
	// (EmailVisible* values; each user may restrict their own further).
	EmailAddressVisibility       *int                `json:"email_address_visibility"`
	NameChangesDisabled          *bool               `json:"name_changes_disabled"`
	EmailChangesDisabled         *bool               `json:"email_changes_disabled"`
	WaitingPeriodThreshold       *int                `json:"waiting_period_threshold"`
	CanCreateBotsGroup           *GroupSettingUpdate `json:"can_create_bots_group"`
	CanCreateWriteOnlyBotsGroup  *GroupSettingUpdate `json:"can_create_write_only_bots_group"`
	DirectMessagePermissionGroup *GroupSettingUpdate `json:"direct_message_permission_group"`
	DirectMessageInitiatorGroup  *GroupSettingUpdate `json:"direct_message_initiator_group"`
	CanMentionManyUsersGroup     *GroupSettingUpdate `json:"can_mention_many_users_group"`

	CanAddCustomEmojiGroup              *GroupSettingUpdate `json:"can_add_custom_emoji_group"`
	CanDeleteAnyMessageGroup            *GroupSettingUpdate `json:"can_delete_any_message_group"`
	CanDeleteOwnMessageGroup            *GroupSettingUpdate `json:"can_delete_own_message_group"`
	CanMoveMessagesBetweenChannelsGroup *GroupSettingUpdate `json:"can_move_messages_between_channels_group"`
	CanMoveMessagesBetweenTopicsGroup   *GroupSettingUpdate `json:"can_move_messages_between_topics_group"`
	CanResolveTopicsGroup               *GroupSettingUpdate `json:"can_resolve_topics_group"`
	CanInviteUsersGroup                 *GroupSettingUpdate `json:"can_invite_users_group"`
	CreateMultiuseInviteGroup           *GroupSettingUpdate `json:"create_multiuse_invite_group"`
	AllowMessageEditing                 *bool               `json:"allow_message_editing"`
	// The time limits take a number of seconds or "unlimited".
	MessageContentEditLimitSeconds         *TimeLimit `json:"message_content_edit_limit_seconds"`
	MessageContentDeleteLimitSeconds       *TimeLimit `json:"message_content_delete_limit_seconds"`
	MoveMessagesWithinStreamLimitSeconds   *TimeLimit `json:"move_messages_within_stream_limit_seconds"`
	MoveMessagesBetweenStreamsLimitSeconds *TimeLimit `json:"move_messages_between_streams_limit_seconds"`
	// MessageEditHistoryVisibilityPolicy is "all", "moves" or "none".
	MessageEditHistoryVisibilityPolicy *string `json:"message_edit_history_visibility_policy"`
	EnableReadReceipts                 *bool   `json:"enable_read_receipts"`
	PresenceDisabled                   *bool   `json:"presence_disabled"`
	// MandatoryTopics refuses channel messages (sent, scheduled or
	// edited) to the empty topic.
	MandatoryTopics *bool `json:"mandatory_topics"`
}

// UpdateRealm changes organization settings. Administrators only. Every
// value is checked before anything changes.
func (s *Service) UpdateRealm(ctx context.Context, c Caller, req UpdateRealmRequest) (*EmptyResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	next, columns, err := realmChanges(realm, &req)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		next := next
		data, groupColumns, err := s.changeRealmGroupSettings(ctx, w, realm, &next, &req)
		if err != nil {
			return err
		}
		columns := append(slices.Clip(columns), groupColumns...)
		if len(columns) == 0 {
			return nil
		}
		if err := w.UpdateRealm(ctx, &next, columns...); err != nil {
			return err
		}
		emitRealmChanges(w, realm, &next, data)
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "update realm", err)
	}
	if req.WaitingPeriodThreshold != nil {
		if _, err := s.PromoteFullMembers(ctx, realm.ID); err != nil {
			return nil, err
		}
	}
	return &EmptyResponse{}, nil
}

// realmChanges checks the request's plain settings and applies them to a
// copy of realm; columns are the columns they change.
func realmChanges(realm *storage.Realm, req *UpdateRealmRequest) (next storage.Realm, columns []string, err error) {
	next = *realm
	if err := realmTextChanges(&next, req, &columns); err != nil {
		return next, nil, err
	}
	for _, b := range []struct {
		column string
		req    *bool
		dst    *bool
	}{
		{"name_changes_disabled", req.NameChangesDisabled, &next.NameChangesDisabled},
		{"email_changes_disabled", req.EmailChangesDisabled, &next.EmailChangesDisabled},
		{"allow_message_editing", req.AllowMessageEditing, &next.AllowMessageEditing},
		{"enable_read_receipts", req.EnableReadReceipts, &next.EnableReadReceipts},
		{"presence_disabled", req.PresenceDisabled, &next.PresenceDisabled},
		{"mandatory_topics", req.MandatoryTopics, &next.MandatoryTopics},
	} {
		if b.req != nil {
			*b.dst, columns = *b.req, append(columns, b.column)
		}
	}
	for _, lim := range realmTimeLimits(req, &next) {
		if lim.req == nil {
			continue
		}
		v, err := lim.req.seconds(lim.name)
		if err != nil {
			return next, nil, err
		}
		*lim.dst, columns = v, append(columns, lim.name)
	}
	return next, columns, nil
}

// realmTextChanges checks and applies the settings with values to check:
// the name, the description, the email visibility, the waiting period,
// the edit history's visibility.
func realmTextChanges(next *storage.Realm, req *UpdateRealmRequest, columns *[]string) error {
	if req.Name != nil {
		name := strings.TrimSpace(*req.Name)
		if name == "" {
			return BadRequest("Organization name can't be empty.")
		}
		if utf8.RuneCountInString(name) > 40 {
			return BadRequest("Organization name is too long (limit: 40 characters).")
		}
		next.Name, *columns = name, append(*columns, "name")
	}
	if req.Description != nil {
		if utf8.RuneCountInString(*req.Description) > 1000 {
			return BadRequest("Organization description is too long (limit: 1000 characters).")
		}
		next.Description, *columns = *req.Description, append(*columns, "description")
	}
	if req.EmailAddressVisibility != nil {
		if err := intChoices(1, 2, 3, 4, 5)("email_address_visibility", *req.EmailAddressVisibility); err != nil {
			return err
		}
		next.EmailAddressVisibility, *columns = *req.EmailAddressVisibility, append(*columns, "email_address_visibility")
	}
	if req.WaitingPeriodThreshold != nil {
		if *req.WaitingPeriodThreshold < 0 || *req.WaitingPeriodThreshold > 1000 {
			return BadRequest("Invalid waiting_period_threshold: must be between 0 and 1000")
		}
		next.WaitingPeriodThreshold, *columns = *req.WaitingPeriodThreshold, append(*columns, "waiting_period_threshold")
	}
	if req.MessageEditHistoryVisibilityPolicy != nil {
		policy := 0
		for k, v := range editHistoryPolicies {
			if v == *req.MessageEditHistoryVisibilityPolicy {
				policy = k
			}
		}
		if policy == 0 {
			return BadRequest("Invalid message_edit_history_visibility_policy")
		}
		next.MessageEditHistoryVisibilityPolicy, *columns = policy, append(*columns, "message_edit_history_visibility_policy")
	}
	return nil
}

// realmTimeLimit is one of the organization's time limits: the
// request's value and where the realm keeps it.
type realmTimeLimit struct {
	name string
	req  *TimeLimit
	dst  **int64
}

func realmTimeLimits(req *UpdateRealmRequest, next *storage.Realm) []realmTimeLimit {
	return []realmTimeLimit{
		{"message_content_edit_limit_seconds", req.MessageContentEditLimitSeconds, &next.MessageContentEditLimitSeconds},
		{"message_content_delete_limit_seconds", req.MessageContentDeleteLimitSeconds, &next.MessageContentDeleteLimitSeconds},
		{"move_messages_within_stream_limit_seconds", req.MoveMessagesWithinStreamLimitSeconds, &next.MoveMessagesWithinStreamLimitSeconds},
		{"move_messages_between_streams_limit_seconds", req.MoveMessagesBetweenStreamsLimitSeconds, &next.MoveMessagesBetweenStreamsLimitSeconds},
	}
}

// changeRealmGroupSettings stores the request's group-based permission
// settings in the write (each checked against what it may be set to) and
// applies them to next; data are their new values for the event, columns
// the realm's columns they change.
func (s *Service) changeRealmGroupSettings(ctx context.Context, w *writeTx, realm, next *storage.Realm, req *UpdateRealmRequest) (data map[string]any, columns []string, err error) {
	data = map[string]any{}
	for i, set := range realmGroupSettings {
		up := *realmUpdateField[i](req)
		if up == nil {
			continue
		}
		current, err := w.reads().realmGroupSetting(ctx, realm, *set.field(realm))
		if err != nil {
			return nil, nil, err
		}
		var stored GroupSettingValue
		id, err := w.reads().updateGroupSetting(ctx, realm.ID, set.name, current, up, func(v GroupSettingValue) (int64, error) {
			scope := newGroupScope(nil)
			if v.GroupID != nil {
				if err := scope.load(ctx, w, realm.ID, *v.GroupID); err != nil {
					return 0, err
				}
			}
			if err := set.checkAllowed(scope, v); err != nil {
				return 0, err
			}
			stored = v
			return s.storeGroupSetting(ctx, w, realm.ID, set.name, v)
		})
		if err != nil {
			return nil, nil, err
		}
		*set.field(next) = id
		columns, data[set.name] = append(columns, set.column()), stored
	}
	return data, columns, nil
}

// emitRealmChanges tells everyone the settings that changed: one update
// event per plain setting, and one update_dict with the time limits and
// the group settings (data).
func emitRealmChanges(w *writeTx, realm, next *storage.Realm, data map[string]any) {
	for _, p := range []struct {
		name       string
		old, value any
	}{
		{"name", realm.Name, next.Name},
		{"description", realm.Description, next.Description},
		{"email_address_visibility", realm.EmailAddressVisibility, next.EmailAddressVisibility},
		{"name_changes_disabled", realm.NameChangesDisabled, next.NameChangesDisabled},
		{"email_changes_disabled", realm.EmailChangesDisabled, next.EmailChangesDisabled},
		{"waiting_period_threshold", realm.WaitingPeriodThreshold, next.WaitingPeriodThreshold},
		{"allow_message_editing", realm.AllowMessageEditing, next.AllowMessageEditing},
		{"enable_read_receipts", realm.EnableReadReceipts, next.EnableReadReceipts},
		{"presence_disabled", realm.PresenceDisabled, next.PresenceDisabled},
		{"mandatory_topics", realm.MandatoryTopics, next.MandatoryTopics},
		{"message_edit_history_visibility_policy", editHistoryPolicies[realm.MessageEditHistoryVisibilityPolicy],
			editHistoryPolicies[next.MessageEditHistoryVisibilityPolicy]},
	} {
		if p.old != p.value {
			w.emit(everyone, RealmEvent{Op: "update", Property: p.name, Value: p.value})
		}
	}
	old := realmTimeLimits(&UpdateRealmRequest{}, realm)
	for i, lim := range realmTimeLimits(&UpdateRealmRequest{}, next) {
		was, now := *old[i].dst, *lim.dst
		if (was == nil) != (now == nil) || was != nil && *was != *now {
			data[lim.name] = now
		}
	}
	if len(data) > 0 {
		w.emit(everyone, RealmEvent{Op: "update_dict", Property: "default", Data: data})
	}
}
