package web_test

import (
	"image/png"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/markdown"
)

// The client's emoji set agrees with the server: every name it offers is
// one the server takes for that emoji, the canonical name first, and the
// sheet has a cell for each (internal/emojigen makes both).
func TestEmojiSetAgreesWithTheServer(t *testing.T) {
	data, err := os.ReadFile("static/emoji/data.js")
	require.NoError(t, err)
	cols, err := strconv.Atoi(regexp.MustCompile(`COLUMNS = (\d+);`).FindStringSubmatch(string(data))[1])
	require.NoError(t, err)
	body := regexp.MustCompile("(?s)EMOJI = `(.*)`;").FindStringSubmatch(string(data))
	require.Len(t, body, 2)
	lines := strings.Split(body[1], "\n")
	require.Greater(t, len(lines), 1500)
	seen := map[string]bool{}
	for _, line := range lines {
		parts := strings.Split(line, ":")
		require.Len(t, parts, 3, line)
		code, names := parts[0], strings.Split(parts[2], ",")
		assert.False(t, seen[code], "each emoji once: %s", code)
		seen[code] = true
		canonical, ok := markdown.EmojiName(code)
		require.True(t, ok, code)
		assert.Equal(t, canonical, names[0], code)
		for _, n := range names {
			c, ok := markdown.EmojiCode(n)
			assert.True(t, ok && c == code, "%s is %s on the server, not %s", n, c, code)
		}
	}
	for _, n := range []string{"+1", "heart", "tada", "smile", "joy", "eyes", "rocket", "thinking", "check", "working_on_it"} {
		c, _ := markdown.EmojiCode(n)
		assert.True(t, seen[c], "the popular %s is in the set", n)
	}
	f, err := os.Open("static/emoji/sheet.png")
	require.NoError(t, err)
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	require.NoError(t, err)
	assert.Equal(t, cols*34, cfg.Width)
	assert.Equal(t, (len(lines)+cols-1)/cols*34, cfg.Height)
}
