package chat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// The email's text and HTML follow the reference's missed-message email
// (missed_message.txt, .html, .subject.txt): the conversation, the
// messages in blocks by sender, why it was sent, a link to reply, and
// how to change it.
func TestNotifyEmailContent(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	carol := e.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, e.Harness, alice, "general", false)
	subscribe(t, e.Harness, alice, "general", bob.ID, carol.ID)
	e.Clock.Advance(time.Hour)
	e.post(t, carol, ch, "plans", "too old to be context")
	e.Clock.Advance(20 * time.Minute)
	e.post(t, carol, ch, "plans", "what about lunch?")
	e.later(t)
	e.post(t, alice, ch, "plans", "sure "+mention(bob)+" :smile: see #**general>plans** and [the doc](/help/lunch)")
	e.post(t, alice, ch, "plans", "```spoiler Where\nthe roof\n```")
	e.post(t, carol, ch, "plans", "> quoted\n\nok")
	_, err := e.Service.UpdateMessage(context.Background(), alice.Caller, chat.UpdateMessageRequest{MessageID: e.post(t, alice, ch, "other", "x"), Content: ptr("x")})
	require.NoError(t, err)
	emails, _ := e.later(t)
	got := emailsTo(emails)[bob.ID]
	require.Len(t, got, 1, "one conversation, one email")
	m := got[0]
	assert.Equal(t, "#general > plans", m.Subject)
	assert.Equal(t, bob.Email, m.To)
	assert.Equal(t, "Test Organization notifications", m.FromName)
	assert.Equal(t, fmt.Sprintf("%s/#narrow/channel/%d-general/topic/plans", e.RealmURL, ch), m.Link)
	assert.Equal(t, e.RealmURL+"/#settings/notifications", m.SettingsLink)
	// The mention, carol's message of the quarter hour before it as
	// context, and the topic's next messages: bob follows the topic since
	// he was mentioned in it (automatically_follow_topics_where_mentioned).
	require.Len(t, m.Messages, 4)
	assert.Equal(t, "what about lunch?", m.Messages[0].Content)
	assert.Empty(t, m.Messages[0].Trigger)
	assert.Equal(t, chat.NotifyTriggerMention, m.Messages[1].Trigger)
	assert.Equal(t, chat.NotifyTriggerFollowedEmail, m.Messages[2].Trigger)
	assert.Equal(t, chat.NotifyTriggerFollowedEmail, m.Messages[3].Trigger)
	assert.Equal(t, 3, strings.Count(m.HTML, `<div class="missed_message">`), "a block per run of one sender")
	assert.Contains(t, m.HTML, "<b>"+carol.FullName+"</b>: <blockquote>", "before a message that starts with no paragraph")

	text := m.Text
	assert.True(t, strings.HasPrefix(text, "general > plans\n\n"), text)
	assert.Contains(t, text, carol.FullName+":\n> what about lunch?\n\n"+alice.FullName+":\n> sure "+mention(bob))
	assert.NotContains(t, text, "too old")
	assert.Contains(t, text, "--\nYou are receiving this because you were personally mentioned.\n\n")
	assert.Contains(t, text, "Reply in Test Organization:\n\n"+m.Link+"\n")
	assert.Contains(t, text, "Do not reply to this email.")
	assert.True(t, strings.HasSuffix(text, "Manage email preferences:\n\n"+m.SettingsLink+"\n"), text)

	h := m.HTML
	assert.Contains(t, h, `<div class="missed_message">`)
	assert.Contains(t, h, "<p><b>"+alice.FullName+"</b>: sure ")
	assert.Contains(t, h, "🙂", "emoji as characters")
	assert.NotContains(t, h, ":smile:")
	assert.Contains(t, h, `href="`+e.RealmURL+`/#narrow/channel/`, "links absolute")
	assert.Contains(t, h, `href="`+e.RealmURL+`/help/lunch"`)
	assert.NotContains(t, h, `href="/`)
	assert.Contains(t, h, "You are receiving this because you were personally mentioned.<br />")
	assert.Contains(t, h, `<a href="`+m.Link+`">Reply in Test Organization</a>, or <a href="`+m.SettingsLink+`">manage email preferences</a>.`)
	assert.Contains(t, h, `>general</a> &gt; <a href="`+m.Link+`">plans</a>`, "the conversation")

	// What the SMTP server got is that email.
	var mail *struct{ subject, text, html string }
	for _, got := range e.smtp.Messages() {
		if got.To[0] == bob.Email {
			mail = &struct{ subject, text, html string }{got.Subject, got.Text, got.HTML}
		}
	}
	require.NotNil(t, mail)
	assert.Equal(t, m.Subject, mail.subject)
	assert.Equal(t, m.Text, mail.text)
	assert.Equal(t, m.HTML, mail.html)
}

// Spoilers stay closed, in text and HTML; a sender's consecutive
// messages share one block.
func TestNotifyEmailSpoilersAndBlocks(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	e.dm(t, alice, "```spoiler Where\nthe roof\n```", bob.ID)
	e.dm(t, alice, "second", bob.ID)
	emails, _ := e.later(t)
	require.Len(t, emails, 1)
	m := emails[0]
	assert.NotContains(t, m.Text, "the roof")
	assert.NotContains(t, m.HTML, "the roof")
	assert.Contains(t, m.Text, "(Open Test Organization to see the spoiler content)")
	assert.Contains(t, m.HTML, "Where")
	assert.Contains(t, m.HTML, "(Open Test Organization to see the spoiler content)")
	assert.Equal(t, 1, strings.Count(m.HTML, `<div class="missed_message">`), "one sender, one block")
	assert.NotContains(t, m.Text, alice.FullName+":", "no sender line in a one-to-one conversation")
	assert.True(t, strings.HasPrefix(m.Text, "You and "+alice.FullName+"\n\n"), m.Text)
}

