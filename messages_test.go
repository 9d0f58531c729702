package chat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func send(t *testing.T, h *chattest.Harness, from chattest.User, req chat.SendMessageRequest) int64 {
	t.Helper()
	resp, err := h.Service.SendMessage(context.Background(), from.Caller, req)
	require.NoError(t, err)
	checkSchema(t, "POST", "/messages", resp)
	require.NotZero(t, resp.ID)
	return resp.ID
}

func getMessage(t *testing.T, h *chattest.Harness, as chattest.User, id int64) chat.FetchedMessage {
	t.Helper()
	resp, err := h.Service.GetMessage(context.Background(), as.Caller, chat.GetMessageRequest{MessageID: id})
	require.NoError(t, err)
	checkSchema(t, "GET", "/messages/{message_id}", resp)
	return resp.Message
}

func TestSendChannelMessage(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "Design Team", false)

	var last int64
	for _, to := range []string{"Design Team", "design team", `"Design Team"`, `["Design Team"]`, fmt.Sprint(id), fmt.Sprintf("[%d]", id)} {
		msg := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: &to, Topic: ptr("lunch"), Content: "Hello **team**  \n\n"})
		assert.Greater(t, msg, last, "IDs increase in send order (to=%s)", to)
		last = msg
		m := getMessage(t, h, alice, msg)
		assert.Equal(t, "stream", m.Type)
		assert.Equal(t, &id, m.StreamID)
		assert.Equal(t, "Design Team", m.DisplayRecipient)
		assert.Equal(t, "lunch", m.Subject)
		assert.Equal(t, "<p>Hello <strong>team</strong></p>", m.Content, "right-stripped and rendered")
		assert.Equal(t, alice.ID, m.SenderID)
		assert.Equal(t, "Unspecified", m.Client)
		assert.Empty(t, m.Flags, "API clients do not mark their messages read by default")
	}

	// The legacy names: type "stream", subject.
	msg := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Subject: ptr("  general chat "), Content: "x",
		UserAgent: "ZulipMobile/27.1 (Android 14)"})
	m := getMessage(t, h, alice, msg)
	assert.Equal(t, "general chat", m.Subject, "the empty topic, shown by its display name")
	assert.Equal(t, "ZulipMobile", m.Client)
	assert.Equal(t, []string{"read"}, m.Flags, "interactive clients read their own messages")
	resp, err := h.Service.GetMessage(ctx, alice.Caller, chat.GetMessageRequest{MessageID: msg, AllowEmptyTopicName: ptr(true), ApplyMarkdown: ptr(false)})
	require.NoError(t, err)
	assert.Equal(t, "", resp.Message.Subject)
	assert.Equal(t, "x", resp.Message.Content)
	assert.Equal(t, "text/x-markdown", resp.Message.ContentType)
	assert.Equal(t, "x", resp.RawContent)

	msg = send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(id), Topic: ptr("(no topic)"), Content: "y", ReadBySender: ptr(true), Client: ptr("my-bot")})
	m = getMessage(t, h, alice, msg)
	assert.Equal(t, "general chat", m.Subject)
	assert.Equal(t, []string{"read"}, m.Flags)
	assert.Equal(t, "my-bot", m.Client)

	// Truncation as the reference does it, counted in characters.
	long := strings.Repeat("é", 10_050)
	msg = send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(id), Topic: ptr(strings.Repeat("ü", 70)), Content: long})
	got, err := h.Store.GetMessage(ctx, h.RealmID, msg)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("é", 10_000-len([]rune("\n[message truncated]")))+"\n[message truncated]", got.Content)
	assert.Equal(t, strings.Repeat("ü", 57)+"...", got.Topic)
}

