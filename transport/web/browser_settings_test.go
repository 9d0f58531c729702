package web_test

import (
	"fmt"
	"image/color"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

// testSettings: a person changes their name, password, notification and
// display settings and unmutes someone, in the page.
func testSettings(t *testing.T, s *site) {
	me := s.h.Provision(t, chat.ProvisionUserRequest{Email: "sam.settings@example.com", FullName: "Sam Settings", Password: "sam's long password", Role: chat.RoleMember})
	other := s.h.NewUser(t, chat.RoleMember)
	s.channel(t, "settings talk", me, other)
	s.send(t, me, "settings talk", "clock", "what time is it?")
	s.call(t, me, "POST", fmt.Sprintf("/users/me/muted_users/%d", other.ID), nil)
	tb := s.tab(t, 1200, 800)
	tb.login(me)
	tb.click("#settings-link")
	tb.wait(`document.getElementById("view-title").textContent === "Settings" && document.getElementById("settings-name") !== null`)

	// The name, a hostile one: shown as text.
	const hostile = `Sam <img src=x onerror=window.pwned='settings' x=`
	tb.setValue("#settings-name", hostile)
	tb.click(`#settings-view form button[type=submit]`)
	tb.wait(`document.getElementById("settings-name-status").textContent === "Saved."`)
	tb.wait(`document.getElementById("people-list").textContent.includes(%s)`, hostile+" (you)")
	assert.Zero(t, tb.count("#people-list img, #settings-view img"))

	// A picture: uploaded, shown to everyone, removed.
	file := filepath.Join(t.TempDir(), "me.png")
	require.NoError(t, os.WriteFile(file, pngImage(t, 24, 24, color.RGBA{R: 250, G: 120, A: 255}), 0o644))
	tb.do(chromedp.SetUploadFiles(chromedp.CSS("#settings-avatar-file"), []string{file}, chromedp.NodeReady))
	mine := fmt.Sprintf(`#people-list a[data-user-id="%d"] img.avatar`, me.ID)
	tb.wait(`(i => i && i.complete && i.naturalWidth === 24)(document.querySelector(%s))`, mine)
	tb.wait(`(i => i && i.complete && i.naturalWidth === 24)(document.querySelector("#settings-view img.avatar"))`)
	tb.click("#settings-avatar-remove")
	tb.wait(`document.querySelector(%s) === null && document.getElementById("settings-avatar-remove") === null`, mine)

	// The password: a wrong current one is refused, then it changes.
	tb.click(`.settings-nav a[href="#settings/account"]`)
	tb.wait(`document.getElementById("settings-old-password") !== null`)
	tb.setValue("#settings-old-password", "not my password")
	tb.setValue("#settings-new-password", "sam's new long password")
	tb.setValue("#settings-new-password2", "sam's new long password")
	tb.click(`#settings-view form button[type=submit]`)
	tb.wait(`document.getElementById("settings-password-status").classList.contains("error") && document.getElementById("settings-password-status").textContent !== ""`)
	tb.setValue("#settings-old-password", "sam's long password")
	tb.click(`#settings-view form button[type=submit]`)
	tb.wait(`document.getElementById("settings-password-status").textContent === "Your password is changed."`)
	got := s.call(t, me, "POST", "/fetch_api_key", url.Values{"username": {me.Email}, "password": {"sam's new long password"}})
	assert.Equal(t, me.Email, got["email"])

	// Notifications: a choice saves at once.
	tb.click(`.settings-nav a[href="#settings/notifications"]`)
	tb.wait(`document.getElementById("settings-enable_desktop_notifications")?.checked === true`)
	tb.click("#settings-enable_desktop_notifications")
	tb.wait(`document.getElementById("settings-notifications-status").textContent === "Saved."`)
	settings := s.call(t, me, "GET", "/settings", nil)["user_settings"].(map[string]any)
	assert.Equal(t, false, settings["enable_desktop_notifications"])
	eval[chromedp.Void](tb, `document.getElementById("settings-notifications-status").textContent = ""`)
	tb.click("#settings-enable_followed_topic_email_notifications")
	tb.wait(`document.getElementById("settings-notifications-status").textContent === "Saved."`)

	// Display: the dark theme and a 24-hour clock apply at once.
	tb.click(`.settings-nav a[href="#settings/display"]`)
	tb.wait(`document.getElementById("settings-theme-2") !== null`)
	light := eval[string](tb, `getComputedStyle(document.body).backgroundColor`)
	tb.click("#settings-theme-2")
	tb.wait(`document.documentElement.dataset.theme === "dark" && getComputedStyle(document.body).backgroundColor !== %s`, light)
	assert.Equal(t, "rgb(21, 24, 30)", eval[string](tb, `getComputedStyle(document.body).backgroundColor`))
	tb.click("#settings-twenty_four_hour_time")
	tb.waitFunc(func() bool {
		settings = s.call(t, me, "GET", "/settings", nil)["user_settings"].(map[string]any)
		return settings["twenty_four_hour_time"] == true
	}, "the 24-hour clock saved")
	assert.Equal(t, float64(2), settings["color_scheme"])
	tb.click(`#channel-list a`)
	tb.wait(`document.getElementById("message-list").textContent.includes("what time is it?")`)
	tb.wait(`(t => t && !/\b(AM|PM)\b/i.test(t))(document.querySelector("#message-list time")?.getAttribute("title"))`) // a 24-hour clock

	// Muted people: the list, and unmuting.
	tb.open("#settings/muted")
	tb.wait(`document.getElementById(%s) !== null`, fmt.Sprintf("settings-unmute-%d", other.ID))
	tb.click(fmt.Sprintf("#settings-unmute-%d", other.ID))
	tb.wait(`document.querySelector("#settings-view .settings-body").textContent.includes("You have not muted anyone.")`)
	assert.True(t, eval[bool](tb, `window.pwned === undefined`))
	tb.checkNames()
	tb.clean()
}

// testOrganizationSettings: an administrator renames the organization,
// changes a member's role, deactivates and reactivates them, and revokes
// an invitation; a member is offered none of it.
func testOrganizationSettings(t *testing.T, s *site) {
	admin := s.h.Provision(t, chat.ProvisionUserRequest{Email: "ada.admin@example.com", FullName: "Ada Admin", Password: "ada's long password", Role: chat.RoleAdministrator})
	member := s.h.Provision(t, chat.ProvisionUserRequest{Email: "mo.member@example.com", FullName: "Mo Member", Password: "mo's long password", Role: chat.RoleMember})
	s.call(t, s.h.Owner, "POST", "/invites", url.Values{"invitee_emails": {"invited.person@example.com"}, "stream_ids": {"[]"}})

	m := s.tab(t, 1000, 700)
	m.login(member)
	m.open("#settings/profile")
	m.wait(`document.getElementById("settings-name") !== null`)
	assert.Zero(t, m.count(".org-link"), "no organization settings for members")
	m.open("#organization/members")
	m.wait(`document.querySelector("#settings-view .settings-body").textContent.includes("Only administrators")`)

	tb := s.tab(t, 1200, 800)
	tb.login(admin)
	tb.open("#settings/profile")
	tb.click(".org-link")
	tb.wait(`document.getElementById("org-name")?.value === "Test Organization"`)
	const description = `<script>window.pwned='org'</script> We **make** things.`
	tb.setValue("#org-name", "Renamed Organization")
	tb.setValue("#org-description", description)
	tb.click(`#settings-view form button[type=submit]`)
	tb.wait(`document.getElementById("org-status").textContent === "Saved."`)
	tb.wait(`document.title.endsWith("Renamed Organization")`)
	m.wait(`document.title.endsWith("Renamed Organization")`)
	realm := s.call(t, admin, "GET", "/realm", nil)
	assert.Equal(t, description, realm["realm_description"])
	s.call(t, s.h.Owner, "PATCH", "/realm", url.Values{"name": {"Test Organization"}})

	// Members: a role, then deactivating (asked first) and reactivating.
	tb.click(`.settings-nav a[href="#organization/members"]`)
	role := fmt.Sprintf("#member-role-%d", member.ID)
	tb.wait(`document.querySelector(%s) !== null`, role)
	assert.Zero(t, tb.count(fmt.Sprintf("#member-role-%d", s.h.Owner.ID)), "an administrator cannot change an owner")
	assert.Zero(t, tb.count(role+` option[value="100"]`), "nor make one")
	tb.do(chromedp.SetValue(chromedp.CSS(role), "300"))
	eval[chromedp.Void](tb, `document.querySelector(%s).dispatchEvent(new Event("change"))`, role)
	tb.wait(`document.getElementById("members-status").textContent === "Mo Member is now moderator."`)
	user := s.call(t, admin, "GET", fmt.Sprintf("/users/%d", member.ID), nil)["user"].(map[string]any)
	assert.Equal(t, float64(chat.RoleModerator), user["role"])
	tb.click(fmt.Sprintf("#member-deactivate-%d", member.ID))
	tb.wait(`document.getElementById("confirm-dialog").open && document.getElementById("confirm-ok").textContent === "Deactivate"`)
	tb.click("#confirm-ok")
	tb.wait(`document.querySelector(%s) !== null`, fmt.Sprintf("#member-reactivate-%d", member.ID))
	m.wait(`!document.getElementById("login-view").hidden`) // logged out
	tb.click(fmt.Sprintf("#member-reactivate-%d", member.ID))
	tb.wait(`document.querySelector(%s) !== null`, fmt.Sprintf("#member-deactivate-%d", member.ID))

	// Invitations: listed, and revoked.
	tb.click(`.settings-nav a[href="#organization/invitations"]`)
	tb.wait(`document.querySelector("#settings-view table.members")?.textContent.includes("invited.person@example.com")`)
	tb.click(`#settings-view button[aria-label="Revoke the invitation of invited.person@example.com"]`)
	tb.wait(`!document.querySelector("#settings-view .settings-body").textContent.includes("invited.person@example.com")`)
	invites := s.call(t, admin, "GET", "/invites", nil)["invites"].([]any)
	for _, inv := range invites {
		require.NotEqual(t, "invited.person@example.com", inv.(map[string]any)["email"])
	}
	assert.True(t, eval[bool](tb, `window.pwned === undefined`))
	tb.checkNames()
	tb.clean()
	m.clean()
}
