// Package markdown renders chat Markdown to HTML. It is pure: no storage,
// no HTTP.
//
// RenderMessage renders a message in the reference system's dialect
// (Zulip's): fenced code with Pygments-style highlighting, quote and
// spoiler fences, nested lists with two-space indentation, "*" emphasis
// only, ~~strike~~, tables, links and bare URLs, <time:…>, emoji by the
// reference's names and from Unicode, mentions, group mentions, channel
// and topic links (looked up through a Resolver), and math (through an
// optional hook, else the reference's tex-error fallback). It reports
// what it found in a Result so that the caller can set message flags.
//
// Render renders plain Markdown (CommonMark with strikethrough, tables and
// autolinks, raw HTML escaped, single newlines as line breaks) for
// descriptions and profile fields.
package markdown

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

var md = goldmark.New(
	goldmark.WithParser(textOnlyParser()),
	goldmark.WithExtensions(extension.Strikethrough, extension.Table, extension.Linkify),
	goldmark.WithRendererOptions(html.WithHardWraps()),
)

// textOnlyParser is goldmark's default parser without its raw-HTML block
// and inline parsers, so HTML in the input stays text and is escaped on
// output (the reference shows "<h1>" as "&lt;h1&gt;" rather than dropping it).
func textOnlyParser() parser.Parser {
	var blocks, inlines []util.PrioritizedValue
	for _, v := range parser.DefaultBlockParsers() {
		if !isHTMLParser(v.Value) {
			blocks = append(blocks, v)
		}
	}
	for _, v := range parser.DefaultInlineParsers() {
		if !isHTMLParser(v.Value) {
			inlines = append(inlines, v)
		}
	}
	return parser.NewParser(parser.WithBlockParsers(blocks...), parser.WithInlineParsers(inlines...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))
}

var (
	htmlBlockParser = fmt.Sprintf("%T", parser.NewHTMLBlockParser())
	rawHTMLParser   = fmt.Sprintf("%T", parser.NewRawHTMLParser())
)

func isHTMLParser(p any) bool {
	t := fmt.Sprintf("%T", p)
	return t == htmlBlockParser || t == rawHTMLParser
}

// Render returns the HTML rendering of content. Empty content renders to
// the empty string.
func Render(content string) string {
	if strings.TrimSpace(content) == "" {
		return ""
	}
	var buf bytes.Buffer
	if err := md.Convert([]byte(content), &buf); err != nil {
		// goldmark only fails when the writer fails; a bytes.Buffer does not.
		return "<p>" + escape(content) + "</p>"
	}
	return strings.TrimRight(buf.String(), "\n")
}

func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
