package web_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "make the README's screenshot again in headless Chromium")

const (
	screenshotFile           = "testdata/screenshot.png"
	screenshotW, screenshotH = 1100, 640
)

// TestScreenshot makes the README's screenshot with -update-screenshot;
// without it, it checks the committed one (a PNG of the expected size,
// small, shown by the README).
func TestScreenshot(t *testing.T) {
	if *updateScreenshot {
		makeScreenshot(t)
	}
	data, err := os.ReadFile(screenshotFile)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, screenshotW, img.Bounds().Dx())
	assert.Equal(t, screenshotH, img.Bounds().Dy())
	assert.Less(t, len(data), 200<<10, "a small PNG")
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(readme), "transport/web/"+screenshotFile), "the README shows the screenshot")
}

// userAt is a person of the screenshot.
type userAt struct{ chattest.User }

func makeScreenshot(t *testing.T) {
	s := newSite(t)
	s.h.Clock.Set(time.Now().Add(-50 * time.Minute))
	person := func(email, name string) userAt {
		return userAt{s.h.Provision(t, chat.ProvisionUserRequest{Email: email, FullName: name, Password: "a long enough password", Role: chat.RoleMember})}
	}
	ada := person("ada@example.com", "Ada Lovelace")
	grace := person("grace@example.com", "Grace Hopper")
	alan := person("alan@example.com", "Alan Turing")
	katherine := person("katherine@example.com", "Katherine Johnson")
	everyone := []userAt{ada, grace, alan, katherine}
	general := s.channel(t, "general", ada.User, grace.User, alan.User, katherine.User)
	s.channel(t, "design", ada.User, grace.User, katherine.User)
	s.channel(t, "engine room", ada.User, alan.User)
	say := func(u userAt, channel, topic, content string) {
		s.send(t, u.User, channel, topic, content)
		s.h.Clock.Advance(3 * time.Minute)
	}
	say(grace, "general", "launch plan", "Morning all! The **release candidate** is up on the staging server.")
	say(alan, "general", "launch plan", "Checked the migrations on a copy of production:\n```go\nif err := migrate(ctx, db); err != nil {\n\treturn fmt.Errorf(\"migrate: %w\", err) // 14 steps, 2.3 s\n}\n```")
	say(alan, "general", "launch plan", "All green :check:")
	say(katherine, "general", "launch plan", "Numbers look right to me :check:\n- latency p99 under 40 ms\n- no errors in the logs")
	say(ada, "general", "launch plan", "Great work @**Grace Hopper** and @**Alan Turing**. Let's ship at noon :rocket:")
	msg := s.send(t, grace.User, "general", "launch plan", "Noon it is. I'll post in #**general>launch plan** when it's out.")
	for _, u := range []userAt{ada, alan, katherine} {
		s.call(t, u.User, "POST", fmt.Sprintf("/messages/%d/reactions", msg), url.Values{"emoji_name": {"tada"}})
	}
	s.call(t, alan.User, "POST", fmt.Sprintf("/messages/%d/reactions", msg), url.Values{"emoji_name": {"+1"}})
	say(grace, "design", "new icons", "Here are the new icons for the sidebar.")
	say(katherine, "general", "lunch", "Anyone for lunch at 12:30?")
	s.call(t, katherine.User, "POST", "/messages", url.Values{"type": {"direct"}, "to": {fmt.Sprintf("[%d]", ada.ID)}, "content": {"Do you have a minute after the launch?"}})
	s.h.Clock.Set(time.Now())
	for _, u := range everyone[1:] {
		s.call(t, u.User, "POST", "/users/me/presence", url.Values{"status": {"active"}})
	}

	tb := s.tab(t, screenshotW, screenshotH)
	tb.login(ada.User)
	tb.open(fmt.Sprintf("#narrow/channel/%d-general/topic/launch.20plan", general))
	tb.wait(`document.querySelectorAll("#message-list article").length === 6 && document.querySelectorAll('#people-list [data-presence="active"]').length === 4`)
	// The notifications banner, answered "Not now" as a person might.
	eval[chromedp.Void](tb, `document.getElementById("ask-notifications").hidden || document.getElementById("notifications-later").click()`)
	// Seen messages are read; the newest in view; mouse and focus out of the way.
	eval[chromedp.Void](tb, `document.getElementById("message-scroller").scrollTop = 0`)
	tb.wait(`document.querySelectorAll("#message-list article.unread").length === 0`)
	eval[chromedp.Void](tb, `document.activeElement.blur(); document.getElementById("message-scroller").scrollTop = 1e9`)
	tb.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: 5, Y: 5})
		return err
	}))
	shot, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll("testdata", 0o755))
	require.NoError(t, os.WriteFile(screenshotFile, shot, 0o644))
	t.Logf("wrote %s (%d bytes)", screenshotFile, len(shot))
	tb.clean()
}
