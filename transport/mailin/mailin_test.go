package mailin_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/smtp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/transport/mailin"
)

// Mail to a channel's address, through a real SMTP client: posted as the
// Email Gateway bot with the subject as topic, the From line first
// (show-sender), the quoted reply and the signature cut; a forwarded mail
// keeps its quotes; an empty subject has the reference's topic.
func TestChannelAddressPosts(t *testing.T) {
	e := newGateway(t, mailin.Options{})
	member := e.NewUser(t, chat.RoleMember)
	ch := e.channel(t, member, "dev help", false)
	addr := e.address(t, member, ch, nil)
	assert.Regexp(t, `^dev-help\.[0-9a-f]{32}\.show-sender@mail\.example\.com$`, addr)
	assert.Equal(t, addr, e.address(t, member, ch, nil), "the same address each time")

	body := "The build is green.\n\nOn Mon, Jan 1, 2024 at 10:00 AM Bob <bob@example.org> wrote:\n> Is the build green?\n\n-- \nAda\n"
	require.Nil(t, e.mailTo(t, plainMail("Re: Build status", "<1@example.org>", body), addr))
	msgs := e.newest(t, member, `[{"operator": "channel", "operand": "dev help"}]`, 5)
	require.Len(t, msgs, 1)
	m := msgs[0]
	assert.Equal(t, "Email Gateway", m.SenderFullName)
	assert.Equal(t, "Build status", m.Subject)
	assert.Equal(t, "From: Ada Lovelace <ada@example.org>\nThe build is green.", m.Content)

	fwd := "FYI\n\n---------- Forwarded message ---------\nFrom: Bob\n> quoted stays\n"
	require.Nil(t, e.mailTo(t, plainMail("Fwd: Minutes", "<2@example.org>", fwd), addr))
	require.Nil(t, e.mailTo(t, plainMail("", "<3@example.org>", "no subject here"), addr))
	msgs = e.newest(t, member, `[{"operator": "channel", "operand": "dev help"}]`, 2)
	require.Len(t, msgs, 2)
	assert.Equal(t, "Minutes", msgs[0].Subject)
	assert.Contains(t, msgs[0].Content, "> quoted stays", "a forwarded mail keeps its quotes")
	assert.Equal(t, "Email with no subject", msgs[1].Subject)

	// Options in the address: include-quotes and include-footer keep
	// them; without show-sender there is no From line.
	plain := strings.Replace(addr, ".show-sender", ".include-quotes+include-footer", 1)
	require.Nil(t, e.mailTo(t, plainMail("Options", "<4@example.org>", body), plain))
	msgs = e.newest(t, member, `[{"operator": "channel", "operand": "dev help"}]`, 1)
	assert.Equal(t, strings.TrimSpace(body), msgs[0].Content)
}

