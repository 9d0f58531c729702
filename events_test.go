package chat_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/schemacheck"
)

// sent is one published event as a client would get it, with who gets it.
type sent struct {
	Type, Op string
	JSON     map[string]any
	To       []int64
}

// takeEvents returns what the Service published since the last call: each
// event is validated against the reference's GET /events schema and its
// audience resolved to user IDs.
func takeEvents(t *testing.T, h *chattest.Harness) []sent {
	t.Helper()
	var out []sent
	for i, ev := range h.Events.Take() {
		raw, err := json.Marshal(ev)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		m["id"] = i
		body, err := json.Marshal(map[string]any{"result": "success", "msg": "", "queue_id": "q", "events": []any{m}})
		require.NoError(t, err)
		schemacheck.Check(t, "GET", "/events", 200, body)
		to, err := h.Service.ResolveAudience(context.Background(), ev)
		require.NoError(t, err)
		op, _ := m["op"].(string)
		out = append(out, sent{Type: m["type"].(string), Op: op, JSON: m, To: to})
	}
	return out
}

// kinds lists "type/op" of each event, in order.
func kinds(evs []sent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type + "/" + e.Op
	}
	return out
}

// only returns the single event of that type and op.
func only(t *testing.T, evs []sent, typ, op string) sent {
	t.Helper()
	var found []sent
	for _, e := range evs {
		if e.Type == typ && e.Op == op {
			found = append(found, e)
		}
	}
	require.Len(t, found, 1, "%s/%s among %v", typ, op, kinds(evs))
	return found[0]
}

func ids(us ...chattest.User) []int64 {
	out := make([]int64, len(us))
	for i, u := range us {
		out[i] = u.ID
	}
	slices.Sort(out)
	return out
}

// everyone lists the active users of the harness's organization.
func activeIDs(t *testing.T, h *chattest.Harness) []int64 {
	t.Helper()
	users, err := h.Store.ListUsers(context.Background(), h.RealmID)
	require.NoError(t, err)
	var out []int64
	for _, u := range users {
		if u.IsActive && !u.IsSystemBot {
			out = append(out, u.ID)
		}
	}
	return out
}

func TestEventsUsers(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithRealm(chat.CreateRealmRequest{EmailAddressVisibility: chat.EmailVisibleAdministrators}))
	admin := h.NewUser(t, chat.RoleAdministrator)
	member := h.NewUser(t, chat.RoleMember)
	takeEvents(t, h)

	created, err := h.Service.CreateUser(ctx, h.Owner.Caller, chat.CreateUserRequest{Email: "new@example.com", Password: chattest.Password, FullName: "New Person"})
	require.NoError(t, err)
	evs := takeEvents(t, h)
	var adds []sent
	for _, e := range evs {
		if e.Type == "realm_user" {
			adds = append(adds, e)
		}
	}
	require.Len(t, adds, 2, "one with the real email, one without")
	withEmail, without := adds[0], adds[1]
	assert.Equal(t, "new@example.com", withEmail.JSON["person"].(map[string]any)["delivery_email"])
	assert.Equal(t, ids(h.Owner, admin, chattest.User{ID: created.UserID}), withEmail.To, "administrators see real emails")
	assert.Nil(t, without.JSON["person"].(map[string]any)["delivery_email"])
	assert.Equal(t, []int64{member.ID}, without.To)
	assert.Contains(t, kinds(evs), "user_group/add_members", "the new user joins role:members")

	// A role change: realm_user update for everyone, and the system groups' memberships.
	_, err = h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: member.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleModerator), FullName: ptr("Renamed Member")}})
	require.NoError(t, err)
	evs = takeEvents(t, h)
	assert.ElementsMatch(t, []string{"realm_user/update", "realm_user/update",
		"user_group/remove_members", "user_group/remove_members", "user_group/add_members"}, kinds(evs),
		"out of role:members and role:fullmembers, into role:moderators")
	for _, e := range evs {
		assert.Equal(t, activeIDs(t, h), e.To, "%s/%s reaches everyone", e.Type, e.Op)
	}

	// Deactivation reaches everyone and takes the user's bots (and theirs) with it.
	bot := h.NewBot(t, member)
	takeEvents(t, h)
	_, err = h.Service.DeactivateUser(ctx, h.Owner.Caller, chat.DeactivateUserRequest{UserID: member.ID})
	require.NoError(t, err)
	evs = takeEvents(t, h)
	assert.Equal(t, []string{"realm_user/update", "realm_user/update", "realm_bot/update"}, kinds(evs))
	assert.Equal(t, map[string]any{"user_id": float64(bot.ID), "is_active": false}, evs[2].JSON["bot"])
	assert.Equal(t, map[string]any{"user_id": float64(bot.ID), "is_active": false}, evs[1].JSON["person"])
	assert.Equal(t, ids(h.Owner, admin), evs[2].To, "the bot's owner is gone: administrators are told")
}

