package storage

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fold returns the key under which names, emails and topics compare
// case-insensitively: two strings are the same name when their keys are
// equal. It maps every character to its upper case and that to its lower
// case, with Go's Unicode tables, so "ÉQUIPE", "Équipe" and "équipe"
// share a key, as do "K" (Kelvin sign), "K" and "k".
//
// The key is computed here, in Go, and stored next to the value
// (users.email_key, streams.name_key, ...) rather than left to the
// database's lower(): SQLite's lower() folds only ASCII, and
// PostgreSQL's follows the database's locale, so the same data would be
// unique on one and conflict on the other. Implementations must use Fold
// for every case-insensitive comparison and unique key; ordering by the
// key compares bytes, which is the same on every dialect.
func Fold(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return foldUnicode(s)
		}
		if 'A' <= c && c <= 'Z' {
			return foldUnicode(s)
		}
	}
	return s // already its own key: ASCII with no upper case
}

func foldUnicode(s string) string {
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
}
