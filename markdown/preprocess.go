package markdown

import (
	"regexp"
	"strconv"
	"strings"
)

// The preprocessing stage works on whole lines before the block parser
// sees the text, as the reference does: it normalizes whitespace, makes a
// list that hangs off a paragraph start a list, re-indents nested lists
// (the reference nests list items by two spaces) and takes fenced blocks
// (code, quote, spoiler, math) out of the text, leaving a placeholder for
// the HTML of code and math blocks.

// Placeholders stand for HTML produced before the block parser runs (code
// blocks, spoiler frames) or during inline processing. They are made of
// control characters that the input never keeps (normalize drops them).
const (
	phStart = '\x02'
	phEnd   = '\x03'
)

var fenceRE = regexp.MustCompile("^(~{3,}|`{3,})[ ]*(?:\\{?\\.?([a-zA-Z0-9_+\\-./#]+)[ ]*([^ ~`][^~`]*)?\\}?)?$")

// listItemRE is the reference's test for a line that starts a list item.
var listItemRE = regexp.MustCompile(`^[ ]*([*+-]|\d\.)[ ]+(.*)`)

// normalize drops placeholder characters, unifies line ends, expands tabs
// to 4 columns and empties lines that hold only spaces.
func normalize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == phStart || r == phEnd || r == 0 {
			return -1
		}
		return r
	}, s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, "\t") {
			l = expandTabs(l, 4)
		}
		if strings.Trim(l, " ") == "" {
			l = ""
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

func expandTabs(s string, n int) string {
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			k := n - col%n
			b.WriteString(strings.Repeat(" ", k))
			col += k
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

type openFence struct {
	fence  string
	isCode bool
}

// hangLists inserts a blank line between a line of text and a list item
// that follows it directly, and between items of different list kinds,
// outside code fences (the reference's hanging-list preprocessor).
func hangLists(lines []string) []string {
	out := make([]string, 0, len(lines)+4)
	var open []openFence
	inCode := false
	for i, line := range lines {
		out = append(out, line)
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			lang := m[2]
			isCode := lang != "quote" && lang != "quoted"
			closes := lang == "" && len(open) > 0 && open[len(open)-1].fence == m[1]
			if closes {
				open = open[:len(open)-1]
			} else {
				open = append(open, openFence{m[1], isCode})
			}
			inCode = false
			for _, f := range open {
				if f.isCode {
					inCode = true
				}
			}
		}
		if i+1 >= len(lines) || inCode || line == "" {
			continue
		}
		li1 := listItemRE.FindStringSubmatch(line)
		li2 := listItemRE.FindStringSubmatch(lines[i+1])
		if (li2 != nil && li1 == nil) || (li1 != nil && li2 != nil && (len(li1[1]) == 1) != (len(li2[1]) == 1)) {
			out = append(out, "")
		}
	}
	return out
}

var listLineRE = regexp.MustCompile(`^( *)([*+-]|\d{1,9}\.)( +|$)`)
var thematicRE = regexp.MustCompile(`^ {0,3}((\* *){3,}|(- *){3,}|(_ *){3,})$`)

type listLevel struct {
	orig   int // indentation in the source
	offset int // column where the item's content starts after rewriting
}

// reindentLists rewrites the indentation of list lines so that the
// reference's two-space nesting becomes the nesting the block parser
// understands (the content column of the parent item), and makes every
// bullet a '*' so that mixed bullets continue one list, as in the
// reference. Lines inside code fences are left alone.
func reindentLists(lines []string, starts map[int]int) []string {
	var stack []listLevel
	var open []openFence
	blank := false
	for i, line := range lines {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			lang := m[2]
			if lang == "" && len(open) > 0 && open[len(open)-1].fence == m[1] {
				open = open[:len(open)-1]
			} else {
				open = append(open, openFence{m[1], lang != "quote" && lang != "quoted" && lang != "spoiler"})
			}
			stack = nil
			continue
		}
		inCode := false
		for _, f := range open {
			if f.isCode {
				inCode = true
			}
		}
		if inCode {
			continue
		}
		if line == "" {
			blank = true
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		m := listLineRE.FindStringSubmatch(line)
		if m != nil && thematicRE.MatchString(line) {
			m = nil
		}
		if m == nil {
			if len(stack) == 0 {
				continue
			}
			if blank && indent == 0 {
				stack = nil
				blank = false
				continue
			}
			top := stack[len(stack)-1]
			if indent >= top.orig+2 {
				ni := top.offset + indent - (top.orig + 2)
				lines[i] = strings.Repeat(" ", ni) + line[indent:]
			}
			blank = false
			continue
		}
		blank = false
		if len(stack) == 0 && indent >= 4 {
			continue // an indented code block
		}
		for len(stack) > 0 && indent < stack[len(stack)-1].orig+2 {
			stack = stack[:len(stack)-1]
		}
		ni := indent
		if len(stack) > 0 {
			ni = stack[len(stack)-1].offset
		} else if ni > 3 {
			ni = 3
		}
		marker := m[2]
		if marker == "+" || marker == "-" {
			marker = "*"
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(marker, ".")); err == nil && len(stack) > 0 && n != 1 {
			// A nested list that does not start at 1 could not interrupt
			// its parent's text: it starts at 1 here and gets its number
			// back when rendered.
			starts[i] = n
			marker = "1." + strings.Repeat(" ", len(marker)-2)
		}
		spaces := m[3]
		if spaces == "" {
			spaces = " "
		}
		rest := line[len(m[0]):]
		lines[i] = strings.Repeat(" ", ni) + marker + spaces + rest
		stack = append(stack, listLevel{orig: indent, offset: ni + len(marker) + min(len(spaces), 4)})
	}
	return lines
}

// fencer is the reference's fenced block preprocessor: a stack of
// handlers, each taking the lines until its fence closes.
type fencer struct {
	r        *renderer
	handlers []fenceHandler
}

type fenceHandler interface {
	handleLine(line string)
	done()
}

func (f *fencer) push(h fenceHandler) { f.handlers = append(f.handlers, h) }
func (f *fencer) pop()                { f.handlers = f.handlers[:len(f.handlers)-1] }

func (f *fencer) run(lines []string) []string {
	var output []string
	f.push(&outerHandler{f: f, output: &output})
	for _, l := range lines {
		f.handlers[len(f.handlers)-1].handleLine(l)
	}
	for len(f.handlers) > 0 {
		f.handlers[len(f.handlers)-1].done()
	}
	return output
}

// maxFenceDepth bounds the nesting of quote and spoiler fences, whose
// quoting costs grow with the square of the depth.
const maxFenceDepth = 32

func (f *fencer) checkNewFence(output *[]string, line string) {
	m := fenceRE.FindStringSubmatch(line)
	if m == nil || len(f.handlers) > maxFenceDepth {
		*output = append(*output, line)
		return
	}
	fence, lang := m[1], strings.ToLower(m[2])
	header, hasHeader := m[3], m[3] != ""
	base := baseHandler{f: f, output: output, fence: fence}
	switch lang {
	case "quote", "quoted":
		base.process = true
		h := &quoteHandler{baseHandler: base}
		h.self = h
		f.push(h)
	case "math":
		h := &mathHandler{baseHandler: base}
		h.self = h
		f.push(h)
	case "spoiler":
		base.process = true
		h := &spoilerHandler{baseHandler: base, header: header, hasHeader: hasHeader}
		h.self = h
		f.push(h)
	default:
		h := &codeHandler{baseHandler: base, lang: lang}
		h.self = h
		f.push(h)
	}
}

type outerHandler struct {
	f      *fencer
	output *[]string
}

func (h *outerHandler) handleLine(line string) { h.f.checkNewFence(h.output, line) }
func (h *outerHandler) done()                  { h.f.pop() }

type formatter interface{ format(text string) string }

type baseHandler struct {
	f       *fencer
	output  *[]string
	fence   string
	process bool // contents go on to Markdown processing
	lines   []string
	self    formatter
}

func (h *baseHandler) handleLine(line string) {
	if strings.TrimRight(line, " \t") == h.fence {
		h.done()
		return
	}
	h.lines = append(h.lines, strings.TrimRight(line, " \t"))
}

func (h *baseHandler) done() {
	if len(h.lines) > 0 {
		text := h.self.format(strings.Join(h.lines, "\n"))
		if !h.process {
			text = h.f.r.stash(text)
		}
		*h.output = append(*h.output, "")
		*h.output = append(*h.output, strings.Split(text, "\n")...)
		*h.output = append(*h.output, "")
	}
	h.f.pop()
}

type codeHandler struct {
	baseHandler
	lang string
}

func (h *codeHandler) format(text string) string { return h.f.r.formatCode(h.lang, text) }

type quoteHandler struct{ baseHandler }

func (h *quoteHandler) handleLine(line string) {
	if strings.TrimRight(line, " \t") == h.fence {
		h.done()
		return
	}
	h.f.checkNewFence(&h.lines, line)
}

func (h *quoteHandler) format(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}

type spoilerHandler struct {
	baseHandler
	header    string
	hasHeader bool
}

func (h *spoilerHandler) handleLine(line string) {
	if strings.TrimRight(line, " \t") == h.fence {
		h.done()
		return
	}
	h.f.checkNewFence(&h.lines, line)
}

func (h *spoilerHandler) format(text string) string {
	r := h.f.r
	out := []string{r.stash(`<div class="spoiler-block"><div class="spoiler-header">`)}
	if h.hasHeader {
		out = append(out, h.header)
	}
	out = append(out, r.stash(`</div><div class="spoiler-content" aria-hidden="true">`), text,
		r.stash(`</div></div>`))
	return strings.Join(out, "\n\n")
}

type mathHandler struct{ baseHandler }

func (h *mathHandler) format(text string) string {
	paras := strings.Split(text, "\n\n")
	for i, p := range paras {
		paras[i] = h.f.r.renderTeX(p, false)
	}
	return strings.Join(paras, "\n\n")
}

// placeholder returns the text that stands for stashed HTML number i.
func placeholder(i int) string {
	return string(phStart) + strconv.Itoa(i) + string(phEnd)
}