func TestSendChannelMessageErrors(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "general", false)
	to := func(s string) *string { return &s }
	for _, c := range []struct {
		name string
		req  chat.SendMessageRequest
		code string
		msg  string
		// fields are the error's extra wire members.
		fields map[string]any
		kind   chat.Kind
	}{
		{"bad type", chat.SendMessageRequest{Type: "stream_message", To: to("general"), Topic: ptr("t"), Content: "x"}, chat.CodeBadRequest, "Invalid type", nil, 0},
		{"topic and subject", chat.SendMessageRequest{Type: "channel", To: to("general"), Topic: ptr("t"), Subject: ptr("t"), Content: "x"},
			chat.CodeRequestConfusingVar, "Can't decide between 'topic' and 'subject' arguments", map[string]any{"var_name1": "topic", "var_name2": "subject"}, 0},
		{"no channel", chat.SendMessageRequest{Type: "channel", Topic: ptr("t"), Content: "x"}, chat.CodeBadRequest, "Missing channel", nil, 0},
		{"no topic", chat.SendMessageRequest{Type: "channel", To: to("general"), Content: "x"}, chat.CodeBadRequest, "Missing topic", nil, 0},
		{"two channels", chat.SendMessageRequest{Type: "channel", To: to(`["a","b"]`), Topic: ptr("t"), Content: "x"}, chat.CodeBadRequest, "Expected exactly one channel", nil, 0},
		{"object", chat.SendMessageRequest{Type: "channel", To: to(`{"a":1}`), Topic: ptr("t"), Content: "x"}, chat.CodeBadRequest, "Invalid data type for channel", nil, 0},
		{"empty content", chat.SendMessageRequest{Type: "channel", To: to("general"), Topic: ptr("t"), Content: " \n\t "}, chat.CodeBadRequest, "Message must not be empty", nil, 0},
		{"NUL", chat.SendMessageRequest{Type: "channel", To: to("general"), Topic: ptr("t"), Content: "a\x00b"}, chat.CodeBadRequest, "Message must not contain null bytes", nil, 0},
		{"bad topic", chat.SendMessageRequest{Type: "channel", To: to("general"), Topic: ptr("a\x07b"), Content: "x"}, chat.CodeBadRequest, "Invalid character in topic, at position 2!", nil, 0},
		{"empty name", chat.SendMessageRequest{Type: "channel", To: to(" "), Topic: ptr("t"), Content: "x"}, chat.CodeBadRequest, "Channel name can't be empty.", nil, 0},
		{"empty JSON name", chat.SendMessageRequest{Type: "channel", To: to(`[""]`), Topic: ptr("t"), Content: "x"}, chat.CodeBadRequest, "Channel name can't be empty.", nil, 0},
		{"channel 0", chat.SendMessageRequest{Type: "channel", To: to("0"), Topic: ptr("t"), Content: "x"},
			chat.CodeStreamDoesNotExist, "Channel with ID '0' does not exist", map[string]any{"stream_id": int64(0)}, chat.KindNotFound},
		{"missing name", chat.SendMessageRequest{Type: "channel", To: to("nope"), Topic: ptr("t"), Content: "x"},
			chat.CodeStreamDoesNotExist, "Channel 'nope' does not exist", map[string]any{"stream": "nope"}, chat.KindNotFound},
		{"missing ID", chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(id + 100), Topic: ptr("t"), Content: "x"},
			chat.CodeStreamDoesNotExist, fmt.Sprintf("Channel with ID '%d' does not exist", id+100), map[string]any{"stream_id": id + 100}, chat.KindNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.Service.SendMessage(ctx, alice.Caller, c.req)
			e := requireError(t, err, orInvalid(c.kind), c.code, c.msg)
			for k, v := range c.fields {
				assert.Equal(t, v, e.Fields[k], k)
			}
		})
	}
	max, err := h.Store.MaxMessageID(ctx)
	require.NoError(t, err)
	assert.Zero(t, max, "nothing was stored")
}

// Who may post where: the reference's access_stream_for_send_message.
func TestSendChannelMessagePermissions(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	admin := h.NewUser(t, chat.RoleAdministrator)
	public := newChannelBy(t, h, alice, "public", false)
	private := newChannelBy(t, h, alice, "private", true)
	archived := newChannelBy(t, h, alice, "archived", false)
	_, err := h.Service.ArchiveChannel(ctx, h.Owner.Caller, chat.ArchiveChannelRequest{StreamID: archived})
	require.NoError(t, err)
	announce := newChannelBy(t, h, alice, "announce", false)
	admins := groupID(t, h, chat.GroupAdministrators)
	_, err = h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: announce,
		CanSendMessageGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins}}})
	require.NoError(t, err)
	subscribe(t, h, alice, "private", guest.ID)
	adminBot := h.NewBot(t, admin)
	bobBot := h.NewBot(t, bob)

	notAuthorized := func(name string) string { return fmt.Sprintf("Not authorized to send to channel '%s'", name) }
	for _, c := range []struct {
		who     chattest.User
		channel int64
		msg     string // "" when allowed
	}{
		{bob, public, ""},
		{guest, public, notAuthorized("public")},
		{bob, private, notAuthorized("private")},
		{guest, private, ""},
		{admin, private, notAuthorized("private")},
		{alice, archived, notAuthorized("archived")},
		{alice, announce, "You do not have permission to post in this channel."},
		{admin, announce, ""},
		{adminBot, announce, "" /* a bot posts where its owner may */},
		{bobBot, announce, "You do not have permission to post in this channel."},
		{bobBot, public, ""},
	} {
		_, err := h.Service.SendMessage(ctx, c.who.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(c.channel), Topic: ptr("t"), Content: "x"})
		if c.msg == "" {
			assert.NoError(t, err, "user %d to %d", c.who.ID, c.channel)
		} else {
			requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, c.msg)
		}
	}
}

