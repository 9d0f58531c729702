package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/smtptest"
	"github.com/teamchat/chat/transport/email"
)

// Missed-message notifications, against real parts: emails go through
// transport/email to an SMTP server in the test process; pushes are
// recorded (no push service is reachable here).

// testNotifier sends emails by SMTP and keeps every notification.
type testNotifier struct {
	mailer *email.Sender
	mu     sync.Mutex
	emails []chat.EmailNotification
	pushes []chat.PushNotification
}

func (n *testNotifier) NotifyEmail(ctx context.Context, e chat.EmailNotification) error {
	if err := n.mailer.NotifyEmail(ctx, e); err != nil {
		return err
	}
	n.mu.Lock()
	n.emails = append(n.emails, e)
	n.mu.Unlock()
	return nil
}

func (n *testNotifier) NotifyPush(_ context.Context, p chat.PushNotification) error {
	n.mu.Lock()
	n.pushes = append(n.pushes, p)
	n.mu.Unlock()
	return nil
}

// take returns and forgets what was notified so far.
func (n *testNotifier) take() ([]chat.EmailNotification, []chat.PushNotification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e, p := n.emails, n.pushes
	n.emails, n.pushes = nil, nil
	return e, p
}

type notifyEnv struct {
	*chattest.Harness
	smtp     *smtptest.Server
	notifier *testNotifier
}

func newNotifier(t *testing.T) (*smtptest.Server, *testNotifier) {
	t.Helper()
	srv := smtptest.Start(t)
	mailer, err := email.New(email.Options{Addr: srv.Addr, From: "noreply@chat.example.com", TLS: email.TLSNone})
	require.NoError(t, err)
	return srv, &testNotifier{mailer: mailer}
}

func newNotifyEnv(t *testing.T, opts ...chattest.Option) *notifyEnv {
	t.Helper()
	srv, n := newNotifier(t)
	h := chattest.New(t, append(opts, chattest.WithServiceOptions(chat.WithNotifier(n)))...)
	return &notifyEnv{Harness: h, smtp: srv, notifier: n}
}

// deliver delivers what is due now and returns what went out.
func (e *notifyEnv) deliver(t *testing.T) ([]chat.EmailNotification, []chat.PushNotification) {
	t.Helper()
	_, err := e.Service.DeliverDueNotifications(context.Background())
	require.NoError(t, err)
	return e.notifier.take()
}

// later moves past the default batching period and delivers.
func (e *notifyEnv) later(t *testing.T) ([]chat.EmailNotification, []chat.PushNotification) {
	t.Helper()
	e.Clock.Advance(121 * time.Second)
	return e.deliver(t)
}

func (e *notifyEnv) dm(t *testing.T, from chattest.User, content string, to ...int64) int64 {
	t.Helper()
	return send(t, e.Harness, from, chat.SendMessageRequest{Type: "private", To: chat.ToUsers(to...), Content: content})
}

func (e *notifyEnv) post(t *testing.T, from chattest.User, channel int64, topic, content string) int64 {
	t.Helper()
	return send(t, e.Harness, from, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(channel), Topic: &topic, Content: content})
}

func (e *notifyEnv) settings(t *testing.T, u chattest.User, patch chat.SettingsPatch) {
	t.Helper()
	_, err := e.Service.UpdateSettings(context.Background(), u.Caller, chat.UpdateSettingsRequest{SettingsPatch: patch})
	require.NoError(t, err)
}

func (e *notifyEnv) subProperty(t *testing.T, u chattest.User, channel int64, property string, value any) {
	t.Helper()
	raw, err := json.Marshal(value)
	require.NoError(t, err)
	_, err = e.Service.UpdateSubscriptionProperties(context.Background(), u.Caller, chat.UpdateSubscriptionPropertiesRequest{
		SubscriptionData: []chat.SubscriptionProperty{{StreamID: channel, Property: property, Value: raw}}})
	require.NoError(t, err)
}

