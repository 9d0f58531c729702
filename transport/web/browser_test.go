package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// TestBrowser runs the client in headless Chromium against a real server:
// one server and one browser for all subtests, a browser context (own
// storage) per person.
func TestBrowser(t *testing.T) {
	s := newSite(t)

	t.Run("a wrong password shows an error", func(t *testing.T) {
		u := s.h.NewUser(t, chat.RoleMember)
		tb := s.tab(t, 1200, 800)
		tb.wait(`!document.getElementById("login-view").hidden`)
		tb.setValue("#login-email", u.Email)
		tb.setValue("#login-password", "not the password")
		tb.click(`#login-form button[type=submit]`)
		tb.wait(`document.getElementById("login-error").textContent.includes("incorrect")`)
		assert.True(t, eval[bool](tb, `document.getElementById("app-view").hidden`))
		assert.Equal(t, "", eval[string](tb, `sessionStorage.getItem("teamchat.session") || ""`))
		tb.clean()
	})

	t.Run("two people talk live", func(t *testing.T) { testConversation(t, s) })
	t.Run("hostile messages and names only show", func(t *testing.T) { testHostile(t, s) })
	t.Run("the page enforces its content security policy", func(t *testing.T) { testCSP(t, s) })
	t.Run("history, search, channels, logging out", func(t *testing.T) { testReading(t, s) })
	t.Run("a lost event queue is registered again", func(t *testing.T) { testQueueLost(t, s) })
	t.Run("keyboard only", func(t *testing.T) { testKeyboard(t, s) })
	t.Run("a phone-sized screen", func(t *testing.T) { testPhone(t, s) })
	t.Run("empty views say so", func(t *testing.T) { testEmptyViews(t, s) })
	t.Run("joining by an invitation, inviting", func(t *testing.T) { testJoinAndInvite(t, s) })
	t.Run("files open, images preview, custom emoji show", func(t *testing.T) { testFiles(t, s) })
	t.Run("a message moved into the open view appears", func(t *testing.T) { testMovedIn(t, s) })
	t.Run("the message box completes, replies, keeps drafts, attaches", func(t *testing.T) { testCompose(t, s) })
	t.Run("emoji are images; the picker finds them", func(t *testing.T) { testEmojiPicker(t, s) })
	t.Run("inbox, recent conversations, grouping, message actions", func(t *testing.T) { testReadingViews(t, s) })
	t.Run("following and muting, profile cards, code in colour", func(t *testing.T) { testTopicsAndPeople(t, s) })
	t.Run("desktop notifications and keyboard shortcuts", func(t *testing.T) { testNotificationsAndShortcuts(t, s) })
	t.Run("settings", func(t *testing.T) { testSettings(t, s) })
	t.Run("organization settings", func(t *testing.T) { testOrganizationSettings(t, s) })
	t.Run("a newcomer's first ten minutes", func(t *testing.T) { testNewcomer(t, s) })
}

