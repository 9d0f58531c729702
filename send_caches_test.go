package chat_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// What a send reads through the Service's caches (channels by name,
// alert words by token, the sender's topic policy) follows every change
// at once, on the same Service.

func TestSendSeesChannelRenamesAtOnce(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleAdministrator)
	first := newChannelBy(t, h, alice, "general", false)
	toName := func(name string) (int64, error) {
		resp, err := h.Service.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "channel", To: ptr(name), Topic: ptr("t"), Content: "x"})
		if err != nil {
			return 0, err
		}
		return resp.ID, nil
	}
	_, err := toName("General")
	require.NoError(t, err, "names match case-insensitively")
	_, err = h.Service.UpdateChannel(ctx, alice.Caller, chat.UpdateChannelRequest{StreamID: first, NewName: ptr("lobby")})
	require.NoError(t, err)
	_, err = toName("general")
	requireError(t, err, chat.KindNotFound, chat.CodeStreamDoesNotExist, "Channel 'general' does not exist")
	id, err := toName("lobby")
	require.NoError(t, err)
	assert.Equal(t, ptr(first), getMessage(t, h, alice, id).StreamID)

	second := newChannelBy(t, h, alice, "general", false)
	id, err = toName("general")
	require.NoError(t, err)
	assert.Equal(t, ptr(second), getMessage(t, h, alice, id).StreamID, "the name is the new channel's now")
}

func TestSendSeesAlertWordChangesAtOnce(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "ops", false)
	subscribe(t, h, alice, "ops", bob.ID)
	alerted := func() bool {
		t.Helper()
		m := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "rollout at noon"})
		return slices.Contains(getMessage(t, h, bob, m).Flags, "has_alert_word")
	}
	assert.False(t, alerted())
	addAlertWords(t, h, bob, "rollout")
	assert.True(t, alerted(), "a word added after a send of the same token alerts the next")
	_, err := h.Service.RemoveAlertWords(ctx, bob.Caller, chat.AlertWordsRequest{AlertWords: []string{"rollout"}})
	require.NoError(t, err)
	assert.False(t, alerted(), "a removed word alerts no more")
	addAlertWords(t, h, bob, "rollout")
	assert.True(t, alerted(), "and added again")
}

// A send that sets its sender's topic policy is seen by the sender's next
// send (which then sets nothing), and so is a change through the
// endpoint.
func TestSendSeesTopicPolicyChangesAtOnce(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "general", false)
	onSend := 2
	_, err := h.Service.UpdateSettings(ctx, alice.Caller, chat.UpdateSettingsRequest{SettingsPatch: chat.SettingsPatch{
		AutomaticallyFollowTopicsPolicy: &onSend}})
	require.NoError(t, err)
	sendTo := func() *int {
		t.Helper()
		resp, err := h.Service.SendMessage(ctx, alice.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(id), Topic: ptr("plans"), Content: "x"})
		require.NoError(t, err)
		return resp.AutomaticNewVisibilityPolicy
	}
	// The channel's first message starts a new generation of the caches;
	// later sends keep them.
	send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(id), Topic: ptr("first"), Content: "x"})
	takeEvents(t, h)
	require.NotNil(t, sendTo())
	only(t, takeEvents(t, h), "user_topic", "")
	assert.Nil(t, sendTo(), "followed by the first send")
	for _, ev := range takeEvents(t, h) {
		assert.NotEqual(t, "user_topic", ev.Type, "the second send changes no policy")
	}
	_, err = h.Service.UpdateUserTopic(ctx, alice.Caller, chat.UpdateUserTopicRequest{StreamID: id, Topic: "plans", VisibilityPolicy: chat.TopicPolicyNone})
	require.NoError(t, err)
	resp := sendTo()
	require.NotNil(t, resp, "unfollowed: sending follows again")
	assert.Equal(t, chat.TopicPolicyFollowed, *resp)
}
