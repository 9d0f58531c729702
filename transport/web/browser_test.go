package web_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
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