func TestSendDirectMessage(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)

	one := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "hi bob"})
	m := getMessage(t, h, bob, one)
	assert.Equal(t, "private", m.Type)
	assert.Equal(t, "", m.Subject)
	assert.Nil(t, m.StreamID)
	assert.Equal(t, []chat.DisplayUser{
		{ID: alice.ID, Email: alice.Email, FullName: m.DisplayRecipient.([]chat.DisplayUser)[0].FullName},
		{ID: bob.ID, Email: bob.Email, FullName: m.DisplayRecipient.([]chat.DisplayUser)[1].FullName},
	}, m.DisplayRecipient)
	assert.Empty(t, m.Flags, "unread for bob")
	_, err := h.Service.GetMessage(ctx, carol.Caller, chat.GetMessageRequest{MessageID: one})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")

	// The same conversation whatever the form of "to".
	for _, to := range []string{fmt.Sprintf(`["%s"]`, strings.ToUpper(bob.Email)), bob.Email, fmt.Sprintf(" %s , ,%s", bob.Email, bob.Email)} {
		again := send(t, h, alice, chat.SendMessageRequest{Type: "private", To: &to, Content: "again"})
		assert.Equal(t, m.RecipientID, getMessage(t, h, bob, again).RecipientID, "to=%s", to)
	}
	group := send(t, h, bob, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(alice.ID, carol.ID, alice.ID), Content: "all of us"})
	g := getMessage(t, h, carol, group)
	assert.Len(t, g.DisplayRecipient, 3)
	assert.NotEqual(t, m.RecipientID, g.RecipientID)
	withSelf := send(t, h, bob, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(alice.ID, bob.ID), Content: "me and you"})
	assert.Equal(t, m.RecipientID, getMessage(t, h, alice, withSelf).RecipientID, "naming oneself changes nothing")
	evs := takeEvents(t, h)
	require.NotEmpty(t, evs)
	assert.Len(t, evs[len(evs)-1].JSON["message"].(map[string]any)["display_recipient"], 2, "each participant once")
	self := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(alice.ID), Content: "note to self", UserAgent: "ZulipDesktop/5.0"})
	s := getMessage(t, h, alice, self)
	assert.Len(t, s.DisplayRecipient, 1)
	assert.Equal(t, []string{"read"}, s.Flags)

	gone := h.NewUser(t, chat.RoleMember)
	h.Deactivate(t, gone)
	for _, c := range []struct {
		to, msg string
		kind    chat.Kind
	}{
		{"[]", "Message must have recipients", 0},
		{"", "Message must have recipients", 0},
		{`{"a": 1}`, "Invalid data type for recipients", 0},
		{fmt.Sprintf(`[%d, "%s"]`, bob.ID, bob.Email), "Recipient lists may contain emails or user IDs, but not both.", 0},
		{fmt.Sprintf(`["%s", %d]`, bob.Email, bob.ID), "Recipient lists may contain emails or user IDs, but not both.", 0},
		{"[true]", "Invalid data type for recipients", 0},
		{"nobody@example.com", "Invalid email 'nobody@example.com'", chat.KindNotFound},
		{"[999999]", "Invalid user ID 999999", chat.KindNotFound},
		{fmt.Sprintf("[%d]", gone.ID), fmt.Sprintf("'%s' is no longer using Zulip.", gone.Email), 0},
	} {
		_, err := h.Service.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "direct", To: &c.to, Content: "x"})
		requireError(t, err, orInvalid(c.kind), chat.CodeBadRequest, c.msg)
	}
	_, err = h.Service.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "direct", Content: "x"})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Message must have recipients")
}

