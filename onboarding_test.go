package chat_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// subscribedNames lists the channels the user is subscribed to.
func subscribedNames(t *testing.T, h *chattest.Harness, u chattest.User) []string {
	t.Helper()
	subs, err := h.Service.GetSubscriptions(context.Background(), u.Caller, chat.GetSubscriptionsRequest{})
	require.NoError(t, err)
	var names []string
	for _, s := range subs.Subscriptions {
		names = append(names, s.Name)
	}
	return names
}

var defaultChannels = []string{chat.DiscussionChannelName, chat.SandboxChannelName, chat.GeneralChannelName}

// A new organization as the reference makes it: three default channels,
// its owner in them, the Welcome Bot's messages (one waved at), and new
// accounts, made or invited, joining the default channels; bots do not.
func TestNewOrganizationOnboarding(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithOnboarding())
	channels, err := h.Service.GetChannels(ctx, h.Owner.Caller, chat.GetChannelsRequest{IncludeDefault: ptr(true)})
	require.NoError(t, err)
	desc := map[string]string{}
	for _, ch := range channels.Streams {
		require.NotNil(t, ch.IsDefault)
		assert.True(t, *ch.IsDefault, ch.Name)
		assert.False(t, ch.InviteOnly, ch.Name)
		desc[ch.Name] = ch.Description
	}
	assert.Equal(t, map[string]string{"teamchat": "Questions and discussion about using teamchat.",
		"sandbox": "Experiment with teamchat here. :test_tube:", "general": "For team-wide conversations"}, desc)
	assert.ElementsMatch(t, defaultChannels, subscribedNames(t, h, h.Owner))

	// The Welcome Bot's messages, in the reference's order and topics.
	resp, err := h.Service.GetMessages(ctx, h.Owner.Caller, chat.GetMessagesRequest{Anchor: ptr("oldest"), NumAfter: ptr(100), NumBefore: ptr(0)})
	require.NoError(t, err)
	welcomeBot := systemBots(t, h)["welcome-bot@teamchat.internal"]
	type where struct{ channel, topic string }
	var got []where
	waved := 0
	for _, m := range resp.Messages {
		assert.Equal(t, welcomeBot, m.SenderID)
		assert.NotContains(t, m.Flags, "read", "unread, as in the reference")
		got = append(got, where{m.DisplayRecipient.(string), m.Subject})
		for _, r := range m.Reactions {
			assert.Equal(t, "wave", r.EmojiName)
			assert.Equal(t, welcomeBot, r.UserID)
			assert.Contains(t, m.Content, "greetings")
			waved++
		}
	}
	assert.Equal(t, 1, waved)
	assert.Equal(t, []where{{"teamchat", "moving messages"}, {"teamchat", "moving messages"},
		{"sandbox", "experiments"}, {"sandbox", "experiments"},
		{"sandbox", "start a conversation"}, {"sandbox", "start a conversation"}, {"sandbox", "start a conversation"},
		{"general", "greetings"}, {"general", "greetings"},
		{"teamchat", "welcome to teamchat!"}, {"teamchat", "welcome to teamchat!"}, {"teamchat", "welcome to teamchat!"}}, got)

	// New accounts join the default channels and read their history.
	created, err := h.Service.CreateUser(ctx, h.Owner.Caller, chat.CreateUserRequest{Email: "new@example.com", Password: chattest.Password, FullName: "New Person"})
	require.NoError(t, err)
	newcomer := chattest.User{ID: created.UserID, Caller: chat.Caller{RealmID: h.RealmID, UserID: created.UserID}}
	assert.ElementsMatch(t, defaultChannels, subscribedNames(t, h, newcomer))
	history, err := h.Service.GetMessages(ctx, newcomer.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100), NumAfter: ptr(0),
		Narrow: ptr(`[{"operator": "channel", "operand": "general"}]`)})
	require.NoError(t, err)
	assert.Len(t, history.Messages, 2, "the greetings")
	assert.ElementsMatch(t, defaultChannels, subscribedNames(t, h, h.NewUser(t, chat.RoleMember)), "provisioned")

	link, err := h.Service.CreateInviteLink(ctx, h.Owner.Caller, chat.CreateInviteLinkRequest{IncludeRealmDefaultSubscriptions: ptr(true)})
	require.NoError(t, err)
	accepted, err := h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: link.InviteLink, Email: ptr("invited@example.com"),
		FullName: "Invited Person", Password: chattest.Password})
	require.NoError(t, err)
	invited := chattest.User{ID: accepted.UserID, Caller: chat.Caller{RealmID: h.RealmID, UserID: accepted.UserID}}
	assert.ElementsMatch(t, defaultChannels, subscribedNames(t, h, invited))

	bot := h.NewBot(t, h.Owner)
	assert.Empty(t, subscribedNames(t, h, bot), "bots join no default channel")
}

// Without onboarding (a host that brings its own content), nothing is made
// but the internal bots.
func TestOrganizationWithoutOnboarding(t *testing.T) {
	h := chattest.New(t)
	channels, err := h.Service.GetChannels(context.Background(), h.Owner.Caller, chat.GetChannelsRequest{})
	require.NoError(t, err)
	assert.Empty(t, channels.Streams)
	assert.Len(t, systemBots(t, h), 3)
}
