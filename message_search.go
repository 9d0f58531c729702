package chat

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// stopWords are PostgreSQL's English stop words (its english.stop, the
// Snowball list): a search ignores them.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves
		he him his himself she her hers herself it its itself they them their theirs themselves what which who
		whom this that these those am is are was were be been being have has had having do does did doing a an
		the and but if or because as until while of at by for with about against between into through during
		before after above below to from up down in out on off over under again further then once here there
		when where why how all any both each few more most other some such no nor not only own same so than too
		very s t can will just don should now`) {
		m[w] = true
	}
	return m
}()

// stem is the English Snowball stem of a lower-case word.
func stem(word string) string {
	env := snowballstem.NewEnv(word)
	english.Stem(env)
	return env.Current()
}

// searchHighlighter marks where a search matches a message, as the
// reference's ts_headline with HighlightAll (PostgreSQL's English text
// search configuration): every word of the text whose English (Snowball)
// stem is the stem of one of the search's words, stop words left out.
// Words are runs of letters and digits outside HTML tags and entities, so
// markup is never highlighted. The same rule serves every database.
type searchHighlighter struct {
	stems map[string]bool
}

// newSearchHighlighter reads the search operand's words; quotes only
// group words into phrases, which highlight word by word.
func newSearchHighlighter(operand string) *searchHighlighter {
	h := &searchHighlighter{stems: map[string]bool{}}
	for _, w := range textWords(operand, false) {
		word := strings.ToLower(operand[w[0] : w[0]+w[1]])
		if !stopWords[word] {
			h.stems[stem(word)] = true
		}
	}
	return h
}

// textWords returns the (offset, length) in bytes of each word of s: a
// run of letters and digits. With markup set, HTML tags and entities are
// skipped.
func textWords(s string, markup bool) [][2]int {
	var out [][2]int
	start := -1
	flush := func(i int) {
		if start >= 0 {
			out = append(out, [2]int{start, i - start})
			start = -1
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if markup && c == '<' {
			if end := strings.IndexByte(s[i:], '>'); end > 0 {
				flush(i)
				i += end + 1
				continue
			}
		}
		if markup && c == '&' {
			if end := strings.IndexByte(s[i:], ';'); end > 1 && end <= 10 && isEntityName(s[i+1:i+end]) {
				flush(i)
				i += end + 1
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
		} else {
			flush(i)
		}
		i += size
	}
	flush(len(s))
	return out
}

func isEntityName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '#' && i == 0) && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// locs are the matches of the search in an HTML text, in order.
func (h *searchHighlighter) locs(text string) [][2]int {
	var out [][2]int
	if len(h.stems) == 0 {
		return nil
	}
	for _, w := range textWords(text, true) {
		word := strings.ToLower(text[w[0] : w[0]+w[1]])
		if h.stems[stem(word)] {
			out = append(out, w)
		}
	}
	return out
}

// highlightString wraps each match in a highlight span, as the
// reference's highlight_string does: a match whose text leaves the scan
// inside a tag is left alone.
func highlightString(text string, locs [][2]int) string {
	var b strings.Builder
	pos := 0
	inTag := false
	for _, loc := range locs {
		offset, length := loc[0], loc[1]
		prefix, match := text[pos:offset], text[offset:offset+length]
		for _, c := range prefix + match {
			if c == '<' {
				inTag = true
			} else if c == '>' {
				inTag = false
			}
		}
		b.WriteString(prefix)
		if inTag {
			b.WriteString(match)
		} else {
			b.WriteString(`<span class="highlight">`)
			b.WriteString(match)
			b.WriteString("</span>")
		}
		pos = offset + length
	}
	b.WriteString(text[pos:])
	return b.String()
}

// escapeTopic is the reference's escape_html of a topic.
func escapeTopic(topic string) string {
	return strings.ReplaceAll(html.EscapeString(topic), "&#34;", "&quot;")
}

// matchFields are a message's match_content and match_subject: its HTML
// and its escaped topic, with the search's matches highlighted (h nil:
// nothing highlighted).
func (h *searchHighlighter) matchFields(rendered, topic string) (content, subject string) {
	subject = escapeTopic(topic)
	if h == nil {
		return rendered, subject
	}
	return highlightString(rendered, h.locs(rendered)), highlightString(subject, h.locs(subject))
}
