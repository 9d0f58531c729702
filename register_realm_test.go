package chat_test

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/oasdiff/yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/schemacheck"
)

// registerRealmState registers with fetch_event_types ["realm"], checks the
// answer against the reference's schema and returns it as JSON values.
func registerRealmState(t *testing.T, h *chattest.Harness, as chattest.User) map[string]any {
	t.Helper()
	resp, err := h.Service.Register(context.Background(), as.Caller, chat.RegisterRequest{FetchEventTypes: &[]string{"realm"}})
	require.NoError(t, err)
	checkSchema(t, "POST", "/register", resp)
	raw, err := json.Marshal(resp)
	require.NoError(t, err)
	var state map[string]any
	require.NoError(t, json.Unmarshal(raw, &state))
	return state
}

var (
	// presentIfRealm is how the reference's descriptions tie a register
	// key to the "realm" fetch type; presentIf how they tie one to any.
	presentIfRealm = regexp.MustCompile("Present if `realm`\\s+is\\s+present\\s+in\\s+`fetch_event_types`")
	presentIf      = regexp.MustCompile("Present if")
)

// realmRegisterKeys reads, from the reference's yaml (with our renaming),
// the properties of POST /register's success body that belong to the
// "realm" fetch type: tied, those whose description says they are present
// when "realm" is fetched; untied, the realm_* and server_* keys whose
// description names no fetch type at all (the organization's group
// settings, realm_date_created, the presence and typing parameters, ...),
// which the reference also sends for "realm" and only for it.
func realmRegisterKeys(t *testing.T) (tied, untied []string) {
	t.Helper()
	var doc map[string]any
	_, err := yaml.Unmarshal(schemacheck.RenamedYAML(), &doc, yaml.DecodeOpts{DisableTimestamps: true})
	require.NoError(t, err)
	schemas := dig(t, doc, "components", "schemas").(map[string]any)
	props := map[string]map[string]any{}
	var walk func(s map[string]any)
	walk = func(s map[string]any) {
		if ref, ok := s["$ref"].(string); ok {
			walk(schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any))
			return
		}
		for _, b := range asList(s["allOf"]) {
			walk(b.(map[string]any))
		}
		for name, p := range asMap(s["properties"]) {
			props[name] = p.(map[string]any)
		}
	}
	walk(dig(t, doc, "paths", "/register", "post", "responses", "200", "content", "application/json", "schema").(map[string]any))
	require.NotEmpty(t, props)
	for name, p := range props {
		// A property's description may sit on it or on its allOf branches.
		desc, _ := p["description"].(string)
		for _, b := range asList(p["allOf"]) {
			d, _ := b.(map[string]any)["description"].(string)
			desc += "\n" + d
		}
		switch {
		case presentIfRealm.MatchString(desc):
			tied = append(tied, name)
		case !presentIf.MatchString(desc) && (strings.HasPrefix(name, "realm_") || strings.HasPrefix(name, "server_")):
			untied = append(untied, name)
		}
	}
	sort.Strings(tied)
	sort.Strings(untied)
	return tied, untied
}

func dig(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]any)
		require.True(t, ok, "reference yaml: %q is not inside an object", p)
		v, ok = m[p]
		require.True(t, ok, "reference yaml: no %q", p)
	}
	return v
}