func TestNotifyEmailSubjects(t *testing.T) {
	e := newNotifyEnv(t)
	bob := e.NewUser(t, chat.RoleMember)
	var others []chattest.User
	for range 4 {
		others = append(others, e.NewUser(t, chat.RoleMember))
	}
	names := func(us ...chattest.User) []string {
		var out []string
		for _, u := range us {
			out = append(out, u.FullName)
		}
		return out
	}
	ch := newChannelBy(t, e.Harness, others[0], "general", false)
	subscribe(t, e.Harness, others[0], "general", bob.ID)
	e.dm(t, others[0], "two", bob.ID, others[1].ID)
	e.dm(t, others[0], "three", bob.ID, others[1].ID, others[2].ID)
	e.dm(t, others[0], "four", bob.ID, others[1].ID, others[2].ID, others[3].ID)
	e.post(t, others[0], ch, "✔ lunch", "done "+mention(bob))
	emails, pushes := e.later(t)
	subjects := map[string]bool{}
	for _, m := range emailsTo(emails)[bob.ID] {
		subjects[m.Subject] = true
	}
	n := names(others...)
	assert.Equal(t, map[string]bool{
		"Group DMs with " + n[0] + " and " + n[1]:                      true,
		fmt.Sprintf("Group DMs with %s, %s, and %s", n[0], n[1], n[2]): true,
		fmt.Sprintf("Group DMs with %s, %s, and 2 others", n[0], n[1]): true,
		"[resolved] #general > lunch":                                  true,
	}, subjects)
	for _, p := range pushes {
		if p.UserID == bob.ID && p.Conversation.Type == chat.MessageTypeDirect && len(p.Conversation.UserIDs) == 2 {
			want := []string{bob.FullName, n[0], n[1]}
			assert.Equal(t, strings.Join(sortedStrings(want), ", "), p.Title, "a group's title names everyone")
			assert.Equal(t, n[0]+":", p.Subtitle)
		}
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Pushes carry the reference's alert: title, subtitle, and the text cut
// to 200 characters.
func TestNotifyPushContent(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, e.Harness, alice, "general", false)
	subscribe(t, e.Harness, alice, "general", bob.ID)
	createGroup(t, e.Harness, alice, "cooks", bob.ID, alice.ID)
	long := strings.Repeat("ab ", 100)
	personal := e.post(t, alice, ch, "plans", mention(bob)+" "+long)
	group := e.post(t, alice, ch, "other", "@*cooks* > not shown")
	wildcard := e.post(t, alice, ch, "third", "> quoted\n\n@**all** 1. first")
	_, pushes := e.deliver(t)
	by := map[int64]chat.PushNotification{}
	for _, p := range pushes {
		by[p.MessageID] = p
	}
	require.Len(t, by, 3)
	p := by[personal]
	assert.Equal(t, "#general > plans", p.Title)
	assert.Equal(t, alice.FullName+" mentioned you:", p.Subtitle)
	assert.True(t, p.BodyTruncated)
	assert.Equal(t, 201, len([]rune(p.Body)))
	assert.True(t, strings.HasSuffix(p.Body, "…"))
	assert.True(t, strings.HasPrefix(p.Body, "@"+bob.FullName+" ab ab"), p.Body)
	assert.Equal(t, fmt.Sprintf("%s/#narrow/channel/%d-general/topic/plans/near/%d", e.RealmURL, ch, personal), p.Link)

	g := by[group]
	assert.Equal(t, alice.FullName+" mentioned @cooks:", g.Subtitle)
	assert.Equal(t, "cooks", g.MentionedGroupName)
	assert.NotZero(t, g.MentionedGroupID)

	w := by[wildcard]
	assert.Equal(t, alice.FullName+" mentioned everyone:", w.Subtitle)
	assert.Equal(t, "[…]\n@all 1. first", w.Body, "a quote beside other text collapses")
	assert.False(t, w.BodyTruncated)
}

// A notifier that fails leaves the notification pending: it is tried
// again later and goes out once.
func TestNotifyRetriesAfterFailure(t *testing.T) {
	e := newNotifyEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	bob := e.NewUser(t, chat.RoleMember)
	e.dm(t, alice, "are you there?", bob.ID)
	e.deliver(t)
	e.smtp.FailNext(1)
	emails, _ := e.later(t)
	assert.Empty(t, emails, "the SMTP server refused it")
	assert.Equal(t, 1, pendingCount(t, e))
	e.Clock.Advance(29 * time.Second)
	emails, _ = e.deliver(t)
	assert.Empty(t, emails, "retried after 30 s")
	e.Clock.Advance(2 * time.Second)
	emails, _ = e.deliver(t)
	require.Len(t, emails, 1)
	assert.Len(t, e.smtp.Messages(), 1)
	assert.Equal(t, 0, pendingCount(t, e))
}
