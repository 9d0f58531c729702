package chat_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// The reference's GET /events schema has 77 event variants. These are the
// ones this server's features produce; each is produced below, received
// through real queues and validated against the schema (client.get). The
// others belong to features this server does not have yet or at all:
// submessages, default
// stream groups, realm domains and exports, onboarding, saved snippets,
// Zoom, organization deactivation and user-settings defaults, restart and
// client reload, attachment removal (files are never deleted), and
// realm_user remove (every user sees every other user here).
var producedEventVariants = []string{
	"alert_words/",
	"attachment/add", "attachment/update",
	"custom_profile_fields/",
	"delete_message/",
	"drafts/add", "drafts/remove", "drafts/update",
	"heartbeat/",
	"invites_changed/",
	"message/",
	"muted_topics/",
	"muted_users/",
	"presence/",
	"reaction/add", "reaction/remove",
	"realm/update", "realm/update_dict",
	"realm_bot/add", "realm_bot/delete", "realm_bot/update",
	"realm_emoji/update",
	"realm_linkifiers/",
	"realm_playgrounds/",
	"realm_user/add", "realm_user/update",
	"scheduled_messages/add", "scheduled_messages/remove", "scheduled_messages/update",
	"stream/create", "stream/delete", "stream/update",
	"subscription/add", "subscription/peer_add", "subscription/peer_remove", "subscription/remove", "subscription/update",
	"typing/start", "typing/stop", "typing_edit_message/start", "typing_edit_message/stop",
	"update_display_settings/", "update_global_notifications/",
	"update_message/", "update_message_flags/add", "update_message_flags/remove",
	"user_group/add", "user_group/add_members", "user_group/add_subgroups", "user_group/remove",
	"user_group/remove_members", "user_group/remove_subgroups", "user_group/update",
	"user_settings/update", "user_status/", "user_topic/",
}

