package chat

import (
	"context"
	"slices"
	"time"

	"github.com/teamchat/chat/storage"
)

// The rest of POST /register's realm state: every key the reference's
// register response declares for fetch type "realm" beyond the
// organization settings of GetRealmSettings (see realmState). Each value
// is true of this server:
//
//   - settings stored with the organization are read from its record;
//   - permissions this server enforces by fixed rules rather than by a
//     setting are reported as the system group the rule amounts to
//     (fixedRealmPermissions);
//   - features this server does not have (video calls, GIPHY, billing,
//     logos, digests, push notifications, previews, spectators, topic
//     summaries, announcements) are reported
//     off, with the reference's value for "off" (or, for a parameter of
//     such a feature that has no off value, the reference's default).

// processStarted is when this process started: server_generation, which
// the reference defines as the start time of the process hosting the
// event queue (queues live in this process's memory).
var processStarted = time.Now().Unix()

// Sizes the reference reports for the organization icon, logo and user
// avatar uploads (5 MiB each). Of these this server takes avatars
// (POST /users/me/avatar, where it has a blob store); icons are Gravatar
// identicons.
const referenceImageUploadMiB = 5

// minDeactivatedRealmDeletionDays is the reference's default minimum
// delay before a deactivated organization's data may be deleted. This
// server never deletes it (server_max_deactivated_realm_deletion_days is
// null: kept indefinitely), so any minimum holds.
const minDeactivatedRealmDeletionDays = 14

// fixedRealmPermissions are the organization permissions that are not
// settings here: the code enforces one rule, named by the system group
// whose members it allows.
var fixedRealmPermissions = []struct{ name, group string }{
	// Every user sees every other user (GetUsers filters no one).
	{"can_access_all_users_group", GroupEveryone},
	// Members and above may add others to channels they can see
	// (channelCtx.canAddSubscribers).
	{"can_add_subscribers_group", GroupMembers},
	// Members and above may create user groups (CreateUserGroup refuses
	// guests), and public and private channels (newChannel refuses
	// guests); web-public ones take an administrator.
	{"can_create_groups", GroupMembers},
	{"can_create_public_channel_group", GroupMembers},
	{"can_create_private_channel_group", GroupMembers},
	{"can_create_web_public_channel_group", GroupAdministrators},
	// Administrators manage every group (groupScope.canManage).
	{"can_manage_all_groups", GroupAdministrators},
	// No billing or topic summaries on this server: nobody may use them.
	// (Who may invite are organization settings: realmGroupSettings.)
	{"can_manage_billing_group", GroupNobody},
	{"can_summarize_topics_group", GroupNobody},
}

// policyOfSystemGroup is the reference's mapping from system groups to
// the deprecated integer policies (1 members, 2 administrators, 3 full
// members, 4 moderators, 5 everyone, 6 nobody, 7 owners).
var policyOfSystemGroup = map[string]int{
	GroupMembers: 1, GroupAdministrators: 2, GroupFullMembers: 3, GroupModerators: 4,
	GroupEveryone: 5, GroupNobody: 6, GroupOwners: 7,
}

// wildcardMentionPolicyOfSystemGroup is the reference's mapping for the
// deprecated realm_wildcard_mention_policy; any other group (owners,
// role:internet, a user-defined or anonymous group) is reported as 1
// (everyone), the policy whose users are a superset.
var wildcardMentionPolicyOfSystemGroup = map[string]int{
	GroupEveryone: 1, GroupMembers: 2, GroupFullMembers: 3, GroupAdministrators: 5, GroupNobody: 6, GroupModerators: 7,
}