// testConversation: Alice writes to a channel and to Bob; Bob sees both
// arrive live, his unread counts rise and fall; reactions, edits, deletions
// and typing go both ways.
func testConversation(t *testing.T, s *site) {
	alice := s.h.Provision(t, chat.ProvisionUserRequest{Email: "alice@example.com", FullName: "Alice Adams", Password: "alice's long password", Role: chat.RoleMember})
	bob := s.h.Provision(t, chat.ProvisionUserRequest{Email: "bob@example.com", FullName: "Bob Brown", Password: "bob's long password", Role: chat.RoleMember})
	general := s.channel(t, "general", alice, bob)
	random := s.channel(t, "random", alice, bob)

	b := s.tab(t, 1200, 800)
	b.login(bob)
	b.open(fmt.Sprintf("#narrow/channel/%d-random", random))
	b.wait(`document.getElementById("view-title").textContent === "#random"`)

	a := s.tab(t, 1200, 800)
	a.login(alice)
	a.click(fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, general))
	a.wait(`document.getElementById("view-title").textContent === "#general"`)
	a.setValue("#compose-topic", "greetings")
	a.typeInto("#compose-content", "Hello **Bob**\r")
	a.wait(`[...document.querySelectorAll("#message-list .msg-content")].some(e => e.innerHTML.includes("<strong>Bob</strong>"))`)
	assert.Equal(t, "", eval[string](a, `document.getElementById("compose-content").value`), "the box empties after sending")

	// Bob, in another channel, sees general's count rise.
	badge := fmt.Sprintf(`#channel-list a[data-stream-id="%d"] .badge .count`, general)
	b.wait(`(document.querySelector(%s) || {}).textContent === "1"`, badge)

	// Alice writes to Bob directly.
	a.click(fmt.Sprintf(`#people-list a[data-user-id="%d"]`, bob.ID))
	a.wait(`document.getElementById("view-title").textContent === "Bob Brown"`)
	a.typeInto("#compose-content", "psst, a secret\r")
	a.wait(`document.getElementById("message-list").textContent.includes("psst, a secret")`)
	dm := fmt.Sprintf(`#dm-list a[data-dm="%d"] .badge .count`, alice.ID)
	b.wait(`(document.querySelector(%s) || {}).textContent === "1"`, dm)

	// Bob opens the conversation: it is marked read as he sees it.
	b.click(fmt.Sprintf(`#dm-list a[data-dm="%d"]`, alice.ID))
	b.wait(`document.getElementById("message-list").textContent.includes("psst, a secret")`)
	b.wait(`document.querySelector(%s) === null`, dm)

	// Typing shows, and stops with the message.
	a.typeInto("#compose-content", "are you th")
	b.wait(`document.getElementById("typing").textContent === "Alice Adams is typing…"`)
	a.typeInto("#compose-content", "ere?\r")
	b.wait(`document.getElementById("message-list").textContent.includes("are you there?")`)
	b.wait(`document.getElementById("typing").textContent === ""`)

	// Bob reads general: the count falls.
	b.click(fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, general))
	b.wait(`[...document.querySelectorAll("#message-list .msg-content")].some(e => e.innerHTML.includes("<strong>Bob</strong>"))`)
	b.wait(`document.querySelector(%s) === null`, badge)
	require.Equal(t, 0, b.count(`#message-list article.unread`))

	// Bob reacts; Alice sees it.
	msg := `#message-list article:last-of-type`
	b.click(msg + ` .react-button`)
	b.click(msg + ` .emoji-picker button[data-emoji="tada"]`)
	b.wait(`(document.querySelector(%s) || {}).getAttribute?.("aria-pressed") === "true"`, msg+` .reaction[data-emoji="tada"]`)
	a.click(fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, general))
	a.wait(`(document.querySelector(%s) || {}).textContent?.includes("1")`, msg+` .reaction[data-emoji="tada"]`)
	assert.Equal(t, "false", eval[string](a, `document.querySelector(%s).getAttribute("aria-pressed")`, msg+` .reaction[data-emoji="tada"]`))
	// Alice adds hers by clicking the reaction; Bob removes his.
	a.click(msg + ` .reaction[data-emoji="tada"]`)
	b.wait(`document.querySelector(%s).textContent.includes("2")`, msg+` .reaction[data-emoji="tada"]`)
	b.click(msg + ` .reaction[data-emoji="tada"]`)
	a.wait(`document.querySelector(%s).textContent.includes("1") && document.querySelector(%s).getAttribute("aria-pressed") === "true"`,
		msg+` .reaction[data-emoji="tada"]`, msg+` .reaction[data-emoji="tada"]`)

	// Alice edits her message; Bob sees the new text, marked edited.
	a.click(msg + ` .edit-button`)
	a.wait(`document.querySelector(%s) !== null`, msg+` .edit-form textarea`)
	assert.Equal(t, "Hello **Bob**", eval[string](a, `document.querySelector(%s).value`, msg+` .edit-form textarea`), "the editor holds the Markdown")
	a.setValue(msg+` .edit-form textarea`, "Hello *everyone*")
	a.click(msg + ` .edit-form button[type=submit]`)
	b.wait(`document.querySelector(%s).innerHTML.includes("<em>everyone</em>")`, msg+` .msg-content`)
	b.wait(`document.querySelector(%s) !== null`, msg+` .edited`)
	a.wait(`document.querySelector(%s) !== null && document.querySelector(%s) === null`, msg+` .edited`, msg+` .edit-form`)
	assert.Zero(t, b.count(`#message-list .edit-button`), "only one's own messages offer editing")

	// Alice deletes it; it disappears for Bob.
	a.click(msg + ` .delete-button`)
	a.wait(`document.getElementById("confirm-dialog").open`)
	a.click(`#confirm-ok`)
	b.wait(`!document.getElementById("message-list").textContent.includes("everyone")`)

	a.clean()
	b.clean()
}