func (e *notifyEnv) topicPolicy(t *testing.T, u chattest.User, channel int64, topic string, policy int) {
	t.Helper()
	_, err := e.Service.UpdateUserTopic(context.Background(), u.Caller, chat.UpdateUserTopicRequest{StreamID: channel, Topic: topic, VisibilityPolicy: policy})
	require.NoError(t, err)
}

func (e *notifyEnv) markRead(t *testing.T, u chattest.User, ids ...int64) {
	t.Helper()
	_, err := e.Service.UpdateMessageFlags(context.Background(), u.Caller, chat.UpdateMessageFlagsRequest{Messages: ids, Op: "add", Flag: "read"})
	require.NoError(t, err)
}

// present gives the user a client: an event queue that receives
// messages, and a presence report of activity now.
func (e *notifyEnv) present(t *testing.T, u chattest.User) string {
	t.Helper()
	ctx := context.Background()
	resp, err := e.Service.GetEvents(ctx, u.Caller, chat.GetEventsRequest{DontBlock: ptr(true)})
	require.NoError(t, err)
	_, err = e.Service.UpdatePresence(ctx, u.Caller, chat.UpdatePresenceRequest{Status: "active"})
	require.NoError(t, err)
	return *resp.QueueID
}

func mention(u chattest.User) string { return fmt.Sprintf("@**%s|%d**", u.FullName, u.ID) }

func triggersOf(pushes []chat.PushNotification) map[int64]string {
	out := map[int64]string{}
	for _, p := range pushes {
		out[p.UserID] = p.Trigger
	}
	return out
}

// triggered are the messages an email notifies of (not its context).
func triggered(e chat.EmailNotification) []chat.NotifiedMessage {
	var out []chat.NotifiedMessage
	for _, m := range e.Messages {
		if m.Trigger != "" {
			out = append(out, m)
		}
	}
	return out
}

func emailsTo(emails []chat.EmailNotification) map[int64][]chat.EmailNotification {
	out := map[int64][]chat.EmailNotification{}
	for _, e := range emails {
		out[e.UserID] = append(out[e.UserID], e)
	}
	return out
}

// A direct message to someone away: a push at once, and after the
// batching period one email, through SMTP.
func TestNotifyDirectMessage(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	id := e.dm(t, alice, "Are you coming **tonight**?", bob.ID)

	emails, pushes := e.deliver(t)
	assert.Empty(t, emails, "the email waits for the batching period")
	require.Len(t, pushes, 1)
	p := pushes[0]
	assert.Equal(t, bob.ID, p.UserID)
	assert.Equal(t, id, p.MessageID)
	assert.Equal(t, chat.NotifyTriggerDirect, p.Trigger)
	assert.Equal(t, alice.FullName, p.Title)
	assert.Empty(t, p.Subtitle, "a one-to-one message has no subtitle")
	assert.Equal(t, "Are you coming tonight?", p.Body)
	assert.Equal(t, alice.ID, p.SenderID)
	assert.Equal(t, fmt.Sprintf("%s/#narrow/dm/%d-dm/near/%d", e.RealmURL, alice.ID, id), p.Link)

	e.Clock.Advance(119 * time.Second)
	emails, pushes = e.deliver(t)
	assert.Empty(t, emails)
	assert.Empty(t, pushes, "the push went once")
	emails, _ = e.later(t)
	require.Len(t, emails, 1)
	got := e.smtp.Wait(t, 1, 5*time.Second)
	require.Len(t, got, 1)
	m := got[0]
	assert.Equal(t, []string{bob.Email}, m.To)
	assert.Equal(t, "DMs with "+alice.FullName, m.Subject)
	assert.Contains(t, m.Text, "> Are you coming **tonight**?")
	assert.Contains(t, m.HTML, "<strong>tonight</strong>")
	assert.Empty(t, emails[0].Reason, "direct messages need no reason")
	assert.NotContains(t, m.Text, "You are receiving this because")
	assert.Contains(t, m.Text, fmt.Sprintf("%s/#narrow/dm/%d-dm", e.RealmURL, alice.ID))

	_, _ = e.later(t)
	assert.Len(t, e.smtp.Messages(), 1, "sent once")
	assert.Equal(t, 0, pendingCount(t, e))
}

