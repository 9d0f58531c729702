package web_test

import (
	"fmt"
	"net/url"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// dm sends a direct message from u to the others.
func (s *site) dm(t testing.TB, u chattest.User, content string, to ...chattest.User) {
	t.Helper()
	ids := make([]int64, len(to))
	for i, x := range to {
		ids[i] = x.ID
	}
	s.call(t, u, "POST", "/messages", url.Values{"type": {"direct"}, "to": {fmt.Sprint(ids)}, "content": {content}})
}

// menuItem opens a message's menu and chooses an item.
func (tb *tab) menuItem(msg, item string) {
	tb.t.Helper()
	tb.click(msg + " .more-button")
	tb.wait(`document.querySelector(%s) !== null`, `.menu `+item)
	tb.click(`.menu ` + item)
}

// testReadingViews: the Inbox and Recent conversations, one name over a
// sender's consecutive messages, starring, marking unread, quoting and a
// message's link.
func testReadingViews(t *testing.T, s *site) {
	me := s.h.NewUser(t, chat.RoleMember)
	ann := s.h.Provision(t, chat.ProvisionUserRequest{Email: "ann.reader@example.com", FullName: "Ann Reader", Password: "ann's long password", Role: chat.RoleMember})
	s.channel(t, "garden", me, ann)
	s.channel(t, "kitchen", me, ann)
	const hostileTopic = `<img src=x onerror="window.pwned='inbox'">`
	s.send(t, ann, "garden", "roses", "the roses are out")
	s.send(t, ann, "garden", hostileTopic, "a hostile topic")
	s.send(t, ann, "kitchen", "bread", "bread is baking")
	s.dm(t, ann, "a private word", me)

	tb := s.tab(t, 1200, 800)
	tb.grant("clipboard-read", "clipboard-write")
	tb.open("#inbox")
	tb.login(me)
	tb.wait(`document.getElementById("view-title").textContent === "Inbox" && document.querySelectorAll("#inbox-list .inbox-row").length === 4`)
	assert.Equal(t, []string{"Direct messages", "#garden", "#kitchen"}, eval[[]string](tb, `[...document.querySelectorAll("#inbox-list .inbox-group")].map(g => g.getAttribute("aria-label"))`))
	assert.Contains(t, tb.text("#inbox-list"), hostileTopic)
	assert.Equal(t, "4", tb.text("#nav-inbox .count"))
	// Marking a topic read takes it away.
	tb.click(`#inbox-list button[aria-label="Mark roses as read"]`)
	tb.wait(`document.querySelectorAll("#inbox-list .inbox-row").length === 3 && !document.getElementById("inbox-list").textContent.includes("roses")`)
	tb.click(`#inbox-list button[aria-label="Mark the conversation with Ann Reader as read"]`)
	tb.wait(`document.querySelectorAll("#inbox-list .inbox-row").length === 2`)

	// Recent conversations: the newest first, read or not.
	tb.click("#nav-recent")
	tb.wait(`document.querySelectorAll("#recent-list .recent-row").length >= 4`)
	rows := eval[[]string](tb, `[...document.querySelectorAll("#recent-list .recent-row")].slice(0, 4).map(r => r.textContent)`)
	require.Len(t, rows, 4)
	assert.Contains(t, rows[0], "Ann Reader")
	assert.Contains(t, rows[1], "#kitchen")
	assert.Contains(t, rows[3], "roses")

	// One name over a sender's run of messages.
	for i := 1; i <= 3; i++ {
		s.send(t, ann, "kitchen", "bread", fmt.Sprintf("loaf %d", i))
	}
	s.send(t, me, "kitchen", "bread", "I will have one")
	tb.click(`#recent-list a.recent-topic`)
	tb.wait(`document.getElementById("view-title").textContent === "#kitchen › bread" && document.getElementById("message-list").textContent.includes("I will have one")`)
	assert.Equal(t, []bool{false, true, true, true, false},
		eval[[]bool](tb, `[...document.querySelectorAll("#message-list article")].map(a => a.classList.contains("continued"))`))
	assert.Equal(t, 2, eval[int](tb, `[...document.querySelectorAll("#message-list .sender")].filter(e => e.offsetWidth > 1).length`), "two names show")

	// Star a message; it is in Starred messages.
	loaf2 := `#message-list article:nth-of-type(3)`
	tb.click(loaf2 + " .star-button")
	tb.wait(`document.querySelector(%s).getAttribute("aria-pressed") === "true" && document.querySelector(%s) !== null`, loaf2+" .star-button", loaf2+" .star-mark")
	// Quote it into the message box.
	tb.menuItem(loaf2, ".quote-action")
	tb.wait("document.getElementById(\"compose-content\").value.includes(\"```quote\\nloaf 2\\n```\") && document.activeElement.id === \"compose-content\"")
	assert.Contains(t, eval[string](tb, `document.getElementById("compose-content").value`), fmt.Sprintf("@_**Ann Reader|%d** [said](", ann.ID))
	eval[chromedp.Void](tb, `(() => { const c = document.getElementById("compose-content"); c.value = ""; c.dispatchEvent(new Event("input")); })()`)
	// Its link: copied (or shown), and it opens the conversation.
	tb.menuItem(loaf2, ".copy-link-action")
	tb.wait(`document.getElementById("notice").textContent === "The link is copied."`)
	id := eval[string](tb, `document.querySelector(%s).dataset.id`, loaf2)
	link := evalAwait[string](tb, `navigator.clipboard.readText()`)
	hash := regexp.MustCompile(`#narrow/channel/\d+-kitchen/topic/bread/near/` + id + `$`).FindString(link)
	require.NotEmpty(t, hash, link)
	// Mark as unread from here: it and those after it.
	tb.menuItem(loaf2, ".unread-action")
	tb.wait(`[2, 3].every(i => document.querySelectorAll("#message-list article")[i].classList.contains("unread")) && !document.querySelectorAll("#message-list article")[1].classList.contains("unread")`)
	tb.open("#narrow/is/starred")
	tb.wait(`document.getElementById("view-title").textContent === "Starred messages" && document.querySelectorAll("#message-list article").length === 1`)
	assert.Contains(t, tb.text("#message-list article"), "loaf 2")
	tb.open(hash)
	tb.wait(`document.getElementById("view-title").textContent === "#kitchen › bread"`)
	assert.True(t, eval[bool](tb, `window.pwned === undefined`))
	tb.clean()
}

// testTopicsAndPeople: following and muting topics and channels (the
// counts follow), a sender's profile card, muting a person, and code
// in colour.
func testTopicsAndPeople(t *testing.T, s *site) {
	me := s.h.NewUser(t, chat.RoleMember)
	const hostile = `Pat<img src=x onerror=window.pwned='card' x=`
	pat := s.h.Provision(t, chat.ProvisionUserRequest{Email: "pat.profile@example.com", FullName: hostile, Password: "pat's long password", Role: chat.RoleModerator})
	ch := s.channel(t, "tuning", me, pat)
	s.send(t, pat, "tuning", "noise", "noise one")
	s.send(t, pat, "tuning", "noise", "noise two")
	s.send(t, pat, "tuning", "signal", "```python\ndef f():\n    return \"x\"  # done\n```")
	tb := s.tab(t, 1200, 800)
	tb.open("#channels")
	tb.login(me)
	badge := fmt.Sprintf(`#channel-list a[data-stream-id="%d"] .badge .count`, ch)
	tb.wait(`document.querySelector(%s)?.textContent === "3"`, badge)

	// Mute a topic: it leaves the channel's count.
	tb.open(fmt.Sprintf("#narrow/channel/%d-tuning/topic/noise", ch))
	tb.wait(`document.querySelector('#view-actions [data-action="mute-topic"]') !== null`)
	eval[chromedp.Void](tb, `document.activeElement.blur()`) // read nothing yet: the view marks what it shows
	tb.click(`#view-actions [data-action="mute-topic"]`)
	tb.wait(`document.querySelector('#view-actions [data-action="mute-topic"]').getAttribute("aria-pressed") === "true"`)
	tb.wait(`document.querySelector(%s) === null || document.querySelector(%s).textContent === "1"`, badge, badge)
	tb.wait(`document.querySelector('#channel-list li.muted-item a[data-topic="noise"]') !== null`)
	tb.click(`#view-actions [data-action="mute-topic"]`)
	tb.wait(`document.querySelector('#channel-list li.muted-item a[data-topic="noise"]') === null`)
	// Follow it.
	tb.click(`#view-actions [data-action="follow"]`)
	tb.wait(`document.querySelector('#view-actions [data-action="follow"]').getAttribute("aria-pressed") === "true" && document.querySelector('#channel-list a[data-topic="noise"] .followed') !== null`)
	// Mute the channel.
	tb.open(fmt.Sprintf("#narrow/channel/%d-tuning", ch))
	tb.click(`#view-actions [data-action="mute-channel"]`)
	tb.wait(`document.querySelector(%s)?.closest("li").classList.contains("muted-item")`, fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, ch))
	tb.click(`#view-actions [data-action="mute-channel"]`)
	tb.wait(`!document.querySelector(%s).closest("li").classList.contains("muted-item")`, fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, ch))

	// Code in colour: keywords, strings and comments differ from the text.
	code := `#message-list .codehilite`
	tb.wait(`document.querySelector(%s) !== null`, code+" .k")
	colours := eval[[]string](tb, `["pre", ".k", ".s2", ".c1"].map(s => getComputedStyle(document.querySelector(%s + " " + s)).color)`, code)
	assert.Len(t, map[string]bool{colours[0]: true, colours[1]: true, colours[2]: true, colours[3]: true}, 4, "four colours: %v", colours)

	// The sender's card, then muting them hides their messages.
	tb.click(`#message-list article .sender`)
	tb.wait(`document.querySelector(".profile-card") !== null`)
	card := tb.text(".profile-card")
	for _, want := range []string{hostile, "pat.profile@example.com", "Moderator", "Send a direct message"} {
		assert.Contains(t, card, want)
	}
	assert.Zero(t, tb.count(".profile-card img"))
	tb.press("Escape")
	tb.wait(`document.querySelector(".profile-card") === null && document.activeElement.matches(".sender")`)
	tb.click(`#message-list article .sender`)
	tb.click(`.profile-card .mute-user`)
	tb.wait(`document.querySelectorAll("#message-list .muted-message").length === 3`)
	tb.click(`#message-list article .muted-message button`)
	tb.wait(`document.querySelectorAll("#message-list .muted-message").length === 2`)
	tb.click(`#message-list article .sender`)
	tb.wait(`document.querySelector(".profile-card .mute-user")?.textContent === "Unmute"`)
	tb.click(`.profile-card .mute-user`)
	tb.wait(`document.querySelectorAll("#message-list .muted-message").length === 0`)
	assert.True(t, eval[bool](tb, `window.pwned === undefined`))
	tb.checkNames()
	tb.clean()
}