// Who may read a channel message: those who received it, and, when the
// channel's history is public to subscribers, those who may read the
// channel now.
func TestReadChannelMessageAccess(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	public := newChannelBy(t, h, alice, "public", false)
	_ = public
	newChannelBy(t, h, alice, "secret", true)
	newChannelBy(t, h, alice, "shared", true)
	shared := channelID(t, h, alice, "shared")
	_, err := h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: shared, HistoryPublicToSubscribers: ptr(true)})
	require.NoError(t, err)

	inPublic := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("public"), Topic: ptr("t"), Content: "x"})
	inSecret := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("secret"), Topic: ptr("t"), Content: "x"})
	inShared := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("shared"), Topic: ptr("t"), Content: "x"})

	invalid := func(who chattest.User, id int64) {
		t.Helper()
		_, err := h.Service.GetMessage(ctx, who.Caller, chat.GetMessageRequest{MessageID: id})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid message(s)")
	}
	// A public channel's history is open to members, not to guests.
	assert.Equal(t, []string{"read", "historical"}, getMessage(t, h, bob, inPublic).Flags)
	invalid(guest, inPublic)
	invalid(bob, inSecret)
	invalid(bob, inShared)
	invalid(bob, inShared+1000)

	// Late subscribers: without shared history they see only what comes
	// after; with it they see the past too.
	subscribe(t, h, alice, "secret", bob.ID)
	subscribe(t, h, alice, "shared", bob.ID)
	invalid(bob, inSecret)
	assert.Equal(t, []string{"read", "historical"}, getMessage(t, h, bob, inShared).Flags)
	later := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("secret"), Topic: ptr("t"), Content: "x"})
	assert.Empty(t, getMessage(t, h, bob, later).Flags, "received, unread")

	// Leaving a private channel ends access to it.
	_, err = h.Service.Unsubscribe(ctx, bob.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"secret"}})
	require.NoError(t, err)
	invalid(bob, later)
}

func channelID(t *testing.T, h *chattest.Harness, as chattest.User, name string) int64 {
	t.Helper()
	resp, err := h.Service.GetChannelID(context.Background(), as.Caller, chat.GetChannelIDRequest{Stream: name})
	require.NoError(t, err)
	return resp.StreamID
}

// Each recipient gets the message event after commit, with their flags.
func TestMessageEvents(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "room", true)
	subscribe(t, h, alice, "room", bob.ID)
	takeEvents(t, h)

	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"), Content: "x", ReadBySender: ptr(true)})
	evs := takeEvents(t, h)
	require.Equal(t, []string{"user_topic/", "message/", "message/"}, kinds(evs), "alice started the topic: she follows it")
	evs = evs[1:]
	assert.Equal(t, []int64{alice.ID}, evs[0].To)
	assert.Equal(t, []any{"read"}, evs[0].JSON["flags"])
	assert.Equal(t, []int64{bob.ID}, evs[1].To, "the subscribers, not carol")
	assert.Equal(t, []any{}, evs[1].JSON["flags"])
	assert.Equal(t, float64(id), evs[1].JSON["message"].(map[string]any)["id"])

	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(carol.ID), Content: "x"})
	evs = takeEvents(t, h)
	require.Len(t, evs, 2)
	assert.Equal(t, []int64{alice.ID}, evs[0].To)
	assert.Equal(t, []int64{carol.ID}, evs[1].To)
}

