package markdown

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRender(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"blank", "  \n", ""},
		{"paragraph", "hello", "<p>hello</p>"},
		{"strong", "**bold**", "<p><strong>bold</strong></p>"},
		{"newline is a break", "a\nb", "<p>a<br>\nb</p>"},
		{"raw html escaped", "<h1>x</h1>", "<p>&lt;h1&gt;x&lt;/h1&gt;</p>"},
		{"strikethrough", "~~x~~", "<p><del>x</del></p>"},
		{"two paragraphs", "a\n\nb", "<p>a</p>\n<p>b</p>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Render(c.in))
		})
	}
}