// testHostile: markup in messages, topics, names, channel descriptions and
// search words is shown as text and runs nothing.
func testHostile(t *testing.T, s *site) {
	mallory := s.h.Provision(t, chat.ProvisionUserRequest{Email: "mallory@example.com",
		FullName: `<img src=x onerror=window.pwned='name';alert('name') x=`, Password: chattest.Password, Role: chat.RoleMember})
	viewer := s.h.NewUser(t, chat.RoleMember)
	const desc = `<script>window.pwned='description';alert('description')</script>`
	s.call(t, s.h.Owner, "POST", "/users/me/subscriptions", url.Values{
		"subscriptions": {fmt.Sprintf(`[{"name": "lobby", "description": %q}]`, desc)},
		"principals":    {fmt.Sprintf("[%d, %d]", mallory.ID, viewer.ID)},
	})
	lobby := int64(s.call(t, s.h.Owner, "GET", "/get_stream_id", url.Values{"stream": {"lobby"}})["stream_id"].(float64))
	hostile := []string{
		`<script>window.pwned='script';alert('script')</script>`,
		`<img src=x onerror="window.pwned='img';alert('img')">`,
		`[click me](javascript:window.pwned='link';alert('link'))`,
		`<a href="javascript:alert('a')">a link</a> <svg onload="alert('svg')"></svg>`,
		"javascript:alert('autolink') <iframe src=\"javascript:alert('iframe')\"></iframe>",
	}
	const topic = `<img src=x onerror="window.pwned='topic';alert('topic')">`
	for _, content := range hostile {
		s.send(t, mallory, "lobby", topic, content)
	}
	s.call(t, mallory, "POST", "/messages", url.Values{"type": {"direct"}, "to": {fmt.Sprintf("[%d]", viewer.ID)}, "content": {hostile[1]}})

	tb := s.tab(t, 1200, 800)
	tb.login(viewer)
	tb.open(fmt.Sprintf("#narrow/channel/%d-lobby", lobby))
	tb.wait(`document.querySelectorAll("#message-list article").length === %s`, len(hostile))
	// Everything shows, as text.
	list := tb.text("#message-list")
	for _, want := range []string{"<script>window.pwned='script'", `<img src=x onerror="window.pwned='img'`, "[click me](javascript:", "<svg onload=", "<iframe src="} {
		assert.Contains(t, list, want)
	}
	assert.Contains(t, tb.text("#message-list .recipient .topic"), topic)
	assert.Contains(t, tb.text("#message-list .sender"), mallory.FullName)
	assert.Contains(t, tb.text("#view-subtitle"), desc)
	// The sidebar: the channel's topic, Mallory's direct message, Mallory.
	assert.Contains(t, tb.text("#channel-list .topic-list"), topic)
	assert.Contains(t, tb.text("#dm-list"), mallory.FullName)
	assert.Contains(t, tb.text("#people-list"), mallory.FullName)
	tb.open(fmt.Sprintf("#narrow/dm/%d", mallory.ID))
	tb.wait(`document.getElementById("view-title").textContent === %s`, mallory.FullName)
	tb.wait(`document.querySelectorAll("#message-list article").length === 1`)
	// Search words show as text too.
	tb.open("#narrow/search/" + url.PathEscape(`<img src=x onerror=alert('search')>`))
	tb.wait(`document.getElementById("view-title").textContent.includes("<img src=x onerror=alert('search')>")`)
	tb.wait(`!document.getElementById("history-status").textContent.includes("Loading")`)

	assert.Zero(t, tb.count("#app-view img, #app-view iframe, #app-view svg, #app-view script"), "no element was made from the markup")
	assert.Zero(t, tb.count(`a[href^="javascript:"], a[href^="JAVASCRIPT:"], [onerror], [onload]`), "no script link or handler")
	assert.True(t, eval[bool](tb, `window.pwned === undefined`))
	tb.clean()
}