// realmRegisterExtras adds the realm state keys that realmState does not
// take from GetRealmSettings.
func (r reads) realmRegisterExtras(ctx context.Context, realm *storage.Realm, st map[string]any) error {
	// The fixed permissions, as group-setting values (system group IDs).
	groupIDs := map[string]int64{}
	for _, p := range fixedRealmPermissions {
		if _, ok := groupIDs[p.group]; !ok {
			g, err := r.st.GetGroupByName(ctx, realm.ID, p.group)
			if err != nil {
				return r.s.internal(ctx, "register realm state", err)
			}
			groupIDs[p.group] = g.ID
		}
		id := groupIDs[p.group]
		st["realm_"+p.name] = GroupSettingValue{GroupID: &id}
	}
	fixed := map[string]string{}
	for _, p := range fixedRealmPermissions {
		fixed[p.name] = p.group
	}
	// The deprecated integer forms of channel creation and wildcard
	// mention permissions.
	st["realm_create_public_stream_policy"] = policyOfSystemGroup[fixed["can_create_public_channel_group"]]
	st["realm_create_private_stream_policy"] = policyOfSystemGroup[fixed["can_create_private_channel_group"]]
	st["realm_create_web_public_stream_policy"] = policyOfSystemGroup[fixed["can_create_web_public_channel_group"]]
	mentionPolicy, err := r.wildcardMentionPolicy(ctx, realm)
	if err != nil {
		return r.s.internal(ctx, "register realm state", err)
	}
	st["realm_wildcard_mention_policy"] = mentionPolicy

	// From the organization's record.
	st["realm_date_created"] = realm.DateCreated
	// Deprecated: false only when no edit history is visible.
	st["realm_allow_edit_history"] = editHistoryPolicies[realm.MessageEditHistoryVisibilityPolicy] != "none"
	st["realm_icon_url"] = r.s.realmIconURL(realm)
	st["realm_icon_source"] = "G" // the Gravatar identicon; no uploads
	st["realm_bot_domain"] = dummyEmailDomain(realm)

	// Accounts and sign-in. Password login by email is the one method;
	// accounts are made by administrators or the operator, never by
	// signing up, so joining always takes someone else's action.
	st["realm_authentication_methods"] = map[string]any{"Email": map[string]bool{"enabled": true, "available": true}}
	st["realm_email_auth_enabled"] = true
	st["realm_password_auth_enabled"] = true
	st["password_min_length"] = r.s.limits.MinPasswordLength
	st["password_max_length"] = r.s.limits.MaxPasswordLength
	st["password_min_guesses"] = 0 // no strength estimate: length only (checkPassword)
	st["realm_invite_required"] = true
	st["realm_emails_restricted_to_domains"] = false
	st["realm_disallow_disposable_email_addresses"] = false
	st["realm_require_unique_names"] = false // checkFullName allows equal names
	st["realm_send_welcome_emails"] = false
	st["realm_default_language"] = "en" // the language of the server's own texts
	// Users may upload avatars where there is a blob store for them;
	// names they may change unless the organization stops them
	// (realm_name_changes_disabled).
	st["realm_avatar_changes_disabled"] = r.s.blobs == nil
	st["server_avatar_changes_disabled"] = r.s.blobs == nil
	st["server_name_changes_disabled"] = false
	st["max_avatar_file_size_mib"] = referenceImageUploadMiB

	// Messages and channels.
	st["realm_message_retention_days"] = -1
	st["realm_default_code_block_language"] = ""
	st["realm_new_stream_announcements_stream_id"] = -1
	st["realm_signup_announcements_stream_id"] = -1
	st["realm_zulip_update_announcements_stream_id"] = -1
	st["realm_moderation_request_channel_id"] = -1
	st["realm_enable_spectator_access"] = false
	st["server_web_public_streams_enabled"] = false
	st["realm_enable_guest_user_indicator"] = true
	st["realm_enable_guest_user_dm_warning"] = true
	st["realm_default_external_accounts"] = defaultExternalAccounts()

	// Previews, thumbnails, emoji.
	st["realm_inline_image_preview"] = false
	st["realm_inline_url_embed_preview"] = false
	st["server_inline_image_preview"] = false
	st["server_inline_url_embed_preview"] = false
	st["server_thumbnail_formats"] = []map[string]any{}
	// No emoji data file is served (the emoji names this server accepts
	// live in package markdown): no URL until a route serves one.
	st["server_emoji_data_url"] = ""

	// Video calls: none configured, and no provider but "None".
	st["realm_video_chat_provider"] = 0
	st["realm_available_video_chat_providers"] = map[string]any{"disabled": idName{ID: 0, Name: "None"}}
	st["realm_jitsi_server_url"] = nil
	st["server_jitsi_server_url"] = nil
	st["jitsi_server_url"] = "" // deprecated; a string in the reference's schema

	// GIPHY: disabled, the only rating this server offers.
	st["realm_giphy_rating"] = 0
	st["giphy_rating_options"] = map[string]any{"disabled": idName{ID: 0, Name: "GIPHY integration disabled"}}

	// Email digests and notifications: none are sent. Whether message
	// content could appear in notification emails keeps the reference's
	// default.
	st["realm_digest_emails_enabled"] = false
	st["settings_send_digest_emails"] = false
	st["realm_digest_weekday"] = 1 // the reference's default (Tuesday)
	st["realm_message_content_allowed_in_email_notifications"] = true

	// Push notifications and topic summaries: not offered.
	st["realm_push_notifications_enabled"] = false
	st["realm_push_notifications_enabled_end_timestamp"] = nil
	st["server_presence_ping_interval_seconds"] = presencePingIntervalSeconds
	st["server_presence_offline_threshold_seconds"] = presenceOfflineThresholdSeconds
	st["server_can_summarize_topics"] = false

	// Logos: none; the icon and logo upload limits are the reference's.
	st["realm_logo_url"] = ""
	st["realm_logo_source"] = "D"
	st["realm_night_logo_url"] = ""
	st["realm_night_logo_source"] = "D"
	st["max_logo_file_size_mib"] = referenceImageUploadMiB
	st["max_icon_file_size_mib"] = referenceImageUploadMiB

	// The organization and its plan: a self-hosted organization, not
	// limited, with no upload quota and nothing to upgrade to.
	st["realm_org_type"] = 0 // unspecified
	st["realm_plan_type"] = 1
	st["zulip_plan_is_not_limited"] = true
	st["upgrade_text_for_wide_organization_logo"] = ""
	st["realm_upload_quota_mib"] = nil
	st["realm_want_advertise_in_communities_directory"] = false
	st["realm_is_zephyr_mirror_realm"] = false

	// The server.
	st["development_environment"] = false
	st["server_needs_upgrade"] = false
	st["server_generation"] = processStarted
	st["server_min_deactivated_realm_deletion_days"] = minDeactivatedRealmDeletionDays
	st["server_max_deactivated_realm_deletion_days"] = nil
	st["server_supported_permission_settings"] = supportedPermissionSettings()
	return nil
}

