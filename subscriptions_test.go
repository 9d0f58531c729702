package chat_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func TestCreateChannelsBySubscribing(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	member := h.NewUser(t, chat.RoleMember)
	resp, err := h.Service.Subscribe(ctx, member.Caller, chat.SubscribeRequest{
		Subscriptions: []chat.ChannelSpec{{Name: "design", Description: ptr("Where **pixels** live")}, {Name: "secret"}},
		InviteOnly:    ptr(true),
	})
	require.NoError(t, err)
	checkSchema(t, "POST", "/users/me/subscriptions", resp)
	assert.Equal(t, map[string][]string{strconv.FormatInt(member.ID, 10): {"design", "secret"}}, resp.Subscribed)

	subs, err := h.Service.GetSubscriptions(ctx, member.Caller, chat.GetSubscriptionsRequest{IncludeSubscribers: ptr(true)})
	require.NoError(t, err)
	checkSchema(t, "GET", "/users/me/subscriptions", subs)
	require.Len(t, subs.Subscriptions, 2)
	d := subs.Subscriptions[0]
	assert.Equal(t, "design", d.Name)
	assert.Equal(t, "<p>Where <strong>pixels</strong> live</p>", d.RenderedDescription)
	assert.True(t, d.InviteOnly)
	assert.False(t, d.HistoryPublicToSubscribers, "private channels hide history by default")
	assert.Equal(t, ptr(member.ID), d.CreatorID)
	assert.Equal(t, []int64{member.ID}, d.Subscribers)
	assert.True(t, d.InHomeView)
	assert.False(t, d.IsMuted)
	assert.Regexp(t, `^#[0-9a-f]{6}$`, d.Color)
	assert.NotEqual(t, d.Color, subs.Subscriptions[1].Color, "new subscriptions take different colors")
	assert.Nil(t, d.StreamWeeklyTraffic, "too new for weekly traffic")
	assert.True(t, d.IsRecentlyActive)
	assert.Equal(t, chat.GroupSettingValue{DirectMembers: []int64{member.ID}, DirectSubgroups: []int64{}}, d.CanAdministerChannelGroup, "the creator administers it")
	assert.Equal(t, ptr(groupID(t, h, chat.GroupEveryone)), d.CanSendMessageGroup.GroupID)
	assert.Equal(t, 1, d.StreamPostPolicy)

	// The creator administers it without being an organization administrator.
	_, err = h.Service.UpdateChannel(ctx, member.Caller, chat.UpdateChannelRequest{StreamID: d.StreamID, NewName: ptr("Design")})
	require.NoError(t, err)

	for _, c := range []struct {
		name string
		req  chat.SubscribeRequest
		code string
		msg  string
		kind chat.Kind
	}{
		{"empty name", chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: " "}}}, chat.CodeBadRequest, "Channel name can't be empty.", 0},
		{"long name", chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: strings.Repeat("c", 61)}}}, chat.CodeBadRequest, "Channel name too long (limit: 60 characters).", 0},
		{"control character", chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "a\x01b"}}}, chat.CodeBadRequest, "Invalid character in channel name, at position 2.", 0},
		{"long description", chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "x", Description: ptr(strings.Repeat("d", 1025))}}}, chat.CodeBadRequest, "description is too long (limit: 1024 characters)", 0},
		{"web-public by a member", chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "x"}}, IsWebPublic: ptr(true)}, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator", chat.KindForbidden},
		{"default by a member", chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "x"}}, IsDefaultStream: ptr(true)}, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator", chat.KindForbidden},
		{"retention by a member", chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "x"}}, MessageRetentionDays: &chat.RetentionDays{Days: ptr(30)}}, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner", chat.KindForbidden},
		{"unknown principal", chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "x"}}, Principals: &[]chat.Principal{{ID: 9999}}}, chat.CodeBadRequest, "No such user", chat.KindNotFound},
		{"empty list", chat.SubscribeRequest{}, chat.CodeBadRequest, "Nothing to do: subscriptions is empty", 0},
		{"internet may not administer", chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "x"}}, CanAdministerChannelGroup: &chat.GroupSettingValue{GroupID: ptr(groupID(t, h, chat.GroupInternet))}}, chat.CodeBadRequest, "'can_administer_channel_group' setting cannot be set to 'role:internet' group.", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, err := h.Store.ListStreams(ctx, h.RealmID)
			require.NoError(t, err)
			_, err = h.Service.Subscribe(ctx, member.Caller, c.req)
			requireError(t, err, orInvalid(c.kind), c.code, c.msg)
			after, err := h.Store.ListStreams(ctx, h.RealmID)
			require.NoError(t, err)
			assert.Equal(t, before, after, "no channel created")
		})
	}
	t.Run("guests create no channels", func(t *testing.T) {
		_, err := h.Service.Subscribe(ctx, h.NewUser(t, chat.RoleGuest).Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "guest land"}}})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Not allowed for guest users")
	})
	t.Run("owners set retention, administrators make web-public default channels", func(t *testing.T) {
		_, err := h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "announcements"}},
			IsWebPublic: ptr(true), IsDefaultStream: ptr(true), MessageRetentionDays: &chat.RetentionDays{Days: ptr(-1)}})
		require.NoError(t, err)
		list, err := h.Service.GetChannels(ctx, member.Caller, chat.GetChannelsRequest{IncludeDefault: ptr(true)})
		require.NoError(t, err)
		checkSchema(t, "GET", "/streams", list)
		var a *chat.Channel
		for i := range list.Streams {
			if list.Streams[i].Name == "announcements" {
				a = &list.Streams[i]
			}
		}
		require.NotNil(t, a)
		assert.True(t, a.IsWebPublic)
		assert.Equal(t, ptr(true), a.IsDefault)
		assert.Equal(t, ptr(-1), a.MessageRetentionDays)
		// New accounts join default channels.
		late := h.NewUser(t, chat.RoleMember)
		subs, err := h.Service.GetSubscriptions(ctx, late.Caller, chat.GetSubscriptionsRequest{})
		require.NoError(t, err)
		require.Len(t, subs.Subscriptions, 1)
		assert.Equal(t, "announcements", subs.Subscriptions[0].Name)
	})
}