// testCSP checks that the browser enforces the page's policy: no HTML,
// script text or event handler can be made from a string (Trusted Types;
// only the message-content policy may), javascript: URLs do not run, and
// each refusal is reported (so the other subtests, which require a page
// without reports, would see one).
func testCSP(t *testing.T, s *site) {
	tb := s.tab(t, 800, 600)
	tb.wait(`!document.getElementById("login-view").hidden`)
	for name, attempt := range map[string]string{
		"HTML":           `document.body.insertAdjacentHTML("beforeend", "<img src=x onerror=\"window.ran='html'\">")`,
		"event handler":  `document.createElement("img").setAttribute("onerror", "window.ran='handler'")`,
		"script text":    `(() => { const s = document.createElement("script"); s.textContent = "window.ran='script'"; document.head.append(s); })()`,
		"another policy": `trustedTypes.createPolicy("mine", {createHTML: s => s})`,
	} {
		got := eval[string](tb, `(() => { try { `+attempt+`; return "allowed"; } catch (e) { return e.name; } })()`)
		assert.Equal(t, "TypeError", got, name)
	}
	eval[chromedp.Void](tb, `location.href = "javascript:window.ran='url'"`)
	tb.wait(`document.readyState === "complete"`)
	assert.True(t, eval[bool](tb, `window.ran === undefined`), "nothing ran")
	tb.waitFunc(func() bool {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		return len(tb.problems) >= 4
	}, "the refusals reported in the page's log")
	tb.mu.Lock()
	defer tb.mu.Unlock()
	assert.Empty(t, tb.dialogs)
}

