package web_test

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testNewcomer is a newcomer's first ten minutes, in two browsers, by
// what a person sees and clicks: the owner logs in, makes a channel and
// invites a colleague to it with a link; the colleague opens the link,
// signs up and is in the channel; they talk with replies, a mention
// completed from "@", an emoji reaction from the picker's search, and an
// image attached that shows as a preview.
func testNewcomer(t *testing.T, s *site) {
	owner := s.tab(t, 1200, 800)
	owner.login(s.h.Owner)
	// A channel to welcome people in.
	owner.click(`#channels-heading a[href="#channels"]`)
	owner.wait(`!document.getElementById("channels-view").hidden`)
	owner.typeInto("#new-channel-name", "welcome")
	owner.typeInto("#new-channel-description", "Say hello")
	owner.click(`#create-channel-form button[type=submit]`)
	owner.wait(`document.getElementById("view-title").textContent === "#welcome"`)
	welcome := s.channelID(t, "welcome")

	// An invitation link to it.
	owner.click("#invite-button")
	owner.wait(`document.getElementById("invite-dialog").open`)
	owner.click(fmt.Sprintf("#invite-channel-%d", welcome))
	owner.click(`#invite-link-form button[type=submit]`)
	owner.wait(`document.getElementById("invite-link").value.includes("/join/")`)
	m := inviteKeyRE.FindStringSubmatch(eval[string](owner, `document.getElementById("invite-link").value`))
	require.Len(t, m, 2)
	owner.click("#invite-close")

	// The colleague, in a browser of their own.
	c := s.tab(t, 1200, 800)
	c.do(chromedp.Navigate(s.url + "join/" + m[1] + "/"))
	c.wait(`!document.getElementById("join-view").hidden`)
	c.typeInto("#join-email", "nina.newcomer@example.com")
	c.typeInto("#join-name", "Nina Newcomer")
	c.typeInto("#join-password", "nina's long password")
	c.press("Enter")
	c.wait(`!document.getElementById("app-view").hidden && document.querySelector(%s) !== null`, fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, welcome))
	owner.wait(`document.getElementById("people-list").textContent.includes("Nina Newcomer")`)

	// The owner says hello.
	owner.typeInto("#compose-topic", "hello")
	owner.typeInto("#compose-content", "Welcome aboard!\r")
	c.click(fmt.Sprintf(`#channel-list a[data-stream-id="%d"]`, welcome))
	// The view changes on the hash change that follows the click, so the
	// list may still show the view she was on (where the message arrived
	// too): wait for the channel's own view, loaded, with the message.
	hello := `[...document.querySelectorAll("#message-list article")].find(a => a.textContent.includes("Welcome aboard!"))`
	c.wait(`document.getElementById("view-title").textContent === "#welcome" && !document.getElementById("message-list").hasAttribute("aria-busy") && ` + hello + ` !== undefined`)

	// She replies, mentioning the owner by completing "@Oli".
	eval[chromedp.Void](c, hello+`.querySelector(".reply-button").click()`)
	c.wait(`document.activeElement.id === "compose-content" && document.getElementById("compose-topic").value === "hello"`)
	c.keys("Thank you @Oli")
	c.wait(`document.querySelector(".typeahead:not([hidden]) [aria-selected=true] .label")?.textContent === %s`, s.h.Owner.FullName)
	c.press("Enter")
	c.keys("glad to be here")
	c.press("Enter")
	owner.wait(`[...document.querySelectorAll("#message-list article.mentioned")].some(a => a.textContent.includes("glad to be here"))`)
	assert.Equal(t, "@"+s.h.Owner.FullName, owner.text("#message-list article.mentioned .user-mention"))

	// The owner reacts from the picker's search.
	thanks := `#message-list article:last-of-type`
	owner.click(thanks + " .react-button")
	owner.click(thanks + " .emoji-picker .emoji-search")
	owner.keys("tada")
	owner.wait(`document.querySelector(%s)?.dataset.emoji === "tada"`, thanks+" .emoji-picker .emoji-grid button")
	owner.press("Enter")
	c.wait(`document.querySelector(%s)?.textContent.includes("1")`, thanks+` .reaction[data-emoji="tada"]`)
	assert.Equal(t, 1, c.count(thanks+` .reaction[data-emoji="tada"] .emoji-img`))

	// The owner replies with a picture; she sees its preview.
	file := filepath.Join(t.TempDir(), "team photo.png")
	require.NoError(t, os.WriteFile(file, pngImage(t, 64, 48, color.RGBA{R: 30, G: 140, B: 90, A: 255}), 0o644))
	owner.click(thanks + " .reply-button")
	owner.keys("Here is the team: ")
	owner.do(chromedp.SetUploadFiles(chromedp.CSS("#compose-file"), []string{file}, chromedp.NodeReady))
	owner.wait(`document.getElementById("compose-content").value.includes("[team photo.png](/user_uploads/")`)
	owner.do(chromedp.Focus(chromedp.CSS("#compose-content")))
	owner.press("Enter")
	c.wait(`(i => i && i.complete && i.naturalWidth === 64)(document.querySelector("#message-list article:last-of-type .message_inline_image img"))`)
	assert.Contains(t, c.text("#message-list article:last-of-type .msg-content"), "Here is the team")
	owner.clean()
	c.clean()
}
