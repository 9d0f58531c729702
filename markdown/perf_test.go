package markdown

import (
	"strings"
	"testing"
	"time"
)

// TestPathologicalInputs guards against inputs that make the inline
// patterns slow (the reference bounds message length at 10000 chars): a
// 10,000-character repetition of each unit may cost at most 4,000 times
// what 10,000 characters of plain words cost in the same run (the worst
// unit costs about 300 times; a loaded machine or the race detector slows
// both alike), which a quadratic blow-up exceeds by far. (It was a fixed
// 2 s, which the race detector on a loaded machine exceeded.)
func TestPathologicalInputs(t *testing.T) {
	render := func(in string) time.Duration {
		start := time.Now()
		if _, err := RenderMessage(in, fixtureResolver{}, testOptions); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	plain := strings.Repeat("words of prose ", 10000/15+1)
	base := render(plain)
	for range 2 {
		base = min(base, render(plain))
	}
	bound := max(4000*base, time.Second)
	units := []string{"`", "**", "*a", "[", "[a](", "(", "a.com/(", "http://a", ":", ":a", "$$", "~~", "@**", "#**", "<time:", "&", "\n", "> ", "* ", "1. ", "  ", "a ", "💩", "\u200d", "🇺", "_", "|", "a|b\n-|-\n", "```\n", "~~~quote\n"}
	for _, u := range units {
		in := strings.Repeat(u, 10000/len(u)+1)
		if d := render(in); d > bound {
			t.Errorf("%q×%d took %v: more than 4,000 times plain text's %v", u, 10000/len(u)+1, d, base)
		}
	}
}
