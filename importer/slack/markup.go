package slack

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Slack's markup ("mrkdwn") to this server's Markdown, as the reference's
// slack_message_conversion.py maps it: <@U123> and <@U123|name> become
// @**Full Name|ID** (the reference writes the name alone; the ID keeps two
// people of one name apart), <!channel>, <!here> and <!everyone> become
// @**all**, <#C123|name> becomes #**name**, <url|text> a [text](url)
// link and <url> the bare URL, <mailto:a@b|a@b> mailto:a@b; *bold*,
// _italic_ and ~strike~ become **bold**, *italic* and ~~strike~~ where
// Slack would format them (between spaces or punctuation). Unlike the
// reference, code spans and blocks are left as they are. Slack escapes
// &, < and > in text; they are unescaped last.

var (
	angleRe = regexp.MustCompile(`<([^<>\n]+)>`)
	fenceRe = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
)

func convertMarkup(text string, c *converter) string {
	// Code is left alone: cut it out, convert the rest, put it back.
	var codes []string
	text = fenceRe.ReplaceAllStringFunc(text, func(code string) string {
		codes = append(codes, code)
		return fmt.Sprintf("\x00%d\x00", len(codes)-1)
	})
	text = convertEmphasis(text, '*', "**")
	text = convertEmphasis(text, '~', "~~")
	text = convertEmphasis(text, '_', "*")
	text = angleRe.ReplaceAllStringFunc(text, func(tag string) string { return c.angle(tag[1 : len(tag)-1]) })
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
	for i, code := range codes {
		text = strings.Replace(text, fmt.Sprintf("\x00%d\x00", i), code, 1)
	}
	return text
}

// angle converts one <...> of Slack's markup.
func (c *converter) angle(inner string) string {
	target, label, hasLabel := strings.Cut(inner, "|")
	switch {
	case strings.HasPrefix(target, "@"):
		if id, ok := c.byslack[target[1:]]; ok {
			return fmt.Sprintf("@**%s|%d**", c.names[id], id)
		}
		if hasLabel {
			return "@" + label
		}
		return "@" + target[1:]
	case target == "!channel" || target == "!here" || target == "!everyone":
		return "@**all**"
	case strings.HasPrefix(target, "!subteam^"):
		if hasLabel {
			return label
		}
		return "@group"
	case strings.HasPrefix(target, "#"):
		if name, ok := c.chanIDs[target[1:]]; ok {
			return "#**" + name + "**"
		}
		if hasLabel {
			return "#" + label
		}
		return "#" + target[1:]
	case strings.HasPrefix(target, "mailto:"):
		return target
	case strings.Contains(target, "://"):
		if hasLabel && label != target {
			return "[" + label + "](" + target + ")"
		}
		return target
	}
	return "<" + inner + ">"
}

// convertEmphasis rewrites Slack's single-character emphasis (marker
// around text, at word boundaries) to this server's.
func convertEmphasis(text string, marker rune, to string) string {
	r := []rune(text)
	var b strings.Builder
	boundary := func(x rune) bool {
		return x != marker && x != '`' && x != '@' && x != '\\' && (unicode.IsSpace(x) || unicode.IsPunct(x) || unicode.IsSymbol(x))
	}
	for i := 0; i < len(r); i++ {
		if r[i] == marker && (i == 0 || boundary(r[i-1])) && i+1 < len(r) && r[i+1] != marker && !unicode.IsSpace(r[i+1]) {
			end := -1
			for j := i + 1; j < len(r) && r[j] != '\n'; j++ {
				if r[j] == marker {
					end = j
					break
				}
			}
			if end > i+1 && !unicode.IsSpace(r[end-1]) && (end+1 == len(r) || boundary(r[end+1])) {
				b.WriteString(to)
				b.WriteString(string(r[i+1 : end]))
				b.WriteString(to)
				i = end
				continue
			}
		}
		b.WriteRune(r[i])
	}
	return b.String()
}
