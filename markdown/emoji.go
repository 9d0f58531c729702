package markdown

//go:generate go run ./internal/emojigen

import (
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Emoji: ":name:" with the reference's names, Unicode emoji characters,
// and (when the user asks) emoticons become
//
//	<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>
//
// The tables in emoji_table.go are generated from the reference's data.

// emoticons are the reference's emoticon translations.
var emoticons = []struct{ text, name string }{
	{":)", "smile"}, {"(:", "smile"}, {":(", "frown"}, {"<3", "heart"}, {":|", "neutral"},
	{":/", "confused"}, {";)", "wink"}, {":D", "grinning"}, {":o", "open_mouth"}, {":O", "open_mouth"},
	{":p", "stuck_out_tongue"}, {":P", "stuck_out_tongue"},
}

// EmojiCode returns the code point string ("1f642") of an emoji name.
func EmojiCode(name string) (string, bool) {
	c, ok := emojiNameToCode[name]
	return c, ok
}

// EmojiNames returns every emoji name (canonical names and aliases) with
// its code point string: a copy, for tables made from it (the web
// client's emoji data).
func EmojiNames() map[string]string {
	return maps.Clone(emojiNameToCode)
}

// EmojiName returns the canonical name of an emoji code point string.
func EmojiName(code string) (string, bool) {
	n, ok := emojiCodeToName[code]
	return n, ok
}

func emojiSpan(code, name string) string {
	title := escapeAttr(strings.ReplaceAll(name, "_", " "))
	return `<span aria-label="` + title + `" class="emoji emoji-` + code + `" role="img" title="` + title + `">:` +
		escapeText(name) + `:</span>`
}

func emojiImage(src, name string) string {
	return `<img alt=":` + escapeAttr(name) + `:" class="emoji" src="` + escapeAttr(src) + `" title="` +
		escapeAttr(strings.ReplaceAll(name, "_", " ")) + `">`
}

func isEmojiNameByte(c byte) bool { return isWordByte(c) || c == '-' || c == '+' }

func findEmojiName(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		k := i + 1
		for k < len(s) && (isEmojiNameByte(s[k]) || s[k] >= 0x80 && isWordRune(nextRune(s, k))) {
			if s[k] >= 0x80 {
				_, n := utf8.DecodeRuneInString(s[k:])
				k += n
				continue
			}
			k++
		}
		if k > i+1 && k < len(s) && s[k] == ':' {
			return imatch{start: i, end: k + 1, g: []string{s[i+1 : k]}}, true
		}
	}
	return imatch{}, false
}

func handleEmojiName(p *inlineProc, m imatch, _ int) (string, bool) {
	name := m.g[0]
	if cr, ok := p.r.res.(CustomEmojiResolver); ok && p.r.res != nil {
		if src, ok := cr.CustomEmojiURL(name); ok {
			return emojiImage(src, name), true
		}
	}
	if name == "zulip" {
		return emojiImage("/static/generated/emoji/images/emoji/unicode/zulip.png", name), true
	}
	if code, ok := emojiNameToCode[name]; ok {
		return emojiSpan(code, name), true
	}
	return escapeText(":" + name + ":"), true
}

const emoticonTerminal = ",.;?!()[] \"'\n\t"

func findEmoticon(p *inlineProc, s string, from int) (imatch, bool) {
	if !p.r.opts.TranslateEmoticons {
		return imatch{}, false
	}
	for i := from; i < len(s); i++ {
		if i > 0 && strings.IndexByte(emoticonTerminal, s[i-1]) < 0 {
			continue
		}
		for _, e := range emoticons {
			if !strings.HasPrefix(s[i:], e.text) {
				continue
			}
			end := i + len(e.text)
			if end < len(s) && strings.IndexByte(emoticonTerminal, s[end]) < 0 {
				continue
			}
			return imatch{start: i, end: end, g: []string{e.name}}, true
		}
	}
	return imatch{}, false
}

func handleEmoticon(p *inlineProc, m imatch, _ int) (string, bool) {
	code, ok := emojiNameToCode[m.g[0]]
	if !ok {
		return "", false
	}
	return emojiSpan(code, m.g[0]), true
}

func isRegional(r rune) bool { return r >= 0x1f1e6 && r <= 0x1f1ff }
func isModifier(r rune) bool { return r >= 0x1f3fb && r <= 0x1f3ff }

// emojiElement reads one element of an emoji sequence at s[i:] (a flag
// pair, or an emoji character with a modifier, a variation selector and
// keycap, or tag characters) and returns its end, or -1.
func emojiElement(s string, i int) int {
	r, n := utf8.DecodeRuneInString(s[i:])
	if isRegional(r) {
		r2, n2 := utf8.DecodeRuneInString(s[i+n:])
		if isRegional(r2) {
			return i + n + n2
		}
	}
	if !emojiRunes[r] && !isRegional(r) && !isModifier(r) {
		return -1
	}
	j := i + n
	r2, n2 := utf8.DecodeRuneInString(s[j:])
	switch {
	case isModifier(r2):
		j += n2
	case r2 == 0xfe0f:
		j += n2
		if r3, n3 := utf8.DecodeRuneInString(s[j:]); r3 == 0x20e3 {
			j += n3
		}
	case r2 >= 0xe0020 && r2 <= 0xe007e:
		k := j
		for {
			t, tn := utf8.DecodeRuneInString(s[k:])
			if t >= 0xe0020 && t <= 0xe007e {
				k += tn
				continue
			}
			if t == 0xe007f {
				j = k + tn
			}
			break
		}
	}
	return j
}

func findUnicodeEmoji(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i < len(s); {
		if s[i] < 0x80 && !(s[i] == '#' || s[i] == '*' || isDigit(s[i])) {
			i++
			continue
		}
		end := emojiElement(s, i)
		if end < 0 {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		for end < len(s) {
			zr, zn := utf8.DecodeRuneInString(s[end:])
			if zr != 0x200d || end+zn >= len(s) {
				break
			}
			e2 := emojiElement(s, end+zn)
			if e2 < 0 {
				break
			}
			end = e2
		}
		return imatch{start: i, end: end, g: []string{s[i:end]}}, true
	}
	return imatch{}, false
}

func handleUnicodeEmoji(p *inlineProc, m imatch, _ int) (string, bool) {
	seq := m.g[0]
	// Characters shown as text by default (arrows, digits…) stay text.
	r, n := utf8.DecodeRuneInString(seq)
	rest := seq[n:]
	if (rest == "" || rest == "\u20e3") && !emojiPresentation[r] {
		return "", false
	}
	var parts []string
	for _, c := range seq {
		if c == 0xfe0f {
			continue
		}
		h := strconv.FormatInt(int64(c), 16)
		for len(h) < 4 {
			h = "0" + h
		}
		parts = append(parts, h)
	}
	code := strings.Join(parts, "-")
	name, ok := emojiCodeToName[code]
	if !ok {
		return "", false
	}
	return emojiSpan(code, name), true
}
