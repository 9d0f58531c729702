package markdown

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The block structure comes from goldmark, configured as the reference's
// block parser: ATX headings (a space after the hashes), thematic breaks,
// lists, indented code, block quotes in the reference's flavour, tables and
// paragraphs. There are no fenced code blocks (the preprocessor took them),
// no setext headings, no HTML blocks, no link reference definitions and no
// inline parsers: inline syntax is the inline processor's job.

var messageParser = newMessageParser()

func newMessageParser() parser.Parser {
	p := parser.NewParser(
		parser.WithBlockParsers(
			util.Prioritized(parser.NewThematicBreakParser(), 200),
			util.Prioritized(parser.NewListParser(), 300),
			util.Prioritized(parser.NewListItemParser(), 400),
			util.Prioritized(parser.NewCodeBlockParser(), 500),
			util.Prioritized(parser.NewATXHeadingParser(), 600),
			util.Prioritized(&quoteParser{}, 800),
			util.Prioritized(&paragraphParser{}, 1000),
		),
		parser.WithInlineParsers(),
		parser.WithParagraphTransformers(util.Prioritized(extension.NewTableParagraphTransformer(), 200)),
	)
	return p
}

// quoteParser is a block quote as the reference has it: a quote runs to
// the next blank line (later lines without '>' are part of it), and a
// block made only of empty '>' lines is not a quote but text.
type quoteParser struct{}

var emptyQuoteLine = regexp.MustCompile(`^ {0,3}>\s*$`)

func (b *quoteParser) Trigger() []byte { return []byte{'>'} }

func (b *quoteParser) marker(reader text.Reader) bool {
	line, _ := reader.PeekLine()
	w, pos := util.IndentWidth(line, reader.LineOffset())
	if w > 3 || pos >= len(line) || line[pos] != '>' {
		return false
	}
	pos++
	reader.Advance(pos)
	if pos < len(line) && line[pos] == ' ' {
		reader.Advance(1)
	}
	return true
}

func (b *quoteParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, _ := reader.PeekLine()
	if emptyQuoteLine.Match(line) && allEmptyQuoteLines(reader) {
		return nil, parser.NoChildren
	}
	if b.marker(reader) {
		return ast.NewBlockquote(), parser.HasChildren
	}
	return nil, parser.NoChildren
}

// allEmptyQuoteLines reports whether the lines from here to the next blank
// line all hold only '>' markers; the reader is left where it was.
func allEmptyQuoteLines(reader text.Reader) bool {
	_, seg := reader.PeekLine()
	src := reader.Source()
	for pos := seg.Start; pos < len(src); {
		end := bytes.IndexByte(src[pos:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += pos
		}
		line := src[pos:end]
		if util.IsBlank(line) {
			return true
		}
		if !emptyQuoteLine.Match(line) {
			return false
		}
		pos = end + 1
	}
	return true
}

func (b *quoteParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	line, _ := reader.PeekLine()
	if util.IsBlank(line) {
		return parser.Close
	}
	b.marker(reader)
	return parser.Continue | parser.HasChildren
}

func (b *quoteParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {}
func (b *quoteParser) CanInterruptParagraph() bool                                { return true }
func (b *quoteParser) CanAcceptIndentedLine() bool                                { return false }

// paragraphParser is goldmark's paragraph without the trimming of the
// lines' ends: the reference keeps trailing spaces of a paragraph.
type paragraphParser struct{}

func (b *paragraphParser) Trigger() []byte { return nil }

func (b *paragraphParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, segment := reader.PeekLine()
	if util.IsBlank(line) {
		return nil, parser.NoChildren
	}
	node := ast.NewParagraph()
	node.Lines().Append(segment.TrimLeftSpace(reader.Source()))
	reader.AdvanceToEOL()
	return node, parser.NoChildren
}

func (b *paragraphParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	line, segment := reader.PeekLine()
	if util.IsBlank(line) {
		return parser.Close
	}
	node.Lines().Append(segment)
	reader.AdvanceToEOL()
	return parser.Continue | parser.NoChildren
}

func (b *paragraphParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {}
func (b *paragraphParser) CanInterruptParagraph() bool                                { return false }
func (b *paragraphParser) CanAcceptIndentedLine() bool                                { return false }

// blockText returns a text block's source: its lines without their line
// ends, joined by "\n".
func blockText(n ast.Node, src []byte) string {
	lines := n.Lines()
	parts := make([]string, 0, lines.Len())
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		s := string(seg.Value(src))
		if seg.Padding > 0 {
			s = strings.Repeat(" ", seg.Padding) + s
		}
		if i > 0 && inListItem(n) {
			// The reference keeps the indentation (under four spaces) of
			// the continuation lines of a list item's text.
			k := seg.Start
			for k > 0 && src[k-1] == ' ' {
				k--
			}
			if (k == 0 || src[k-1] == '\n') && seg.Start-k < 4 {
				s = string(src[k:seg.Start]) + s
			}
		}
		parts = append(parts, strings.TrimRight(s, "\n"))
	}
	return strings.Join(parts, "\n")
}

func inListItem(n ast.Node) bool {
	_, ok := n.Parent().(*ast.ListItem)
	return ok
}

// blockLevel reports whether stashed HTML starts with a block-level tag,
// in which case a paragraph holding only its placeholder is replaced by it.
func blockLevel(html string) bool {
	if !strings.HasPrefix(html, "<") {
		return false
	}
	s := strings.TrimPrefix(html[1:], "/")
	end := strings.IndexAny(s, " >")
	if end < 0 {
		return false
	}
	switch strings.ToLower(s[:end]) {
	case "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset", "figcaption",
		"figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main", "menu",
		"nav", "ol", "p", "pre", "section", "table", "ul", "math", "canvas", "iframe", "noscript", "video":
		return true
	}
	return false
}

// renderBlocks writes the children of n, each block followed by "\n"
// as the reference's prettifier lays them out.
func (r *renderer) renderChildren(b *strings.Builder, n ast.Node, src []byte, quote bool) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.renderBlock(b, c, src, quote)
		b.WriteString("\n")
	}
}

