package mailin_test

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/transport/mailin"
)

// notified delivers the due notifications (after the batching period)
// and returns the Reply-To address and text of the newest email the
// outbox got for the user.
func (e *gwEnv) notified(t *testing.T, to chattest.User) (replyTo string, text string) {
	t.Helper()
	mine := func() []int {
		var out []int
		for i, m := range e.outbox.Messages() {
			if strings.Contains(m.Header.Get("To"), to.Email) {
				out = append(out, i)
			}
		}
		return out
	}
	before := len(mine())
	e.Clock.Advance(121 * time.Second)
	_, err := e.Service.DeliverDueNotifications(context.Background())
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(mine()) > before }, 10*time.Second, 10*time.Millisecond)
	ids := mine()
	last := e.outbox.Messages()[ids[len(ids)-1]]
	a, err := mail.ParseAddress(last.Header.Get("Reply-To"))
	require.NoError(t, err, "Reply-To: %q", last.Header.Get("Reply-To"))
	assert.Equal(t, "Test Organization", a.Name)
	return a.Address, last.Text
}

func reply(id, body string) string {
	return "From: Someone <someone@example.org>\nSubject: Re: DMs with Bob\nMessage-ID: " + id + "\nMIME-Version: 1.0\n" +
		"Content-Type: text/plain; charset=utf-8\n\n" + body
}

func (e *gwEnv) dm(t *testing.T, from chattest.User, content string, to ...int64) int64 {
	t.Helper()
	r, err := e.Service.SendMessage(context.Background(), from.Caller, chat.SendMessageRequest{Type: "private", To: chat.ToUsers(to...), Content: content})
	require.NoError(t, err)
	return r.ID
}

// Every missed-message email carries a reply address of its conversation
// and recipient; a reply to it is posted there as the recipient, quotes
// cut, once: the same mail again is accepted without a second post, any
// other mail is refused.
func TestReplyToDirectMessage(t *testing.T) {
	e := newGateway(t, mailin.Options{})
	alice, bob, carol := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	e.dm(t, bob, "lunch?", alice.ID)
	addr, text := e.notified(t, alice)
	assert.Regexp(t, `^mm[0-9a-f]{32}@mail\.example\.com$`, addr)
	assert.Contains(t, text, "Reply to this email directly, or view it in Test Organization:")
	assert.NotContains(t, text, "Do not reply")

	answer := reply("<r1@example.org>", "Sure, at noon.\n\nOn Mon, Bob wrote:\n> lunch?\n")
	require.Nil(t, e.mailTo(t, answer, addr))
	require.Nil(t, e.mailTo(t, answer, addr), "delivered again: accepted, not posted again")
	msgs := e.newest(t, alice, fmt.Sprintf(`[{"operator": "dm", "operand": [%d]}]`, bob.ID), 5)
	require.Len(t, msgs, 2)
	assert.Equal(t, alice.ID, msgs[1].SenderID)
	assert.Equal(t, "Sure, at noon.", msgs[1].Content)

	f := e.mailTo(t, reply("<r2@example.org>", "another answer"), addr)
	require.NotNil(t, f, "used once")
	assert.Equal(t, "DATA", f.step)
	assert.Equal(t, 550, f.code)
	assert.Contains(t, f.msg, "out of uses")

	// A group conversation's reply goes to the group.
	e.dm(t, bob, "team lunch?", alice.ID, carol.ID)
	addr, _ = e.notified(t, alice)
	require.Nil(t, e.mailTo(t, reply("<r3@example.org>", "count me in"), addr))
	msgs = e.newest(t, carol, fmt.Sprintf(`[{"operator": "dm", "operand": [%d, %d]}]`, alice.ID, bob.ID), 1)
	require.Len(t, msgs, 1)
	assert.Equal(t, "count me in", msgs[0].Content)
	assert.Equal(t, alice.ID, msgs[0].SenderID)
}

// A reply to a mention goes to the topic the message is in now; a reply
// address expires after five days, and dies with its message.
func TestReplyToChannelMessage(t *testing.T) {
	e := newGateway(t, mailin.Options{})
	alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
	ch := e.channel(t, bob, "plans", false, alice.ID)
	topic := "trip"
	sent, err := e.Service.SendMessage(context.Background(), bob.Caller, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(ch),
		Topic: &topic, Content: "@**" + alice.FullName + "** which day?"})
	require.NoError(t, err)
	addr, _ := e.notified(t, alice)
	_, err = e.Service.UpdateMessage(context.Background(), bob.Caller, chat.UpdateMessageRequest{MessageID: sent.ID, Topic: ptr("trip dates"),
		PropagateMode: ptr("change_all"), SendNotificationToOldThread: ptr(false), SendNotificationToNewThread: ptr(false)})
	require.NoError(t, err)
	require.Nil(t, e.mailTo(t, reply("<c1@example.org>", "Friday!"), addr))
	msgs := e.newest(t, bob, `[{"operator": "channel", "operand": "plans"}, {"operator": "topic", "operand": "trip dates"}]`, 5)
	require.Len(t, msgs, 2)
	assert.Equal(t, alice.ID, msgs[1].SenderID)
	assert.Equal(t, "Friday!", msgs[1].Content)

	// Expired.
	e.dm(t, bob, "still there?", alice.ID)
	addr, _ = e.notified(t, alice)
	e.Clock.Advance(chat.ReplyAddressLifetimeSeconds * time.Second)
	f := e.mailTo(t, reply("<c2@example.org>", "late"), addr)
	require.NotNil(t, f)
	assert.Equal(t, "RCPT", f.step)
	assert.Equal(t, 550, f.code)
	assert.Contains(t, f.msg, "expired")

	// Deleted.
	id := e.dm(t, bob, "oops", alice.ID)
	addr, _ = e.notified(t, alice)
	_, err = e.Service.DeleteMessage(context.Background(), bob.Caller, chat.DeleteMessageRequest{MessageID: id})
	require.NoError(t, err)
	f = e.mailTo(t, reply("<c3@example.org>", "what?"), addr)
	require.NotNil(t, f)
	assert.Equal(t, "RCPT", f.step)
	assert.Equal(t, 550, f.code)

	// The recipient deactivated.
	e.dm(t, bob, "bye", alice.ID)
	addr, _ = e.notified(t, alice)
	e.Deactivate(t, alice)
	f = e.mailTo(t, reply("<c4@example.org>", "bye"), addr)
	require.NotNil(t, f)
	assert.Equal(t, "RCPT", f.step)
	assert.True(t, strings.Contains(f.msg, "deactivated"), f.msg)
}