// A multipart mail: the plain body is preferred, the HTML one with
// prefer-html (converted to Markdown, its quote cut), an HTML-only mail is
// converted, and attachments are uploaded as the sender and linked.
func TestChannelAddressBodiesAndAttachments(t *testing.T) {
	e := newGateway(t, mailin.Options{})
	member := e.NewUser(t, chat.RoleMember)
	ch := e.channel(t, member, "reports", false)
	addr := e.address(t, member, ch, nil)
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 a small report"))
	mixed := func(id string) string {
		return "From: Ada <ada@example.org>\nSubject: Weekly\nMessage-ID: " + id + "\nMIME-Version: 1.0\n" +
			"Content-Type: multipart/mixed; boundary=OUTER\n\n" +
			"--OUTER\nContent-Type: multipart/alternative; boundary=INNER\n\n" +
			"--INNER\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\nCaf=E9 numbers attached.\n" +
			"--INNER\nContent-Type: text/html; charset=utf-8\n\n<p>The <b>HTML</b> numbers</p><div class=\"gmail_quote\">old</div>\n" +
			"--INNER--\n" +
			"--OUTER\nContent-Type: application/pdf; name=\"report [v2].pdf\"\nContent-Disposition: attachment; filename=\"report [v2].pdf\"\n" +
			"Content-Transfer-Encoding: base64\n\n" + pdf + "\n--OUTER--\n"
	}
	require.Nil(t, e.mailTo(t, mixed("<a@example.org>"), addr))
	msgs := e.newest(t, member, `[{"operator": "channel", "operand": "reports"}]`, 1)
	require.Len(t, msgs, 1)
	content := msgs[0].Content
	assert.True(t, strings.HasPrefix(content, "From: Ada <ada@example.org>\nCafé numbers attached.\n\n[report v2.pdf](/user_uploads/"), content)
	path := content[strings.Index(content, "/user_uploads/")+len("/user_uploads/") : len(content)-1]
	f, err := e.Service.OpenUpload(context.Background(), member.Caller, path)
	require.NoError(t, err, "a channel member may open the attachment")
	got, err := io.ReadAll(f)
	require.NoError(t, err)
	f.Close()
	assert.Equal(t, "%PDF-1.4 a small report", string(got))

	htmlAddr := strings.Replace(addr, ".show-sender", ".prefer-html", 1)
	require.Nil(t, e.mailTo(t, mixed("<b@example.org>"), htmlAddr))
	msgs = e.newest(t, member, `[{"operator": "channel", "operand": "reports"}]`, 1)
	assert.True(t, strings.HasPrefix(msgs[0].Content, "The **HTML** numbers\n\n[report v2.pdf]("), msgs[0].Content)

	htmlOnly := "From: Ada <ada@example.org>\nSubject: Html\nMIME-Version: 1.0\nContent-Type: text/html; charset=utf-8\n\n" +
		"<html><body><p>Hello <a href=\"https://example.org\">there</a></p><ul><li>one</li></ul></body></html>\n"
	require.Nil(t, e.mailTo(t, htmlOnly, addr))
	msgs = e.newest(t, member, `[{"operator": "channel", "operand": "reports"}]`, 1)
	assert.Equal(t, "From: Ada <ada@example.org>\nHello [there](https://example.org)\n\n* one", msgs[0].Content)

	// A mail without a body is refused at DATA with the reason.
	noBody := "From: Ada <ada@example.org>\nSubject: x\nMIME-Version: 1.0\nContent-Type: application/octet-stream\n\nxx\n"
	f2 := e.mailTo(t, noBody, addr)
	require.NotNil(t, f2)
	assert.Equal(t, "DATA", f2.step)
	assert.Equal(t, 550, f2.code)
	assert.Contains(t, f2.msg, "Unable to find plaintext or HTML message body")
}

// The sender of an address: the caller, or a bot of theirs, post as
// themselves with the rules of their sends.
func TestChannelAddressSenders(t *testing.T) {
	e := newGateway(t, mailin.Options{})
	member := e.NewUser(t, chat.RoleMember)
	bot := e.NewBot(t, member)
	ch := e.channel(t, member, "ops", false, bot.ID)
	self := e.address(t, member, ch, &member.ID)
	botAddr := e.address(t, member, ch, &bot.ID)
	assert.NotEqual(t, self, botAddr)
	require.Nil(t, e.mailTo(t, plainMail("a", "<1@x>", "as me"), self))
	require.Nil(t, e.mailTo(t, plainMail("b", "<2@x>", "as my bot"), botAddr))
	msgs := e.newest(t, member, `[{"operator": "channel", "operand": "ops"}]`, 2)
	require.Len(t, msgs, 2)
	assert.Equal(t, member.ID, msgs[0].SenderID)
	assert.Equal(t, bot.ID, msgs[1].SenderID)
}

// Retried deliveries are posted once: by Message-ID, or by the whole mail
// when it has none; the same mail to two addresses is posted to each.
func TestRetriedMailPostedOnce(t *testing.T) {
	e := newGateway(t, mailin.Options{})
	member := e.NewUser(t, chat.RoleMember)
	a := e.address(t, member, e.channel(t, member, "alpha", false), nil)
	b := e.address(t, member, e.channel(t, member, "beta", false), nil)
	mail := plainMail("Once", "<once@example.org>", "only once")
	for range 3 {
		require.Nil(t, e.mailTo(t, mail, a))
	}
	noID := plainMail("No id", "", "no message id")
	require.Nil(t, e.mailTo(t, noID, a))
	require.Nil(t, e.mailTo(t, noID, a))
	require.Nil(t, e.mailTo(t, mail, a, b), "one delivery to both")
	assert.Len(t, e.newest(t, member, `[{"operator": "channel", "operand": "alpha"}]`, 10), 2)
	assert.Len(t, e.newest(t, member, `[{"operator": "channel", "operand": "beta"}]`, 10), 1)
}

