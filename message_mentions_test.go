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

// mentionedIDs fetches is:mentioned for the user.
func mentionedIDs(t *testing.T, h *chattest.Harness, as chattest.User) []int64 {
	t.Helper()
	return fetchedIDs(fetch(t, h, as, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100), NumAfter: ptr(0),
		Narrow: ptr(`[{"operator":"is","operand":"mentioned"}]`)}))
}

// Mentions by name, by name and ID, silent ones and those of users who
// do not receive the message: the rendered HTML, the readers' flags and
// the is:mentioned narrow agree with the reference.
func TestSendUserMentions(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	dave := h.NewUser(t, chat.RoleMember) // not subscribed
	newChannelBy(t, h, alice, "room", false)
	subscribe(t, h, alice, "room", bob.ID, carol.ID)
	to := chat.ToChannel("room")

	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: to, Topic: ptr("t"),
		Content: fmt.Sprintf("hi @**%s** and @**%s**, @_**%s**", strings.ToUpper(bob.FullName), dave.FullName, carol.FullName)})
	m := getMessage(t, h, bob, id)
	assert.Equal(t, fmt.Sprintf(`<p>hi <span class="user-mention" data-user-id="%d">@%s</span> and <span class="user-mention" data-user-id="%d">@%s</span>, <span class="user-mention silent" data-user-id="%d">%s</span></p>`,
		bob.ID, bob.FullName, dave.ID, dave.FullName, carol.ID, carol.FullName), m.Content, "names match case-insensitively and show as stored")
	assert.Equal(t, []string{"mentioned"}, m.Flags)
	assert.Empty(t, getMessage(t, h, carol, id).Flags, "a silent mention sets no flag")
	assert.Equal(t, []string{"read", "historical"}, getMessage(t, h, dave, id).Flags, "dave is mentioned but does not receive the message")
	assert.Equal(t, []int64{id}, mentionedIDs(t, h, bob))
	assert.Empty(t, mentionedIDs(t, h, carol))
	assert.Empty(t, mentionedIDs(t, h, dave))

	// @**name|id** picks one of two users with the same name; a wrong
	// name with the ID mentions nobody.
	twin := h.Provision(t, chat.ProvisionUserRequest{Email: "twin@example.com", FullName: bob.FullName, Password: chattest.Password, Role: chat.RoleMember})
	subscribe(t, h, alice, "room", twin.ID)
	id2 := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: to, Topic: ptr("t"),
		Content: fmt.Sprintf("@**%s|%d** @**Somebody Else|%d** @**|%d**", bob.FullName, twin.ID, bob.ID, carol.ID)})
	assert.Equal(t, []string{"mentioned"}, getMessage(t, h, twin, id2).Flags)
	assert.Empty(t, getMessage(t, h, bob, id2).Flags)
	assert.Equal(t, []string{"mentioned"}, getMessage(t, h, carol, id2).Flags, "@**|id** names the user by ID alone")
	assert.Contains(t, getMessage(t, h, bob, id2).Content, "@<strong>Somebody Else|", "an unresolved mention stays text")

	// Mentions inside code are text; a deactivated user's mention is silent.
	h.Deactivate(t, carol)
	id3 := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: to, Topic: ptr("t"),
		Content: fmt.Sprintf("`@**%s**`\n\n@**%s**", bob.FullName, carol.FullName)})
	assert.Empty(t, getMessage(t, h, bob, id3).Flags)
	assert.Contains(t, getMessage(t, h, bob, id3).Content, fmt.Sprintf(`<span class="user-mention silent" data-user-id="%d">%s</span>`, carol.ID, carol.FullName))

	// In a direct message, every participant may be mentioned.
	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID, dave.ID), Content: "@**" + dave.FullName + "**"})
	assert.Equal(t, []string{"mentioned"}, getMessage(t, h, dave, dm).Flags)
	assert.Empty(t, getMessage(t, h, bob, dm).Flags)
	assert.Equal(t, []int64{dm}, mentionedIDs(t, h, dave))
}

