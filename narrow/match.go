package narrow

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Message is what Match needs to know of a message.
type Message struct {
	ID int64
	// ChannelID is 0 for a direct message.
	ChannelID   int64
	ChannelName string
	// ChannelPublic: the channel is public with shared history (what
	// channels:public covers); ChannelWebPublic: it is web-public.
	ChannelPublic, ChannelWebPublic bool
	// Topic is the channel message's topic ("" is the empty topic).
	Topic       string
	SenderID    int64
	SenderEmail string
	// DMUserIDs are the direct message's participants, the sender
	// included (duplicates ignored).
	DMUserIDs []int64
	// Content is the Markdown source and RenderedContent the HTML (either
	// may be empty): search words are looked for in the rendered text
	// (tags removed, entities decoded; the source if there is none),
	// quoted phrases in the source (the rendered text if there is none),
	// as the reference does.
	Content, RenderedContent                      string
	HasLink, HasImage, HasAttachment, HasReaction bool
}

// Flags are the reader's message flags, in the reference's bit order
// (the same bits as the store's UserMessage flags).
type Flags uint32

// The flags Match reads. This package needs no storage, so it names
// the bits it reads itself; a test holds them equal to the store's.
const (
	FlagRead                    Flags = 1 << 0
	FlagStarred                 Flags = 1 << 1
	FlagCollapsed               Flags = 1 << 2
	FlagMentioned               Flags = 1 << 3
	FlagStreamWildcardMentioned Flags = 1 << 4
	FlagTopicWildcardMentioned  Flags = 1 << 5
	FlagGroupMentioned          Flags = 1 << 6
	FlagHasAlertWord            Flags = 1 << 9
	FlagHistorical              Flags = 1 << 10
)

// TopicPolicy is the reader's visibility policy for the message's topic.
type TopicPolicy uint8

// The reference's UserTopic.VisibilityPolicy values.
const (
	PolicyNone     TopicPolicy = 0
	PolicyMuted    TopicPolicy = 1
	PolicyUnmuted  TopicPolicy = 2
	PolicyFollowed TopicPolicy = 3
)

// UserView is the reader's side of one message.
type UserView struct {
	// UserID is the reader (the implicit participant of dm terms).
	UserID int64
	Flags  Flags
	// ChannelMuted: the reader is (actively) subscribed to the message's
	// channel and has muted it.
	ChannelMuted bool
	// TopicPolicy is the reader's policy for the message's channel and
	// topic.
	TopicPolicy TopicPolicy
}

// mentionFlags are what is:mentioned looks for.
const mentionFlags = FlagMentioned | FlagStreamWildcardMentioned | FlagTopicWildcardMentioned | FlagGroupMentioned

// Match says whether the message matches every term of the narrow for
// the reader, in memory, as the reference's query would (see doc.go for
// each operator). Terms should come from Resolve; terms only from
// Canonical still match where the operand itself says enough (channel by
// name or ID, sender by email or ID, dm by IDs); a dm or user operand
// given by email that was not resolved matches nothing. `with` and
// `near` terms do not filter; Resolve replaces `with`.
//
// Match is an oracle: the server never calls it. The server answers
// narrows with the store's queries (compiled from the terms), and its
// events path filters with MatchEvent; Match is the reference's meaning
// written out one message at a time, so that tests can check those
// queries against it (the module's differential test fetches each narrow
// it makes from the Service and compares the answer with Match applied to
// every message). It reads only its arguments, so a test may use it on
// messages it made up.
func Match(terms []Term, m Message, u UserView) bool {
	for _, t := range terms {
		ok, negatable := matchTerm(t, m, u)
		if t.Negated && negatable {
			ok = !ok
		}
		if !ok {
			return false
		}
	}
	return true
}

// matchTerm is the term's condition; negatable is false for the terms
// that the reference leaves out of the query whatever their negation.
func matchTerm(t Term, m Message, u UserView) (ok, negatable bool) {
	isChannel := m.ChannelID != 0
	s := t.Operand.Str
	switch t.Operator {
	case "channel", "stream":
		switch {
		case t.Resolved:
			return isChannel && m.ChannelID == t.ChannelID, true
		case t.Operand.Kind == KindInt:
			return isChannel && m.ChannelID == t.Operand.Int, true
		}
		return isChannel && fold(m.ChannelName) == fold(s), true
	case "channels", "streams":
		if s == "web-public" {
			return isChannel && m.ChannelWebPublic, true
		}
		return isChannel && m.ChannelPublic, true
	case "topic":
		return isChannel && fold(m.Topic) == fold(s), true
	case "sender":
		id, known := termUser(t)
		if !known {
			return t.Operand.Kind == KindString && m.SenderEmail != "" && fold(m.SenderEmail) == fold(s), true
		}
		return m.SenderID == id, true
	case "dm", "pm-with", "pm_with":
		return matchDM(t, m, u), true
	case "dm-including":
		id, known := termUser(t)
		if !known || isChannel {
			return false, true
		}
		return id == u.UserID || slices.Contains(m.DMUserIDs, id) && slices.Contains(m.DMUserIDs, u.UserID), true
	case "group-pm-with", "group_pm_with":
		id, known := termUser(t)
		if !known || isChannel {
			return false, true
		}
		return isGroupDM(m) && slices.Contains(m.DMUserIDs, id) && slices.Contains(m.DMUserIDs, u.UserID), true
	case "is":
		return matchIs(s, m, u), true
	case "in":
		if s == "all" {
			return true, false // no filter, negated or not
		}
		return !isMuted(m, u), true
	case "has":
		switch s {
		case "link":
			return m.HasLink, true
		case "image":
			return m.HasImage, true
		case "attachment":
			return m.HasAttachment, true
		case "reaction":
			return m.HasReaction, true
		}
		return false, true
	case "id":
		id := t.MessageID
		if id == 0 && t.Operand.Kind == KindInt {
			id = t.Operand.Int
		}
		return m.ID == id, true
	case "search":
		return matchSearch(s, m), true
	case "near", "with":
		return true, false
	}
	return false, true
}

