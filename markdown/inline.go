package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The inline processor follows the reference's: an ordered list of
// patterns, each applied over the whole text before the next; a match is
// replaced by a placeholder for its HTML, so later patterns never look
// inside it. The text of an element that takes further Markdown (strong,
// emphasis, strike) is processed with the patterns after its own.

type imatch struct {
	start, end int
	g          []string
	// next, when set, is where the search goes on after a refused match
	// (the end of the whole match when it is longer than what it
	// replaces).
	next int
}

type ipattern struct {
	name   string
	find   func(p *inlineProc, s string, from int) (imatch, bool)
	handle func(p *inlineProc, m imatch, idx int) (string, bool)
	// legacy patterns stop at their first refusal, as the reference's
	// old-style patterns do; the others go on after the refused match.
	legacy bool
}

type inlineProc struct {
	r     *renderer
	quote bool // inside a block quote: mentions are silent
	// patterns are this rendering's: inlinePatterns with the
	// organization's linkifiers (patternsWith).
	patterns []ipattern
}

var inlinePatterns []ipattern

func init() {
	inlinePatterns = []ipattern{
		{name: "backtick", find: findBacktick, handle: handleBacktick},
		{name: "strong_em", find: findStrongEm, handle: handleTag("<strong><em>", "</em></strong>"), legacy: true},
		{name: "usermention", find: findUserMention, handle: handleUserMention},
		{name: "tex", find: findTeX, handle: handleTeX, legacy: true},
		{name: "stream_topic_message", find: findStreamLink(streamMessageLink), handle: handleStreamLink(streamMessageLink)},
		{name: "topic", find: findStreamLink(streamTopicLink), handle: handleStreamLink(streamTopicLink)},
		{name: "stream", find: findStreamLink(streamLink), handle: handleStreamLink(streamLink)},
		{name: "timestamp", find: findTimestamp, handle: handleTimestamp, legacy: true},
		{name: "usergroupmention", find: findGroupMention, handle: handleGroupMention},
		{name: "link", find: findLink, handle: handleLink},
		{name: "autolink", find: findAutolink, handle: handleAutolink, legacy: true},
		{name: "entity", find: findEntity, handle: func(p *inlineProc, m imatch, _ int) (string, bool) { return m.g[0], true }},
		{name: "strong", find: findStrong, handle: handleTag("<strong>", "</strong>"), legacy: true},
		{name: "emphasis", find: findEmphasis, handle: handleTag("<em>", "</em>"), legacy: true},
		{name: "del", find: findDel, handle: handleTag("<del>", "</del>"), legacy: true},
		{name: "emoji", find: findEmojiName, handle: handleEmojiName, legacy: true},
		{name: "emoticon", find: findEmoticon, handle: handleEmoticon, legacy: true},
		{name: "nl2br", find: findNewline, handle: func(*inlineProc, imatch, int) (string, bool) { return "<br>\n", true }},
		{name: "unicodeemoji", find: findUnicodeEmoji, handle: handleUnicodeEmoji},
	}
}

// inline renders a block's inline text to HTML (with placeholders that the
// final expansion fills in).
func (r *renderer) inline(text string, quote bool) string {
	if r.patterns == nil {
		r.patterns = patternsWith(r.opts.Linkifiers)
	}
	p := &inlineProc{r: r, quote: quote, patterns: r.patterns}
	return p.process(text, 0)
}

func (p *inlineProc) process(s string, idx int) string {
	for i := idx; i < len(p.patterns); i++ {
		pat := p.patterns[i]
		pos := 0
		for guard := 0; pos <= len(s) && guard < 100000; guard++ {
			m, ok := pat.find(p, s, pos)
			if !ok {
				break
			}
			html, ok := pat.handle(p, m, i)
			if !ok {
				if pat.legacy {
					break
				}
				if m.next > pos {
					pos = m.next
				} else if m.end <= pos {
					pos++
				} else {
					pos = m.end
				}
				continue
			}
			ph := p.r.stash(html)
			s = s[:m.start] + ph + s[m.end:]
			pos = m.start + len(ph)
		}
	}
	return escapeText(s)
}

// handleTag wraps the first group, processed further, in tags.
func handleTag(open, closing string) func(p *inlineProc, m imatch, idx int) (string, bool) {
	return func(p *inlineProc, m imatch, idx int) (string, bool) {
		return open + p.process(m.g[0], idx+1) + closing, true
	}
}

// escapeText escapes text for an HTML text node as the reference's
// serializer does (quotes stay).
func escapeText(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

// escapeAttr escapes an attribute value.
func escapeAttr(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "\n", "&#10;")
	return r.Replace(s)
}

