package markdown

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func compileLinkifiers(t *testing.T, pairs ...string) []*Linkifier {
	t.Helper()
	var out []*Linkifier
	for i := 0; i < len(pairs); i += 2 {
		l, err := CompileLinkifier(pairs[i], pairs[i+1])
		require.NoError(t, err)
		out = append(out, l)
	}
	return out
}

func renderLinkified(t *testing.T, in string, linkifiers []*Linkifier) Result {
	t.Helper()
	res, err := RenderMessage(in, fixtureResolver{}, Options{RealmURL: "https://chat.example.com", Linkifiers: linkifiers})
	require.NoError(t, err)
	return res
}

// Cases of the reference's test_markdown linkifier tests.
func TestLinkifiers(t *testing.T) {
	trac := compileLinkifiers(t, `#(?P<id>[0-9]{2,8})`, "https://trac.example.com/ticket/{id}")
	for _, tc := range []struct {
		name, in, want string
		linkifiers     []*Linkifier
	}{
		{"Basic", "We should fix #224 and #115, but not issue#124 or #1124z or [trac #15](https://trac.example.com/ticket/16) today.",
			`<p>We should fix <a href="https://trac.example.com/ticket/224">#224</a> and <a href="https://trac.example.com/ticket/115">#115</a>, but not issue#124 or #1124z or <a href="https://trac.example.com/ticket/16">trac #15</a> today.</p>`, trac},
		{"Start and end", "#224", `<p><a href="https://trac.example.com/ticket/224">#224</a></p>`, trac},
		{"Before characters", `(#224) '#225' "#226" ,#227 :#228 <#229`,
			`<p>(<a href="https://trac.example.com/ticket/224">#224</a>) '<a href="https://trac.example.com/ticket/225">#225</a>' "<a href="https://trac.example.com/ticket/226">#226</a>" ,<a href="https://trac.example.com/ticket/227">#227</a> :<a href="https://trac.example.com/ticket/228">#228</a> &lt;<a href="https://trac.example.com/ticket/229">#229</a></p>`, trac},
		{"Not after a letter or other", "a#224 [#225 ü#226", `<p>a#224 [#225 ü#226</p>`, trac},
		{"Unicode space before", "x\u00a0#224", "<p>x\u00a0<a href=\"https://trac.example.com/ticket/224\">#224</a></p>", trac},
		{"Adjacent", "#224,#225", `<p><a href="https://trac.example.com/ticket/224">#224</a>,<a href="https://trac.example.com/ticket/225">#225</a></p>`, trac},
		{"Shared separator", "#224 #225", `<p><a href="https://trac.example.com/ticket/224">#224</a> <a href="https://trac.example.com/ticket/225">#225</a></p>`, trac},
		{"In code", "`#224` and\n```\n#225\n```", "<p><code>#224</code> and</p>\n<div class=\"codehilite\"><pre><span></span><code>#225\n</code></pre></div>", trac},
		// "*" is no separator, and emphasis comes after the linkifiers, so
		// an emphasized match stays text (as in the reference).
		{"In strong", "**#224**", `<p><strong>#224</strong></p>`, trac},
		{"Spaced in strong", "** #224**", `<p><strong> <a href="https://trac.example.com/ticket/224">#224</a></strong></p>`, trac},
		{"Inside a URL", "https://example.com/#224", `<p><a href="https://example.com/#224">https://example.com/#224</a></p>`, trac},
		{"Escaped URL", "#224&x", `<p><a href="https://trac.example.com/ticket/224">#224</a>&amp;x</p>`, trac},
		{"Expansion encodes", "ticket:a b",
			`<p><a href="https://example.com/a%20b">ticket:a b</a></p>`, compileLinkifiers(t, `ticket:(?P<name>[a-z]+ [a-z]+)`, "https://example.com/{name}")},
		{"Expansion encodes a match", "see ticket:a/b?",
			`<p>see <a href="https://example.com/a%2Fb">ticket:a/b</a>?</p>`, compileLinkifiers(t, `ticket:(?P<name>[a-z/]+)`, "https://example.com/{name}")},
		{"Reserved expansion", "see ticket:a/b",
			`<p>see <a href="https://example.com/a/b">ticket:a/b</a></p>`, compileLinkifiers(t, `ticket:(?P<name>[a-z/]+)`, "https://example.com/{+name}")},
		{"Several groups", "see zulip/zulip#123",
			`<p>see <a href="https://github.com/zulip/zulip/pull/123">zulip/zulip#123</a></p>`,
			compileLinkifiers(t, `(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)`, "https://github.com/{org}/{repo}/pull/{id}")},
		{"Unmatched group is undefined", "see T12",
			`<p>see <a href="https://example.com/12">T12</a></p>`, compileLinkifiers(t, `T(?P<p>x)?(?P<id>\d+)`, "https://example.com/{p}{id}")},
		{"Local link becomes relative", "see S12",
			`<p>see <a href="#narrow/id/12">S12</a></p>`, compileLinkifiers(t, `S(?P<id>\d+)`, "https://chat.example.com/#narrow/id/{id}")},
		{"Refused scheme stays text", "see J12 and K12",
			`<p>see J12 and <a href="https://k.example.com/12">K12</a></p>`,
			compileLinkifiers(t, `J(?P<id>\d+)`, "javascript:alert({id})", `K(?P<id>\d+)`, "https://k.example.com/{id}")},
		{"Order decides overlaps", "see ABC-12",
			`<p>see <a href="https://first.example.com/12">ABC-12</a></p>`,
			compileLinkifiers(t, `ABC-(?P<id>\d+)`, "https://first.example.com/{id}", `[A-Z]+-(?P<id>\d+)`, "https://second.example.com/{id}")},
		{"Order decides overlaps, reversed", "see ABC-12",
			`<p>see <a href="https://second.example.com/12">ABC-12</a></p>`,
			compileLinkifiers(t, `[A-Z]+-(?P<id>\d+)`, "https://second.example.com/{id}", `ABC-(?P<id>\d+)`, "https://first.example.com/{id}")},
		{"In emphasis", "*#224*", `<p><em>#224</em></p>`, trac},
		{"None", "#224", `<p>#224</p>`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := renderLinkified(t, tc.in, tc.linkifiers)
			assert.Equal(t, tc.want, res.HTML)
		})
	}
	res := renderLinkified(t, "fix #224", trac)
	assert.True(t, res.HasLink)
	// The shared list stays as it was.
	assert.Len(t, patternsWith(nil), len(inlinePatterns))
	assert.Len(t, patternsWith(trac), len(inlinePatterns)+1)
	for _, p := range inlinePatterns {
		assert.NotEqual(t, "linkifier", p.name)
	}
}

func TestCompileLinkifierErrors(t *testing.T) {
	_, err := CompileLinkifier("(", "https://example.com")
	assert.Error(t, err)
	_, err = CompileLinkifier("a", "https://example.com/{")
	assert.Error(t, err)
}
