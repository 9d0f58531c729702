package markdown

import (
	"strings"
	"testing"
	"time"
)

// TestPathologicalInputs guards against inputs that make the inline
// patterns slow (the reference bounds message length at 10000 chars).
func TestPathologicalInputs(t *testing.T) {
	units := []string{"`", "**", "*a", "[", "[a](", "(", "a.com/(", "http://a", ":", ":a", "$$", "~~", "@**", "#**", "<time:", "&", "\n", "> ", "* ", "1. ", "  ", "a ", "💩", "\u200d", "🇺", "_", "|", "a|b\n-|-\n", "```\n", "~~~quote\n"}
	for _, u := range units {
		in := strings.Repeat(u, 10000/len(u)+1)
		start := time.Now()
		if _, err := RenderMessage(in, fixtureResolver{}, testOptions); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q×%d took %v", u, 10000/len(u)+1, d)
		}
	}
}