func TestEventsBots(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	takeEvents(t, h)
	resp, err := h.Service.CreateBot(ctx, alice.Caller, chat.CreateBotRequest{FullName: "Alice's bot", ShortName: "alice"})
	require.NoError(t, err)
	evs := takeEvents(t, h)
	add := only(t, evs, "realm_bot", "add")
	assert.Equal(t, ids(h.Owner, alice), add.To, "the owner and administrators, not bob")
	assert.NotContains(t, add.To, bob.ID)
	assert.Contains(t, only(t, evs, "realm_user", "add").To, bob.ID, "everyone learns the bot exists")

	key, err := h.Service.RegenerateBotAPIKey(ctx, alice.Caller, chat.BotRequest{BotID: resp.UserID})
	require.NoError(t, err)
	upd := only(t, takeEvents(t, h), "realm_bot", "update")
	assert.Equal(t, key.APIKey, upd.JSON["bot"].(map[string]any)["api_key"])
	assert.Equal(t, ids(h.Owner, alice), upd.To, "the key never reaches bob")

	_, err = h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: resp.UserID, FullName: ptr("Renamed bot")})
	require.NoError(t, err)
	assert.Equal(t, []string{"realm_user/update", "realm_bot/update"}, kinds(takeEvents(t, h)))

	// A new owner: the old one (no administrator) loses the bot, the new
	// one gains it, the administrators see the change, everyone the user's.
	admin := h.NewUser(t, chat.RoleAdministrator)
	takeEvents(t, h)
	_, err = h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: resp.UserID, BotOwnerID: &bob.ID})
	require.NoError(t, err)
	evs = takeEvents(t, h)
	assert.Equal(t, []string{"realm_bot/delete", "realm_bot/add", "realm_bot/update", "realm_user/update"}, kinds(evs))
	assert.Equal(t, []int64{alice.ID}, evs[0].To)
	assert.Equal(t, []int64{bob.ID}, evs[1].To)
	assert.Equal(t, ids(h.Owner, admin), evs[2].To)
	assert.Equal(t, activeIDs(t, h), evs[3].To)

	_, err = h.Service.DeactivateBot(ctx, bob.Caller, chat.BotRequest{BotID: resp.UserID})
	require.NoError(t, err)
	assert.Equal(t, []string{"realm_user/update", "realm_bot/update"}, kinds(takeEvents(t, h)))
}