func TestSubscribeOthersAndUnauthorized(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	newChannel(t, h, "public one", false)
	newChannel(t, h, "hidden", true)
	resp, err := h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{
		Subscriptions:            []chat.ChannelSpec{{Name: "public one"}, {Name: "hidden"}},
		Principals:               &[]chat.Principal{{ID: bob.ID}, {Email: guest.Email}},
		AuthorizationErrorsFatal: ptr(false),
	})
	require.NoError(t, err)
	checkSchema(t, "POST", "/users/me/subscriptions", resp)
	assert.Equal(t, []string{"hidden"}, resp.Unauthorized, "alice cannot see the private channel")
	assert.Equal(t, []string{"public one"}, resp.Subscribed[strconv.FormatInt(bob.ID, 10)])
	assert.Equal(t, []string{"public one"}, resp.Subscribed[strconv.FormatInt(guest.ID, 10)], "members may add guests to public channels")

	_, err = h.Service.Subscribe(ctx, guest.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "public one"}}, Principals: &[]chat.Principal{{ID: alice.ID}}})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Unable to access channel (public one).")
	gone := h.NewUser(t, chat.RoleMember)
	h.Deactivate(t, gone)
	_, err = h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "public one"}}, Principals: &[]chat.Principal{{ID: gone.ID}}})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
}