// Unknown addresses are refused at RCPT; so are those whose mails could
// not be posted (a private channel the address's creator left, an
// archived channel); a channel archived between RCPT and DATA refuses the
// mail at DATA, and the refusal is logged.
func TestRefusedRecipients(t *testing.T) {
	e := newGateway(t, mailin.Options{})
	member := e.NewUser(t, chat.RoleMember)
	admin := e.NewUser(t, chat.RoleAdministrator)
	for _, to := range []string{"nobody@" + domain, "general.0123456789abcdef0123456789abcdef@" + domain,
		"mm0123456789abcdef0123456789abcdef@" + domain, "someone@elsewhere.example.org", "general.0123@" + domain + ".evil.org"} {
		f := e.mailTo(t, plainMail("x", "", "x"), to)
		require.NotNil(t, f, to)
		assert.Equal(t, "RCPT", f.step, to)
		assert.Equal(t, 550, f.code, to)
	}

	private := e.channel(t, member, "secret", true)
	addr := e.address(t, member, private, nil)
	_, err := e.Service.Unsubscribe(context.Background(), member.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"secret"}})
	require.NoError(t, err)
	f := e.mailTo(t, plainMail("x", "", "x"), addr)
	require.NotNil(t, f)
	assert.Equal(t, "RCPT", f.step)
	assert.Equal(t, 550, f.code)
	assert.Contains(t, f.msg, "Not authorized to send to channel 'secret'")

	public := e.channel(t, member, "soon archived", false)
	addr = e.address(t, member, public, nil)
	f = e.mailWith(t, plainMail("late", "<late@x>", "too late"), func() {
		_, err := e.Service.ArchiveChannel(context.Background(), admin.Caller, chat.ArchiveChannelRequest{StreamID: public})
		require.NoError(t, err)
	}, addr)
	require.NotNil(t, f)
	assert.Equal(t, "DATA", f.step)
	assert.Equal(t, 550, f.code)
	assert.Contains(t, e.log.String(), "email gateway: mail refused")
	assert.Empty(t, e.newest(t, member, fmt.Sprintf(`[{"operator": "channel", "operand": %d}]`, public), 5), "nothing posted")
	f = e.mailTo(t, plainMail("x", "", "x"), addr)
	require.NotNil(t, f)
	assert.Equal(t, "RCPT", f.step)
}

// Limits: a mail over the size limit is refused (552); a burst over the
// rate limit of a channel address is told to try later (450), and may
// once the minute has passed.
func TestLimits(t *testing.T) {
	e := newGateway(t, mailin.Options{MaxMessageBytes: 2048, RatePerMinute: 2})
	member := e.NewUser(t, chat.RoleMember)
	addr := e.address(t, member, e.channel(t, member, "busy", false), nil)
	f := e.mailTo(t, plainMail("big", "<big@x>", strings.Repeat(strings.Repeat("x", 99)+"\n", 50)), addr)
	require.NotNil(t, f)
	assert.Equal(t, 552, f.code, f.msg)

	require.Nil(t, e.mailTo(t, plainMail("1", "<1@x>", "one"), addr))
	f = e.mailTo(t, plainMail("2", "<2@x>", "two"), addr)
	require.NotNil(t, f, "the big mail's RCPT counted")
	assert.Equal(t, "RCPT", f.step)
	assert.Equal(t, 450, f.code)
	assert.Contains(t, f.msg, "try again in")
	e.advanceLimiter(61 * time.Second)
	require.Nil(t, e.mailTo(t, plainMail("3", "<3@x>", "three"), addr))
	assert.Len(t, e.newest(t, member, `[{"operator": "channel", "operand": "busy"}]`, 10), 2)
}

// Concurrent deliveries of one mail post it once, on either database.
func TestConcurrentDeliveriesPostOnce(t *testing.T) {
	e := newGateway(t, mailin.Options{})
	member := e.NewUser(t, chat.RoleMember)
	addr := e.address(t, member, e.channel(t, member, "race", false), nil)
	mail := strings.ReplaceAll(plainMail("Race", "<race@example.org>", "once"), "\n", "\r\n")
	errs := make(chan error, 6)
	for range 6 {
		go func() { errs <- smtp.SendMail(e.addr, nil, "ada@example.org", []string{addr}, []byte(mail)) }()
	}
	for range 6 {
		assert.NoError(t, <-errs)
	}
	assert.Len(t, e.newest(t, member, `[{"operator": "channel", "operand": "race"}]`, 10), 1)
}