func TestEventsSettingsAndRealm(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	takeEvents(t, h)
	req := chat.UpdateSettingsRequest{FullName: ptr("Alice Renamed")}
	req.DefaultLanguage = ptr("de")
	req.HighContrastMode = ptr(true)
	req.EnableSounds = ptr(false)
	_, err := h.Service.UpdateSettings(ctx, alice.Caller, req)
	require.NoError(t, err)
	evs := takeEvents(t, h)
	// Each setting's modern event, then its legacy form where it has one.
	assert.Equal(t, []string{"realm_user/update",
		"user_settings/update", "update_display_settings/",
		"user_settings/update", "update_global_notifications/",
		"user_settings/update", "update_display_settings/"}, kinds(evs))
	assert.Equal(t, activeIDs(t, h), evs[0].To)
	lang := evs[1]
	assert.Equal(t, "default_language", lang.JSON["property"])
	assert.Equal(t, "Deutsch", lang.JSON["language_name"])
	assert.Equal(t, "Deutsch", evs[2].JSON["language_name"])
	for _, e := range evs[1:] {
		assert.Equal(t, []int64{alice.ID}, e.To, "settings are the user's own")
	}
	assert.Equal(t, map[string]any{"type": "update_global_notifications", "user": alice.Email, "notification_name": "enable_sounds", "setting": false, "id": 4}, evs[4].JSON)
	assert.Equal(t, map[string]any{"type": "user_settings", "op": "update", "property": "high_contrast_mode", "value": true, "id": 5}, evs[5].JSON)

	admins := groupID(t, h, chat.GroupAdministrators)
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{Name: ptr("Renamed"),
		CanCreateBotsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins}}})
	require.NoError(t, err)
	evs = takeEvents(t, h)
	assert.Equal(t, []string{"realm/update", "realm/update_dict"}, kinds(evs))
	assert.Equal(t, map[string]any{"can_create_bots_group": float64(admins)}, evs[1].JSON["data"])
	assert.Equal(t, activeIDs(t, h), evs[1].To)
}

func TestEventsProfileFieldsAndDrafts(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	takeEvents(t, h)
	_, err := h.Service.CreateProfileField(ctx, h.Owner.Caller, chat.CreateProfileFieldRequest{Name: ptr("Phone"), FieldType: chat.FieldShortText})
	require.NoError(t, err)
	ev := only(t, takeEvents(t, h), "custom_profile_fields", "")
	assert.Len(t, ev.JSON["fields"], 1)
	assert.Equal(t, activeIDs(t, h), ev.To)

	created, err := h.Service.CreateDrafts(ctx, alice.Caller, chat.CreateDraftsRequest{Drafts: []chat.DraftInput{{Type: ptr(""), To: &[]int64{}, Topic: ptr(""), Content: ptr("hi")}}})
	require.NoError(t, err)
	add := only(t, takeEvents(t, h), "drafts", "add")
	assert.Equal(t, []int64{alice.ID}, add.To)
	_, err = h.Service.DeleteDraft(ctx, alice.Caller, chat.DeleteDraftRequest{DraftID: created.IDs[0]})
	require.NoError(t, err)
	rm := only(t, takeEvents(t, h), "drafts", "remove")
	assert.Equal(t, float64(created.IDs[0]), rm.JSON["draft_id"])
}