func TestUnsubscribeOthers(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	bot := h.NewBot(t, alice)
	newChannel(t, h, "room", false)
	subscribe(t, h, h.Owner, "room", alice.ID, bob.ID, bot.ID)
	unsub := func(by chattest.User, who ...chat.Principal) (*chat.UnsubscribeResponse, error) {
		return h.Service.Unsubscribe(ctx, by.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"room"}, Principals: &who})
	}
	_, err := unsub(alice, chat.Principal{ID: bob.ID})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
	resp, err := unsub(alice, chat.Principal{ID: bot.ID})
	require.NoError(t, err, "owners remove their bots")
	checkSchema(t, "DELETE", "/users/me/subscriptions", resp)
	assert.Equal(t, []string{"room"}, resp.Removed)
	resp, err = unsub(h.Owner, chat.Principal{Email: bob.Email})
	require.NoError(t, err, "administrators remove anyone")
	assert.Equal(t, []string{"room"}, resp.Removed)
	resp, err = unsub(h.Owner, chat.Principal{ID: bob.ID})
	require.NoError(t, err)
	assert.Equal(t, []string{"room"}, resp.NotRemoved)

	// Members of can_remove_subscribers_group may.
	id, err := h.Service.GetChannelID(ctx, alice.Caller, chat.GetChannelIDRequest{Stream: "room"})
	require.NoError(t, err)
	_, err = h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: id.StreamID,
		CanRemoveSubscribersGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{DirectMembers: []int64{alice.ID}, DirectSubgroups: []int64{}}}})
	require.NoError(t, err)
	subscribe(t, h, h.Owner, "room", bob.ID)
	_, err = unsub(alice, chat.Principal{ID: bob.ID})
	require.NoError(t, err)

	_, err = unsub(h.Owner, chat.Principal{ID: 9999})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
	_, err = h.Service.Unsubscribe(ctx, alice.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"no such room"}})
	e := requireError(t, err, chat.KindNotFound, chat.CodeStreamDoesNotExist, "Channel 'no such room' does not exist")
	assert.Equal(t, "no such room", e.Fields["stream"])

	t.Run("history periods are kept", func(t *testing.T) {
		subscribe(t, h, h.Owner, "room", bob.ID)
		periods, err := h.Store.ListSubscriptionPeriods(ctx, h.RealmID, bob.ID, id.StreamID)
		require.NoError(t, err)
		require.Len(t, periods, 3, "subscribed, removed, subscribed again, removed, and back")
		assert.NotNil(t, periods[0].EndedAt)
		assert.Nil(t, periods[2].EndedAt)
	})
}

func TestSubscriptionProperties(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	id := newChannel(t, h, "props", false)
	other := newChannel(t, h, "not mine", false)
	subscribe(t, h, h.Owner, "props", u.ID)
	set := func(data ...chat.SubscriptionProperty) error {
		_, err := h.Service.UpdateSubscriptionProperties(ctx, u.Caller, chat.UpdateSubscriptionPropertiesRequest{SubscriptionData: data})
		return err
	}
	p := func(prop, value string) chat.SubscriptionProperty {
		return chat.SubscriptionProperty{StreamID: id, Property: prop, Value: json.RawMessage(value)}
	}
	require.NoError(t, set(p("color", `"#aabbcc"`), p("in_home_view", "false"), p("pin_to_top", "true"),
		p("desktop_notifications", "true"), p("email_notifications", "false"), p("push_notifications", "true"),
		p("audible_notifications", "false"), p("wildcard_mentions_notify", "true")))
	subs, err := h.Service.GetSubscriptions(ctx, u.Caller, chat.GetSubscriptionsRequest{})
	require.NoError(t, err)
	s := subs.Subscriptions[0]
	assert.Equal(t, "#aabbcc", s.Color)
	assert.True(t, s.IsMuted, "in_home_view false mutes")
	assert.False(t, s.InHomeView)
	assert.True(t, s.PinToTop)
	assert.Equal(t, ptr(true), s.DesktopNotifications)
	assert.Equal(t, ptr(false), s.EmailNotifications)
	require.NoError(t, set(p("is_muted", "false")))

	for _, c := range []struct {
		data []chat.SubscriptionProperty
		msg  string
	}{
		{[]chat.SubscriptionProperty{p("color", `"red"`)}, `subscription_data[0]["value"] is not a valid hex color code`},
		{[]chat.SubscriptionProperty{p("is_muted", `"yes"`)}, `subscription_data[0]["value"] is not a boolean`},
		{[]chat.SubscriptionProperty{p("pin_to_top", "true"), p("volume", "11")}, "Unknown subscription property: volume"},
		{[]chat.SubscriptionProperty{p("pin_to_top", "false"), {StreamID: other, Property: "is_muted", Value: json.RawMessage("true")}}, "Not subscribed to channel ID " + itoa(other)},
	} {
		before, err := h.Service.GetSubscriptions(ctx, u.Caller, chat.GetSubscriptionsRequest{})
		require.NoError(t, err)
		requireError(t, set(c.data...), chat.KindInvalid, chat.CodeBadRequest, c.msg)
		after, err := h.Service.GetSubscriptions(ctx, u.Caller, chat.GetSubscriptionsRequest{})
		require.NoError(t, err)
		assert.Equal(t, before, after, "no part of a rejected batch applies")
	}
}