func asList(v any) []any         { l, _ := v.([]any); return l }
func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func settingGroupID(v any) int64 { f, _ := v.(float64); return int64(f) }
func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestRegisterRealmStateHasEveryReferenceKey: every key the reference's
// register response declares for "realm" is there, and the state
// validates against the reference's schema.
func TestRegisterRealmStateHasEveryReferenceKey(t *testing.T) {
	tied, untied := realmRegisterKeys(t)
	// The yaml reading works: it finds keys of both kinds.
	assert.Contains(t, tied, "realm_authentication_methods")
	assert.Contains(t, tied, "server_supported_permission_settings")
	assert.Contains(t, tied, "zulip_plan_is_not_limited")
	assert.Contains(t, untied, "realm_can_create_groups")
	assert.Contains(t, untied, "server_presence_ping_interval_seconds")
	assert.NotContains(t, tied, "realm_default_streams") // fetch type default_streams
	assert.NotContains(t, tied, "realm_user_groups")     // fetch type realm_user_groups
	assert.NotContains(t, untied, "realm_user_settings_defaults")

	h := chattest.New(t)
	for _, as := range []chattest.User{h.Owner, h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleGuest)} {
		state := registerRealmState(t, h, as)
		var missing []string
		for _, k := range append(tied, untied...) {
			if _, ok := state[k]; !ok {
				missing = append(missing, k)
			}
		}
		assert.Empty(t, missing, "realm state keys missing for role %d", as.Role)
	}
}

// TestRegisterRealmStateValues: values follow the organization's stored
// settings, the server's limits and the rules the code enforces.
func TestRegisterRealmStateValues(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithLimits(chat.Limits{MinPasswordLength: 12, MaxPasswordLength: 64})))
	state := registerRealmState(t, h, h.Owner)
	assert.EqualValues(t, h.Clock.Now().Unix(), state["realm_date_created"])
	assert.EqualValues(t, 12, state["password_min_length"])
	assert.EqualValues(t, 64, state["password_max_length"])
	assert.EqualValues(t, 60, state["server_presence_ping_interval_seconds"])
	assert.EqualValues(t, 200, state["server_presence_offline_threshold_seconds"])
	assert.Equal(t, true, state["realm_allow_edit_history"])
	assert.EqualValues(t, 5, state["realm_wildcard_mention_policy"]) // administrators, the default
	assert.Equal(t, strings.TrimPrefix(h.RealmURL, "http://"), state["realm_bot_domain"])
	assert.Equal(t, map[string]any{"Email": map[string]any{"enabled": true, "available": true}}, state["realm_authentication_methods"])

	// Permissions fixed by the code, as the system groups they amount to.
	for key, group := range map[string]string{
		"realm_can_access_all_users_group":          chat.GroupEveryone,
		"realm_can_add_subscribers_group":           chat.GroupMembers,
		"realm_can_create_groups":                   chat.GroupMembers,
		"realm_can_create_public_channel_group":     chat.GroupMembers,
		"realm_can_create_private_channel_group":    chat.GroupMembers,
		"realm_can_create_web_public_channel_group": chat.GroupAdministrators,
		"realm_can_manage_all_groups":               chat.GroupAdministrators,
		"realm_can_invite_users_group":              chat.GroupMembers,        // a setting; its default
		"realm_create_multiuse_invite_group":        chat.GroupAdministrators, // a setting; its default
		"realm_can_manage_billing_group":            chat.GroupNobody,
		"realm_can_summarize_topics_group":          chat.GroupNobody,
	} {
		assert.Equal(t, groupID(t, h, group), settingGroupID(state[key]), key)
	}
	assert.EqualValues(t, 1, state["realm_create_public_stream_policy"])
	assert.EqualValues(t, 1, state["realm_create_private_stream_policy"])
	assert.EqualValues(t, 2, state["realm_create_web_public_stream_policy"])

	// The supported permission settings describe this server's settings:
	// the realm's configurable ones with their defaults, the fixed ones
	// with their one value, channels' and groups'.
	perms := state["server_supported_permission_settings"].(map[string]any)
	realmPerms := perms["realm"].(map[string]any)
	assert.Equal(t, map[string]any{"require_system_group": false, "allow_internet_group": false, "allow_nobody_group": true,
		"allow_everyone_group": false, "default_group_name": chat.GroupMembers, "default_for_system_groups": nil,
		"allowed_system_groups": []any{}}, realmPerms["can_create_bots_group"])
	assert.Equal(t, []any{chat.GroupMembers}, realmPerms["can_create_groups"].(map[string]any)["allowed_system_groups"])
	assert.Equal(t, true, realmPerms["can_create_groups"].(map[string]any)["require_system_group"])
	assert.Equal(t, []string{"can_add_subscribers_group", "can_administer_channel_group", "can_remove_subscribers_group",
		"can_send_message_group", "can_subscribe_group"}, keysOf(perms["stream"].(map[string]any)))
	manage := perms["group"].(map[string]any)["can_manage_group"].(map[string]any)
	assert.Equal(t, "group_creator", manage["default_group_name"])
	assert.Equal(t, chat.GroupNobody, manage["default_for_system_groups"])
	for _, k := range []string{"realm_can_create_bots_group", "realm_can_mention_many_users_group", "realm_can_manage_all_groups"} {
		assert.Contains(t, realmPerms, strings.TrimPrefix(k, "realm_"))
	}

	// Stored settings show through.
	members := groupID(t, h, chat.GroupMembers)
	_, err := h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
		Name:                               ptr("Renamed org"),
		CanMentionManyUsersGroup:           &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &members}},
		MessageEditHistoryVisibilityPolicy: ptr("none"),
	})
	require.NoError(t, err)
	state = registerRealmState(t, h, h.Owner)
	assert.Equal(t, "Renamed org", state["realm_name"])
	assert.Equal(t, members, settingGroupID(state["realm_can_mention_many_users_group"]))
	assert.EqualValues(t, 2, state["realm_wildcard_mention_policy"]) // members
	assert.Equal(t, false, state["realm_allow_edit_history"])

	// A user-defined group is reported as the broadest policy, as the
	// reference does.
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
		CanMentionManyUsersGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{DirectMembers: []int64{h.Owner.ID}, DirectSubgroups: []int64{}}},
	})
	require.NoError(t, err)
	state = registerRealmState(t, h, h.Owner)
	assert.EqualValues(t, 1, state["realm_wildcard_mention_policy"])
}