func pendingCount(t *testing.T, e *notifyEnv) int {
	t.Helper()
	_, ok, err := e.Store.NextNotificationAt(context.Background(), 1<<40)
	require.NoError(t, err)
	if ok {
		return 1
	}
	return 0
}

// Messages of one conversation within the batching period make one email;
// another conversation makes its own, at the same time.
func TestNotifyBatching(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	carol := e.NewUser(t, chat.RoleMember)
	e.dm(t, alice, "first", bob.ID)
	e.Clock.Advance(60 * time.Second)
	e.dm(t, alice, "second", bob.ID)
	e.dm(t, carol, "from carol", bob.ID)
	e.Clock.Advance(61 * time.Second)
	emails, _ := e.deliver(t)
	require.Len(t, emails, 2, "the first message's period decides for all of bob's")
	byConv := map[string]chat.EmailNotification{}
	for _, m := range emails {
		byConv[m.Subject] = m
	}
	two := byConv["DMs with "+alice.FullName]
	require.Len(t, two.Messages, 2)
	assert.Equal(t, "first", two.Messages[0].Content)
	assert.Equal(t, "second", two.Messages[1].Content)
	assert.Contains(t, byConv, "DMs with "+carol.FullName)
	assert.Len(t, e.smtp.Wait(t, 2, 5*time.Second), 2)

	// A later message starts a new period.
	e.dm(t, alice, "third", bob.ID)
	emails, _ = e.deliver(t)
	assert.Empty(t, emails)
	emails, _ = e.later(t)
	require.Len(t, emails, 1)
	assert.Equal(t, "third", emails[0].Messages[0].Content)
}

// A message read before its notification goes out is not notified.
func TestNotifyReadBeforeSend(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, e.Harness, alice, "general", false)
	subscribe(t, e.Harness, alice, "general", bob.ID)
	d1 := e.dm(t, alice, "read soon", bob.ID)
	d2 := e.dm(t, alice, "left unread", bob.ID)
	c1 := e.post(t, alice, ch, "plans", "hi "+mention(bob))
	e.markRead(t, bob, d1, c1)
	emails, pushes := e.later(t)
	require.Len(t, emails, 1)
	require.Len(t, emails[0].Messages, 1)
	assert.Equal(t, d2, emails[0].Messages[0].ID)
	require.Len(t, pushes, 1, "the read ones are not pushed either")
	assert.Equal(t, d2, pushes[0].MessageID)
}

