package markdown

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// TopicLink is a link found in a topic: the text matched and its URL.
type TopicLink struct {
	Text string
	URL  string
}

// topicMatch is a candidate link; index and the length of text count
// code points, as the reference's Python strings do.
type topicMatch struct {
	link       TopicLink
	index      int
	length     int
	precedence int // -1: a bare URL
}

// basicLinkSplitter are the characters that end a bare URL in a topic
// (the reference's basic_link_splitter).
const basicLinkSplitter = " !;),'\""

// TopicLinks finds the links of a topic as the reference's topic_links
// does: every match of each linkifier (by the linkifiers' order, then
// position), then the bare URLs, each kept unless it overlaps one kept
// before; the result is by position. A linkifier's match starts where
// its whole match does (the separator before included), as in the
// reference. A bare URL is a piece of the topic between splitter
// characters that starts with a URL; without a scheme it gets https.
func TopicLinks(topic string, linkifiers []*Linkifier) []TopicLink {
	var matches []topicMatch
	runes := func(i int) int { return utf8.RuneCountInString(topic[:i]) }
	for prec, l := range linkifiers {
		if l == nil {
			continue
		}
		var mine []topicMatch
		for pos := 0; pos < len(topic); {
			m, ok := l.find(topic, pos)
			if !ok {
				break
			}
			text := topic[m.actualStart:m.actualEnd]
			mine = append(mine, topicMatch{link: TopicLink{Text: text, URL: m.url}, index: runes(m.start),
				length: utf8.RuneCountInString(text), precedence: prec})
			// Go on from the character after the match, which a next
			// match may use as its separator.
			next := m.actualEnd
			if next <= pos {
				// An empty match at pos would never move on (the
				// reference loops forever there).
				_, n := utf8.DecodeRuneInString(topic[pos:])
				next = pos + n
			}
			pos = next
		}
		slices.SortStableFunc(mine, func(a, b topicMatch) int { return a.index - b.index })
		matches = append(matches, mine...)
	}
	for pos := 0; pos < len(topic); {
		end := strings.IndexAny(topic[pos:], basicLinkSplitter)
		if end < 0 {
			end = len(topic)
		} else {
			end += pos
		}
		seg := topic[pos:end]
		if m, ok := findAutolink(nil, seg, 0); ok && m.start == 0 && matchWebURL(m.g[0]) {
			u := m.g[0]
			url := u
			if scheme, _ := splitScheme(u); scheme == "" {
				url = "https://" + strings.TrimPrefix(u, "//")
			}
			matches = append(matches, topicMatch{link: TopicLink{Text: u, URL: url}, index: runes(pos),
				length: utf8.RuneCountInString(u), precedence: -1})
		}
		pos = end + 1
	}
	overlap := func(a, b topicMatch) bool {
		return b.index <= a.index && a.index < b.index+b.length || a.index <= b.index && b.index < a.index+a.length
	}
	var applied []topicMatch
	for _, m := range matches {
		if !slices.ContainsFunc(applied, func(o topicMatch) bool { return overlap(o, m) }) {
			applied = append(applied, m)
		}
	}
	slices.SortStableFunc(applied, func(a, b topicMatch) int { return a.index - b.index })
	out := make([]TopicLink, len(applied))
	for i, m := range applied {
		out[i] = m.link
	}
	return out
}