func isSpaceRune(r rune) bool { return unicode.IsSpace(r) }

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// prevRune returns the rune before byte offset i, or -1 at the start.
func prevRune(s string, i int) rune {
	if i <= 0 {
		return -1
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r
}

func nextRune(s string, i int) rune {
	if i >= len(s) {
		return -1
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// mentionBoundary is the reference's rule for what may come before a
// mention or channel link: the start, whitespace or one of '"({[/<.
func mentionBoundary(s string, i int) bool {
	r := prevRune(s, i)
	return r == -1 || isSpaceRune(r) || strings.ContainsRune(`'"({[/<`, r)
}

func findBacktick(p *inlineProc, s string, from int) (imatch, bool) {
	type run struct{ pos, n int }
	for i := from; i < len(s); i++ {
		if s[i] != '`' || (i > 0 && s[i-1] == '\\') {
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		// The later maximal runs of backticks on this line.
		var runs []run
		eol := strings.IndexByte(s[i+n:], '\n')
		if eol < 0 {
			eol = len(s)
		} else {
			eol += i + n
		}
		for q := i + n; q < eol; q++ {
			if s[q] != '`' {
				continue
			}
			k := q
			for k < eol && s[k] == '`' {
				k++
			}
			runs = append(runs, run{q, k - q})
			q = k - 1
		}
		for size := n; size >= 1; size-- {
			for _, r := range runs {
				if r.n == size && r.pos > i+size {
					return imatch{start: i, end: r.pos + size, g: []string{"", s[i+size : r.pos]}}, true
				}
			}
		}
		i += n - 1
	}
	return imatch{}, false
}

func handleBacktick(p *inlineProc, m imatch, _ int) (string, bool) {
	return escapeText(m.g[0]) + "<code>" + escapeText(m.g[1]) + "</code>", true
}

func findStrongEm(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i+3 <= len(s); i++ {
		if s[i:i+3] != "***" {
			continue
		}
		j := i + 3
		k := j
		for k < len(s) && s[k] != '*' && s[k] != '^' && s[k] != '\n' {
			k++
		}
		if k > j && !isSpaceRune(nextRune(s, j)) && !isSpaceRune(prevRune(s, k)) && strings.HasPrefix(s[k:], "***") {
			return imatch{start: i, end: k + 3, g: []string{s[j:k]}}, true
		}
	}
	return imatch{}, false
}

func findStrong(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i+2 <= len(s); i++ {
		if s[i:i+2] != "**" {
			continue
		}
		for k := i + 3; k+2 <= len(s); k++ {
			if s[k-1] == '\n' {
				break
			}
			if s[k:k+2] == "**" {
				return imatch{start: i, end: k + 2, g: []string{s[i+2 : k]}}, true
			}
		}
	}
	return imatch{}, false
}

func findEmphasis(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i < len(s); i++ {
		if s[i] != '*' {
			continue
		}
		j := i + 1
		k := j
		for k < len(s) && s[k] != '*' && s[k] != '^' && s[k] != '\n' {
			k++
		}
		if k > j && k < len(s) && s[k] == '*' && !isSpaceRune(nextRune(s, j)) && !isSpaceRune(prevRune(s, k)) {
			return imatch{start: i, end: k + 1, g: []string{s[j:k]}}, true
		}
	}
	return imatch{}, false
}

func findDel(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i+2 <= len(s); i++ {
		if s[i:i+2] != "~~" || (i > 0 && s[i-1] == '~') {
			continue
		}
		j := i + 2
		k := j
		for k < len(s) && s[k] != '~' && s[k] != '\n' {
			k++
		}
		if k > j && strings.HasPrefix(s[k:], "~~") && (k+2 == len(s) || s[k+2] != '~') {
			return imatch{start: i, end: k + 2, g: []string{s[j:k]}}, true
		}
	}
	return imatch{}, false
}

func findEntity(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i < len(s); i++ {
		if s[i] != '&' {
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '#' {
			j++
			hex := j < len(s) && s[j] == 'x'
			if hex {
				j++
			}
			k := j
			for k < len(s) && (isDigit(s[k]) || (hex && strings.IndexByte("abcdefABCDEF", s[k]) >= 0)) {
				k++
			}
			if k > j && k < len(s) && s[k] == ';' {
				return imatch{start: i, end: k + 1, g: []string{s[i : k+1]}}, true
			}
			continue
		}
		k := j
		for k < len(s) && (isDigit(s[k]) || (s[k]|0x20 >= 'a' && s[k]|0x20 <= 'z')) {
			k++
		}
		if k > j && k < len(s) && s[k] == ';' {
			return imatch{start: i, end: k + 1, g: []string{s[i : k+1]}}, true
		}
	}
	return imatch{}, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func findNewline(p *inlineProc, s string, from int) (imatch, bool) {
	i := strings.IndexByte(s[from:], '\n')
	if i < 0 {
		return imatch{}, false
	}
	return imatch{start: from + i, end: from + i + 1}, true
}

func findTeX(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i+2 <= len(s); i++ {
		if s[i:i+2] != "$$" {
			continue
		}
		if r := prevRune(s, i); r == '$' || (r != -1 && isWordRune(r)) {
			continue
		}
		j := i + 2
		if j >= len(s) || s[j] == '\n' || s[j] == '_' || s[j] == '$' {
			continue
		}
		k := j + 1
		for k < len(s) {
			if s[k] == '\\' && k+1 < len(s) && s[k+1] == '$' {
				k += 2
				continue
			}
			if s[k] == '$' || s[k] == '\n' {
				break
			}
			k++
		}
		if !strings.HasPrefix(s[k:], "$$") || (k+2 < len(s) && s[k+2] == '$') {
			continue
		}
		if r := nextRune(s, k+2); r != -1 && isWordRune(r) {
			continue
		}
		return imatch{start: i, end: k + 2, g: []string{s[j:k]}}, true
	}
	return imatch{}, false
}

func handleTeX(p *inlineProc, m imatch, _ int) (string, bool) {
	if p.r.opts.RenderTeX != nil {
		if html, ok := p.r.opts.RenderTeX(m.g[0], false); ok {
			return html, true
		}
	}
	return `<span class="tex-error">` + escapeText("$$"+m.g[0]+"$$") + `</span>`, true
}

// renderTeX renders a display math paragraph, or the reference's error
// span when it cannot.
func (r *renderer) renderTeX(tex string, display bool) string {
	if r.opts.RenderTeX != nil {
		if html, ok := r.opts.RenderTeX(tex, display); ok {
			return html
		}
	}
	return `<span class="tex-error">` + djangoEscape(tex) + `</span>`
}

func djangoEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;").Replace(s)
}
