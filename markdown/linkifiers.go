package markdown

import (
	"regexp"

	"github.com/yosida95/uritemplate/v3"
)

// Linkifiers: an organization's patterns whose matches become links. As
// in the reference (prepare_linkifier_pattern, LinkifierPattern), the
// pattern matches only after the start of the text, whitespace (with
// U+0085 and the Unicode separators) or one of '"(,:<, and only before
// the end or a character that is neither a letter nor a digit; those two
// characters stay text, and the match alone becomes
// <a href="URL">match</a>, the URL the template expanded with the
// pattern's named groups. A URL the link sanitizer refuses leaves the
// match as text. Linkifiers run in their order, each over the whole
// text, after bare URLs and before entities (the reference's priority
// 45, between autolink's 55 and entity's 40).

// Names of the groups prepareLinkifier adds, as the reference's.
const (
	linkifierBefore = "linkifier_before_match"
	linkifierActual = "linkifier_actual_match"
	linkifierAfter  = "linkifier_after_match"
)

// Linkifier is a compiled linkifier (CompileLinkifier).
type Linkifier struct {
	// re is the prepared pattern; notAtStart the same without "^" among
	// the characters before, for searches that start after the text's
	// start (as the reference's re2 search from a position, where "^"
	// still means the text's start).
	re, notAtStart *regexp.Regexp
	tmpl           *uritemplate.Template
}

// CompileLinkifier prepares a linkifier's pattern (RE2 syntax, the
// reference's re2) and URL template (RFC 6570).
func CompileLinkifier(pattern, urlTemplate string) (*Linkifier, error) {
	// The reference's prepare_linkifier_pattern, with and without "^".
	const before = `\s|\x{85}|\pZ|['"\(,:<])`
	rest := `(?P<` + linkifierActual + `>` + pattern + `)(?P<` + linkifierAfter + `>$|[^\pL\pN])`
	re, err := regexp.Compile(`(?P<` + linkifierBefore + `>^|` + before + rest)
	if err != nil {
		return nil, err
	}
	notAtStart, err := regexp.Compile(`(?P<` + linkifierBefore + `>` + before + rest)
	if err != nil {
		return nil, err
	}
	tmpl, err := uritemplate.New(urlTemplate)
	if err != nil {
		return nil, err
	}
	return &Linkifier{re: re, notAtStart: notAtStart, tmpl: tmpl}, nil
}

// linkifierMatch is one match of a linkifier: the bounds of the whole
// match and of the part that becomes the link, and the URL.
type linkifierMatch struct {
	start, end             int // the whole match, with the characters around
	actualStart, actualEnd int
	url                    string
}

// find returns the first match in s at or after from.
func (l *Linkifier) find(s string, from int) (linkifierMatch, bool) {
	re := l.re
	if from > 0 {
		re = l.notAtStart
	}
	if from > len(s) {
		return linkifierMatch{}, false
	}
	loc := re.FindStringSubmatchIndex(s[from:])
	if loc == nil {
		return linkifierMatch{}, false
	}
	for i := range loc {
		if loc[i] >= 0 {
			loc[i] += from
		}
	}
	return l.match(re, s, loc), true
}

func (l *Linkifier) match(re *regexp.Regexp, s string, loc []int) linkifierMatch {
	vals := uritemplate.Values{}
	m := linkifierMatch{start: loc[0], end: loc[1]}
	for i, name := range re.SubexpNames() {
		if i == 0 || name == "" || loc[2*i] < 0 {
			continue // an unmatched group is undefined, as Python's None
		}
		v := s[loc[2*i]:loc[2*i+1]]
		vals.Set(name, uritemplate.String(v))
		if name == linkifierActual {
			m.actualStart, m.actualEnd = loc[2*i], loc[2*i+1]
		}
	}
	m.url, _ = l.tmpl.Expand(vals)
	return m
}

// linkifierPattern is the inline pattern of one linkifier.
func linkifierPattern(l *Linkifier) ipattern {
	return ipattern{
		name: "linkifier",
		find: func(_ *inlineProc, s string, from int) (imatch, bool) {
			m, ok := l.find(s, from)
			if !ok {
				return imatch{}, false
			}
			return imatch{start: m.actualStart, end: m.actualEnd, next: m.end, g: []string{s[m.actualStart:m.actualEnd], m.url}}, true
		},
		handle: func(p *inlineProc, m imatch, _ int) (string, bool) {
			href, ok := sanitizeURL(m.g[1])
			if !ok {
				return "", false
			}
			href = p.r.localLink(href)
			p.r.noteLink(href)
			return `<a href="` + escapeAttr(href) + `">` + escapeText(m.g[0]) + "</a>", true
		},
	}
}

// patternsWith returns the inline patterns with the linkifiers' after
// autolink, or the shared list when there are none.
func patternsWith(linkifiers []*Linkifier) []ipattern {
	if len(linkifiers) == 0 {
		return inlinePatterns
	}
	out := make([]ipattern, 0, len(inlinePatterns)+len(linkifiers))
	for _, pat := range inlinePatterns {
		out = append(out, pat)
		if pat.name == "autolink" {
			for _, l := range linkifiers {
				if l != nil {
					out = append(out, linkifierPattern(l))
				}
			}
		}
	}
	return out
}