func TestEventVariantsProduced(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithQueueLimits(chat.QueueLimits{
		HeartbeatMin: 50 * time.Millisecond, HeartbeatMax: 60 * time.Millisecond})))
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	caps := &chat.ClientCapabilities{NotificationSettingsNull: ptr(false), StreamTypingNotifications: true}
	// Queues for the owner, and for alice and bob, who act.
	queues := []*client{
		register(t, h, h.Owner, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: caps}}),
		register(t, h, alice, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: caps}}),
		register(t, h, bob, chat.RegisterRequest{QueueParams: chat.QueueParams{ClientCapabilities: caps}}),
	}
	seen := map[string]bool{}
	collect := func() {
		for _, c := range queues {
			for _, e := range c.settle() {
				seen[e.typ()+"/"+e.op()] = true
			}
		}
	}
	ok := func(_ any, err error) {
		t.Helper()
		require.NoError(t, err)
	}

	// Channels, subscriptions, messages and their actions.
	ch := newChannelBy(t, h, alice, "variants", false)
	subscribe(t, h, alice, "variants", bob.ID)
	ok(h.Service.UpdateSubscriptionProperties(ctx, bob.Caller, chat.UpdateSubscriptionPropertiesRequest{
		SubscriptionData: []chat.SubscriptionProperty{{StreamID: ch, Property: "color", Value: []byte(`"#abcdef"`)}}}))
	ok(h.Service.UpdateChannel(ctx, alice.Caller, chat.UpdateChannelRequest{StreamID: ch, Description: ptr("all of them")}))
	first := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(ch), Topic: ptr("t"), Content: "first"})
	m := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(ch), Topic: ptr("t"), Content: "hello"})
	ok(h.Service.AddReaction(ctx, bob.Caller, chat.AddReactionRequest{MessageID: m, EmojiName: "octopus"}))
	ok(h.Service.RemoveReaction(ctx, bob.Caller, chat.RemoveReactionRequest{MessageID: m, EmojiName: ptr("octopus")}))
	ok(h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: m, Content: ptr("hello again")}))
	ok(h.Service.UpdateMessageFlags(ctx, bob.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{m}, Op: "add", Flag: "read"}))
	ok(h.Service.UpdateMessageFlags(ctx, bob.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{m}, Op: "remove", Flag: "read"}))
	ok(h.Service.UpdateUserTopic(ctx, bob.Caller, chat.UpdateUserTopicRequest{StreamID: ch, Topic: "t", VisibilityPolicy: 1}))
	ok(h.Service.SetTyping(ctx, alice.Caller, chat.TypingRequest{Op: "start", To: &[]int64{bob.ID}}))
	ok(h.Service.SetTyping(ctx, alice.Caller, chat.TypingRequest{Type: ptr("stream"), Op: "stop", StreamID: &ch, Topic: ptr("t")}))
	ok(h.Service.SetEditTyping(ctx, alice.Caller, chat.TypingEditRequest{MessageID: m, Op: "start"}))
	ok(h.Service.SetEditTyping(ctx, alice.Caller, chat.TypingEditRequest{MessageID: m, Op: "stop"}))
	ok(h.Service.DeleteMessage(ctx, alice.Caller, chat.DeleteMessageRequest{MessageID: m}))
	_ = first
	_, err := h.Service.Unsubscribe(ctx, bob.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"variants"}})
	require.NoError(t, err)
	ok(h.Service.ArchiveChannel(ctx, h.Owner.Caller, chat.ArchiveChannelRequest{StreamID: ch}))
	url := upload(t, h, alice, "a.txt", "text/plain", "x")
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: ptr(fmt.Sprintf("[%d]", bob.ID)), Content: "[a](" + url + ")"})
	collect()

	// Users, settings, bots, the organization, profile fields, emoji.
	carol := h.NewUser(t, chat.RoleMember)
	ok(h.Service.UpdateSettings(ctx, alice.Caller, chat.UpdateSettingsRequest{SettingsPatch: chat.SettingsPatch{
		TwentyFourHourTime: ptr(true), EnableSounds: ptr(false)}}))
	ok(h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: carol.ID, UserUpdate: chat.UserUpdate{FullName: ptr("Carol C")}}))
	bot, err := h.Service.CreateBot(ctx, alice.Caller, chat.CreateBotRequest{FullName: "Helper", ShortName: "helper"})
	require.NoError(t, err)
	ok(h.Service.UpdateBot(ctx, alice.Caller, chat.UpdateBotRequest{BotID: bot.UserID, FullName: ptr("Helper 2")}))
	ok(h.Service.UpdateBot(ctx, h.Owner.Caller, chat.UpdateBotRequest{BotID: bot.UserID, BotOwnerID: &bob.ID}))
	ok(h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{Name: ptr("Variants Inc")}))
	ok(h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CanCreateBotsGroup: &chat.GroupSettingUpdate{
		New: &chat.GroupSettingValue{DirectMembers: []int64{alice.ID}, DirectSubgroups: []int64{}}}}))
	ok(h.Service.CreateProfileField(ctx, h.Owner.Caller, chat.CreateProfileFieldRequest{Name: ptr("Team"), FieldType: chat.FieldShortText}))
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 32)
	ok(h.Service.UploadCustomEmoji(ctx, h.Owner.Caller, chat.UploadCustomEmojiRequest{EmojiName: "party",
		File: chat.FileUpload{FileName: "party.png", ContentType: "image/png", Size: int64(len(png)), Content: strings.NewReader(png)}}))
	ok(h.Service.MuteUser(ctx, bob.Caller, chat.MuteUserRequest{MutedUserID: alice.ID}))
	ok(h.Service.UnmuteUser(ctx, bob.Caller, chat.MuteUserRequest{MutedUserID: alice.ID}))
	ok(h.Service.UpdatePresence(ctx, alice.Caller, chat.UpdatePresenceRequest{Status: "active", PingOnly: ptr(true)}))
	ok(h.Service.AddPlayground(ctx, h.Owner.Caller, chat.AddPlaygroundRequest{Name: "Go", PygmentsLanguage: "Go", URLTemplate: "https://go.dev/play/{?code}"}))
	ok(h.Service.AddLinkifier(ctx, h.Owner.Caller, chat.AddLinkifierRequest{Pattern: `#(?P<id>\d+)`, URLTemplate: "https://example.com/{id}"}))
	ok(h.Service.CreateInviteLink(ctx, h.Owner.Caller, chat.CreateInviteLinkRequest{}))
	collect()

	// Scheduled messages: scheduled, edited, and sent (or deleted).
	sm, err := h.Service.CreateScheduledMessage(ctx, alice.Caller, chat.CreateScheduledMessageRequest{Type: "direct",
		To: chat.ScheduleToUsers(bob.ID), Content: "later", ScheduledDeliveryTimestamp: h.Clock.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	ok(h.Service.UpdateScheduledMessage(ctx, alice.Caller, chat.UpdateScheduledMessageRequest{ScheduledMessageID: sm.ScheduledMessageID, Content: ptr("later, edited")}))
	ok(h.Service.DeleteScheduledMessage(ctx, alice.Caller, chat.DeleteScheduledMessageRequest{ScheduledMessageID: sm.ScheduledMessageID}))

	// Alert words and statuses.
	ok(h.Service.AddAlertWords(ctx, alice.Caller, chat.AlertWordsRequest{AlertWords: []string{"deploy"}}))
	ok(h.Service.UpdateStatus(ctx, alice.Caller, chat.UpdateStatusRequest{StatusText: ptr("busy")}))

	// Groups and drafts.
	g, err := h.Service.CreateUserGroup(ctx, h.Owner.Caller, chat.CreateUserGroupRequest{Name: "crew", Description: "d", Members: []int64{alice.ID}})
	require.NoError(t, err)
	sub, err := h.Service.CreateUserGroup(ctx, h.Owner.Caller, chat.CreateUserGroupRequest{Name: "subcrew", Description: "d", Members: []int64{bob.ID}})
	require.NoError(t, err)
	ok(h.Service.UpdateUserGroup(ctx, h.Owner.Caller, chat.UpdateUserGroupRequest{UserGroupID: g.GroupID, Description: ptr("new")}))
	ok(h.Service.UpdateUserGroupMembers(ctx, h.Owner.Caller, chat.UpdateUserGroupMembersRequest{UserGroupID: g.GroupID, Add: &[]int64{bob.ID}}))
	ok(h.Service.UpdateUserGroupMembers(ctx, h.Owner.Caller, chat.UpdateUserGroupMembersRequest{UserGroupID: g.GroupID, Delete: &[]int64{bob.ID}}))
	ok(h.Service.UpdateUserGroupSubgroups(ctx, h.Owner.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: g.GroupID, Add: &[]int64{sub.GroupID}}))
	ok(h.Service.UpdateUserGroupSubgroups(ctx, h.Owner.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: g.GroupID, Delete: &[]int64{sub.GroupID}}))
	ok(h.Service.DeactivateUserGroup(ctx, h.Owner.Caller, chat.DeactivateUserGroupRequest{UserGroupID: sub.GroupID}))
	d := createDraft(t, h, alice, "draft")
	ok(h.Service.EditDraft(ctx, alice.Caller, chat.EditDraftRequest{DraftID: d, Draft: chat.DraftInput{Type: ptr(""), To: &[]int64{}, Topic: ptr(""), Content: ptr("edited")}}))
	ok(h.Service.DeleteDraft(ctx, alice.Caller, chat.DeleteDraftRequest{DraftID: d}))
	collect()

	// A poll with nothing to say ends with a heartbeat.
	for _, e := range queues[0].wait() {
		seen[e.typ()+"/"+e.op()] = true
	}

	var missing []string
	for _, v := range producedEventVariants {
		if !seen[v] {
			missing = append(missing, v)
		}
	}
	assert.Empty(t, missing, "variants not produced")
	var extra []string
	for v := range seen {
		if !slices.Contains(producedEventVariants, v) {
			extra = append(extra, v)
		}
	}
	sort.Strings(extra)
	assert.Empty(t, extra, "variants produced but not listed")
	t.Logf("%d of the reference's 77 event variants produced and validated", len(producedEventVariants))
}
