// Package mailtext turns an email's bodies into a chat message's text, as
// the reference's email gateway does (zerver/lib/email_mirror.py): the
// quoted reply below an answer is cut (the reference uses talon's
// extract_from_plain and extract_from_html; these are our own rules for
// the same markers), a signature after a lone "--" line is dropped, HTML
// becomes Markdown (the reference's convert_html_to_markdown, html2text
// with unlimited line width), and a subject loses its "Re:"/"Fwd:"
// prefixes. Pure functions: no storage, no network.
package mailtext

import (
	"regexp"
	"strings"
)

// subjectPrefixes is the reference's strip_from_subject pattern: reply and
// forward markers (RE, AW, FW, FWD, in brackets or not) anywhere, and
// closing brackets at the end.
var subjectPrefixes = regexp.MustCompile(`(?im)([\[(] *)?\b(RE|AW|FWD?) *([-:;)\]][ :;\])-]*|$)|\]+ *$`)

// forwardedSubject is the reference's is_forwarded: a subject that starts
// with a forward marker.
var forwardedSubject = regexp.MustCompile(`(?i)^(?:([\[(] *)?\b(FWD?) *([-:;)\]][ :;\])-]*|$)|\]+ *$)`)

// StripSubject removes reply and forward markers from a subject and trims
// it (the reference's strip_from_subject).
func StripSubject(subject string) string {
	return strings.TrimSpace(subjectPrefixes.ReplaceAllString(subject, ""))
}

// IsForwarded reports whether a subject says the mail is forwarded (the
// reference then keeps the quoted text, which is the forwarded mail).
func IsForwarded(subject string) bool { return forwardedSubject.MatchString(subject) }

// footerLine is a signature delimiter: "--" alone on its line (usually
// "-- ").
var footerLine = regexp.MustCompile(`(?m)^\s*--\s*$`)

// FilterFooter drops a signature: everything from a line that is only
// "--", when the text has exactly one such line (with several, nothing is
// cut: the reference is conservative); the rest is trimmed.
func FilterFooter(text string) string {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "--" {
			n++
		}
	}
	if n != 1 {
		return text
	}
	loc := footerLine.FindStringIndex(text)
	return strings.TrimSpace(text[:loc[0]])
}

// Reply headers that introduce a quoted mail (English, and the most
// common others), on one line or spread over two.
var (
	wroteLine = regexp.MustCompile(`(?i)^\s*(on\b.{0,300}\bwrote|le\b.{0,300}\ba écrit|am\b.{0,300}\bschrieb|el\b.{0,300}\bescribió|op\b.{0,300}\bschreef|il\b.{0,300}\bha scritto)\s*:\s*$`)
	// originalLine starts a quoted original in Outlook and many clients:
	// everything below it is the original.
	originalLine = regexp.MustCompile(`(?i)^\s*-{2,}\s*(original message|ursprüngliche nachricht|message d'origine|mensaje original)\s*-{2,}\s*$`)
	// headerFrom, with a Sent/Date and a To/Subject line soon after, is
	// Outlook's header block of the quoted original.
	headerFrom    = regexp.MustCompile(`(?i)^\s*\*?(from|von|de)\s*:\*?\s*\S`)
	headerSent    = regexp.MustCompile(`(?i)^\s*\*?(sent|date|gesendet|envoyé|enviado)\s*:`)
	headerTo      = regexp.MustCompile(`(?i)^\s*\*?(to|subject|an|betreff|à|objet|para|asunto)\s*:`)
	underscoreBar = regexp.MustCompile(`^\s*_{5,}\s*$`)
)

// StripQuotedText cuts the quoted mail below a reply in a plain-text
// body: from a reply header ("On ... wrote:", an "Original Message" bar,
// an Outlook header block) when what follows is quoted or is the original,
// or else a block of "> " lines that ends the text. An answer written
// between quoted lines (an inline reply) is kept whole, and so is a text
// that would be left empty.
func StripQuotedText(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	quotesFrom := quotedTails(lines)
	cut := -1
	for i := 0; i < len(lines) && cut < 0; i++ {
		line := lines[i]
		switch {
		case originalLine.MatchString(line), outlookHeader(lines, i):
			cut = i
			if i > 0 && underscoreBar.MatchString(lines[i-1]) {
				cut = i - 1
			}
		case wroteLine.MatchString(line) && quotesFrom[i+1]:
			cut = i
		case i+2 < len(quotesFrom) && quotesFrom[i+2] && wroteLine.MatchString(line+" "+strings.TrimSpace(lines[i+1])):
			cut = i
		}
	}
	if cut < 0 {
		// A quote that ends the text, below something that is not one.
		end := len(lines)
		for end > 0 && strings.TrimSpace(lines[end-1]) == "" {
			end--
		}
		start := end
		for start > 0 && (quoted(lines[start-1]) || strings.TrimSpace(lines[start-1]) == "") {
			start--
		}
		if start < end && quoted(lines[end-1]) {
			cut = start
		}
	}
	if cut < 0 {
		return text
	}
	kept := strings.TrimRight(strings.Join(lines[:cut], "\n"), " \t\n")
	if strings.TrimSpace(kept) == "" {
		return text
	}
	return kept
}

func quoted(line string) bool { return strings.HasPrefix(strings.TrimLeft(line, " \t"), ">") }

// quotedTails tells, for each i up to len(lines), whether every non-empty
// line from i on is quoted (and there is one); a signature below the quote
// (from a "--" line) does not count.
func quotedTails(lines []string) []bool {
	out := make([]bool, len(lines)+1)
	some, all, signed := false, true, false
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) == "--" && !signed {
			some, all, signed = false, true, true // what was below is the signature
		} else if strings.TrimSpace(lines[i]) != "" {
			some = true
			all = all && quoted(lines[i])
		}
		out[i] = some && all
	}
	return out
}

// outlookHeader reports whether lines[i] starts a "From: / Sent: / To:"
// block.
func outlookHeader(lines []string, i int) bool {
	if !headerFrom.MatchString(lines[i]) {
		return false
	}
	sent, to := false, false
	for _, l := range lines[i+1 : min(i+6, len(lines))] {
		sent = sent || headerSent.MatchString(l)
		to = to || headerTo.MatchString(l)
	}
	return sent && to
}