// Group mentions flag the group's active members (through subgroups) who
// receive the message, and need the group's can_mention_group.
func TestSendGroupMentions(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	outsider := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "room", false)
	subscribe(t, h, alice, "room", bob.ID, carol.ID)
	inner := createGroup(t, h, alice, "inner", carol.ID)
	support := createGroup(t, h, alice, "support", bob.ID, outsider.ID)
	_, err := h.Service.UpdateUserGroupSubgroups(ctx, alice.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: support, Add: &[]int64{inner}})
	require.NoError(t, err)

	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"), Content: "ping @*support* @*nonexistent*"})
	m := getMessage(t, h, bob, id)
	assert.Equal(t, fmt.Sprintf(`<p>ping <span class="user-group-mention" data-user-group-id="%d">@support</span> @<em>nonexistent</em></p>`, support), m.Content)
	assert.Equal(t, []string{"mentioned"}, m.Flags)
	assert.Equal(t, []string{"mentioned"}, getMessage(t, h, carol, id).Flags, "through the subgroup")
	assert.Equal(t, []string{"read", "historical"}, getMessage(t, h, outsider, id).Flags, "not a recipient")

	// A system group shows its display name; silent mentions flag nobody.
	id = send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"), Content: "@_*support* @*role:members*"})
	assert.Contains(t, getMessage(t, h, bob, id).Content, fmt.Sprintf(`<span class="user-group-mention silent" data-user-group-id="%d">support</span>`, support))
	assert.Contains(t, getMessage(t, h, bob, id).Content, fmt.Sprintf(`data-user-group-id="%d">@Members</span>`, groupID(t, h, "role:members")))

	// Only members of can_mention_group may mention it.
	admins := groupID(t, h, "role:administrators")
	_, err = h.Service.UpdateUserGroup(ctx, h.Owner.Caller, chat.UpdateUserGroupRequest{UserGroupID: support,
		CanMentionGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins}}})
	require.NoError(t, err)
	_, err = h.Service.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"), Content: "@*support*"})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "You are not allowed to mention user group 'support'.")
	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"), Content: "@_*support* is fine silently"})
	subscribe(t, h, alice, "room", h.Owner.ID)
	send(t, h, h.Owner, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"), Content: "@*support*"})
}

// Channel and topic wildcards: the flags and who may use them where.
func TestSendWildcardMentions(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "small", false)
	subscribe(t, h, alice, "small", bob.ID, carol.ID)
	small := chat.ToChannel("small")

	send(t, h, bob, chat.SendMessageRequest{Type: "channel", To: small, Topic: ptr("plans"), Content: "first"})
	takeEvents(t, h)
	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: small, Topic: ptr("plans"), Content: "@**all** look"})
	evs := takeEvents(t, h)
	wild := []string{"stream_wildcard_mentioned", "wildcard_mentioned"}
	assert.Equal(t, wild, getMessage(t, h, carol, id).Flags)
	assert.Equal(t, wild, getMessage(t, h, alice, id).Flags, "the sender too")
	assert.Contains(t, getMessage(t, h, bob, id).Content, `<span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span>`)
	for _, ev := range evs {
		if ev.Type == "message" {
			assert.Equal(t, []any{"stream_wildcard_mentioned", "wildcard_mentioned"}, ev.JSON["flags"], "event to %v", ev.To)
		}
	}
	assert.Equal(t, []int64{id}, mentionedIDs(t, h, carol))

	// @**topic** flags the topic's participants: its senders.
	id = send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: small, Topic: ptr("PLANS"), Content: "@**topic** update"})
	assert.Equal(t, []string{"topic_wildcard_mentioned", "wildcard_mentioned"}, getMessage(t, h, bob, id).Flags)
	assert.Equal(t, []string{"topic_wildcard_mentioned", "wildcard_mentioned"}, getMessage(t, h, alice, id).Flags)
	assert.Empty(t, getMessage(t, h, carol, id).Flags, "carol never wrote in the topic")
	assert.Contains(t, getMessage(t, h, bob, id).Content, `<span class="topic-mention">@topic</span>`)

	// In a channel of more than 15 subscribers, and a topic of more than
	// 15 participants, only can_mention_many_users_group may (admins by
	// default).
	newChannelBy(t, h, alice, "big", false)
	var many []int64
	var members []chattest.User
	for range 15 {
		u := h.NewUser(t, chat.RoleMember)
		members = append(members, u)
		many = append(many, u.ID)
	}
	subscribe(t, h, alice, "big", many...)
	big := chat.ToChannel("big")
	for _, u := range members {
		send(t, h, u, chat.SendMessageRequest{Type: "channel", To: big, Topic: ptr("crowded"), Content: "me too"})
	}
	_, err := h.Service.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "channel", To: big, Topic: ptr("t"), Content: "@**everyone**"})
	requireError(t, err, chat.KindForbidden, chat.CodeStreamWildcardMentionNotAllowed, "You do not have permission to use channel wildcard mentions in this channel.")
	_, err = h.Service.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "channel", To: big, Topic: ptr("crowded"), Content: "@**topic**"})
	requireError(t, err, chat.KindForbidden, chat.CodeTopicWildcardMentionNotAllowed, "You do not have permission to use topic wildcard mentions in this topic.")
	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: big, Topic: ptr("quiet"), Content: "@**topic** few participants here"})
	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: big, Topic: ptr("t"), Content: "@_**all** silent wildcards are fine\n```\n@**all**\n```"})
	subscribe(t, h, alice, "big", h.Owner.ID)
	send(t, h, h.Owner, chat.SendMessageRequest{Type: "channel", To: big, Topic: ptr("crowded"), Content: "@**channel** @**topic**"})

	members16 := groupID(t, h, "role:members")
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
		CanMentionManyUsersGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &members16}}})
	require.NoError(t, err)
	settings, err := h.Service.GetRealmSettings(ctx, alice.Caller)
	require.NoError(t, err)
	assert.Equal(t, &members16, settings.RealmCanMentionManyUsersGroup.GroupID)
	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: big, Topic: ptr("t"), Content: "@**everyone**"})

	// In a direct message, @**all** flags every participant.
	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID, carol.ID), Content: "@**all**"})
	assert.Equal(t, wild, getMessage(t, h, bob, dm).Flags)
}