// fakeNotifications stands in for the browser's Notification API, which
// headless Chromium does not show: it records what the page shows, and
// grants the permission when asked.
const fakeNotifications = `window.shown = []; window.asked = 0;
window.Notification = class {
  static permission = "default";
  static requestPermission() { window.asked++; window.Notification.permission = "granted"; return Promise.resolve("granted"); }
  constructor(title, options) { window.shown.push({title, body: options.body}); }
  close() {}
};`

// testNotificationsAndShortcuts: desktop notifications are offered once
// and shown for direct messages and mentions out of sight (not for other
// channel messages, by default); the keyboard shortcuts and their help.
func testNotificationsAndShortcuts(t *testing.T, s *site) {
	me := s.h.Provision(t, chat.ProvisionUserRequest{Email: "nora.notified@example.com", FullName: "Nora Notified", Password: "nora's long password", Role: chat.RoleMember})
	other := s.h.Provision(t, chat.ProvisionUserRequest{Email: "otto.other@example.com", FullName: "Otto Other", Password: "otto's long password", Role: chat.RoleMember})
	ch := s.channel(t, "alerts", me, other)
	s.channel(t, "quiet", me, other)
	tb := s.tabWith(t, 1200, 800, fakeNotifications)
	tb.login(me)
	tb.wait(`!document.getElementById("ask-notifications").hidden`)
	tb.click("#notifications-enable")
	tb.wait(`window.asked === 1 && document.getElementById("ask-notifications").hidden`)
	tb.open(fmt.Sprintf("#narrow/channel/%d-alerts", ch))
	tb.wait(`document.getElementById("view-title").textContent === "#alerts"`)
	s.send(t, other, "quiet", "chatter", "nothing for Nora")
	s.send(t, other, "alerts", "here", "in the open view")
	s.dm(t, other, "a direct word", me)
	s.send(t, other, "quiet", "chatter", "@**Nora Notified** look here")
	tb.wait(`window.shown.length === 2`)
	shown := eval[[]map[string]string](tb, `window.shown`)
	assert.Equal(t, "Otto Other", shown[0]["title"])
	assert.Equal(t, "a direct word", shown[0]["body"])
	assert.Equal(t, "#quiet › chatter", shown[1]["title"])
	assert.Equal(t, "Otto Other: @Nora Notified look here", shown[1]["body"])
	tb.wait(`document.querySelectorAll("#message-list article.unread").length === 0`) // the open view's message is read

	// Shortcuts.
	eval[chromedp.Void](tb, `document.activeElement.blur()`)
	tb.press("?")
	tb.wait(`document.getElementById("help-dialog").open`)
	tb.press("Escape")
	tb.wait(`!document.getElementById("help-dialog").open`)
	tb.press("/")
	tb.wait(`document.activeElement.id === "search-input"`)
	tb.press("Escape")
	eval[chromedp.Void](tb, `document.activeElement.blur()`)
	tb.press("c")
	tb.wait(`document.activeElement.id === "compose-topic" && document.getElementById("compose-topic").value === ""`)
	eval[chromedp.Void](tb, `document.activeElement.blur()`)
	tb.press("k")
	tb.wait(`document.activeElement.matches("#message-list article:last-of-type")`)
	tb.press("r")
	tb.wait(`document.activeElement.id === "compose-content" && document.getElementById("compose-topic").value === "here"`)
	tb.press("Escape")
	tb.wait(`document.activeElement.matches("#message-list article")`)
	tb.press("x")
	tb.wait(`document.getElementById("dm-dialog").open`)
	tb.press("Escape")
	tb.wait(`!document.getElementById("dm-dialog").open`)
	eval[chromedp.Void](tb, `document.activeElement.blur()`)
	tb.press("n")
	tb.wait(`document.getElementById("view-title").textContent === "#quiet › chatter"`)
	tb.press("i")
	tb.wait(`document.getElementById("view-title").textContent === "Inbox"`)
	tb.clean()
}