// Who is notified of what, as the reference decides it. Each case sends
// one message from alice to the channel "general" (topic "plans") or to
// bob, with bob away, and says what bob gets.
func TestNotifyRules(t *testing.T) {
	type setup func(t *testing.T, e *notifyEnv, bob, alice chattest.User, ch int64)
	noSetup := func(*testing.T, *notifyEnv, chattest.User, chattest.User, int64) {}
	for _, tc := range []struct {
		name    string
		setup   setup
		content func(bob chattest.User) string
		direct  bool
		// email and push are the expected triggers ("" for none).
		email, push string
		reason      string
	}{
		{name: "direct message", direct: true, content: func(chattest.User) string { return "hello" },
			email: chat.NotifyTriggerDirect, push: chat.NotifyTriggerDirect},
		{name: "direct message, offline email off", direct: true, content: func(chattest.User) string { return "hello" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, _ int64) {
				e.settings(t, bob, chat.SettingsPatch{EnableOfflineEmailNotifications: ptr(false)})
			}, push: chat.NotifyTriggerDirect},
		{name: "direct message, offline push off", direct: true, content: func(chattest.User) string { return "hello" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, _ int64) {
				e.settings(t, bob, chat.SettingsPatch{EnableOfflinePushNotifications: ptr(false)})
			}, email: chat.NotifyTriggerDirect},
		{name: "direct message from a muted user", direct: true, content: func(chattest.User) string { return "hello" },
			setup: func(t *testing.T, e *notifyEnv, bob, alice chattest.User, _ int64) {
				_, err := e.Service.MuteUser(context.Background(), bob.Caller, chat.MuteUserRequest{MutedUserID: alice.ID})
				require.NoError(t, err)
			}},
		{name: "plain channel message", setup: noSetup, content: func(chattest.User) string { return "lunch?" }},
		{name: "personal mention", content: func(bob chattest.User) string { return "lunch, " + mention(bob) + "?" },
			email: chat.NotifyTriggerMention, push: chat.NotifyTriggerMention, reason: "You are receiving this because you were personally mentioned."},
		{name: "personal mention in a muted channel", content: func(bob chattest.User) string { return mention(bob) },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.subProperty(t, bob, ch, "is_muted", true)
			}, email: chat.NotifyTriggerMention, push: chat.NotifyTriggerMention},
		{name: "personal mention, offline email off", content: func(bob chattest.User) string { return mention(bob) },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, _ int64) {
				e.settings(t, bob, chat.SettingsPatch{EnableOfflineEmailNotifications: ptr(false)})
			}, push: chat.NotifyTriggerMention},
		{name: "personal mention by a muted user", content: func(bob chattest.User) string { return mention(bob) },
			setup: func(t *testing.T, e *notifyEnv, bob, alice chattest.User, _ int64) {
				_, err := e.Service.MuteUser(context.Background(), bob.Caller, chat.MuteUserRequest{MutedUserID: alice.ID})
				require.NoError(t, err)
			}},
		{name: "group mention", content: func(chattest.User) string { return "@*cooks* lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, alice chattest.User, _ int64) {
				createGroup(t, e.Harness, alice, "cooks", bob.ID, alice.ID)
			}, email: chat.NotifyTriggerMention, push: chat.NotifyTriggerMention, reason: "You are receiving this because @cooks was mentioned."},
		{name: "channel wildcard", content: func(chattest.User) string { return "@**all** lunch?" },
			email: chat.NotifyTriggerChannelWildcard, push: chat.NotifyTriggerChannelWildcard,
			reason: "You are receiving this because everyone was mentioned in #general."},
		{name: "channel wildcard, wildcard notifications off", content: func(chattest.User) string { return "@**all** lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, _ int64) {
				e.settings(t, bob, chat.SettingsPatch{WildcardMentionsNotify: ptr(false)})
			}},
		{name: "channel wildcard, on for the channel only", content: func(chattest.User) string { return "@**everyone** lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.settings(t, bob, chat.SettingsPatch{WildcardMentionsNotify: ptr(false)})
				e.subProperty(t, bob, ch, "wildcard_mentions_notify", true)
			}, email: chat.NotifyTriggerChannelWildcard, push: chat.NotifyTriggerChannelWildcard},
		{name: "channel wildcard in a muted channel", content: func(chattest.User) string { return "@**all** lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.subProperty(t, bob, ch, "is_muted", true)
			}},
		{name: "channel wildcard in an unmuted topic of a muted channel", content: func(chattest.User) string { return "@**all** lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.subProperty(t, bob, ch, "is_muted", true)
				e.topicPolicy(t, bob, ch, "plans", chat.TopicPolicyUnmuted)
			}, email: chat.NotifyTriggerChannelWildcard, push: chat.NotifyTriggerChannelWildcard},
		{name: "channel wildcard in a followed topic", content: func(chattest.User) string { return "@**all** lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.topicPolicy(t, bob, ch, "plans", chat.TopicPolicyFollowed)
			}, email: chat.NotifyTriggerChannelWildcardFollowed, push: chat.NotifyTriggerChannelWildcardFollowed,
			reason: "You are receiving this because you have wildcard mention notifications enabled for topics you follow."},
		{name: "topic wildcard, as a participant", content: func(chattest.User) string { return "@**topic** lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.post(t, bob, ch, "plans", "I was here")
				e.settings(t, bob, chat.SettingsPatch{EnableFollowedTopicWildcardMentionsNotify: ptr(false)}) // bob follows his topic
			}, email: chat.NotifyTriggerTopicWildcard, push: chat.NotifyTriggerTopicWildcard,
			reason: "You are receiving this because all topic participants were mentioned in #general > plans."},
		{name: "topic wildcard, not a participant", content: func(chattest.User) string { return "@**topic** lunch?" }},
		{name: "topic wildcard in a muted topic", content: func(chattest.User) string { return "@**topic** lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.post(t, bob, ch, "plans", "I was here")
				e.topicPolicy(t, bob, ch, "plans", chat.TopicPolicyMuted)
			}},
		{name: "followed topic", content: func(chattest.User) string { return "lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.topicPolicy(t, bob, ch, "plans", chat.TopicPolicyFollowed)
			}, email: chat.NotifyTriggerFollowedEmail, push: chat.NotifyTriggerFollowedPush,
			reason: "You are receiving this because you have email notifications enabled for topics you follow."},
		{name: "followed topic, followed-topic email off", content: func(chattest.User) string { return "lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.topicPolicy(t, bob, ch, "plans", chat.TopicPolicyFollowed)
				e.settings(t, bob, chat.SettingsPatch{EnableFollowedTopicEmailNotifications: ptr(false)})
			}, push: chat.NotifyTriggerFollowedPush},
		{name: "channel email on", content: func(chattest.User) string { return "lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.subProperty(t, bob, ch, "email_notifications", true)
			}, email: chat.NotifyTriggerChannelEmail,
			reason: "You are receiving this because you have email notifications enabled for #general."},
		{name: "channel push on", content: func(chattest.User) string { return "lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.subProperty(t, bob, ch, "push_notifications", true)
			}, push: chat.NotifyTriggerChannelPush},
		{name: "channel email on, topic muted", content: func(chattest.User) string { return "lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.subProperty(t, bob, ch, "email_notifications", true)
				e.topicPolicy(t, bob, ch, "plans", chat.TopicPolicyMuted)
			}},
		{name: "channel email by default", content: func(chattest.User) string { return "lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, _ int64) {
				e.settings(t, bob, chat.SettingsPatch{EnableStreamEmailNotifications: ptr(true), EnableStreamPushNotifications: ptr(true)})
			}, email: chat.NotifyTriggerChannelEmail, push: chat.NotifyTriggerChannelPush},
		{name: "channel email by default, off for the channel", content: func(chattest.User) string { return "lunch?" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				e.settings(t, bob, chat.SettingsPatch{EnableStreamEmailNotifications: ptr(true)})
				e.subProperty(t, bob, ch, "email_notifications", false)
			}},
		{name: "alert word", content: func(chattest.User) string { return "the pizza is here" },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, _ int64) {
				_, err := e.Service.AddAlertWords(context.Background(), bob.Caller, chat.AlertWordsRequest{AlertWords: []string{"pizza"}})
				require.NoError(t, err)
			}},
		{name: "mention of someone not subscribed", content: func(bob chattest.User) string { return mention(bob) },
			setup: func(t *testing.T, e *notifyEnv, bob, _ chattest.User, ch int64) {
				_, err := e.Service.Unsubscribe(context.Background(), bob.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"general"}})
				require.NoError(t, err)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newNotifyEnv(t)
			alice := e.NewUser(t, chat.RoleMember)
			bob := e.NewUser(t, chat.RoleMember)
			ch := newChannelBy(t, e.Harness, alice, "general", false)
			subscribe(t, e.Harness, alice, "general", bob.ID)
			e.post(t, alice, ch, "plans", "the topic starts") // alice, not bob, follows it
			if tc.setup != nil {
				tc.setup(t, e, bob, alice, ch)
			}
			e.later(t) // what the setup sent
			if tc.direct {
				e.dm(t, alice, tc.content(bob), bob.ID)
			} else {
				e.post(t, alice, ch, "plans", tc.content(bob))
			}
			emails, pushes := e.later(t)
			assert.Equal(t, tc.push, triggersOf(pushes)[bob.ID], "push")
			got := emailsTo(emails)[bob.ID]
			if tc.email == "" {
				assert.Empty(t, got, "no email")
				return
			}
			require.Len(t, got, 1)
			notified := triggered(got[0])
			require.Len(t, notified, 1, "a mention's email also shows the topic's messages before it, as context")
			assert.Equal(t, tc.email, notified[0].Trigger)
			if tc.reason != "" {
				assert.Equal(t, tc.reason, got[0].Reason)
				assert.Contains(t, got[0].Text, tc.reason)
			}
			for _, m := range emails {
				assert.NotEqual(t, alice.ID, m.UserID, "never one's own message")
			}
		})
	}
}

