package markdown

import (
	"fmt"
	"strconv"
	"strings"
)

var (
	streamWildcards = map[string]bool{"all": true, "everyone": true, "stream": true, "channel": true}
	topicWildcards  = map[string]bool{"topic": true}
)

// findUserMention finds @**name** or @_**name** after a mention boundary.
func findUserMention(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i < len(s); i++ {
		if s[i] != '@' || !mentionBoundary(s, i) {
			continue
		}
		j := i + 1
		silent := ""
		if j < len(s) && s[j] == '_' {
			silent = "_"
			j++
		}
		if !strings.HasPrefix(s[j:], "**") {
			continue
		}
		k := strings.IndexByte(s[j+2:], '*')
		if k <= 0 {
			continue
		}
		k += j + 2
		if !strings.HasPrefix(s[k:], "**") {
			continue
		}
		return imatch{start: i, end: k + 2, g: []string{silent, s[j+2 : k]}}, true
	}
	return imatch{}, false
}

func handleUserMention(p *inlineProc, m imatch, _ int) (string, bool) {
	if p.r.res == nil {
		return "", false
	}
	name := m.g[1]
	silent := m.g[0] == "_" || p.quote
	topicWildcard := topicWildcards[name]
	streamWildcard := streamWildcards[name]
	var user User
	found := false
	if bar := strings.LastIndexByte(name, '|'); bar >= 0 && allDigits(name[bar+1:]) && !strings.Contains(name[:bar], "\n") {
		id, err := strconv.ParseInt(name[bar+1:], 10, 64)
		if err == nil {
			user, found = p.r.res.UserByID(id)
		}
		if fullName := name[:bar]; found && fullName != "" && user.FullName != fullName {
			return "", false
		}
	} else {
		user, found = p.r.res.UserByName(name)
	}
	var userID, class string
	switch {
	case streamWildcard:
		if !silent {
			p.r.result.StreamWildcard = true
		}
		userID, class = "*", "user-mention channel-wildcard-mention"
	case topicWildcard:
		if !silent {
			p.r.result.TopicWildcard = true
		}
		class = "topic-mention"
	case found:
		if !user.IsActive {
			silent = true
		}
		if !silent && !p.r.users[user.ID] {
			p.r.users[user.ID] = true
			p.r.result.MentionedUserIDs = append(p.r.result.MentionedUserIDs, user.ID)
		}
		name = user.FullName
		userID, class = strconv.FormatInt(user.ID, 10), "user-mention"
	default:
		return "", false
	}
	text := "@" + name
	if silent {
		class += " silent"
		text = name
	}
	attrs := ` class="` + class + `"`
	if userID != "" {
		attrs += ` data-user-id="` + userID + `"`
	}
	return "<span" + attrs + ">" + escapeText(text) + "</span>", true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// findGroupMention finds @*group* or @_*group* after a mention boundary.
func findGroupMention(p *inlineProc, s string, from int) (imatch, bool) {
	for i := from; i < len(s); i++ {
		if s[i] != '@' || !mentionBoundary(s, i) {
			continue
		}
		j := i + 1
		silent := ""
		if j < len(s) && s[j] == '_' {
			silent = "_"
			j++
		}
		if j >= len(s) || s[j] != '*' {
			continue
		}
		k := strings.IndexByte(s[j+1:], '*')
		if k <= 0 {
			continue
		}
		k += j + 1
		return imatch{start: i, end: k + 1, g: []string{silent, s[j+1 : k]}}, true
	}
	return imatch{}, false
}

func handleGroupMention(p *inlineProc, m imatch, _ int) (string, bool) {
	if p.r.res == nil {
		return "", false
	}
	g, ok := p.r.res.GroupByName(m.g[1])
	if !ok {
		return "", false
	}
	silent := m.g[0] == "_" || p.quote || g.Deactivated
	if !silent && !p.r.groups[g.ID] {
		p.r.groups[g.ID] = true
		p.r.result.MentionedGroupIDs = append(p.r.result.MentionedGroupIDs, g.ID)
	}
	id := strconv.FormatInt(g.ID, 10)
	if silent {
		return `<span class="user-group-mention silent" data-user-group-id="` + id + `">` + escapeText(g.Name) + "</span>", true
	}
	return `<span class="user-group-mention" data-user-group-id="` + id + `">@` + escapeText(g.Name) + "</span>", true
}

type streamLinkKind int

const (
	streamLink streamLinkKind = iota
	streamTopicLink
	streamMessageLink
)

// findStreamLink finds #**channel**, #**channel>topic** or
// #**channel>topic@id** after a mention boundary.
func findStreamLink(kind streamLinkKind) func(p *inlineProc, s string, from int) (imatch, bool) {
	return func(p *inlineProc, s string, from int) (imatch, bool) {
		for i := from; i+3 <= len(s); i++ {
			if s[i:i+3] != "#**" || !mentionBoundary(s, i) {
				continue
			}
			j := i + 3
			k := strings.IndexByte(s[j:], '*')
			if k < 0 {
				continue
			}
			k += j
			if !strings.HasPrefix(s[k:], "**") {
				continue
			}
			body := s[j:k]
			switch kind {
			case streamLink:
				if body == "" {
					continue
				}
				return imatch{start: i, end: k + 2, g: []string{body}}, true
			case streamTopicLink, streamMessageLink:
				gt := strings.IndexByte(body, '>')
				if gt <= 0 {
					continue
				}
				name, topic := body[:gt], body[gt+1:]
				if kind == streamTopicLink {
					return imatch{start: i, end: k + 2, g: []string{name, topic}}, true
				}
				at := strings.LastIndexByte(topic, '@')
				if at < 0 || !allDigits(topic[at+1:]) {
					continue
				}
				return imatch{start: i, end: k + 2, g: []string{name, topic[:at], topic[at+1:]}}, true
			}
		}
		return imatch{}, false
	}
}

func handleStreamLink(kind streamLinkKind) func(p *inlineProc, m imatch, _ int) (string, bool) {
	return func(p *inlineProc, m imatch, _ int) (string, bool) {
		if p.r.res == nil {
			return "", false
		}
		name := m.g[0]
		ch, ok := p.r.res.ChannelByName(name)
		if !ok {
			return "", false
		}
		if !p.r.channels[ch.ID] {
			p.r.channels[ch.ID] = true
			p.r.result.LinkedChannelIDs = append(p.r.result.LinkedChannelIDs, ch.ID)
		}
		id := strconv.FormatInt(ch.ID, 10)
		streamURL := EncodeChannel(ch.ID, name)
		switch kind {
		case streamLink:
			return `<a class="stream" data-stream-id="` + id + `" href="/#narrow/channel/` + escapeAttr(streamURL) + `">` +
				escapeText("#"+name) + "</a>", true
		case streamTopicLink:
			topic := m.g[1]
			link := "/#narrow/channel/" + streamURL + "/topic/" + EncodeHashComponent(topic)
			if tr, ok := p.r.res.(TopicResolver); ok {
				if with, ok := tr.TopicOldestMessageID(ch.ID, topic); ok {
					link += "/with/" + strconv.FormatInt(with, 10)
				}
			}
			return `<a class="stream-topic" data-stream-id="` + id + `" href="` + escapeAttr(link) + `">` +
				topicText(name, topic, "") + "</a>", true
		default:
			topic, msg := m.g[1], m.g[2]
			link := "/#narrow/channel/" + streamURL + "/topic/" + EncodeHashComponent(topic) + "/near/" + msg
			return `<a class="message-link" href="` + escapeAttr(link) + `">` + topicText(name, topic, " @ 💬") + "</a>", true
		}
	}
}

// emptyTopicName is how the reference shows the empty topic.
const emptyTopicName = "general chat"

func topicText(channel, topic, suffix string) string {
	if topic == "" {
		return escapeText("#"+channel+" > ") + "<em>" + emptyTopicName + "</em>" + escapeText(suffix)
	}
	return escapeText(fmt.Sprintf("#%s > %s%s", channel, topic, suffix))
}

// EncodeHashComponent encodes a string for a "#narrow" URL as the
// reference does: percent-encoding of everything but unreserved
// characters, then "." as "%2E" and "%" as ".".
func EncodeHashComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '~' {
			b.WriteByte(c)
		} else if c == '.' {
			b.WriteString(".2E")
		} else {
			fmt.Fprintf(&b, ".%02X", c)
		}
	}
	return b.String()
}

// EncodeChannel is a channel's narrow URL component, like "9-Verona".
func EncodeChannel(id int64, name string) string {
	return strconv.FormatInt(id, 10) + "-" + EncodeHashComponent(strings.ReplaceAll(name, " ", "-"))
}
