package mailtext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// The reference's strip_from_subject and is_forwarded cases
// (test_email_mirror.py), written out.
func TestStripSubject(t *testing.T) {
	for in, want := range map[string]string{
		"Re: Hello":                   "Hello",
		"RE: Re: re: Hello":           "Hello",
		"Fwd: FW: Hello":              "Hello",
		"[Fwd: Hello]":                "Hello",
		"Aw: Hallo":                   "Hallo",
		"Hello":                       "Hello",
		"Re:   ":                      "",
		"Real estate":                 "Real estate",
		"Forward planning":            "Forward planning",
		"(fwd) meeting notes":         "meeting notes",
		"Re: [Fwd: Re: quarterly]":    "quarterly",
		"Fwd- thing":                  "thing",
		"re:re:re:looooong":           "looooong",
		"Notes on the RE: subsection": "Notes on the subsection",
	} {
		assert.Equal(t, want, StripSubject(in), in)
	}
	for in, want := range map[string]bool{
		"Fwd: Hello": true, "FW: Hello": true, "fwd: hello": true, "[Fwd: x]": true,
		"Re: Fwd: Hello": false, "Hello": false, "Forward planning": false,
	} {
		assert.Equal(t, want, IsForwarded(in), in)
	}
}

// The reference's filter_footer cases.
func TestFilterFooter(t *testing.T) {
	text := "Test message\n        --Not a delimiter--\n        More message\n        --\n        Footer"
	assert.Equal(t, "Test message\n        --Not a delimiter--\n        More message", FilterFooter(text))
	many := "Test message\n        --\n        Part1\n        --\n        Part2"
	assert.Equal(t, many, FilterFooter(many), "several delimiters: nothing cut")
	assert.Equal(t, "Hi\n\nBest", FilterFooter("Hi\n\nBest\n-- \nAda Lovelace\nAnalytical Engines"), "the usual '-- '")
	assert.Equal(t, "no footer", FilterFooter("no footer"))
}

func TestStripQuotedText(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"gmail", "Sounds good!\n\nOn Mon, Jan 1, 2024 at 10:00 AM Ada <ada@example.com> wrote:\n> Shall we meet?\n>\n> Ada\n",
			"Sounds good!"},
		{"wrapped header", "Yes.\n\nOn Mon, Jan 1, 2024 at 10:00 AM Ada Lovelace <\nada@example.com> wrote:\n\n> Shall we meet?\n",
			"Yes."},
		{"french", "Oui.\n\nLe lun. 1 janv. 2024 à 10:00, Ada <ada@example.com> a écrit :\n> On se voit ?\n", "Oui."},
		{"outlook", "Agreed.\r\n\r\n________________________________\r\nFrom: Ada <ada@example.com>\r\nSent: Monday, January 1, 2024 10:00\r\nTo: Bob\r\nSubject: Meeting\r\n\r\nShall we meet?\r\n",
			"Agreed."},
		{"original message", "Fine by me\n\n-----Original Message-----\nFrom: Ada\nShall we meet?\n", "Fine by me"},
		{"signature below the quote", "Done.\n\nOn Mon, Ada wrote:\n> Done?\n\n-- \nBob\n", "Done."},
		{"trailing quote", "Thanks!\n\n> earlier text\n> more\n\n", "Thanks!"},
		{"inline reply kept", "On Mon, Ada wrote:\n> question one?\nanswer one\n> question two?\nanswer two\n",
			"On Mon, Ada wrote:\n> question one?\nanswer one\n> question two?\nanswer two\n"},
		{"quote in the middle kept", "I said\n> this\nand then more\n", "I said\n> this\nand then more\n"},
		{"only a quote kept", "> all quoted\n> text\n", "> all quoted\n> text\n"},
		{"no quote", "Just text.\nTwo lines.", "Just text.\nTwo lines."},
		{"a sentence with 'wrote:' kept", "She wrote:\nthe letter was long.\n", "She wrote:\nthe letter was long.\n"},
	} {
		assert.Equal(t, c.want, StripQuotedText(c.in), c.name)
	}
}

func TestHTMLToMarkdown(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		strip          bool
	}{
		{"paragraphs", "<html><head><style>p{}</style><title>x</title></head><body><p>Hello <b>bold</b> and <i>it</i></p><p>Second&nbsp;line<br>third</p></body></html>",
			"Hello **bold** and *it*\n\nSecond\u00a0line\nthird", false},
		{"links and images", `<p><a href="https://example.com">site</a> <a href="https://x.org">https://x.org</a> <img src="https://e.com/i/cat.png?1" alt=""> <img src="cid:part1"></p>`,
			"[site](https://example.com) https://x.org [cat.png](https://e.com/i/cat.png?1)", false},
		{"lists", "<ul><li>one</li><li>two<ol><li>a</li><li>b</li></ol></li></ul><p>after</p>",
			"* one\n* two\n  1. a\n  2. b\n\nafter", false},
		{"code", "<p>use <code>go test</code></p><pre>line 1\n  line 2</pre>", "use `go test`\n\n```\nline 1\n  line 2\n```", false},
		{"quote kept", "<p>hi</p><blockquote><p>quoted</p></blockquote>", "hi\n\n> quoted", false},
		{"gmail quote cut", `<div dir="ltr">Sounds good</div><br><div class="gmail_quote"><div class="gmail_attr">On Mon, Ada wrote:<br></div><blockquote class="gmail_quote">Shall we?</blockquote></div>`,
			"Sounds good", true},
		{"apple quote cut", `<div>Yes</div><div><br><blockquote type="cite"><div>Shall we?</div></blockquote></div>`, "Yes", true},
		{"outlook cut", `<div>Agreed</div><hr><div id="divRplyFwdMsg"><b>From:</b> Ada</div><div>Shall we?</div>`, "Agreed", true},
		{"trailing blockquote cut", `<p>Thanks</p><p>On Mon, Ada wrote:</p><blockquote>old</blockquote>`, "Thanks", true},
		{"only a quote kept", `<blockquote>old</blockquote>`, "> old", true},
		{"script dropped", `<p>a</p><script>alert(1)</script><p>b</p>`, "a\n\nb", false},
		{"headings and tables", `<h2>Title</h2><table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>`,
			"## Title\n\na | b\nc | d", false},
	} {
		assert.Equal(t, c.want, HTMLToMarkdown(c.in, c.strip), c.name)
	}
}

// Whatever the input, the converters return valid UTF-8 without panicking,
// and quote stripping never grows a text.
func FuzzMailText(f *testing.F) {
	for _, s := range []string{"<p>x</p>", "On Mon wrote:\n> a", "<blockquote><blockquote>", "-- \nsig", "Re: Fwd: [x]", "\xff<b>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{HTMLToMarkdown(s, true), HTMLToMarkdown(s, false), StripSubject(s), FilterFooter(s)} {
			if utf8.ValidString(s) && !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 from %q: %q", s, out)
			}
		}
		if q := StripQuotedText(s); len(q) > len(strings.ReplaceAll(s, "\r\n", "\n")) {
			t.Fatalf("grew: %q -> %q", s, q)
		}
	})
}

// A large or deeply nested mail costs time in proportion to its size.
func BenchmarkLargeMail(b *testing.B) {
	text := strings.Repeat("On Mon, Ada wrote:\nanswer\n", 20000)
	nested := strings.Repeat("<b><i>", 5000) + "x" + strings.Repeat("</i></b>", 5000)
	for b.Loop() {
		StripQuotedText(text)
		HTMLToMarkdown(nested, true)
	}
}
