package markdown

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// allowedSchemes are the URL schemes a link may have (the reference's
// list: http, https, ftp, file and the HTML standard's safelisted ones).
var allowedSchemes = map[string]bool{
	"http": true, "https": true, "ftp": true, "file": true,
	"bitcoin": true, "geo": true, "im": true, "irc": true, "ircs": true, "magnet": true, "mailto": true,
	"matrix": true, "mms": true, "news": true, "nntp": true, "openpgp4fpr": true, "sip": true, "sms": true,
	"smsto": true, "ssh": true, "tel": true, "urn": true, "webcal": true, "wtai": true, "xmpp": true,
}

// splitScheme returns the scheme of u (lower-cased) and the rest, as
// Python's urlsplit does.
func splitScheme(u string) (string, string) {
	i := strings.IndexByte(u, ':')
	if i <= 0 {
		return "", u
	}
	for j := 0; j < i; j++ {
		c := u[j]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || (j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'))
		if !ok {
			return "", u
		}
	}
	return strings.ToLower(u[:i]), u[i+1:]
}

// sanitizeURL is the reference's link sanitizer: it returns the href to
// use and false when the link must stay text.
func sanitizeURL(u string) (string, bool) {
	u = strings.ReplaceAll(u, " ", "%20")
	scheme, rest := splitScheme(u)
	netloc, path := "", rest
	if strings.HasPrefix(rest, "//") {
		end := strings.IndexAny(rest[2:], "/?#")
		if end < 0 {
			netloc, path = rest[2:], ""
		} else {
			netloc, path = rest[2:2+end], rest[2+end:]
		}
	}
	pathOnly := path
	if i := strings.IndexAny(pathOnly, "?#"); i >= 0 {
		pathOnly = pathOnly[:i]
	}
	switch {
	case scheme == "" && netloc == "" && strings.Contains(pathOnly, "@"):
		scheme = "mailto"
		return "mailto:" + u, true
	case scheme == "" && netloc == "" && strings.HasPrefix(pathOnly, "/"):
		return u, true
	case scheme == "" && netloc == "" && pathOnly == "" && strings.HasPrefix(path, "#") && len(path) > 1:
		return path, true
	}
	if scheme == "" {
		if strings.HasPrefix(u, "http://") {
			return "", false // cannot happen; guards against a loop
		}
		return sanitizeURL("http://" + u)
	}
	if !allowedSchemes[scheme] {
		return "", false
	}
	return u, true
}

// localLink makes a link to the organization's own "#narrow" or
// "user_uploads/" URLs relative.
func (r *renderer) localLink(href string) string {
	if r.opts.RealmURL == "" {
		return href
	}
	prefix := strings.TrimRight(r.opts.RealmURL, "/") + "/"
	if strings.HasPrefix(href, prefix+"#") || strings.HasPrefix(href, prefix+"user_uploads/") {
		return strings.TrimPrefix(href, prefix)
	}
	return href
}

func (r *renderer) noteLink(href string) {
	r.result.HasLink = true
	if strings.HasPrefix(href, "user_uploads/") || strings.HasPrefix(href, "/user_uploads/") {
		r.result.HasAttachment = true
		path := strings.TrimPrefix(strings.TrimPrefix(href, "/"), "user_uploads/")
		if i := strings.IndexAny(path, "?#"); i >= 0 {
			path = path[:i]
		}
		if !slices.Contains(r.result.UploadPaths, path) {
			r.result.UploadPaths = append(r.result.UploadPaths, path)
		}
		if isImageURL(href) {
			r.result.HasImage = true
		}
	}
}

var imageExtensions = []string{".bmp", ".gif", ".jpe", ".jpeg", ".jpg", ".png", ".webp"}

func isImageURL(u string) bool {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	u = strings.ToLower(u)
	for _, e := range imageExtensions {
		if strings.HasSuffix(u, e) {
			return true
		}
	}
	return false
}

// findLink finds [text](url), with nested brackets in the text and nested
// parentheses in the URL, not preceded by '!'.
func findLink(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i < len(s); i++ {
		if s[i] != '[' || (i > 0 && s[i-1] == '!') {
			continue
		}
		depth := 1
		k := i + 1
		for ; k < len(s); k++ {
			if s[k] == ']' {
				depth--
			} else if s[k] == '[' {
				depth++
			}
			if depth == 0 {
				break
			}
		}
		if depth != 0 || k+1 >= len(s) || s[k+1] != '(' {
			continue
		}
		text := s[i+1 : k]
		pd := 1
		q := k + 2
		for ; q < len(s); q++ {
			if s[q] == '(' {
				pd++
			} else if s[q] == ')' {
				pd--
				if pd == 0 {
					break
				}
			}
		}
		if pd != 0 {
			continue
		}
		inner := strings.TrimSpace(s[k+2 : q])
		href, title := inner, ""
		if strings.HasPrefix(href, "<") && strings.Contains(href, ">") {
			end := strings.IndexByte(href, '>')
			title = strings.TrimSpace(href[end+1:])
			href = href[1:end]
		} else if n := len(href); n > 1 && (href[n-1] == '"' || href[n-1] == '\'') {
			quote := href[n-1]
			if o := strings.LastIndexByte(href[:n-1], quote); o > 0 && (href[o-1] == ' ' || href[o-1] == '\t' || href[o-1] == '\n') {
				title = href[o : n-1]
				href = strings.TrimSpace(href[:o])
			}
		}
		if len(title) >= 2 {
			title = title[1:]
		} else {
			title = ""
		}
		return imatch{start: i, end: q + 1, g: []string{text, href, title}}, true
	}
	return imatch{}, false
}

func handleLink(p *inlineProc, m imatch, _ int) (string, bool) {
	raw := strings.TrimSpace(p.r.expand(m.g[1]))
	href, ok := sanitizeURL(raw)
	if !ok {
		return "", false
	}
	href = p.r.localLink(href)
	p.r.noteLink(href)
	text := m.g[0]
	inner := escapeText(text)
	if strings.TrimSpace(p.r.expand(text)) == "" {
		inner = escapeText(href)
	}
	attrs := ` href="` + escapeAttr(href) + `"`
	if m.g[2] != "" {
		attrs += ` title="` + escapeAttr(m.g[2]) + `"`
	}
	return "<a" + attrs + ">" + inner + "</a>", true
}

// autolinkBoundary is what may come before a bare URL.
func autolinkBoundary(s string, i int) bool {
	r := prevRune(s, i)
	return r == -1 || isSpaceRune(r) || strings.ContainsRune(`'"(,:<`, r)
}

const urlTrailing = "!:;?),.'\">"

// findAutolink finds a bare URL, domain or e-mail address the way the
// reference's link regex does: the shortest candidate that the grammar
// accepts and that only trailing punctuation separates from the next
// whitespace or the end.
func findAutolink(p *inlineProc, s string, from int) (imatch, bool) {
	wend := from // the end of the current run of non-space runes
	for i := from; i < len(s); i++ {
		if !autolinkBoundary(s, i) {
			continue
		}
		c := s[i]
		if !(isWordByte(c) || c >= 0x80) {
			continue
		}
		if i >= wend {
			// Every start inside one run ends with it: find its end once,
			// so a long run without spaces costs linear time.
			wend = i
			for wend < len(s) {
				r, n := utf8.DecodeRuneInString(s[wend:])
				if isSpaceRune(r) {
					break
				}
				wend += n
			}
		}
		// Only trailing punctuation may follow the link in its word, so the
		// candidate ends are the positions in that punctuation run.
		tp := wend
		for tp > i && strings.IndexByte(urlTrailing, s[tp-1]) >= 0 {
			tp--
		}
		// The first alternative: a URL with a scheme, or a domain.
		for _, alt := range []func(string) bool{matchWebURL, matchEmail} {
			for e := max(i+1, tp); e <= wend; e++ {
				if alt(s[i:e]) {
					return imatch{start: i, end: e, g: []string{s[i:e]}}, true
				}
			}
		}
	}
	return imatch{}, false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isWordString(s string, extra string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isWordRune(r) && !strings.ContainsRune(extra, r) {
			return false
		}
	}
	return true
}

// matchWebURL accepts "http(s)://host[/path]" or "domain.tld[/path]".
func matchWebURL(u string) bool {
	var host, path string
	hasPath := false
	if rest, ok := strings.CutPrefix(u, "http://"); ok {
		host, path, hasPath = strings.Cut(rest, "/")
		if !isWordString(host, ".:@-") {
			return false
		}
	} else if rest, ok := strings.CutPrefix(u, "https://"); ok {
		host, path, hasPath = strings.Cut(rest, "/")
		if !isWordString(host, ".:@-") {
			return false
		}
	} else {
		host, path, hasPath = strings.Cut(u, "/")
		labels := strings.Split(host, ".")
		if len(labels) < 2 {
			return false
		}
		for _, l := range labels[:len(labels)-1] {
			if !isWordString(l, "-") {
				return false
			}
		}
		if !knownTLD(labels[len(labels)-1]) {
			return false
		}
	}
	if !hasPath {
		return true
	}
	return matchURLPath(path)
}

// knownTLD reports whether the last label is one of the reference's TLDs
// (the IANA list without a few common file extensions).
func knownTLD(l string) bool {
	switch l {
	case "java", "md", "mov", "py", "zip":
		return false
	}
	return tldSet[l]
}

// matchURLPath accepts a path with balanced parentheses nested at most
// seven deep and no whitespace or double quote.
func matchURLPath(p string) bool {
	depth := 0
	for _, r := range p {
		switch {
		case isSpaceRune(r) || r == '"':
			return false
		case r == '(':
			depth++
			if depth > 7 {
				return false
			}
		case r == ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// matchEmail accepts "local@domain.tld".
func matchEmail(u string) bool {
	local, domain, ok := strings.Cut(u, "@")
	if !ok || !isWordString(local, ".-") {
		return false
	}
	dot := strings.LastIndexByte(domain, '.')
	if dot <= 0 {
		return false
	}
	return isWordString(domain[:dot], ".-") && isWordString(domain[dot+1:], "")
}

func handleAutolink(p *inlineProc, m imatch, _ int) (string, bool) {
	u := m.g[0]
	href, ok := sanitizeURL(u)
	if !ok {
		return escapeText(u), true
	}
	href = p.r.localLink(href)
	p.r.noteLink(href)
	return `<a href="` + escapeAttr(href) + `">` + escapeText(u) + "</a>", true
}
