package chat

import (
	"context"
	"fmt"

	"github.com/teamchat/chat/storage"
)

// A new organization as the reference makes it (create_realm.py's
// do_create_realm and onboarding.py's send_initial_realm_messages at
// feature level 372): three public channels, every one a default channel
// that new users join, and the Welcome Bot's first messages in them, so
// that the first person in sees conversations rather than an empty page.
// The reference's channel about the product itself is named after the
// product ("Zulip"); here after ours. Its help-center links point at
// pages this server does not serve and are left out of the words.

// ProductName is the server's name for itself where the reference says
// "Zulip" in what a new organization is given.
const ProductName = "teamchat"

// Onboarding channels (the reference's ZULIP_DISCUSSION_CHANNEL_NAME,
// ZULIP_SANDBOX_CHANNEL_NAME and DEFAULT_NOTIFICATION_STREAM_NAME).
const (
	DiscussionChannelName = ProductName
	SandboxChannelName    = "sandbox"
	GeneralChannelName    = "general"
)

// onboardingChannels are made in this order, with these descriptions.
var onboardingChannels = []struct{ name, description string }{
	{DiscussionChannelName, "Questions and discussion about using " + ProductName + "."},
	{SandboxChannelName, "Experiment with " + ProductName + " here. :test_tube:"},
	{GeneralChannelName, "For team-wide conversations"},
}

// welcomeTopic is the main welcome message's topic.
const welcomeTopic = "welcome to " + ProductName + "!"

// onboardingMessages are the Welcome Bot's messages, in the order sent:
// the last ones are the most visible in views sorted newest first.
var onboardingMessages = []struct{ channel, topic, content string }{
	{DiscussionChannelName, "moving messages", "If anything is out of place, it’s easy to move messages, rename and split topics, " +
		"or even move a topic to a different channel."},
	{DiscussionChannelName, "moving messages", ":point_right: Try moving this message to another topic and back."},
	{SandboxChannelName, "experiments", ":point_right:  Use this topic to try out " + ProductName + "'s messaging features."},
	{SandboxChannelName, "experiments", "```spoiler Want to see some examples?\n\n````python\n\nprint(\"code blocks\")\n\n````\n\n" +
		"- bulleted\n- lists\n\nLink to a conversation: #**" + DiscussionChannelName + ">" + welcomeTopic + "**\n\n```"},
	{SandboxChannelName, "start a conversation", "To kick off a new conversation, pick a channel in the left sidebar, " +
		"and click the `+` button next to its name."},
	{SandboxChannelName, "start a conversation", "Label your conversation with a topic. Think about finishing the sentence: " +
		"“Hey, can we chat about…?”"},
	{SandboxChannelName, "start a conversation", ":point_right: Try starting a new conversation in this channel."},
	{GeneralChannelName, "greetings", "This **greetings** topic is a great place to say “hi” :wave: to your teammates."},
	{GeneralChannelName, "greetings", ":point_right: Click on this message to start a new message in the same conversation."},
	{DiscussionChannelName, welcomeTopic, ProductName + " is organized to help you communicate more efficiently. " +
		"Conversations are labeled with topics, which summarize what the conversation is about.\n\n" +
		"For example, this message is in the “" + welcomeTopic + "” topic in the #**" + DiscussionChannelName + "** channel, " +
		"as you can see in the left sidebar and above."},
	{DiscussionChannelName, welcomeTopic, "You can read " + ProductName + " one conversation at a time, seeing each message in context, " +
		"no matter how many other conversations are going on."},
	{DiscussionChannelName, welcomeTopic, ":point_right: When you're ready, check out your inbox for other conversations with unread messages."},
}

// greetingsReacted is the message the Welcome Bot waves at (the first of
// the greetings topic).
const greetingsReacted = 7

// onboard makes the organization's default channels, subscribes its owner
// (new users join them as they are made) and sends the Welcome Bot's
// messages.
func (s *Service) onboard(ctx context.Context, realm *storage.Realm, owner Caller) error {
	specs := make([]ChannelSpec, len(onboardingChannels))
	for i, ch := range onboardingChannels {
		specs[i] = ChannelSpec{Name: ch.name, Description: &ch.description}
	}
	yes := true
	if _, err := s.Subscribe(ctx, owner, SubscribeRequest{Subscriptions: specs, IsDefaultStream: &yes}); err != nil {
		return fmt.Errorf("default channels: %w", err)
	}
	bot, err := s.systemBot(ctx, realm, welcomeBotKind)
	if err != nil {
		return err
	}
	channels := map[string]*storage.Stream{}
	for _, ch := range onboardingChannels {
		if channels[ch.name], err = s.reads().channelByName(ctx, realm.ID, ch.name); err != nil {
			return err
		}
	}
	var wave int64
	for i, m := range onboardingMessages {
		id, err := s.sendInternalMessage(ctx, realm, bot, channels[m.channel], m.topic, m.content, storage.MessageNormal, nil)
		if err != nil {
			return fmt.Errorf("welcome message: %w", err)
		}
		if i == greetingsReacted {
			wave = id
		}
	}
	_, err = s.AddReaction(ctx, Caller{RealmID: realm.ID, UserID: bot.ID}, AddReactionRequest{MessageID: wave, EmojiName: "wave"})
	return err
}