func (r *renderer) renderBlock(b *strings.Builder, n ast.Node, src []byte, quote bool) {
	switch n := n.(type) {
	case *ast.Paragraph:
		text := blockText(n, src)
		if i, ok := lonePlaceholder(strings.TrimSpace(text)); ok && blockLevel(r.stashed[i]) {
			b.WriteString(r.stashed[i])
			return
		}
		b.WriteString("<p>")
		b.WriteString(r.inline(text, quote))
		b.WriteString("</p>")
	case *ast.TextBlock:
		b.WriteString(r.inline(blockText(n, src), quote))
	case *ast.Heading:
		tag := "h" + strconv.Itoa(n.Level)
		b.WriteString("<" + tag + ">")
		b.WriteString(r.inline(strings.TrimSpace(blockText(n, src)), quote))
		b.WriteString("</" + tag + ">")
	case *ast.ThematicBreak:
		b.WriteString("<hr>")
	case *ast.CodeBlock:
		code := strings.TrimRight(blockText(n, src), " \n")
		var lines []string
		for _, l := range strings.Split(code, "\n") {
			lines = append(lines, strings.TrimRight(l, " "))
		}
		b.WriteString(r.formatCode("", strings.Join(lines, "\n")))
	case *ast.Blockquote:
		b.WriteString("<blockquote>\n")
		r.renderChildren(b, n, src, true)
		b.WriteString("</blockquote>")
	case *ast.List:
		tag := "ul"
		if n.IsOrdered() {
			tag = "ol"
		}
		b.WriteString("<" + tag)
		start := n.Start
		if item := n.FirstChild(); item != nil && item.FirstChild() != nil && item.FirstChild().Lines().Len() > 0 {
			line := bytes.Count(src[:item.FirstChild().Lines().At(0).Start], []byte("\n"))
			if s, ok := r.listStarts[line]; ok {
				start = s
			}
		}
		if n.IsOrdered() && start != 1 {
			b.WriteString(` start="` + strconv.Itoa(start) + `"`)
		}
		b.WriteString(">\n")
		r.renderChildren(b, n, src, quote)
		b.WriteString("</" + tag + ">")
	case *ast.ListItem:
		b.WriteString("<li>")
		c := n.FirstChild()
		if c != nil {
			if _, ok := c.(*ast.TextBlock); ok {
				r.renderBlock(b, c, src, quote)
				c = c.NextSibling()
			} else {
				b.WriteString("\n")
			}
		}
		for ; c != nil; c = c.NextSibling() {
			r.renderBlock(b, c, src, quote)
			b.WriteString("\n")
		}
		b.WriteString("</li>")
	case *east.Table:
		r.renderTable(b, n, src, quote)
	default:
		// Anything else is rendered as its text.
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			b.WriteString("<p>" + r.inline(blockText(n, src), quote) + "</p>")
		}
	}
}

func (r *renderer) renderTable(b *strings.Builder, t *east.Table, src []byte, quote bool) {
	b.WriteString("<table>\n")
	rows := 0
	for c := t.FirstChild(); c != nil; c = c.NextSibling() {
		switch c.(type) {
		case *east.TableHeader:
			b.WriteString("<thead>\n<tr>\n")
			r.renderCells(b, c, "th", t, src, quote)
			b.WriteString("</tr>\n</thead>\n<tbody>\n")
		case *east.TableRow:
			rows++
			b.WriteString("<tr>\n")
			r.renderCells(b, c, "td", t, src, quote)
			b.WriteString("</tr>\n")
		}
	}
	b.WriteString("</tbody>\n</table>")
}

func (r *renderer) renderCells(b *strings.Builder, row ast.Node, tag string, t *east.Table, src []byte, quote bool) {
	i := 0
	for c := row.FirstChild(); c != nil; c = c.NextSibling() {
		b.WriteString("<" + tag)
		if i < len(t.Alignments) {
			switch t.Alignments[i] {
			case east.AlignLeft:
				b.WriteString(` style="text-align: left;"`)
			case east.AlignRight:
				b.WriteString(` style="text-align: right;"`)
			case east.AlignCenter:
				b.WriteString(` style="text-align: center;"`)
			}
		}
		b.WriteString(">")
		b.WriteString(r.inline(strings.TrimSpace(blockText(c, src)), quote))
		b.WriteString("</" + tag + ">\n")
		i++
	}
}