func TestUserTopics(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	id := newChannel(t, h, "topics", false)
	set := func(topic string, policy int) error {
		_, err := h.Service.UpdateUserTopic(ctx, u.Caller, chat.UpdateUserTopicRequest{StreamID: id, Topic: topic, VisibilityPolicy: policy})
		return err
	}
	require.NoError(t, set("Lunch", chat.TopicPolicyMuted))
	require.NoError(t, set("lunch", chat.TopicPolicyFollowed), "topics match case-insensitively")
	require.NoError(t, set("(no topic)", chat.TopicPolicyUnmuted))
	require.NoError(t, set(chat.EmptyTopicDisplayName, chat.TopicPolicyFollowed))
	require.NoError(t, set("never used", chat.TopicPolicyNone), "clearing a topic without a policy is fine")
	got, err := h.Service.GetUserTopics(ctx, u.Caller)
	require.NoError(t, err)
	require.Len(t, got.UserTopics, 2)
	assert.Equal(t, "", got.UserTopics[0].TopicName, "the empty topic")
	assert.Equal(t, chat.TopicPolicyFollowed, got.UserTopics[0].VisibilityPolicy)
	assert.Equal(t, "lunch", got.UserTopics[1].TopicName)
	require.NoError(t, set("LUNCH", chat.TopicPolicyNone))
	got, err = h.Service.GetUserTopics(ctx, u.Caller)
	require.NoError(t, err)
	assert.Len(t, got.UserTopics, 1)

	requireError(t, set("x", 4), chat.KindInvalid, chat.CodeBadRequest, "Invalid visibility_policy: allowed values are 0, 1, 2, 3")
	requireError(t, set(strings.Repeat("t", 61), 1), chat.KindInvalid, chat.CodeBadRequest, "topic is too long (limit: 60 characters)")
	_, err = h.Service.UpdateUserTopic(ctx, u.Caller, chat.UpdateUserTopicRequest{StreamID: 9999, Topic: "x", VisibilityPolicy: 1})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
	resp, err := h.Service.UpdateUserTopic(ctx, u.Caller, chat.UpdateUserTopicRequest{StreamID: id, Topic: "ok", VisibilityPolicy: 1})
	require.NoError(t, err)
	checkSchema(t, "POST", "/user_topics", resp)
}

func TestUpdateChannel(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	id := newChannel(t, h, "general", false)
	newChannel(t, h, "random", false)
	update := func(req chat.UpdateChannelRequest) error {
		req.StreamID = id
		_, err := h.Service.UpdateChannel(ctx, h.Owner.Caller, req)
		return err
	}
	require.NoError(t, update(chat.UpdateChannelRequest{NewName: ptr("General"), Description: ptr("Talk\nabout things")}))
	got, err := h.Service.GetChannel(ctx, h.Owner.Caller, chat.GetChannelRequest{StreamID: id})
	require.NoError(t, err)
	checkSchema(t, "GET", "/streams/{stream_id}", got)
	assert.Equal(t, "General", got.Stream.Name)
	assert.Equal(t, "Talk about things", got.Stream.Description)
	requireError(t, update(chat.UpdateChannelRequest{NewName: ptr("RANDOM")}), chat.KindConflict, chat.CodeBadRequest, "Channel 'RANDOM' already exists")
	require.NoError(t, update(chat.UpdateChannelRequest{IsPrivate: ptr(true)}))
	got, err = h.Service.GetChannel(ctx, h.Owner.Caller, chat.GetChannelRequest{StreamID: id})
	require.NoError(t, err)
	assert.True(t, got.Stream.InviteOnly)
	assert.False(t, got.Stream.HistoryPublicToSubscribers)
	requireError(t, update(chat.UpdateChannelRequest{IsDefaultStream: ptr(true)}), chat.KindInvalid, chat.CodeBadRequest, "A default channel cannot be private.")
	require.NoError(t, update(chat.UpdateChannelRequest{IsPrivate: ptr(false), IsDefaultStream: ptr(true)}))
	admins := groupID(t, h, chat.GroupAdministrators)
	require.NoError(t, update(chat.UpdateChannelRequest{CanSendMessageGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins}}}))
	got, err = h.Service.GetChannel(ctx, h.Owner.Caller, chat.GetChannelRequest{StreamID: id})
	require.NoError(t, err)
	assert.Equal(t, 2, got.Stream.StreamPostPolicy, "the deprecated policy follows can_send_message_group")
	assert.True(t, got.Stream.IsAnnouncementOnly)
	requireError(t, update(chat.UpdateChannelRequest{CanSendMessageGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins},
		Old: &chat.GroupSettingValue{GroupID: ptr(groupID(t, h, chat.GroupEveryone))}}}), chat.KindInvalid, "EXPECTATION_MISMATCH", "")

	h.Clock.Advance(8 * 24 * time.Hour)
	got, err = h.Service.GetChannel(ctx, h.Owner.Caller, chat.GetChannelRequest{StreamID: id})
	require.NoError(t, err)
	assert.Equal(t, ptr(0), got.Stream.StreamWeeklyTraffic, "older than a week: traffic is counted")
	resp, err := h.Service.GetChannelID(ctx, h.Owner.Caller, chat.GetChannelIDRequest{Stream: "general"})
	require.NoError(t, err)
	checkSchema(t, "GET", "/get_stream_id", resp)
	archived, err := h.Service.ArchiveChannel(ctx, h.Owner.Caller, chat.ArchiveChannelRequest{StreamID: id})
	require.NoError(t, err)
	checkSchema(t, "DELETE", "/streams/{stream_id}", archived)
	list, err := h.Service.GetChannels(ctx, h.Owner.Caller, chat.GetChannelsRequest{})
	require.NoError(t, err)
	assert.Len(t, list.Streams, 1, "archived channels are left out by default")
	list, err = h.Service.GetChannels(ctx, h.Owner.Caller, chat.GetChannelsRequest{ExcludeArchived: ptr(false)})
	require.NoError(t, err)
	assert.Len(t, list.Streams, 2)
}