// termUser is the one user of a sender, dm-including or group-pm-with
// term.
func termUser(t Term) (int64, bool) {
	if t.Resolved && len(t.UserIDs) == 1 {
		return t.UserIDs[0], true
	}
	if !t.Resolved && t.Operand.Kind == KindInt {
		return t.Operand.Int, true
	}
	return 0, false
}

// matchDM: the conversation among the operand's users and the reader.
// The operand [] matches nothing.
func matchDM(t Term, m Message, u UserView) bool {
	ids := t.UserIDs
	if !t.Resolved {
		if t.Operand.Kind != KindIntList {
			return false
		}
		ids = t.Operand.Ints
	}
	if len(ids) == 0 || m.ChannelID != 0 {
		return false
	}
	want := append(append([]int64(nil), ids...), u.UserID)
	return sameSet(want, m.DMUserIDs)
}

func sameSet(a, b []int64) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// isGroupDM: a direct message among three or more people (the reference
// stores every two-person conversation as a 1:1 message).
func isGroupDM(m Message) bool {
	if m.ChannelID != 0 {
		return false
	}
	ids := slices.Clone(m.DMUserIDs)
	slices.Sort(ids)
	return len(slices.Compact(ids)) >= 3
}

func matchIs(s string, m Message, u UserView) bool {
	isChannel := m.ChannelID != 0
	switch s {
	case "resolved":
		return isChannel && strings.HasPrefix(m.Topic, ResolvedTopicPrefix)
	case "dm", "private":
		return !isChannel
	case "starred":
		return u.Flags&FlagStarred != 0
	case "unread":
		return u.Flags&FlagRead == 0
	case "mentioned":
		return u.Flags&mentionFlags != 0
	case "alerted":
		return u.Flags&FlagHasAlertWord != 0
	case "followed":
		return isChannel && u.TopicPolicy == PolicyFollowed
	case "muted":
		return isMuted(m, u)
	}
	return false
}

// isMuted is the reference's muting condition (is:muted; in:home is its
// negation): a channel message whose topic the reader muted, or in a
// channel they muted unless they follow or unmuted the topic.
func isMuted(m Message, u UserView) bool {
	if m.ChannelID == 0 {
		return false
	}
	if u.TopicPolicy == PolicyMuted {
		return true
	}
	return u.ChannelMuted && u.TopicPolicy != PolicyFollowed && u.TopicPolicy != PolicyUnmuted
}

// fold is the case-insensitive key of topics and names (as the store's
// Fold and the reference's upper() comparison).
func fold(s string) string {
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
}

var (
	searchTokenRE = regexp.MustCompile(`"[^"]+"|\S+`)
	htmlTagRE     = regexp.MustCompile(`<[^>]*>`)
)

// matchSearch is an in-memory approximation of the reference's full-text
// search (PostgreSQL plainto_tsquery over the topic and rendered content,
// plus a case-insensitive substring test for each "quoted phrase" against
// the source or, for channel messages, the topic). Every word of the
// operand (a run of letters and digits, case ignored) must be a word of
// the topic or the text; there is no stemming and no stop words, for
// which the database search is the reference; an operand without words
// matches nothing.
func matchSearch(operand string, m Message) bool {
	text := m.Content
	rendered := m.RenderedContent
	if rendered != "" {
		rendered = html.UnescapeString(htmlTagRE.ReplaceAllString(rendered, " "))
	} else {
		rendered = text
	}
	if text == "" {
		text = rendered
	}
	for _, tok := range searchTokenRE.FindAllString(operand, -1) {
		if tok[0] == '"' && tok[len(tok)-1] == '"' {
			phrase := ""
			if len(tok) >= 2 {
				phrase = fold(tok[1 : len(tok)-1])
			}
			if !strings.Contains(fold(text), phrase) && !(m.ChannelID != 0 && strings.Contains(fold(m.Topic), phrase)) {
				return false
			}
		}
	}
	want := words(operand)
	if len(want) == 0 {
		return false
	}
	have := make(map[string]bool)
	for _, w := range words(rendered) {
		have[w] = true
	}
	for _, w := range words(m.Topic) {
		have[w] = true
	}
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}

// words are the folded runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(fold(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