func TestEventsChannels(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	takeEvents(t, h)

	// A private channel: its creation reaches administrators and subscribers only.
	_, err := h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "secret"}},
		InviteOnly: ptr(true), Principals: &[]chat.Principal{{ID: alice.ID}, {ID: guest.ID}}})
	require.NoError(t, err)
	evs := takeEvents(t, h)
	create := only(t, evs, "stream", "create")
	assert.Equal(t, ids(h.Owner, admin, alice, guest), create.To, "not bob")
	var subAdds []int64
	for _, e := range evs {
		if e.Type == "subscription" && e.Op == "add" {
			subAdds = append(subAdds, e.To...)
		}
	}
	assert.ElementsMatch(t, []int64{alice.ID, guest.ID}, subAdds)
	peer := only(t, evs, "subscription", "peer_add")
	assert.Equal(t, ids(h.Owner, admin), peer.To, "the new subscribers are told by subscription/add")
	id := create.JSON["streams"].([]any)[0].(map[string]any)["stream_id"].(float64)
	ch := int64(id)

	_, err = h.Service.UpdateChannel(ctx, alice.Caller, chat.UpdateChannelRequest{StreamID: ch, Description: ptr("**Top** secret")})
	require.NoError(t, err)
	upd := only(t, takeEvents(t, h), "stream", "update")
	assert.Equal(t, "description", upd.JSON["property"])
	assert.Contains(t, upd.JSON["rendered_description"], "<strong>Top</strong>")
	assert.NotContains(t, upd.To, bob.ID)

	// A public channel: every member, and its guest subscribers.
	_, err = h.Service.Subscribe(ctx, bob.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "town square"}}})
	require.NoError(t, err)
	create = only(t, takeEvents(t, h), "stream", "create")
	assert.Equal(t, ids(h.Owner, admin, alice, bob), create.To, "not the guest")

	_, err = h.Service.UpdateSubscriptionProperties(ctx, bob.Caller, chat.UpdateSubscriptionPropertiesRequest{SubscriptionData: []chat.SubscriptionProperty{
		{StreamID: int64(only(t, []sent{create}, "stream", "create").JSON["streams"].([]any)[0].(map[string]any)["stream_id"].(float64)), Property: "pin_to_top", Value: json.RawMessage("true")}}})
	require.NoError(t, err)
	prop := only(t, takeEvents(t, h), "subscription", "update")
	assert.Equal(t, true, prop.JSON["value"])
	assert.Equal(t, []int64{bob.ID}, prop.To)
	_, err = h.Service.UpdateSubscriptionProperties(ctx, bob.Caller, chat.UpdateSubscriptionPropertiesRequest{SubscriptionData: []chat.SubscriptionProperty{
		{StreamID: int64(create.JSON["streams"].([]any)[0].(map[string]any)["stream_id"].(float64)), Property: "is_muted", Value: json.RawMessage("true")}}})
	require.NoError(t, err)
	evs = takeEvents(t, h)
	require.Len(t, evs, 2, "in_home_view, then is_muted")
	assert.Equal(t, []any{"in_home_view", false, "is_muted", true}, []any{evs[0].JSON["property"], evs[0].JSON["value"], evs[1].JSON["property"], evs[1].JSON["value"]})

	_, err = h.Service.UpdateUserTopic(ctx, alice.Caller, chat.UpdateUserTopicRequest{StreamID: ch, Topic: "plans", VisibilityPolicy: chat.TopicPolicyMuted})
	require.NoError(t, err)
	ut := only(t, takeEvents(t, h), "user_topic", "")
	assert.Equal(t, []int64{alice.ID}, ut.To)

	_, err = h.Service.Unsubscribe(ctx, guest.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"secret"}})
	require.NoError(t, err)
	evs = takeEvents(t, h)
	assert.Equal(t, []int64{guest.ID}, only(t, evs, "subscription", "remove").To)
	assert.Equal(t, ids(h.Owner, admin, alice), only(t, evs, "subscription", "peer_remove").To)

	_, err = h.Service.ArchiveChannel(ctx, alice.Caller, chat.ArchiveChannelRequest{StreamID: ch})
	require.NoError(t, err)
	del := only(t, takeEvents(t, h), "stream", "delete")
	assert.Equal(t, []any{float64(ch)}, del.JSON["stream_ids"])
	assert.Equal(t, ids(h.Owner, admin, alice), del.To)
}