// testReading: scrolling back loads older messages to the beginning;
// search finds and highlights; channels are created, joined and left; a
// reload keeps the session for the tab, and logging out forgets it.
func testReading(t *testing.T, s *site) {
	reader := s.h.NewUser(t, chat.RoleMember)
	writer := s.h.NewUser(t, chat.RoleMember)
	history := s.channel(t, "history", reader, writer)
	announcements := s.channel(t, "announcements", writer)
	const total = 120
	for i := 1; i <= total; i++ {
		s.send(t, writer, "history", "old times", fmt.Sprintf("history message %d", i))
	}
	s.send(t, writer, "history", "animals", "the zebra crossing")

	tb := s.tab(t, 1200, 800)
	tb.open("#channels") // where no message shows, so none is read yet
	tb.login(reader)
	badge := fmt.Sprintf(`#channel-list a[data-stream-id="%d"] .badge .count`, history)
	tb.wait(`(document.querySelector(%s) || {}).textContent === %s`, badge, fmt.Sprint(total+1))

	tb.click(fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, history))
	tb.wait(`document.getElementById("view-title").textContent === "#history"`)
	tb.wait(`document.querySelectorAll("#message-list article").length === 50`)
	require.Contains(t, tb.text("#message-list article:last-of-type"), "the zebra crossing")
	for loaded := 50; loaded < total+1; {
		eval[chromedp.Void](tb, `document.getElementById("message-scroller").scrollTop = 0`)
		tb.wait(`document.querySelectorAll("#message-list article").length > %s`, loaded)
		loaded = tb.count("#message-list article")
	}
	tb.wait(`document.getElementById("history-status").textContent.includes("beginning")`)
	texts := eval[[]string](tb, `[...document.querySelectorAll("#message-list .msg-content")].map(e => e.textContent.trim())`)
	require.Len(t, texts, total+1)
	for i := 1; i <= total; i++ {
		require.Equal(t, fmt.Sprintf("history message %d", i), texts[i-1], "oldest first, each once")
	}
	assert.Equal(t, 2, tb.count("#message-list .recipient"), "one header per topic run")

	// Search, from the search box.
	tb.setValue("#search-input", "zebra")
	tb.do(chromedp.Focus(chromedp.CSS("#search-input")))
	tb.press("Enter")
	tb.wait(`document.getElementById("view-title").textContent === "Search: zebra"`)
	tb.wait(`document.querySelectorAll("#message-list article").length === 1`)
	assert.Equal(t, "zebra", tb.text("#message-list .msg-content .highlight"))

	// A conversation with two people, chosen in the "New direct message"
	// dialog (its filter keeps the choices made).
	third := s.h.NewUser(t, chat.RoleMember)
	tb.click(`#dm-list button`)
	tb.wait(`document.getElementById("dm-dialog").open`)
	tb.click(fmt.Sprintf("#dm-choice-%d", writer.ID))
	tb.typeInto("#dm-filter", third.FullName)
	tb.wait(`document.querySelectorAll("#dm-choices input").length === 1`)
	tb.click(fmt.Sprintf("#dm-choice-%d", third.ID))
	tb.click("#dm-open")
	tb.wait(`document.getElementById("view-title").textContent === %s`, writer.FullName+", "+third.FullName)
	tb.typeInto("#compose-content", "hello you two\r")
	tb.wait(`document.getElementById("message-list").textContent.includes("hello you two")`)
	tb.wait(`document.querySelector(%s) !== null`, fmt.Sprintf(`#dm-list a[data-dm="%d,%d"]`, writer.ID, third.ID))

	// The channel directory: join, create, leave (the button is kept across
	// redraws: after joining, its click leaves, as its label says).
	tb.click(`#channels-heading a[href="#channels"]`)
	tb.wait(`!document.getElementById("channels-view").hidden`)
	join := fmt.Sprintf(`#all-channels li[data-stream-id="%d"] button`, announcements)
	tb.wait(`(document.querySelector(%s) || {}).textContent === "Subscribe"`, join)
	tb.click(join)
	tb.wait(`document.querySelector(%s) !== null`, fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, announcements))
	tb.wait(`document.querySelector(%s).textContent === "Unsubscribe"`, join)
	tb.setValue("#new-channel-name", "projects")
	tb.setValue("#new-channel-description", "What we make")
	tb.click(`#create-channel-form button[type=submit]`)
	tb.wait(`document.getElementById("view-title").textContent === "#projects"`)
	tb.wait(`[...document.querySelectorAll("#channel-list .name")].some(e => e.textContent === "projects")`)
	assert.Equal(t, "What we make", tb.text("#view-subtitle"))
	tb.open("#channels")
	tb.wait(`document.querySelector(%s).textContent === "Unsubscribe"`, join)
	tb.click(join)
	tb.wait(`document.querySelector(%s) === null`, fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, announcements))

	// A reload keeps the tab logged in; logging out forgets the key.
	tb.do(chromedp.Reload())
	tb.wait(`!document.getElementById("app-view").hidden && document.querySelector("#people-list [data-user-id]") !== null`)
	tb.click("#logout-button")
	tb.wait(`!document.getElementById("login-view").hidden`)
	assert.Equal(t, "", eval[string](tb, `sessionStorage.getItem("teamchat.session") || ""`))
	assert.Zero(t, tb.count("#message-list article, #channel-list li"), "nothing of the account stays on the page")
	tb.do(chromedp.Reload())
	tb.wait(`document.readyState === "complete" && !document.getElementById("login-view").hidden`)
	tb.clean()
}

// testQueueLost: when the server forgets the event queue, the client
// registers again and goes on receiving.
func testQueueLost(t *testing.T, s *site) {
	u := s.h.NewUser(t, chat.RoleMember)
	other := s.h.NewUser(t, chat.RoleMember)
	ch := s.channel(t, "queues", u, other)
	tb := s.tab(t, 1000, 700)
	tb.login(u)
	tb.open(fmt.Sprintf("#narrow/channel/%d-queues", ch))
	tb.wait(`document.getElementById("view-title").textContent === "#queues"`)
	queue := tb.polledQueue()
	s.call(t, u, "DELETE", "/events", url.Values{"queue_id": {queue}})
	tb.waitFunc(func() bool { q := tb.polledQueue(); return q != "" && q != queue }, "a new queue")
	s.send(t, other, "queues", "still here", "sent after the queue was lost")
	tb.wait(`document.getElementById("message-list").textContent.includes("sent after the queue was lost")`)
	tb.clean()
}