// Bots and deactivated users are never notified; one's own messages
// never notify oneself.
func TestNotifyNeverBotsNorSelf(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	bot := e.NewBot(t, alice)
	ch := newChannelBy(t, e.Harness, alice, "general", false)
	subscribe(t, e.Harness, alice, "general", bob.ID, bot.ID)
	e.settings(t, alice, chat.SettingsPatch{EnableStreamEmailNotifications: ptr(true)})
	e.dm(t, alice, "to a bot", bot.ID)
	e.dm(t, alice, "to myself", alice.ID)
	e.post(t, alice, ch, "t", mention(bot)+" "+mention(alice)+" "+mention(bob))
	e.Deactivate(t, bob)
	emails, pushes := e.later(t)
	assert.Empty(t, emails)
	assert.Empty(t, pushes)
}

// "Away" is the reference's: no event queue accepting messages, or no
// activity reported within the offline threshold. Email needs it; a push
// goes to a present user too, unless enable_online_push_notifications is
// off.
func TestNotifyOnlyWhenAway(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	present := e.NewUser(t, chat.RoleMember)
	quiet := e.NewUser(t, chat.RoleMember)     // a queue, but no activity for long
	gone := e.NewUser(t, chat.RoleMember)      // active a moment ago, but no queue
	noOnline := e.NewUser(t, chat.RoleMember)  // present, with online pushes off
	invisible := e.NewUser(t, chat.RoleMember) // a queue, presence off: their reports are not kept
	e.present(t, invisible)
	e.settings(t, invisible, chat.SettingsPatch{PresenceEnabled: ptr(false)})
	e.present(t, present)
	e.present(t, quiet)
	e.present(t, noOnline)
	e.settings(t, noOnline, chat.SettingsPatch{EnableOnlinePushNotifications: ptr(false)})
	_, err := e.Service.UpdatePresence(context.Background(), gone.Caller, chat.UpdatePresenceRequest{Status: "active"})
	require.NoError(t, err)
	e.Clock.Advance(10 * time.Minute)
	_, err = e.Service.UpdatePresence(context.Background(), present.Caller, chat.UpdatePresenceRequest{Status: "active"})
	require.NoError(t, err)
	_, err = e.Service.UpdatePresence(context.Background(), noOnline.Caller, chat.UpdatePresenceRequest{Status: "active"})
	require.NoError(t, err)
	_, err = e.Service.UpdatePresence(context.Background(), gone.Caller, chat.UpdatePresenceRequest{Status: "active"})
	require.NoError(t, err)

	for _, u := range []chattest.User{present, quiet, gone, noOnline, invisible} {
		e.dm(t, alice, "ping", u.ID)
	}
	_, pushes := e.deliver(t)
	assert.ElementsMatch(t, []int64{present.ID, quiet.ID, gone.ID, invisible.ID}, slices.Collect(mapKeysOf(triggersOf(pushes))),
		"pushes: to the present too, except with online pushes off")
	// Presence reports keep the present ones present through the period.
	e.Clock.Advance(100 * time.Second)
	for _, u := range []chattest.User{present, noOnline} {
		_, err = e.Service.UpdatePresence(context.Background(), u.Caller, chat.UpdatePresenceRequest{Status: "active"})
		require.NoError(t, err)
	}
	e.Clock.Advance(21 * time.Second)
	emails, _ := e.deliver(t)
	assert.ElementsMatch(t, []int64{quiet.ID, gone.ID}, slices.Collect(mapKeysOf(emailsTo(emails))), "emails: only to those away")
	assert.Equal(t, 0, pendingCount(t, e), "the present ones' emails are dropped, not kept")
}

