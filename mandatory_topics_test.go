package chat_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// An organization can require topics: administrators turn it on, everyone
// is told, and from then on no channel message goes to the empty topic
// under any of its names, whether sent, edited, scheduled or delivered
// later. Direct messages have no topics and are not concerned.
func TestMandatoryTopics(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	admin := h.NewUser(t, chat.RoleAdministrator)
	ch := newChannelBy(t, h, alice, "ops", false)
	toOps := func(topic string) chat.SendMessageRequest {
		return chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(ch), Topic: &topic, Content: "hello"}
	}
	// Before: the empty topic is fine, and a message is scheduled to it.
	before := send(t, h, alice, toOps(""))
	scheduled := schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch),
		Topic: ptr(""), Content: "later", ScheduledDeliveryTimestamp: in(h, time.Hour)})
	assert.Equal(t, false, registerState(t, h, alice, "realm")["realm_mandatory_topics"])
	takeEvents(t, h)

	_, err := h.Service.UpdateRealm(ctx, alice.Caller, chat.UpdateRealmRequest{MandatoryTopics: ptr(true)})
	requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	_, err = h.Service.UpdateRealm(ctx, admin.Caller, chat.UpdateRealmRequest{MandatoryTopics: ptr(true)})
	require.NoError(t, err)
	ev := only(t, takeEvents(t, h), "realm", "update")
	assert.Equal(t, "mandatory_topics", ev.JSON["property"])
	assert.Equal(t, true, ev.JSON["value"])
	assert.Equal(t, true, registerState(t, h, bob, "realm")["realm_mandatory_topics"])

	// Sending.
	for _, topic := range []string{"", "   ", "(no topic)", chat.EmptyTopicDisplayName} {
		_, err := h.Service.SendMessage(ctx, alice.Caller, toOps(topic))
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Topics are required in this organization")
	}
	// The channel's own checks come first, as in the reference.
	_, err = h.Service.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(999999), Topic: ptr(""), Content: "x"})
	requireError(t, err, chat.KindNotFound, chat.CodeStreamDoesNotExist, "Channel with ID '999999' does not exist")
	named := send(t, h, alice, toOps("status"))
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "no topic here"})

	// Editing: no move to the empty topic; a message already there can
	// still have its content edited.
	for _, topic := range []string{"", "(no topic)", chat.EmptyTopicDisplayName} {
		_, err := h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: named, Topic: ptr(topic)})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Topics are required in this organization.")
	}
	_, err = h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: before, Content: ptr("edited")})
	require.NoError(t, err)
	_, err = h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: before, Topic: ptr("found a topic")})
	require.NoError(t, err)

	// Scheduling, and changing a scheduled message's topic.
	_, err = h.Service.CreateScheduledMessage(ctx, alice.Caller, chat.CreateScheduledMessageRequest{Type: "channel",
		To: chat.ScheduleToChannel(ch), Topic: ptr("(no topic)"), Content: "later", ScheduledDeliveryTimestamp: in(h, time.Hour)})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Topics are required in this organization")
	ok := schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch),
		Topic: ptr("plans"), Content: "on time", ScheduledDeliveryTimestamp: in(h, time.Hour)})
	_, err = h.Service.UpdateScheduledMessage(ctx, alice.Caller, chat.UpdateScheduledMessageRequest{ScheduledMessageID: ok, Topic: ptr("")})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Topics are required in this organization")

	// The message scheduled to the empty topic before the rule fails at
	// its time, and its author is told; the other is sent.
	h.Clock.Advance(time.Hour + time.Second)
	deliverDue(t, h)
	var failed *chat.ScheduledMessage
	for _, m := range listScheduled(t, h, alice) {
		if m.ScheduledMessageID == scheduled {
			failed = &m
		}
	}
	require.NotNil(t, failed)
	assert.True(t, failed.Failed)
	notices := directMessages(t, h, alice)
	require.NotEmpty(t, notices)
	assert.Contains(t, notices[len(notices)-1].Content, "> Topics are required in this organization\n")
	topics := map[string]bool{}
	for _, m := range channelMessages(t, h, bob, ch) {
		topics[m.Subject] = true
	}
	assert.True(t, topics["plans"], "the other scheduled message was sent")

	// Turned off again, the empty topic is back.
	_, err = h.Service.UpdateRealm(ctx, admin.Caller, chat.UpdateRealmRequest{MandatoryTopics: ptr(false)})
	require.NoError(t, err)
	send(t, h, alice, toOps(""))
}
