package mailtext

import (
	"path"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLToMarkdown converts an email's HTML body to the chat's Markdown, as
// the reference does with html2text (no line wrapping): paragraphs and
// line breaks, emphasis, links, images as links to them, lists, quotes,
// code, headings and tables as lines; scripts, styles and the head are
// dropped. With stripQuotes, the quoted mail below a reply is removed
// first (Gmail's, Apple Mail's, Thunderbird's, Outlook's and Yahoo's
// quote containers, or a blockquote that ends the body).
func HTMLToMarkdown(src string, stripQuotes bool) string {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return ""
	}
	if stripQuotes {
		removeQuotes(doc)
	}
	var c converter
	c.block(doc)
	return cleanMarkdown(c.out.String())
}

// removeQuotes deletes the quoted original of a reply.
func removeQuotes(doc *html.Node) {
	var found []*html.Node
	var after []*html.Node // removed with every later sibling
	walkNodes(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch {
		case hasClass(n, "gmail_quote"), hasClass(n, "gmail_attr"), hasClass(n, "moz-cite-prefix"),
			n.DataAtom == atom.Blockquote && strings.EqualFold(attr(n, "type"), "cite"):
			found = append(found, n)
			return false
		case attr(n, "id") == "divRplyFwdMsg", attr(n, "id") == "appendonsend", hasClass(n, "yahoo_quoted"):
			after = append(after, n)
			return false
		}
		return true
	})
	for _, n := range after {
		parent := n.Parent
		for sib := n; sib != nil; {
			next := sib.NextSibling
			if sib.Parent != nil {
				sib.Parent.RemoveChild(sib)
			}
			sib = next
		}
		// Outlook's rule above its header block.
		if prev := lastElement(parent); prev != nil && prev.DataAtom == atom.Hr {
			prev.Parent.RemoveChild(prev)
		}
	}
	for _, n := range found {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
	if len(found) == 0 && len(after) == 0 {
		removeTrailingBlockquote(doc)
	}
}

// removeTrailingBlockquote removes a blockquote that ends the body (in
// wrapping elements or not), with the "On ... wrote:" line above it, when
// something else is left.
func removeTrailingBlockquote(doc *html.Node) {
	body := findElement(doc, atom.Body)
	if body == nil {
		return
	}
	last := lastElement(body)
	for last != nil && strings.TrimSpace(textAfter(last)) == "" && last.DataAtom != atom.Blockquote {
		last = lastElement(last)
	}
	if last == nil || last.DataAtom != atom.Blockquote || strings.TrimSpace(textAfter(last)) != "" {
		return
	}
	parent := last.Parent
	prev := last.PrevSibling
	for prev != nil && prev.Type == html.TextNode && strings.TrimSpace(prev.Data) == "" {
		prev = prev.PrevSibling
	}
	if prev != nil && !wroteLine.MatchString(strings.TrimSpace(textOf(prev))) {
		prev = nil
	}
	parent.RemoveChild(last)
	if prev != nil {
		parent.RemoveChild(prev)
	}
	if strings.TrimSpace(textOf(body)) == "" { // nothing but the quote: keep it
		if prev != nil {
			parent.AppendChild(prev)
		}
		parent.AppendChild(last)
	}
}

// converter writes Markdown.
type converter struct {
	out strings.Builder
	// list is the stack of open lists: 0 for a bulleted one, else the
	// next number.
	list   []int
	quote  int
	pre    bool
	atLine bool   // the output is at the start of a line
	tail   string // the last two bytes written
	// nesting counts the emphasis and links this one is inside: past
	// maxNesting, they are written as plain text (linear in the input).
	nesting int
}

const maxNesting = 16

func (c *converter) write(s string) {
	if s == "" {
		return
	}
	if c.quote > 0 {
		s = strings.ReplaceAll(s, "\n", "\n"+strings.Repeat("> ", c.quote))
		if c.atLine || c.out.Len() == 0 {
			s = strings.Repeat("> ", c.quote) + s
		}
	}
	c.out.WriteString(s)
	c.atLine = strings.HasSuffix(s, "\n")
	c.tail = (c.tail + s)[max(len(c.tail)+len(s)-2, 0):]
}

// paragraph ends the current line and leaves a blank one.
func (c *converter) paragraph() {
	t := c.tail
	switch {
	case t == "" || t == "\n\n":
	case strings.HasSuffix(t, "\n"):
		c.write("\n")
	default:
		c.write("\n\n")
	}
}

func (c *converter) newline() {
	if t := c.tail; t != "" && !strings.HasSuffix(t, "\n") {
		c.write("\n")
	}
}

var spaces = regexp.MustCompile(`[ \t\r\n\f]+`)

func (c *converter) block(n *html.Node) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.node(ch)
	}
}