// A group-setting update must say the new value: {} or {"old": ...}
// alone is refused and changes nothing (on channels, groups and the
// organization alike).
func TestGroupSettingUpdateNeedsNew(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	ch := newChannel(t, h, "ops", false)
	g := createGroup(t, h, h.Owner, "ops team")
	before, err := h.Service.GetChannel(ctx, h.Owner.Caller, chat.GetChannelRequest{StreamID: ch})
	require.NoError(t, err)
	var empty chat.GroupSettingUpdate
	require.NoError(t, json.Unmarshal([]byte(`{}`), &empty))
	_, err = h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: ch, CanAdministerChannelGroup: &empty})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, `can_administer_channel_group["new"] field is missing: Field required`)
	after, err := h.Service.GetChannel(ctx, h.Owner.Caller, chat.GetChannelRequest{StreamID: ch})
	require.NoError(t, err)
	assert.Equal(t, before.Stream.CanAdministerChannelGroup, after.Stream.CanAdministerChannelGroup)

	var oldOnly chat.GroupSettingUpdate
	require.NoError(t, json.Unmarshal([]byte(`{"old": 1}`), &oldOnly))
	_, err = h.Service.UpdateUserGroup(ctx, h.Owner.Caller, chat.UpdateUserGroupRequest{UserGroupID: g, CanJoinGroup: &oldOnly})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, `can_join_group["new"] field is missing: Field required`)
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CanCreateBotsGroup: &empty})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, `can_create_bots_group["new"] field is missing: Field required`)
}

func TestSubscriptionPropertyNullRefused(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	ch := newChannel(t, h, "ops", false)
	_, err := h.Service.UpdateSubscriptionProperties(ctx, h.Owner.Caller, chat.UpdateSubscriptionPropertiesRequest{
		SubscriptionData: []chat.SubscriptionProperty{{StreamID: ch, Property: "desktop_notifications", Value: json.RawMessage("null")}}})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, `subscription_data[0]["value"]["bool"] is not a boolean`)
	subs, err := h.Service.GetSubscriptions(ctx, h.Owner.Caller, chat.GetSubscriptionsRequest{})
	require.NoError(t, err)
	assert.Nil(t, subs.Subscriptions[0].DesktopNotifications, "still inheriting the default")
}