// The organization's direct-message policy (the reference's
// check_can_send_direct_message).
func TestDirectMessagePolicy(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	bot := h.NewBot(t, alice)
	setPolicy := func(permission, initiator string) {
		t.Helper()
		p, i := groupID(t, h, permission), groupID(t, h, initiator)
		_, err := h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
			DirectMessagePermissionGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &p}},
			DirectMessageInitiatorGroup:  &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &i}}})
		require.NoError(t, err)
	}
	dm := func(from chattest.User, to ...int64) error {
		_, err := h.Service.SendMessage(ctx, from.Caller, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(to...), Content: "hi"})
		return err
	}
	settings, err := h.Service.GetRealmSettings(ctx, alice.Caller)
	require.NoError(t, err)
	everyone := groupID(t, h, chat.GroupEveryone)
	assert.Equal(t, &everyone, settings.RealmDirectMessagePermissionGroup.GroupID, "everyone by default")
	assert.Equal(t, &everyone, settings.RealmDirectMessageInitiatorGroup.GroupID)
	require.NoError(t, dm(alice, bob.ID))

	setPolicy(chat.GroupAdministrators, chat.GroupEveryone)
	requireError(t, dm(alice, bob.ID), chat.KindForbidden, chat.CodeBadRequest, "This conversation does not include any users who can authorize it.")
	assert.NoError(t, dm(alice, admin.ID), "an administrator takes part")
	assert.NoError(t, dm(alice, bob.ID, admin.ID), "a group DM with an administrator")
	assert.NoError(t, dm(admin, bob.ID))
	assert.NoError(t, dm(alice, bot.ID), "only bots")
	assert.NoError(t, dm(alice, alice.ID), "oneself")
	assert.NoError(t, dm(bot, bob.ID), "bots may")

	setPolicy(chat.GroupNobody, chat.GroupEveryone)
	requireError(t, dm(alice, admin.ID), chat.KindForbidden, chat.CodeBadRequest, "Direct messages are disabled in this organization.")

	setPolicy(chat.GroupEveryone, chat.GroupAdministrators)
	carol := h.NewUser(t, chat.RoleMember)
	requireError(t, dm(alice, carol.ID), chat.KindForbidden, chat.CodeBadRequest, "You do not have permission to initiate direct message conversations.")
	assert.NoError(t, dm(alice, bob.ID), "alice and bob's conversation already has messages")
	assert.NoError(t, dm(admin, carol.ID), "an administrator starts one")
	assert.NoError(t, dm(carol, admin.ID), "and carol may answer")

	internet := groupID(t, h, chat.GroupInternet)
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
		DirectMessagePermissionGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &internet}}})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "'direct_message_permission_group' setting cannot be set to 'role:internet' group.")
}

// Sending follows or unmutes the topic for its sender as their settings
// ask (the reference's defaults: follow topics one starts, unmute topics
// one sends to in muted channels).
func TestSendAutomaticTopicPolicy(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	sendTo := func(u chattest.User, topic string) *chat.SendMessageResponse {
		t.Helper()
		resp, err := h.Service.SendMessage(ctx, u.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(id), Topic: &topic, Content: "x"})
		require.NoError(t, err)
		checkSchema(t, "POST", "/messages", resp)
		return resp
	}
	takeEvents(t, h)
	resp := sendTo(alice, "new topic")
	require.NotNil(t, resp.AutomaticNewVisibilityPolicy, "starting a topic follows it")
	assert.Equal(t, chat.TopicPolicyFollowed, *resp.AutomaticNewVisibilityPolicy)
	ev := only(t, takeEvents(t, h), "user_topic", "")
	assert.Equal(t, []int64{alice.ID}, ev.To)
	assert.Equal(t, float64(chat.TopicPolicyFollowed), ev.JSON["visibility_policy"])
	assert.Nil(t, sendTo(alice, "NEW TOPIC").AutomaticNewVisibilityPolicy, "already followed")
	assert.Nil(t, sendTo(bob, "new topic").AutomaticNewVisibilityPolicy, "bob did not start it")

	// A muted channel: sending unmutes the topic (on send, by default).
	_, err := h.Service.UpdateSubscriptionProperties(ctx, bob.Caller, chat.UpdateSubscriptionPropertiesRequest{
		SubscriptionData: []chat.SubscriptionProperty{{StreamID: id, Property: "is_muted", Value: []byte("true")}}})
	require.NoError(t, err)
	resp = sendTo(bob, "new topic")
	require.NotNil(t, resp.AutomaticNewVisibilityPolicy)
	assert.Equal(t, chat.TopicPolicyUnmuted, *resp.AutomaticNewVisibilityPolicy)
	assert.Nil(t, sendTo(bob, "new topic").AutomaticNewVisibilityPolicy, "already unmuted")
	resp = sendTo(bob, "bob's own")
	require.NotNil(t, resp.AutomaticNewVisibilityPolicy)
	assert.Equal(t, chat.TopicPolicyFollowed, *resp.AutomaticNewVisibilityPolicy, "following wins over unmuting")

	// Never: nothing changes.
	never := 4
	_, err = h.Service.UpdateSettings(ctx, alice.Caller, chat.UpdateSettingsRequest{SettingsPatch: chat.SettingsPatch{
		AutomaticallyFollowTopicsPolicy: &never, AutomaticallyUnmuteTopicsInMutedStreamsPolicy: &never}})
	require.NoError(t, err)
	assert.Nil(t, sendTo(alice, "another new topic").AutomaticNewVisibilityPolicy)
	// Bots never get a policy.
	bot := h.NewBot(t, alice)
	subscribe(t, h, alice, "general", bot.ID)
	assert.Nil(t, sendTo(bot, "bot topic").AutomaticNewVisibilityPolicy)
}
