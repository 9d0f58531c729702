package web_test

import (
	"fmt"
	"image/color"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

// testEmptyViews: a view without messages says so, and so does a search
// that finds nothing.
func testEmptyViews(t *testing.T, s *site) {
	u := s.h.NewUser(t, chat.RoleMember)
	quiet := s.channel(t, "quiet corner", u)
	tb := s.tab(t, 1000, 700)
	tb.login(u)
	tb.open(fmt.Sprintf("#narrow/channel/%d-quiet-corner", quiet))
	tb.wait(`!document.getElementById("empty-view").hidden && document.getElementById("empty-view").textContent === "No messages here yet. Say something!"`)
	tb.open("#narrow/search/" + url.PathEscape("nothing-matches-this"))
	tb.wait(`!document.getElementById("empty-view").hidden && document.getElementById("empty-view").textContent === "No messages match your search."`)
	// A first message takes the notice away.
	tb.open(fmt.Sprintf("#narrow/channel/%d-quiet-corner", quiet))
	tb.wait(`!document.getElementById("empty-view").hidden`)
	s.send(t, u, "quiet corner", "first", "the first words here")
	tb.wait(`document.getElementById("message-list").textContent.includes("the first words here") && document.getElementById("empty-view").hidden`)
	tb.clean()
}

// inviteKeyRE finds the key of an invitation link.
var inviteKeyRE = regexp.MustCompile(`/join/([A-Za-z0-9_-]+)/$`)

// testJoinAndInvite: the owner makes an invitation link and invites by
// email in the page; a newcomer opens the link in another browser,
// signs up (with a hostile name, shown as text) and is in.
func testJoinAndInvite(t *testing.T, s *site) {
	o := s.tab(t, 1200, 800)
	o.login(s.h.Owner)
	o.wait(`!document.getElementById("invite-button").hidden`)
	o.click("#invite-button")
	o.wait(`document.getElementById("invite-dialog").open && !document.getElementById("invite-link-form").hidden`)

	// By email: a hostile address is refused in words, a good one invited.
	o.setValue("#invite-emails", `<img src=x onerror="window.pwned='invite'">`)
	o.click(`#invite-email-form button[type=submit]`)
	o.wait(`document.getElementById("invite-email-error").textContent !== ""`)
	o.setValue("#invite-emails", "carol@example.com")
	o.click(`#invite-email-form button[type=submit]`)
	o.wait(`document.getElementById("invite-email-result").textContent.includes("carol@example.com")`)
	invites := s.call(t, s.h.Owner, "GET", "/invites", nil)["invites"].([]any)
	emails := []string{}
	for _, inv := range invites {
		emails = append(emails, fmt.Sprint(inv.(map[string]any)["email"]))
	}
	assert.Contains(t, emails, "carol@example.com")

	// A link.
	o.click(`#invite-link-form button[type=submit]`)
	o.wait(`!document.getElementById("invite-link-result").hidden && document.getElementById("invite-link").value.includes("/join/")`)
	link := eval[string](o, `document.getElementById("invite-link").value`)
	m := inviteKeyRE.FindStringSubmatch(link)
	require.Len(t, m, 2, link)
	o.click("#invite-close")
	o.wait(`!document.getElementById("invite-dialog").open`)
	assert.Zero(t, o.count("#invite-dialog img"))

	// The newcomer: the link (on this server) leads to the join form.
	n := s.tab(t, 1200, 800)
	n.do(chromedp.Navigate(s.url + "join/" + m[1] + "/"))
	n.wait(`!document.getElementById("join-view").hidden && location.hash === %s`, "#join/"+m[1])
	n.wait(`document.getElementById("join-realm").textContent === "Test Organization"`)
	const hostile = `<img src=x onerror=window.pwned='join' x=` // the server refuses > and " in names
	n.setValue("#join-email", "newcomer@example.com")
	n.setValue("#join-name", hostile)
	n.setValue("#join-password", "a newcomer's long password")
	n.click(`#join-form button[type=submit]`)
	n.wait(`!document.getElementById("app-view").hidden && document.querySelector("#people-list [data-user-id]") !== null`)
	assert.Equal(t, "", eval[string](n, `location.hash`), "the key leaves the address")
	n.wait(`document.getElementById("people-list").textContent.includes(%s)`, hostile+" (you)")
	o.wait(`document.getElementById("people-list").textContent.includes(%s)`, hostile)
	assert.Zero(t, n.count("#people-list img")+o.count("#people-list img"))
	assert.True(t, eval[bool](n, `window.pwned === undefined`))
	assert.True(t, eval[bool](o, `window.pwned === undefined`))

	// A used-up or made-up key is refused in words.
	bad := s.tab(t, 900, 700)
	bad.do(chromedp.Navigate(s.url + "join/notakey/"))
	bad.wait(`!document.getElementById("join-view").hidden`)
	bad.setValue("#join-email", "x@example.com")
	bad.setValue("#join-name", "X")
	bad.setValue("#join-password", "a long enough password")
	bad.click(`#join-form button[type=submit]`)
	bad.wait(`document.getElementById("join-error").textContent.includes("invalid")`)
	bad.click(`#join-form a[href="#"]`)
	bad.wait(`!document.getElementById("login-view").hidden && document.getElementById("join-view").hidden`)
	o.clean()
	n.clean()
	bad.clean()
}

// testFiles: a link to an uploaded file opens (through a temporary URL),
// a linked image shows a preview, and a custom emoji reaction shows its
// image.
func testFiles(t *testing.T, s *site) {
	u := s.h.NewUser(t, chat.RoleMember)
	w := s.h.NewUser(t, chat.RoleMember)
	s.channel(t, "files", u, w)
	red := pngImage(t, 40, 30, color.RGBA{R: 200, A: 255})
	img := s.upload(t, w, "/user_uploads", "red square.png", "image/png", red)["url"].(string)
	doc := s.upload(t, w, "/user_uploads", "notes.txt", "text/plain", []byte("some notes"))["url"].(string)
	id := s.send(t, w, "files", "uploads", fmt.Sprintf("[red square.png](%s) and [notes.txt](%s)", img, doc))
	s.upload(t, s.h.Owner, "/realm/emoji/party_parrot", "parrot.png", "image/png", pngImage(t, 16, 16, color.RGBA{G: 180, A: 255}))
	s.call(t, u, "POST", fmt.Sprintf("/messages/%d/reactions", id), url.Values{"emoji_name": {"party_parrot"}})

	tb := s.tab(t, 1200, 800)
	tb.login(u)
	tb.click(fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, s.channelID(t, "files")))
	msg := fmt.Sprintf(`#message-list article[data-id="%d"]`, id)
	tb.wait(`document.querySelector(%s) !== null`, msg)
	// The preview loads through a temporary URL.
	tb.wait(`(() => { const i = document.querySelector(%s); return i && i.complete && i.naturalWidth === 40 && i.getAttribute("src").startsWith("user_uploads/temporary/"); })()`,
		msg+" .message_inline_image img")
	// The custom emoji's image, in the reaction.
	tb.wait(`(() => { const i = document.querySelector(%s); return i && i.complete && i.naturalWidth === 16; })()`, msg+` .reaction[data-emoji="party_parrot"] img.emoji`)
	// The text file's link opens a temporary URL that works without credentials.
	tb.click(msg + ` .msg-content a[href$="notes.txt"]`)
	opened := tb.openedPage("user_uploads/temporary/")
	resp, err := http.Get(opened)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "some notes", string(body))
	assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment"))
	tb.clean()
}