// testKeyboard: logging in, moving between views, writing, reacting and
// editing with the keyboard alone; and every control has a name.
func testKeyboard(t *testing.T, s *site) {
	u := s.h.NewUser(t, chat.RoleMember)
	ch := s.channel(t, "keys", u)
	tb := s.tab(t, 1200, 800)
	tb.wait(`!document.getElementById("login-view").hidden && document.activeElement.id === "login-email"`)
	tb.checkNames()
	tb.keys(u.Email)
	tb.press("Tab")
	tb.keys(u.Password)
	tb.press("Enter")
	tb.wait(`!document.getElementById("app-view").hidden && document.activeElement.id === "compose-content"`)

	link := fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, ch)
	tb.tabTo(link, true)
	tb.press("Enter")
	tb.wait(`document.getElementById("view-title").textContent === "#keys"`)
	tb.tabTo("#compose-topic", false)
	tb.keys("by keyboard")
	tb.press("Tab")
	tb.keys("typed with keys only")
	tb.press("Enter")
	tb.wait(`document.querySelector("#message-list article .msg-content")?.textContent.trim() === "typed with keys only"`)
	assert.Equal(t, "by keyboard", tb.text("#message-list .recipient .topic"))

	// React: the picker opens with the focus in it; Escape closes it.
	tb.tabTo("#message-list .react-button", true)
	tb.press("Enter")
	tb.wait(`document.activeElement.matches(".emoji-picker button")`)
	tb.press("Escape")
	tb.wait(`document.querySelector(".emoji-picker") === null && document.activeElement.matches(".react-button")`)
	tb.press("Enter")
	tb.wait(`document.activeElement.matches(".emoji-picker button")`)
	tb.press("Tab")
	tb.press("Enter")
	tb.wait(`document.querySelector('#message-list .reaction[data-emoji="heart"]')?.getAttribute("aria-pressed") === "true"`)

	// Edit: the editor takes the focus; Enter saves.
	tb.tabTo("#message-list .edit-button", false)
	tb.press("Enter")
	tb.wait(`document.activeElement.matches(".edit-form textarea")`)
	tb.press("End")
	tb.keys(", then edited")
	tb.press("Enter")
	tb.wait(`document.querySelector("#message-list .msg-content")?.textContent.trim() === "typed with keys only, then edited"`)
	tb.wait(`document.activeElement.matches(".edit-button")`)
	tb.checkNames()
	tb.clean()
}

// testPhone: at 375 px wide nothing scrolls sideways, the sidebar is a
// drawer behind a button, and reading and writing work.
func testPhone(t *testing.T, s *site) {
	u := s.h.NewUser(t, chat.RoleMember)
	w := s.h.NewUser(t, chat.RoleMember)
	ch := s.channel(t, "mobile", u, w)
	s.send(t, w, "mobile", "a rather long topic name that would not fit on a small screen at all",
		"A long link: https://example.com/"+strings.Repeat("a", 120)+"\n```\n"+strings.Repeat("code ", 40)+"\n```\n"+strings.Repeat("Averyveryverylongword", 8))
	tb := s.tab(t, 375, 740, chromedp.EmulateMobile)
	tb.login(u)
	fits := `document.documentElement.scrollWidth <= 375 && document.body.scrollWidth <= 375`
	tb.wait(fits)
	assert.Equal(t, "hidden", eval[string](tb, `getComputedStyle(document.getElementById("sidebar")).visibility`))
	tb.click("#menu-button")
	tb.wait(`(() => { const r = document.getElementById("sidebar").getBoundingClientRect(); return getComputedStyle(document.getElementById("sidebar")).visibility === "visible" && r.left >= 0 && r.right <= 375; })()`)
	assert.Equal(t, "true", eval[string](tb, `document.getElementById("menu-button").getAttribute("aria-expanded")`))
	tb.click(fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, ch))
	tb.wait(`document.getElementById("view-title").textContent === "#mobile" && getComputedStyle(document.getElementById("sidebar")).visibility === "hidden"`)
	tb.wait(`document.querySelectorAll("#message-list article").length === 1`)
	tb.wait(fits)
	inView := `(() => { const r = document.querySelector(%s).getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= 375 && r.bottom <= innerHeight; })()`
	tb.wait(inView, "#compose-content")
	tb.wait(inView, "#compose button[type=submit]")
	tb.wait(inView, "#message-list .react-button")
	tb.typeInto("#compose-content", "sent from a phone")
	tb.click("#compose button[type=submit]")
	tb.wait(`document.getElementById("message-list").textContent.includes("sent from a phone")`)
	tb.wait(fits)
	tb.clean()
}