func (c *converter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if c.pre {
			c.write(n.Data)
			return
		}
		t := spaces.ReplaceAllString(n.Data, " ")
		if c.atLine || c.tail == "" || strings.HasSuffix(c.tail, " ") {
			t = strings.TrimLeft(t, " ")
		}
		c.write(t)
		return
	case html.DocumentNode:
		c.block(n)
		return
	case html.ElementNode:
	default:
		return
	}
	switch n.DataAtom {
	case atom.Head, atom.Script, atom.Style, atom.Title, atom.Meta, atom.Link, atom.Template:
	case atom.Br:
		c.write("\n")
	case atom.Hr:
		c.paragraph()
		c.write("* * *")
		c.paragraph()
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Table, atom.Center:
		c.paragraph()
		c.block(n)
		c.paragraph()
	case atom.Tr:
		c.newline()
		c.block(n)
		c.newline()
	case atom.Td, atom.Th:
		if n.PrevSibling != nil {
			c.write(" | ")
		}
		c.block(n)
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		c.paragraph()
		c.write(strings.Repeat("#", int(n.Data[1]-'0')) + " ")
		c.block(n)
		c.paragraph()
	case atom.Ul, atom.Ol:
		start := 0
		if n.DataAtom == atom.Ol {
			start = 1
		}
		if len(c.list) == 0 {
			c.paragraph()
		} else {
			c.newline()
		}
		c.list = append(c.list, start)
		c.block(n)
		c.list = c.list[:len(c.list)-1]
		if len(c.list) == 0 {
			c.paragraph()
		}
	case atom.Li:
		c.newline()
		depth := max(len(c.list)-1, 0)
		marker := "* "
		if len(c.list) > 0 && c.list[len(c.list)-1] > 0 {
			marker = itoa(c.list[len(c.list)-1]) + ". "
			c.list[len(c.list)-1]++
		}
		c.write(strings.Repeat("  ", depth) + marker)
		c.block(n)
		c.newline()
	case atom.Blockquote:
		c.paragraph()
		c.quote++
		c.block(n)
		c.quote--
		c.paragraph()
	case atom.Pre:
		c.paragraph()
		c.write("```\n")
		c.pre = true
		c.block(n)
		c.pre = false
		c.newline()
		c.write("```")
		c.paragraph()
	case atom.Code, atom.Tt:
		if c.pre {
			c.block(n)
			return
		}
		c.inline(n, "`")
	case atom.B, atom.Strong:
		c.inline(n, "**")
	case atom.I, atom.Em:
		c.inline(n, "*")
	case atom.A:
		c.link(n)
	case atom.Img:
		src := attr(n, "src")
		if src == "" || strings.HasPrefix(src, "cid:") || strings.HasPrefix(src, "data:") {
			return // an inline part: uploaded as an attachment
		}
		name := attr(n, "alt")
		if name == "" {
			name = path.Base(strings.SplitN(src, "?", 2)[0])
		}
		c.write("[" + strings.NewReplacer("[", "", "]", "").Replace(name) + "](" + src + ")")
	default:
		c.block(n)
	}
}

// inline writes n's text between marks (none when it is empty).
func (c *converter) inline(n *html.Node, mark string) {
	if c.nesting >= maxNesting {
		c.block(n)
		return
	}
	inner := converter{nesting: c.nesting + 1}
	inner.block(n)
	t := strings.TrimSpace(inner.out.String())
	if t == "" {
		return
	}
	c.write(mark + t + mark)
}

func (c *converter) link(n *html.Node) {
	href := attr(n, "href")
	if c.nesting >= maxNesting {
		c.block(n)
		return
	}
	inner := converter{nesting: c.nesting + 1}
	inner.block(n)
	text := strings.TrimSpace(spaces.ReplaceAllString(inner.out.String(), " "))
	switch {
	case href == "" || strings.HasPrefix(strings.ToLower(href), "javascript:"):
		c.write(text)
	case text == "" || text == href || "mailto:"+text == href:
		c.write(href)
	default:
		c.write("[" + text + "](" + href + ")")
	}
}

// cleanMarkdown trims trailing spaces of lines, keeps at most one blank
// line (or blank quoted line) in a row, and trims the whole.
func cleanMarkdown(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	prevBlank := ""
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if strings.Trim(l, "> ") == "" {
			if l == prevBlank {
				continue
			}
			prevBlank = l
		} else {
			prevBlank = "\x00"
		}
		out = append(out, l)
	}
	for len(out) > 0 && strings.Trim(out[len(out)-1], "> ") == "" {
		out = out[:len(out)-1]
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func walkNodes(n *html.Node, fn func(*html.Node) bool) {
	if !fn(n) {
		return
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		walkNodes(c, fn)
		c = next
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func findElement(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findElement(c, a); f != nil {
			return f
		}
	}
	return nil
}

// lastElement is n's last child element.
func lastElement(n *html.Node) *html.Node {
	if n == nil {
		return nil
	}
	for c := n.LastChild; c != nil; c = c.PrevSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

// textOf is n's text.
func textOf(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(textOf(c))
	}
	return b.String()
}

// textAfter is the text of child's later siblings.
func textAfter(child *html.Node) string {
	var b strings.Builder
	for c := child.NextSibling; c != nil; c = c.NextSibling {
		b.WriteString(textOf(c))
	}
	return b.String()
}