// testMovedIn: a message moved into the open topic appears there, and
// leaves the topic it was moved from.
func testMovedIn(t *testing.T, s *site) {
	u := s.h.NewUser(t, chat.RoleMember)
	ch := s.channel(t, "moves", u, s.h.Owner)
	s.send(t, u, "moves", "destination", "already here")
	id := s.send(t, s.h.Owner, "moves", "elsewhere", "moved over later")
	dest := s.tab(t, 1000, 700)
	dest.login(u)
	dest.open(fmt.Sprintf("#narrow/channel/%d-moves/topic/destination", ch))
	dest.wait(`document.getElementById("message-list").textContent.includes("already here")`)
	src := s.tab(t, 1000, 700)
	src.login(u)
	src.open(fmt.Sprintf("#narrow/channel/%d-moves/topic/elsewhere", ch))
	src.wait(`document.getElementById("message-list").textContent.includes("moved over later")`)
	s.call(t, s.h.Owner, "PATCH", fmt.Sprintf("/messages/%d", id), url.Values{"topic": {"destination"}, "propagate_mode": {"change_one"}})
	// In order, under the one header of the conversation (the notification
	// bot's notice of the move follows).
	dest.wait(`[...document.querySelectorAll("#message-list .msg-content")].map(e => e.textContent.trim()).slice(0, 2).join("|") === "already here|moved over later"`)
	assert.Equal(t, 1, dest.count("#message-list .recipient"), "one conversation, one header")
	src.wait(`!document.getElementById("message-list").textContent.includes("moved over later")`)
	src.wait(`!document.getElementById("empty-view").hidden`)
	dest.clean()
	src.clean()
}

// channelID is a channel's ID by its name.
func (s *site) channelID(t testing.TB, name string) int64 {
	t.Helper()
	return int64(s.call(t, s.h.Owner, "GET", "/get_stream_id", url.Values{"stream": {name}})["stream_id"].(float64))
}