func TestEventsUserGroups(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	takeEvents(t, h)
	g := createGroup(t, h, alice, "backend", bob.ID)
	add := only(t, takeEvents(t, h), "user_group", "add")
	assert.Equal(t, activeIDs(t, h), add.To)
	assert.Equal(t, []any{float64(bob.ID)}, add.JSON["group"].(map[string]any)["members"])
	// Subgroups given at creation come in an event of their own.
	_, err := h.Service.CreateUserGroup(ctx, alice.Caller, chat.CreateUserGroupRequest{Name: "platform", Subgroups: &[]int64{g}})
	require.NoError(t, err)
	evs := takeEvents(t, h)
	assert.Equal(t, []string{"user_group/add", "user_group/add_subgroups"}, kinds(evs))
	assert.Equal(t, []any{}, evs[0].JSON["group"].(map[string]any)["direct_subgroup_ids"])
	assert.Equal(t, []any{float64(g)}, evs[1].JSON["direct_subgroup_ids"])

	_, err = h.Service.UpdateUserGroup(ctx, alice.Caller, chat.UpdateUserGroupRequest{UserGroupID: g, Description: ptr("Servers")})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"description": "Servers"}, only(t, takeEvents(t, h), "user_group", "update").JSON["data"])

	sub := createGroup(t, h, alice, "db")
	takeEvents(t, h)
	_, err = h.Service.UpdateUserGroupMembers(ctx, alice.Caller, chat.UpdateUserGroupMembersRequest{UserGroupID: g,
		Add: &[]int64{alice.ID}, Delete: &[]int64{bob.ID}, AddSubgroups: &[]int64{sub}})
	require.NoError(t, err)
	assert.Equal(t, []string{"user_group/add_members", "user_group/remove_members", "user_group/add_subgroups"}, kinds(takeEvents(t, h)))

	_, err = h.Service.UpdateUserGroupSubgroups(ctx, alice.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: g, Delete: &[]int64{sub}})
	require.NoError(t, err)
	platform, err := h.Store.GetGroupByName(ctx, h.RealmID, "platform")
	require.NoError(t, err)
	_, err = h.Service.UpdateUserGroupSubgroups(ctx, alice.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: platform.ID, Delete: &[]int64{g}})
	require.NoError(t, err)
	takeEvents(t, h)
	_, err = h.Service.DeactivateUserGroup(ctx, alice.Caller, chat.DeactivateUserGroupRequest{UserGroupID: g})
	require.NoError(t, err)
	evs = takeEvents(t, h)
	assert.Equal(t, []string{"user_group/update", "user_group/remove"}, kinds(evs))
	assert.Equal(t, map[string]any{"deactivated": true}, evs[0].JSON["data"])
}

// A change that fails after it queued events publishes none of them, and
// leaves nothing behind.
func TestEventsRolledBackChangePublishesNothing(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	_, err := h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "closed"}}, InviteOnly: ptr(true)})
	require.NoError(t, err)
	takeEvents(t, h)

	// "fresh" is created (and its events queued) before "closed" is refused.
	_, err = h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "fresh"}, {Name: "closed"}}})
	requireError(t, err, chat.KindForbidden, "BAD_REQUEST", "Unable to access channel (closed).")
	assert.Empty(t, h.Events.Take())
	_, err = h.Service.GetChannelID(ctx, alice.Caller, chat.GetChannelIDRequest{Stream: "fresh"})
	requireError(t, err, chat.KindNotFound, "BAD_REQUEST", "Invalid channel name 'fresh'")
}

// A private channel's events reach the members of its metadata groups; a
// web-public channel's reach everyone, guests included; the privacy
// settings travel in one invite_only event.
func TestEventsChannelAudiences(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, carol := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	ch := newChannelBy(t, h, alice, "plans", true)
	_, err := h.Service.UpdateChannel(ctx, alice.Caller, chat.UpdateChannelRequest{StreamID: ch,
		CanAdministerChannelGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{DirectMembers: []int64{alice.ID, carol.ID}, DirectSubgroups: []int64{}}}})
	require.NoError(t, err)
	takeEvents(t, h)
	_, err = h.Service.UpdateChannel(ctx, carol.Caller, chat.UpdateChannelRequest{StreamID: ch, NewName: ptr("roadmap")})
	require.NoError(t, err, "carol administers it without a subscription")
	upd := only(t, takeEvents(t, h), "stream", "update")
	assert.Equal(t, "plans", upd.JSON["name"], "the old name, as the reference")
	assert.Equal(t, ids(h.Owner, alice, carol), upd.To)

	_, err = h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: ch, IsPrivate: ptr(false), IsWebPublic: ptr(true)})
	require.NoError(t, err)
	priv := only(t, takeEvents(t, h), "stream", "update")
	assert.Equal(t, "invite_only", priv.JSON["property"])
	assert.Equal(t, false, priv.JSON["value"])
	assert.Equal(t, true, priv.JSON["is_web_public"])
	assert.Equal(t, true, priv.JSON["history_public_to_subscribers"])
	assert.Contains(t, priv.To, guest.ID, "a web-public channel is seen by everyone")
}
