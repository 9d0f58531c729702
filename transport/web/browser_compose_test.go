package web_test

import (
	"encoding/base64"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

// testCompose: the message box completes topics, people, channels and
// emoji (hostile ones shown as text), replies to a message where it was,
// keeps drafts per view, edits the last message with Up, and attaches
// files by the button, by pasting and by dropping, with their progress.
func testCompose(t *testing.T, s *site) {
	me := s.h.Provision(t, chat.ProvisionUserRequest{Email: "cora@example.com", FullName: "Cora Compose", Password: "cora's long password", Role: chat.RoleMember})
	zeb := s.h.Provision(t, chat.ProvisionUserRequest{Email: "zeb.builder@example.com", FullName: "Zeb Builder", Password: "zeb's long password", Role: chat.RoleMember})
	const hostileName = `Ze<img src=x onerror=window.pwned='mention' x=`
	mal := s.h.Provision(t, chat.ProvisionUserRequest{Email: "ze.mal@example.com", FullName: hostileName, Password: "mal's long password", Role: chat.RoleMember})
	ch := s.channel(t, "composing", me, zeb, mal)
	const hostileTopic = `re<img src=x onerror="window.pwned='topic'">`
	s.send(t, zeb, "composing", "release plan", "what is the plan?")
	s.send(t, zeb, "composing", "retro", "how did it go?")
	s.send(t, mal, "composing", hostileTopic, "a topic with markup")
	s.call(t, zeb, "POST", "/messages", map[string][]string{"type": {"direct"}, "to": {fmt.Sprintf("[%d]", me.ID)}, "content": {"a word in private"}})

	tb := s.tab(t, 1200, 800)
	tb.login(me)
	tb.open(fmt.Sprintf("#narrow/channel/%d-composing", ch))
	tb.wait(`document.getElementById("message-list").textContent.includes("a topic with markup")`)

	// Topics: the channel's, completed; a new one is called new.
	tb.typeInto("#compose-topic", "re")
	tb.wait(`document.querySelectorAll(".typeahead:not([hidden]) [role=option]").length === 3`)
	assert.Contains(t, eval[[]string](tb, `[...document.querySelectorAll(".typeahead:not([hidden]) [role=option]")].map(e => e.textContent)`), hostileTopic)
	tb.typeInto("#compose-topic", "l")
	tb.wait(`[...document.querySelectorAll(".typeahead:not([hidden]) [role=option]")].map(e => e.textContent).join("|") === "release plan"`)
	tb.press("Enter")
	tb.wait(`document.getElementById("compose-topic").value === "release plan" && document.activeElement.id === "compose-content"`)
	assert.Equal(t, "", tb.text("#compose-topic-hint"))
	tb.setValue("#compose-topic", "relaese plan")
	tb.typeInto("#compose-topic", " ")
	tb.wait(`document.getElementById("compose-topic-hint").textContent === "New topic"`)
	tb.setValue("#compose-topic", "release plan")

	// People, channels and emoji, completed in the text.
	tb.typeInto("#compose-content", "thanks @Ze")
	tb.wait(`document.querySelectorAll(".typeahead:not([hidden]) [role=option]").length === 2`)
	options := eval[[]string](tb, `[...document.querySelectorAll(".typeahead:not([hidden]) [role=option] .label")].map(e => e.textContent)`)
	assert.ElementsMatch(t, []string{"Zeb Builder", hostileName}, options)
	// The hostile name sorts first ("<" before "b"): the arrow moves on.
	tb.wait(`document.querySelector(".typeahead:not([hidden]) [aria-selected=true] .label").textContent === %s`, hostileName)
	tb.press("ArrowDown")
	tb.wait(`document.querySelector(".typeahead:not([hidden]) [aria-selected=true] .label").textContent === "Zeb Builder"`)
	tb.press("Enter")
	tb.wait(`document.getElementById("compose-content").value === "thanks @**Zeb Builder** "`)
	tb.keys("see #compo")
	tb.wait(`document.querySelector(".typeahead:not([hidden]) [aria-selected=true]")?.textContent === "#composing"`)
	tb.press("Tab")
	tb.keys(":tad")
	tb.wait(`document.querySelector(".typeahead:not([hidden]) [aria-selected=true] .label")?.textContent === ":tada:"`)
	assert.Equal(t, 1, tb.count(".typeahead:not([hidden]) [aria-selected=true] .emoji-img"), "the emoji's image")
	tb.press("Enter")
	tb.wait(`document.getElementById("compose-content").value === "thanks @**Zeb Builder** see #**composing** :tada: "`)
	tb.press("Enter")
	last := `#message-list article:last-of-type .msg-content`
	tb.wait(`document.querySelector(%s)?.querySelector(".user-mention") !== null`, last)
	assert.Equal(t, "@Zeb Builder", tb.text(last+" .user-mention"))
	assert.Equal(t, "#composing", tb.text(last+" a.stream"))
	assert.Equal(t, 1, tb.count(last+" .emoji-img"), "the emoji shows as an image")
	assert.Equal(t, "release plan", tb.text("#message-list article:last-of-type .recipient .topic"))

	// Up in the empty box edits that message.
	tb.do(chromedp.Focus(chromedp.CSS("#compose-content")))
	tb.press("ArrowUp")
	tb.wait(`document.activeElement.matches("#message-list article:last-of-type .edit-form textarea")`)
	tb.press("Escape")
	tb.wait(`document.querySelector(".edit-form") === null`)

	// Reply, from all messages: to the topic, then to the direct message.
	tb.open("#")
	tb.wait(`document.getElementById("view-title").textContent === "All messages" && document.getElementById("message-list").textContent.includes("how did it go?")`)
	retro := `[...document.querySelectorAll("#message-list article")].find(a => a.textContent.includes("how did it go?"))`
	eval[chromedp.Void](tb, retro+`.querySelector(".reply-button").click()`)
	tb.wait(`document.activeElement.id === "compose-content" && document.getElementById("compose-topic").value === "retro" && document.getElementById("compose-channel").value === %s`, fmt.Sprint(ch))
	tb.keys("it went well")
	tb.press("Enter")
	tb.wait(`document.getElementById("message-list").textContent.includes("it went well")`)
	got := s.call(t, me, "GET", "/messages", map[string][]string{"anchor": {"newest"}, "num_before": {"1"}, "num_after": {"0"}})["messages"].([]any)[0].(map[string]any)
	assert.Equal(t, "retro", got["subject"])
	private := `[...document.querySelectorAll("#message-list article")].find(a => a.textContent.includes("a word in private"))`
	eval[chromedp.Void](tb, private+`.querySelector(".reply-button").click()`)
	tb.wait(`document.getElementById("compose-to-label").textContent === "To: Zeb Builder" && document.activeElement.id === "compose-content"`)
	tb.keys("answered in private")
	tb.press("Enter")
	tb.wait(`document.getElementById("message-list").textContent.includes("answered in private")`)
	got = s.call(t, me, "GET", "/messages", map[string][]string{"anchor": {"newest"}, "num_before": {"1"}, "num_after": {"0"}})["messages"].([]any)[0].(map[string]any)
	assert.Equal(t, "private", got["type"])

	// Drafts stay with their view.
	tb.open(fmt.Sprintf("#narrow/channel/%d-composing", ch))
	tb.wait(`document.getElementById("view-title").textContent === "#composing"`)
	tb.typeInto("#compose-content", "words not sent yet")
	tb.open(fmt.Sprintf("#narrow/dm/%d", zeb.ID))
	tb.wait(`document.getElementById("view-title").textContent === "Zeb Builder" && document.getElementById("compose-content").value === ""`)
	tb.open(fmt.Sprintf("#narrow/channel/%d-composing", ch))
	tb.wait(`document.getElementById("compose-content").value === "words not sent yet" && document.getElementById("compose-topic").value === "release plan"`)
	eval[chromedp.Void](tb, `(() => { const c = document.getElementById("compose-content"); c.value = ""; c.dispatchEvent(new Event("input")); })()`)

	// Files: by the button (with its progress), pasted and dropped.
	eval[chromedp.Void](tb, `window.sawProgress = false; new MutationObserver(() => { if (document.querySelector("#compose-uploads progress")) window.sawProgress = true; }).observe(document.getElementById("compose-uploads"), {childList: true, subtree: true})`)
	file := filepath.Join(t.TempDir(), "blue square.png")
	require.NoError(t, os.WriteFile(file, pngImage(t, 30, 30, color.RGBA{B: 200, A: 255}), 0o644))
	tb.do(chromedp.SetUploadFiles(chromedp.CSS("#compose-file"), []string{file}, chromedp.NodeReady))
	tb.wait(`/^ ?\[blue square\.png\]\(\/user_uploads\/\d+\/[^)]+\) $/.test(document.getElementById("compose-content").value)`)
	assert.True(t, eval[bool](tb, `window.sawProgress`), "the upload's progress showed")
	png := base64.StdEncoding.EncodeToString(pngImage(t, 20, 20, color.RGBA{G: 200, A: 255}))
	dataTransfer := `(() => { const b = Uint8Array.from(atob(%s), c => c.charCodeAt(0)); const dt = new DataTransfer(); dt.items.add(new File([b], %s, {type: "image/png"})); return dt; })()`
	eval[chromedp.Void](tb, `document.getElementById("compose-content").dispatchEvent(new ClipboardEvent("paste", {clipboardData: `+dataTransfer+`, bubbles: true, cancelable: true}))`, png, "pasted.png")
	tb.wait(`document.getElementById("compose-content").value.includes("[pasted.png](/user_uploads/")`)
	eval[chromedp.Void](tb, `document.getElementById("message-scroller").dispatchEvent(new DragEvent("drop", {dataTransfer: `+dataTransfer+`, bubbles: true, cancelable: true}))`, png, "dropped.png")
	tb.wait(`document.getElementById("compose-content").value.includes("[dropped.png](/user_uploads/") && !document.getElementById("compose-content").value.includes("Uploading")`)
	tb.do(chromedp.Focus(chromedp.CSS("#compose-content")))
	tb.press("Enter")
	tb.wait(`document.querySelectorAll("#message-list article:last-of-type .message_inline_image img").length === 3 && [...document.querySelectorAll("#message-list article:last-of-type .message_inline_image img")].every(i => i.complete && i.naturalWidth > 0)`)

	assert.Zero(t, tb.count(".typeahead img"), "suggestions are text")
	assert.True(t, eval[bool](tb, `window.pwned === undefined`))
	tb.clean()
}

// testEmojiPicker: reactions and emoji show as images of the sheet; the
// picker holds every emoji and the custom ones, finds them by name,
// moves with the arrows and puts the recently used first.
func testEmojiPicker(t *testing.T, s *site) {
	u := s.h.NewUser(t, chat.RoleMember)
	ch := s.channel(t, "emoji", u)
	s.upload(t, s.h.Owner, "/realm/emoji/octo_parrot", "octo.png", "image/png", pngImage(t, 16, 16, color.RGBA{R: 90, G: 30, B: 160, A: 255}))
	id := s.send(t, u, "emoji", "faces", "so :octopus: much")
	tb := s.tab(t, 1200, 800)
	tb.login(u)
	tb.open(fmt.Sprintf("#narrow/channel/%d-emoji", ch))
	msg := fmt.Sprintf(`#message-list article[data-id="%d"]`, id)
	tb.wait(`document.querySelector(%s) !== null`, msg+" .msg-content .emoji-img")
	assert.Equal(t, "octopus", eval[string](tb, `document.querySelector(%s).getAttribute("aria-label")`, msg+" .msg-content .emoji-img"))
	assert.Equal(t, ":octopus:", tb.text(msg+" .msg-content .emoji-img"), "the text stays, for copying")
	tb.wait(`performance.getEntriesByType("resource").some(e => e.name.endsWith("/web/emoji/sheet.png"))`)

	tb.click(msg + " .react-button")
	tb.wait(`document.querySelector(%s) !== null`, msg+" .emoji-picker .emoji-grid button")
	assert.Greater(t, tb.count(msg+" .emoji-picker .emoji-grid button"), 1800, "every emoji")
	assert.Equal(t, "+1", eval[string](tb, `document.activeElement.dataset.emoji`), "the focus on the first of the recent row")
	assert.Equal(t, 1, tb.count(msg+` .emoji-picker .emoji-section[aria-label="Custom"] button[data-emoji="octo_parrot"] img.emoji`))
	// Search by name, then the arrows move through the results.
	tb.click(msg + " .emoji-picker .emoji-search")
	tb.keys("octo")
	tb.wait(`[...document.querySelectorAll(%s)].map(b => b.dataset.emoji).join(",") === "octo_parrot,octopus"`, msg+" .emoji-picker .emoji-grid button")
	tb.press("ArrowDown")
	tb.wait(`document.activeElement.dataset.emoji === "octo_parrot"`)
	tb.press("ArrowRight")
	tb.wait(`document.activeElement.dataset.emoji === "octopus"`)
	tb.press("Enter")
	tb.wait(`document.querySelector(%s)?.getAttribute("aria-pressed") === "true"`, msg+` .reaction[data-emoji="octopus"]`)
	assert.Equal(t, 1, tb.count(msg+` .reaction[data-emoji="octopus"] .emoji-img`), "the reaction's emoji is an image")
	tb.wait(`document.querySelector(".emoji-picker") === null && document.activeElement.matches(".react-button")`)
	// The custom one, by the search's Enter; then both lead the recent row.
	tb.press("Enter")
	tb.wait(`document.querySelector(".emoji-picker .emoji-search") !== null`)
	tb.click(msg + " .emoji-picker .emoji-search")
	tb.keys("octo_p")
	tb.wait(`document.querySelectorAll(%s).length === 1`, msg+" .emoji-picker .emoji-grid button")
	tb.press("Enter")
	tb.wait(`(() => { const i = document.querySelector(%s); return i && i.complete && i.naturalWidth === 16; })()`, msg+` .reaction[data-emoji="octo_parrot"] img.emoji`)
	tb.click(msg + " .react-button")
	tb.wait(`document.querySelector(".emoji-picker .emoji-recent button") !== null`)
	assert.Equal(t, []string{"octo_parrot", "octopus", "+1", "heart"},
		eval[[]string](tb, `[...document.querySelectorAll(".emoji-picker .emoji-recent button")].slice(0, 4).map(b => b.dataset.emoji)`))
	tb.press("Escape")
	tb.wait(`document.querySelector(".emoji-picker") === null`)
	tb.checkNames()
	tb.clean()
}