// Subscriber lists leave deactivated users out, as the reference does.
func TestSubscribersLeaveOutDeactivatedUsers(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	newChannel(t, h, "ops", false)
	subscribe(t, h, h.Owner, "ops", alice.ID, bob.ID)
	_, err := h.Service.DeactivateUser(ctx, h.Owner.Caller, chat.DeactivateUserRequest{UserID: bob.ID})
	require.NoError(t, err)
	subs, err := h.Service.GetSubscriptions(ctx, h.Owner.Caller, chat.GetSubscriptionsRequest{IncludeSubscribers: ptr(true)})
	require.NoError(t, err)
	checkSchema(t, "GET", "/users/me/subscriptions", subs)
	assert.Equal(t, ids(h.Owner, alice), subs.Subscriptions[0].Subscribers)
}

// A bot may list the channels its owner is subscribed to.
func TestChannelsIncludeOwnerSubscribed(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bot := h.NewBot(t, alice)
	secret := newChannelBy(t, h, alice, "alice private", true)
	public := newChannel(t, h, "everyone's", false)
	req := chat.GetChannelsRequest{IncludePublic: ptr(false), IncludeOwnerSubscribed: ptr(true)}
	got, err := h.Service.GetChannels(ctx, bot.Caller, req)
	require.NoError(t, err)
	assert.True(t, listsChannel(got.Streams, secret))
	assert.False(t, listsChannel(got.Streams, public))
	// Humans have no owner: the flag changes nothing for them.
	got, err = h.Service.GetChannels(ctx, h.NewUser(t, chat.RoleMember).Caller, req)
	require.NoError(t, err)
	assert.Empty(t, got.Streams)
}

// Values given as one group and no users collapse to that group, an empty
// value to role:nobody (as the reference stores them); the collapsed group
// is then checked against the setting's allowed groups.
func TestGroupSettingValuesCollapse(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	ch := newChannel(t, h, "ops", false)
	g := createGroup(t, h, h.Owner, "ops team")
	nobody, everyone := groupID(t, h, chat.GroupNobody), groupID(t, h, chat.GroupEveryone)
	update := func(v chat.GroupSettingValue, old *chat.GroupSettingValue) error {
		_, err := h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: ch,
			CanAdministerChannelGroup: &chat.GroupSettingUpdate{New: &v, Old: old}})
		return err
	}
	current := func() chat.GroupSettingValue {
		got, err := h.Service.GetChannel(ctx, h.Owner.Caller, chat.GetChannelRequest{StreamID: ch})
		require.NoError(t, err)
		return got.Stream.CanAdministerChannelGroup
	}
	require.NoError(t, update(chat.GroupSettingValue{DirectMembers: []int64{}, DirectSubgroups: []int64{g}}, nil))
	assert.Equal(t, chat.GroupSettingValue{GroupID: &g}, current())
	// The old value is collapsed too before it is compared.
	require.NoError(t, update(chat.GroupSettingValue{DirectMembers: []int64{}, DirectSubgroups: []int64{}},
		&chat.GroupSettingValue{DirectMembers: []int64{}, DirectSubgroups: []int64{g}}))
	assert.Equal(t, chat.GroupSettingValue{GroupID: &nobody}, current())
	err := update(chat.GroupSettingValue{DirectMembers: []int64{}, DirectSubgroups: []int64{everyone}}, nil)
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "'can_administer_channel_group' setting cannot be set to 'role:everyone' group.")
	assert.Equal(t, chat.GroupSettingValue{GroupID: &nobody}, current())
}

// Channel names and emails compare case-insensitively with Unicode case
// folding on every store, not just in ASCII (SQLite's lower() folds only
// ASCII; PostgreSQL's follows the database locale).
func TestUnicodeNamesFoldOnEveryStore(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)

	_, err := h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "Équipe Ørsted"}}})
	require.NoError(t, err)
	resp, err := h.Service.Subscribe(ctx, bob.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "équipe ørsted"}}})
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{strconv.FormatInt(bob.ID, 10): {"Équipe Ørsted"}}, resp.Subscribed,
		"the existing channel, under its own name, not a second one")

	id, err := h.Service.GetChannelID(ctx, bob.Caller, chat.GetChannelIDRequest{Stream: "ÉQUIPE ØRSTED"})
	require.NoError(t, err)
	ch, err := h.Service.GetChannel(ctx, bob.Caller, chat.GetChannelRequest{StreamID: id.StreamID})
	require.NoError(t, err)
	assert.Equal(t, "Équipe Ørsted", ch.Stream.Name)
}