// idName is an option of a server-defined choice (video call providers,
// GIPHY ratings).
type idName struct {
	Name string `json:"name"`
	ID   int    `json:"id"`
}

// defaultExternalAccounts are the external account types a custom
// profile field may name by subtype (see checkFieldData), with the
// reference's texts.
func defaultExternalAccounts() map[string]map[string]string {
	return map[string]map[string]string{
		"github":  {"text": "GitHub", "url_pattern": "https://github.com/%(username)s", "name": "GitHub username", "hint": ""},
		"twitter": {"text": "Twitter", "url_pattern": "https://twitter.com/%(username)s", "name": "Twitter username", "hint": ""},
	}
}

// wildcardMentionPolicy is the deprecated integer form of the realm's
// can_mention_many_users_group.
func (r reads) wildcardMentionPolicy(ctx context.Context, realm *storage.Realm) (int, error) {
	id := realm.CanMentionManyUsersGroupID
	if id == 0 {
		return wildcardMentionPolicyOfSystemGroup[GroupAdministrators], nil // unset: administrators
	}
	gs, err := r.st.GetGroupsByID(ctx, realm.ID, []int64{id})
	if err != nil {
		return 0, err
	}
	if len(gs) == 1 && gs[0].IsSystemGroup {
		if p, ok := wildcardMentionPolicyOfSystemGroup[gs[0].Name]; ok {
			return p, nil
		}
	}
	return wildcardMentionPolicyOfSystemGroup[GroupEveryone], nil
}