func mapKeysOf[V any](m map[int64]V) func(func(int64) bool) {
	return func(yield func(int64) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Settings changed after a send apply to what has not gone out.
func TestNotifySettingsChangedAfterSend(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	carol := e.NewUser(t, chat.RoleMember)
	dan := e.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, e.Harness, alice, "general", false)
	subscribe(t, e.Harness, alice, "general", bob.ID, carol.ID, dan.ID)
	e.subProperty(t, carol, ch, "email_notifications", true)
	e.dm(t, alice, "secret plans", bob.ID)
	e.dm(t, alice, "more", dan.ID)
	e.post(t, alice, ch, "t", "channel news")

	e.settings(t, bob, chat.SettingsPatch{EnableOfflineEmailNotifications: ptr(false)})
	e.subProperty(t, carol, ch, "is_muted", true)
	e.settings(t, dan, chat.SettingsPatch{MessageContentInEmailNotifications: ptr(false),
		RealmNameInEmailNotificationsPolicy: ptr(2)})
	emails, _ := e.later(t)
	require.Len(t, emails, 1, "bob turned emails off, carol muted the channel")
	m := emails[0]
	assert.Equal(t, dan.ID, m.UserID)
	assert.True(t, m.ContentHidden)
	assert.Equal(t, "New messages [Test Organization]", m.Subject)
	assert.NotContains(t, m.Text, "> more")
	assert.NotContains(t, m.Text, alice.FullName)
	assert.NotContains(t, m.HTML, alice.FullName)
	assert.Contains(t, m.Text, "This email does not include message content because you have disabled message content appearing in email notifications.")
	assert.Contains(t, m.Text, "View or reply in Test Organization:")
	assert.Empty(t, m.Messages[0].Content)

	// A shorter batching period applies to what is pending; a longer one
	// too.
	e.dm(t, alice, "soon", carol.ID)
	e.dm(t, alice, "later", dan.ID)
	e.settings(t, carol, chat.SettingsPatch{EmailNotificationsBatchingPeriodSeconds: ptr(10)})
	e.settings(t, dan, chat.SettingsPatch{EmailNotificationsBatchingPeriodSeconds: ptr(600)})
	e.Clock.Advance(11 * time.Second)
	emails, _ = e.deliver(t)
	require.Len(t, emails, 1)
	assert.Equal(t, carol.ID, emails[0].UserID)
	emails, _ = e.later(t)
	assert.Empty(t, emails)
	e.Clock.Advance(470 * time.Second)
	emails, _ = e.deliver(t)
	require.Len(t, emails, 1)
	assert.Equal(t, dan.ID, emails[0].UserID)
}

// Edits and deletions before sending update or drop what is pending; an
// edit that mentions someone new notifies them.
func TestNotifyEditsAndDeletions(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	carol := e.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, e.Harness, alice, "general", false)
	subscribe(t, e.Harness, alice, "general", bob.ID, carol.ID)
	for _, u := range []chattest.User{bob, carol} { // no topic followed on being mentioned
		e.settings(t, u, chat.SettingsPatch{AutomaticallyFollowTopicsWhereMentioned: ptr(false)})
	}
	ctx := context.Background()
	edit := func(id int64, content string) {
		_, err := e.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: id, Content: &content})
		require.NoError(t, err)
	}
	edited := e.dm(t, alice, "typo", bob.ID)
	edit(edited, "fixed")
	deleted := e.dm(t, alice, "oops", carol.ID)
	_, err := e.Service.DeleteMessage(ctx, alice.Caller, chat.DeleteMessageRequest{MessageID: deleted})
	require.NoError(t, err)
	unmentioned := e.post(t, alice, ch, "t", "hey "+mention(carol))
	edit(unmentioned, "hey everyone")
	added := e.post(t, alice, ch, "t2", "hey")
	edit(added, "hey "+mention(bob))
	moved := e.post(t, alice, ch, "old", "look "+mention(carol))
	_, err = e.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: moved, Topic: ptr("new")})
	require.NoError(t, err)

	emails, pushes := e.deliver(t)
	assert.Empty(t, emails)
	pushed := map[int64]bool{}
	for _, p := range pushes {
		pushed[p.MessageID] = true
	}
	assert.True(t, pushed[added], "the mention an edit added is pushed")
	emails, _ = e.later(t)
	got := emailsTo(emails)
	require.Len(t, got[bob.ID], 2)
	var contents []string
	for _, m := range got[bob.ID] {
		for _, msg := range triggered(m) {
			contents = append(contents, msg.Content)
		}
	}
	assert.ElementsMatch(t, []string{"fixed", "hey " + mention(bob)}, contents, "sent as edited")
	require.Len(t, got[carol.ID], 1, "the deleted message and the withdrawn mention are dropped")
	require.Len(t, triggered(got[carol.ID][0]), 1)
	assert.Equal(t, moved, triggered(got[carol.ID][0])[0].ID)
	assert.Equal(t, "#general > new", got[carol.ID][0].Subject, "a moved message in its new conversation")
	assert.Equal(t, 0, pendingCount(t, e))

	// An edit does not notify again those already mentioned.
	edit(added, "hey "+mention(bob)+" again")
	emails, pushes = e.later(t)
	assert.Empty(t, emails)
	assert.Empty(t, pushes)
}

