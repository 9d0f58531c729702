package chat

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSearchHighlighting(t *testing.T) {
	h := newSearchHighlighter(`Lunch "the deploys"`)
	for _, c := range []struct{ in, want string }{
		{"<p>We had lunch, LUNCHES and a launch</p>",
			`<p>We had <span class="highlight">lunch</span>, <span class="highlight">LUNCHES</span> and a launch</p>`},
		{`<p><a href="https://x.com/lunch" title="lunch">deployed</a> the deploy</p>`,
			`<p><a href="https://x.com/lunch" title="lunch"><span class="highlight">deployed</span></a> the <span class="highlight">deploy</span></p>`},
		{"<p>Tom &amp; lunch&#39;s</p>", `<p>Tom &amp; <span class="highlight">lunch</span>&#39;s</p>`},
		{"<p>nothing here</p>", "<p>nothing here</p>"},
	} {
		assert.Equal(t, c.want, highlightString(c.in, h.locs(c.in)), c.in)
	}
	content, subject := h.matchFields("<p>lunch</p>", `Lunch <"plans">`)
	assert.Equal(t, `<p><span class="highlight">lunch</span></p>`, content)
	assert.Equal(t, `<span class="highlight">Lunch</span> &lt;&quot;plans&quot;&gt;`, subject)
	var none *searchHighlighter
	content, subject = none.matchFields("<p>lunch</p>", "it's")
	assert.Equal(t, "<p>lunch</p>", content)
	assert.Equal(t, "it&#39;s", subject)
	assert.Empty(t, newSearchHighlighter("the and").locs("<p>the and</p>"), "stop words match nothing")
	// The reference's highlight_string leaves a match alone when the text
	// up to its end is inside a tag.
	assert.Equal(t, `<a title="x">x</a>`, highlightString(`<a title="x">x</a>`, [][2]int{{10, 1}}))
}