// TestRegisterRealmStateFixedPermissionsAreEnforced: the groups reported
// for permissions that are not settings are the ones the code applies.
func TestRegisterRealmStateFixedPermissionsAreEnforced(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	member, guest := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleGuest)
	state := registerRealmState(t, h, member)
	members, admins := groupID(t, h, chat.GroupMembers), groupID(t, h, chat.GroupAdministrators)
	require.Equal(t, members, settingGroupID(state["realm_can_create_groups"]))
	require.Equal(t, members, settingGroupID(state["realm_can_create_public_channel_group"]))
	require.Equal(t, members, settingGroupID(state["realm_can_create_private_channel_group"]))
	require.Equal(t, admins, settingGroupID(state["realm_can_create_web_public_channel_group"]))

	// Members may create groups and public and private channels; guests
	// may not.
	_, err := h.Service.CreateUserGroup(ctx, member.Caller, chat.CreateUserGroupRequest{Name: "by member"})
	require.NoError(t, err)
	_, err = h.Service.CreateUserGroup(ctx, guest.Caller, chat.CreateUserGroupRequest{Name: "by guest"})
	require.Error(t, err)
	for _, private := range []bool{false, true} {
		_, err = h.Service.Subscribe(ctx, member.Caller, chat.SubscribeRequest{
			Subscriptions: []chat.ChannelSpec{{Name: "member channel " + map[bool]string{false: "public", true: "private"}[private]}},
			InviteOnly:    ptr(private)})
		require.NoError(t, err)
		_, err = h.Service.Subscribe(ctx, guest.Caller, chat.SubscribeRequest{
			Subscriptions: []chat.ChannelSpec{{Name: "guest channel"}}, InviteOnly: ptr(private)})
		require.Error(t, err)
	}
	// Web-public channels take an administrator.
	_, err = h.Service.Subscribe(ctx, member.Caller, chat.SubscribeRequest{
		Subscriptions: []chat.ChannelSpec{{Name: "web public by member"}}, IsWebPublic: ptr(true)})
	require.Error(t, err)
	_, err = h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{
		Subscriptions: []chat.ChannelSpec{{Name: "web public by owner"}}, IsWebPublic: ptr(true)})
	require.NoError(t, err)
}