// Mentioned users who asked to follow topics where they are mentioned
// follow the topic, unless they muted it.
func TestSendFollowWhereMentioned(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "room", false)
	subscribe(t, h, alice, "room", bob.ID, carol.ID)
	_, err := h.Service.UpdateUserTopic(ctx, carol.Caller, chat.UpdateUserTopicRequest{StreamID: id, Topic: "t", VisibilityPolicy: chat.TopicPolicyMuted})
	require.NoError(t, err)
	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "start"})
	takeEvents(t, h)
	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(id), Topic: ptr("T"),
		Content: fmt.Sprintf("@**%s** @**%s**", bob.FullName, carol.FullName)})
	ev := only(t, takeEvents(t, h), "user_topic", "")
	assert.Equal(t, []int64{bob.ID}, ev.To, "carol muted the topic")
	assert.Equal(t, float64(chat.TopicPolicyFollowed), ev.JSON["visibility_policy"])
	topics, err := h.Service.GetUserTopics(ctx, bob.Caller)
	require.NoError(t, err)
	require.Len(t, topics.UserTopics, 1)
	assert.Equal(t, chat.TopicPolicyFollowed, topics.UserTopics[0].VisibilityPolicy)

	// Turned off: nothing changes.
	_, err = h.Service.UpdateSettings(ctx, carol.Caller, chat.UpdateSettingsRequest{SettingsPatch: chat.SettingsPatch{
		AutomaticallyFollowTopicsWhereMentioned: ptr(false)}})
	require.NoError(t, err)
	takeEvents(t, h)
	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(id), Topic: ptr("other"), Content: "@**" + carol.FullName + "**"})
	for _, ev := range takeEvents(t, h) {
		assert.NotEqual(t, "user_topic", ev.Type+"/"+fmt.Sprint(ev.To), "no topic policy for carol")
		if ev.Type == "user_topic" {
			assert.NotEqual(t, []int64{carol.ID}, ev.To)
		}
	}
}

// Channel links resolve only channels the sender may read; the message's
// has: facts come from the rendering.
func TestSendLinksAndFacts(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	room := newChannelBy(t, h, alice, "room", false)
	newChannelBy(t, h, bob, "secret", true)
	first := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"), Content: "first"})
	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"),
		Content: "see #**room** and #**secret** and #**Room** and #**room>t** at https://example.com/a.png"})
	m := getMessage(t, h, alice, id)
	assert.Contains(t, m.Content, fmt.Sprintf(`<a class="stream" data-stream-id="%d" href="/#narrow/channel/%d-room">#room</a>`, room, room))
	assert.Contains(t, m.Content, "#<strong>secret</strong>", "alice may not read the private channel: text")
	assert.Contains(t, m.Content, "#<strong>Room</strong>", "names match exactly")
	assert.Contains(t, m.Content, fmt.Sprintf(`href="/#narrow/channel/%d-room/topic/t/with/%d"`, room, first), "the topic's oldest message")
	narrowIDs := func(op string) []int64 {
		return fetchedIDs(fetch(t, h, alice, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(10), NumAfter: ptr(0),
			Narrow: ptr(fmt.Sprintf(`[{"operator":"has","operand":%q}]`, op))}))
	}
	assert.Equal(t, []int64{id}, narrowIDs("link"))
	assert.Empty(t, narrowIDs("image"), "no image previews of other sites")
	assert.Empty(t, narrowIDs("attachment"))
	up := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"),
		Content: "[plan.png](/user_uploads/2/ab/plan.png)"})
	assert.Equal(t, []int64{id, up}, narrowIDs("link"))
	assert.Equal(t, []int64{up}, narrowIDs("image"))
	assert.Equal(t, []int64{up}, narrowIDs("attachment"))
	me := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("room"), Topic: ptr("t"), Content: "/me waves"})
	assert.True(t, getMessage(t, h, alice, me).IsMeMessage)
}