// groupPermissionSetting describes the values a group-based permission
// setting may take, in the reference's shape.
type groupPermissionSetting struct {
	RequireSystemGroup bool   `json:"require_system_group"`
	AllowInternetGroup bool   `json:"allow_internet_group"`
	AllowNobodyGroup   bool   `json:"allow_nobody_group"`
	AllowEveryoneGroup bool   `json:"allow_everyone_group"`
	DefaultGroupName   string `json:"default_group_name"`
	// DefaultForSystemGroups is the value system groups have (group
	// settings only).
	DefaultForSystemGroups *string `json:"default_for_system_groups"`
	// AllowedSystemGroups, when not empty, are the only system groups the
	// setting may hold.
	AllowedSystemGroups []string `json:"allowed_system_groups"`
}

// supportedPermissions are the group-based permission settings of
// organizations, channels and user groups.
type supportedPermissions struct {
	Realm  map[string]groupPermissionSetting `json:"realm"`
	Stream map[string]groupPermissionSetting `json:"stream"`
	Group  map[string]groupPermissionSetting `json:"group"`
}

// systemGroupSettingDefaults are the values createSystemGroups gives the
// settings of system groups.
var systemGroupSettingDefaults = map[string]string{
	"can_add_members_group": GroupNobody, "can_join_group": GroupNobody, "can_leave_group": GroupNobody,
	"can_manage_group": GroupNobody, "can_mention_group": GroupEveryone, "can_remove_members_group": GroupNobody,
}

// supportedPermissionSettings describes the settings as the descriptors
// define them (any named group or anonymous group, except the system
// groups a setting may not hold), and the fixed organization permissions
// as settings whose one possible value is their system group.
func supportedPermissionSettings() supportedPermissions {
	out := supportedPermissions{Realm: map[string]groupPermissionSetting{},
		Stream: map[string]groupPermissionSetting{}, Group: map[string]groupPermissionSetting{}}
	for _, d := range realmGroupSettings {
		out.Realm[d.name] = describeSetting(d.disallowed, d.def, nil)
	}
	for _, p := range fixedRealmPermissions {
		out.Realm[p.name] = groupPermissionSetting{RequireSystemGroup: true,
			AllowInternetGroup: p.group == GroupInternet, AllowNobodyGroup: p.group == GroupNobody,
			AllowEveryoneGroup: p.group == GroupEveryone, DefaultGroupName: p.group,
			AllowedSystemGroups: []string{p.group}}
	}
	for _, d := range channelSettings {
		def := d.def
		if def == "" {
			def = "stream_creator_or_nobody" // the reference's name, at this feature level
		}
		out.Stream[d.name] = describeSetting(d.disallowed, def, nil)
	}
	for _, d := range userGroupSettings {
		def := d.def
		if def == "" {
			def = "group_creator"
		}
		sys := systemGroupSettingDefaults[d.name]
		out.Group[d.name] = describeSetting(d.disallowed, def, &sys)
	}
	return out
}

func describeSetting(disallowed []string, def string, forSystem *string) groupPermissionSetting {
	allowed := func(g string) bool { return !slices.Contains(disallowed, g) }
	return groupPermissionSetting{AllowInternetGroup: allowed(GroupInternet), AllowNobodyGroup: allowed(GroupNobody),
		AllowEveryoneGroup: allowed(GroupEveryone), DefaultGroupName: def, DefaultForSystemGroups: forSystem,
		AllowedSystemGroups: []string{}}
}