// A send to a channel whose subscribers' settings select nothing queues
// nothing; a channel-wide mention queues one fan-out row, which becomes
// the subscribers' rows in the background.
func TestNotifyChannelWildcardFanout(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, e.Harness, alice, "all-hands", false)
	var ids []int64
	for range 12 {
		u := e.NewUser(t, chat.RoleMember)
		ids = append(ids, u.ID)
	}
	subscribe(t, e.Harness, alice, "all-hands", ids...)
	e.post(t, alice, ch, "t", "nothing for anyone")
	assert.Equal(t, 0, pendingCount(t, e), "nobody's settings select it: nothing queued")
	e.post(t, alice, ch, "t", "@**all** meeting at noon")
	emails, pushes := e.later(t)
	assert.Len(t, pushes, 12)
	assert.Len(t, emails, 12)
	for _, m := range emails {
		require.Len(t, triggered(m), 1)
		assert.Equal(t, chat.NotifyTriggerChannelWildcard, triggered(m)[0].Trigger)
	}
	assert.Len(t, e.smtp.Wait(t, 12, 5*time.Second), 12)
}

// A recipient with more pending messages than a claim's batch gets them
// in one email, and the others theirs in the same call.
func TestNotifyManyPending(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	carol := e.NewUser(t, chat.RoleMember)
	for i := range 60 {
		e.dm(t, alice, fmt.Sprint("message ", i), bob.ID)
	}
	e.dm(t, alice, "just one", carol.ID)
	e.Clock.Advance(121 * time.Second)
	n, err := e.Service.DeliverDueNotifications(context.Background())
	require.NoError(t, err)
	emails, pushes := e.notifier.take()
	assert.Equal(t, 2+61, n, "two emails, 61 pushes")
	assert.Len(t, pushes, 61)
	got := emailsTo(emails)
	require.Len(t, got[bob.ID], 1)
	assert.Len(t, got[bob.ID][0].Messages, 60)
	assert.Len(t, got[carol.ID], 1)
}
