package narrow

import (
	"strconv"
	"strings"
)

// maxPossibleMessageID is the reference's Message.MAX_POSSIBLE_MESSAGE_ID.
const maxPossibleMessageID = 2147483647

// EmptyTopicDisplayName is the reference's realm_empty_topic_display_name
// (Message.EMPTY_TOPIC_FALLBACK_NAME): as the operand of the narrow's
// first topic term it means the empty topic.
const EmptyTopicDisplayName = "general chat"

// ResolvedTopicPrefix starts the name of a resolved topic.
const ResolvedTopicPrefix = "✔ "

// Resolver looks up the narrow's channels and users in the caller's
// realm, as the reference does while building the query. Lookups are
// the reference's: channel names case-insensitively, archived channels
// included and no access check (the reader's own history may hold
// messages of channels they can no longer see); users by their API email
// case-insensitively or by ID, deactivated users and the cross-realm
// system bots included.
type Resolver interface {
	ChannelByName(name string) (id int64, ok bool)
	ChannelByID(id int64) bool
	UserByEmail(email string) (id int64, ok bool)
	UserByID(id int64) bool
}

// WebPublicResolver is implemented by a Resolver serving spectators: a
// channel term of a spectator narrow must name a web-public channel, or
// Resolve answers "unknown web-public channel X" (a Resolver without
// this method makes every channel non-web-public).
type WebPublicResolver interface {
	ChannelIsWebPublic(id int64) bool
}

// Conversation is where a message is now: a channel and topic, or the
// participants of a direct message (the sender included).
type Conversation struct {
	ChannelID int64
	Topic     string
	DMUserIDs []int64
}

// MessageLocator is implemented by a Resolver that serves the `with`
// operator: WithTarget finds the message if the reader (or, for a
// spectator, the public) may access it. Without it every `with` target is
// inaccessible.
type MessageLocator interface {
	WithTarget(messageID int64) (Conversation, bool)
}

// Options says which endpoint and reader Resolve works for.
type Options struct {
	// NoWith is set for GET /messages/matches_narrow and POST
	// /messages/flags/narrow, where the reference does not process
	// `with`, so that it is an unknown operator there.
	NoWith bool
	// Spectator is an unauthenticated GET /messages.
	Spectator bool
	// SpectatorAccess says the realm lets spectators read web-public
	// channels; without it a spectator narrow is CodeUnauthorized.
	SpectatorAccess bool
}

// Canonical validates the narrow as far as no database is needed, in the
// reference's order, and rewrites aliases: stream → channel, streams →
// channels, pm-with and pm_with → dm, group_pm_with → group-pm-with,
// is:private → is:dm. (The reference has no `subject` operator: it is
// unknown, as is anything outside the operator table in doc.go.)
//
// Like the reference, it also maps the first topic term's operand
// "general chat" to the empty topic, joins all search terms into one
// positive search term placed last (negated search terms thus lose their
// negation, as in the reference), and sets MessageID on id terms. A with
// term is checked (one at most, an integer operand) and kept; Resolve
// replaces it.
func Canonical(terms []Term) ([]Term, error) {
	return prepare(terms, nil, Options{})
}

// Resolve is Canonical plus what needs the caller's data, in the
// reference's order: the `with` term is replaced by the conversation of
// its message (see MessageLocator), the spectator rules are applied
// (Options.Spectator: positive in:home terms are dropped, and a narrow
// without channels:web-public or with an operator spectators may not use
// is CodeUnauthorized), and channel and user operands are resolved to IDs
// (Term.Resolved, ChannelID, UserIDs), with the reference's
// "unknown channel X", "unknown user X", "unknown user in X" errors.
// The result is what Match and IncludeHistory expect.
func Resolve(terms []Term, r Resolver, opts Options) ([]Term, error) {
	if r == nil {
		r = noResolver{}
	}
	return prepare(terms, r, opts)
}

type noResolver struct{}

func (noResolver) ChannelByName(string) (int64, bool) { return 0, false }
func (noResolver) ChannelByID(int64) bool             { return false }
func (noResolver) UserByEmail(string) (int64, bool)   { return 0, false }
func (noResolver) UserByID(int64) bool                { return false }

// prepare is Canonical (r nil) or Resolve.
func prepare(in []Term, r Resolver, opts Options) ([]Term, error) {
	terms := append([]Term(nil), in...)
	for i := range terms {
		if terms[i].Operator == "topic" {
			if terms[i].Operand.IsString(EmptyTopicDisplayName) {
				terms[i].Operand = StringOperand("")
			}
			break
		}
	}
	keepWith := false
	if !opts.NoWith {
		var err error
		terms, keepWith, err = applyWith(terms, r)
		if err != nil {
			return nil, err
		}
	}
	if opts.Spectator {
		if !opts.SpectatorAccess {
			return nil, unauthorized()
		}
		kept := terms[:0:0]
		for _, t := range terms {
			if !(t.Operator == "in" && t.Operand.IsString("home") && !t.Negated) {
				kept = append(kept, t)
			}
		}
		terms = kept
		if !IsWebPublicNarrow(terms) || !SpectatorCompatible(terms) {
			return nil, unauthorized()
		}
	}
	b := builder{r: r, spectator: opts.Spectator, keepWith: keepWith}
	out := make([]Term, 0, len(terms))
	var search []string
	for _, t := range terms {
		if t.Operator == "search" {
			if t.Operand.Kind != KindString || strings.TrimFunc(t.Operand.Str, pyIsSpace) == "" {
				// Parse refuses these; this guards terms built by hand.
				return nil, badRequest("operand cannot be blank.")
			}
			search = append(search, t.Operand.Str)
			continue
		}
		t, err := b.add(t)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if len(search) > 0 {
		out = append(out, Term{Operator: "search", Operand: StringOperand(strings.Join(search, " "))})
	}
	return out, nil
}

// applyWith is the reference's update_narrow_terms_containing_with_operator.
// With r nil (Canonical) the with term is only checked and kept.
func applyWith(terms []Term, r Resolver) ([]Term, bool, error) {
	at := -1
	for i, t := range terms {
		if t.Operator == "with" {
			if at >= 0 {
				return nil, false, badCombination("Duplicate 'with' operators.")
			}
			at = i
		}
	}
	if at < 0 {
		return terms, false, nil
	}
	id, ok := withMessageID(terms[at].Operand)
	if !ok {
		return nil, false, badNarrow("Invalid 'with' operator")
	}
	if r == nil {
		terms[at].MessageID = id
		return terms, true, nil
	}
	rest := append(append([]Term(nil), terms[:at]...), terms[at+1:]...)
	var conv Conversation
	found := false
	if loc, ok := r.(MessageLocator); ok && id > 0 {
		conv, found = loc.WithTarget(id)
	}
	if !found {
		if canDefineConversation(rest) {
			return rest, false, nil
		}
		return nil, false, badNarrow("Invalid 'with' operator")
	}
	var out []Term
	if conv.ChannelID != 0 {
		out = []Term{
			{Operator: "channel", Operand: IntOperand(conv.ChannelID)},
			{Operator: "topic", Operand: StringOperand(conv.Topic)},
		}
	} else {
		out = []Term{{Operator: "dm", Operand: IntListOperand(append([]int64(nil), conv.DMUserIDs...))}}
	}
	for _, t := range rest {
		switch t.Operator {
		case "stream", "channel", "topic", "dm", "pm-with":
		default:
			out = append(out, t)
		}
	}
	return out, false, nil
}

// withMessageID reads the with operand as Python's int() does (ASCII
// digits only); an integer beyond int64 is a message that cannot exist.
func withMessageID(o Operand) (int64, bool) {
	switch o.Kind {
	case KindInt:
		return o.Int, true
	case KindString:
		s := strings.TrimFunc(o.Str, pyIsSpace)
		digits := strings.TrimLeft(s, "+-")
		if len(s)-len(digits) > 1 || digits == "" || digits[0] == '_' || digits[len(digits)-1] == '_' || strings.Contains(digits, "__") {
			return 0, false
		}
		digits = strings.ReplaceAll(digits, "_", "")
		for _, c := range digits {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		n, err := strconv.ParseInt(s[:len(s)-len(strings.TrimLeft(s, "+-"))]+digits, 10, 64)
		if err != nil {
			return -1, true
		}
		return n, true
	}
	return 0, false
}

// canDefineConversation is the reference's can_narrow_define_conversation
// (on the operators as sent).
func canDefineConversation(terms []Term) bool {
	channel, topic := false, false
	for _, t := range terms {
		switch t.Operator {
		case "dm", "pm-with":
			return true
		case "stream", "channel":
			channel = true
		case "topic":
			topic = true
		}
		if channel && topic {
			return true
		}
	}
	return false
}

// builder is the reference's NarrowBuilder, minus the query.
type builder struct {
	r               Resolver // nil: no resolution (Canonical)
	spectator       bool
	keepWith        bool
	isChannel, isDM bool
}

// mark is check_not_both_channel_and_dm_narrow.
func (b *builder) mark(negated, dm bool) error {
	if negated {
		return nil
	}
	if dm {
		b.isDM = true
	} else {
		b.isChannel = true
	}
	if b.isChannel && b.isDM {
		return badNarrow("No message can be both a channel message and direct message")
	}
	return nil
}

func (b *builder) add(t Term) (Term, error) {
	s := t.Operand.Str // the operand of string-only operators
	switch t.Operator {
	case "has":
		switch s {
		case "attachment", "image", "link", "reaction":
			return t, nil
		}
		return t, badNarrow("unknown 'has' operand " + s)
	case "in":
		if s == "home" || s == "all" {
			return t, nil
		}
		return t, badNarrow("unknown 'in' operand " + s)
	case "is":
		switch s {
		case "resolved", "starred", "unread", "mentioned", "alerted", "followed", "muted":
			return t, nil
		case "dm", "private":
			// -is:dm counts as a channel narrow.
			if err := b.mark(false, !t.Negated); err != nil {
				return t, err
			}
			t.Operand = StringOperand("dm")
			return t, nil
		}
		return t, badNarrow("unknown 'is' operand " + s)
	case "channel", "stream":
		t.Operator = "channel"
		if err := b.mark(t.Negated, false); err != nil {
			return t, err
		}
		return t, b.resolveChannel(&t)
	case "channels", "streams":
		t.Operator = "channels"
		if err := b.mark(t.Negated, false); err != nil {
			return t, err
		}
		if s == "public" || s == "web-public" {
			return t, nil
		}
		return t, badNarrow("unknown channels operand " + s)
	case "topic":
		return t, b.mark(t.Negated, false)
	case "sender":
		return t, b.resolveUser(&t)
	case "near":
		return t, nil
	case "id":
		text := t.Operand.String()
		n, err := strconv.ParseInt(text, 10, 64)
		if text == "" || strings.TrimLeft(text, "0123456789") != "" || err != nil || n > maxPossibleMessageID {
			return t, badNarrow("Invalid message ID")
		}
		t.MessageID = n
		return t, nil
	case "dm", "pm-with", "pm_with":
		t.Operator = "dm"
		if err := b.mark(t.Negated, true); err != nil {
			return t, err
		}
		return t, b.resolveDM(&t)
	case "dm-including":
		if err := b.mark(t.Negated, true); err != nil {
			return t, err
		}
		return t, b.resolveUser(&t)
	case "group-pm-with", "group_pm_with":
		t.Operator = "group-pm-with"
		if err := b.mark(t.Negated, true); err != nil {
			return t, err
		}
		return t, b.resolveUser(&t)
	case "with":
		if b.keepWith {
			return t, nil
		}
	}
	return t, badNarrow("unknown operator " + t.Operator)
}

func (b *builder) resolveChannel(t *Term) error {
	if b.r == nil {
		return nil
	}
	var id int64
	var ok bool
	if t.Operand.Kind == KindString {
		id, ok = b.r.ChannelByName(t.Operand.Str)
	} else {
		id, ok = t.Operand.Int, b.r.ChannelByID(t.Operand.Int)
	}
	if !ok {
		return badNarrow("unknown channel " + t.Operand.String())
	}
	if b.spectator {
		wp, can := b.r.(WebPublicResolver)
		if !can || !wp.ChannelIsWebPublic(id) {
			return badNarrow("unknown web-public channel " + t.Operand.String())
		}
	}
	t.ChannelID, t.Resolved = id, true
	return nil
}

func (b *builder) resolveUser(t *Term) error {
	if b.r == nil {
		return nil
	}
	id, ok := b.user(t.Operand.Kind == KindString, t.Operand.Str, t.Operand.Int)
	if !ok {
		return badNarrow("unknown user " + t.Operand.String())
	}
	t.UserIDs, t.Resolved = []int64{id}, true
	return nil
}

func (b *builder) user(byEmail bool, email string, id int64) (int64, bool) {
	if byEmail {
		return b.r.UserByEmail(email)
	}
	return id, b.r.UserByID(id)
}

func (b *builder) resolveDM(t *Term) error {
	if b.r == nil {
		return nil
	}
	ids := []int64{}
	if t.Operand.Kind == KindString {
		for _, email := range strings.Split(t.Operand.Str, ",") {
			id, ok := b.r.UserByEmail(email)
			if !ok {
				return badNarrow("unknown user in " + t.Operand.String())
			}
			ids = append(ids, id)
		}
	} else {
		for _, id := range t.Operand.Ints {
			if !b.r.UserByID(id) {
				return badNarrow("unknown user in " + t.Operand.String())
			}
			ids = append(ids, id)
		}
	}
	t.UserIDs, t.Resolved = ids, true
	return nil
}

func isChannelOperator(op string) bool  { return op == "channel" || op == "stream" }
func isChannelsOperator(op string) bool { return op == "channels" || op == "streams" }

// IncludeHistory says whether the narrow reads shared channel history
// (messages the reader did not receive) rather than only the reader's own
// messages: the reference's ok_to_include_history for an authenticated
// reader (a spectator's narrow always reads history). It is true when the
// last positive channel term names a channel whose history the reader may
// access (channelHistory, given the resolved Term.ChannelID), or a
// positive channels:public term is present and the reader may access
// public channels; and no `is` term other than is:resolved (negated or
// not) is present.
func IncludeHistory(terms []Term, channelHistory func(channelID int64) bool, publicAccess bool) bool {
	include := false
	for _, t := range terms {
		switch {
		case isChannelOperator(t.Operator) && !t.Negated:
			include = t.Resolved && channelHistory != nil && channelHistory(t.ChannelID)
		case isChannelsOperator(t.Operator) && t.Operand.IsString("public") && !t.Negated && publicAccess:
			include = true
		}
	}
	for _, t := range terms {
		if t.Operator == "is" && !t.Operand.IsString("resolved") {
			include = false
		}
	}
	return include
}

// IsWebPublicNarrow says whether the narrow has a positive
// channels:web-public term, which a spectator's narrow must have.
func IsWebPublicNarrow(terms []Term) bool {
	for _, t := range terms {
		if isChannelsOperator(t.Operator) && t.Operand.IsString("web-public") && !t.Negated {
			return true
		}
	}
	return false
}

// SpectatorCompatible says whether spectators may use every operator of
// the narrow: channel, channels, topic, sender, has, search, near, id,
// with (and their aliases stream, streams) and is:resolved (negated or
// not). The caller drops positive in:home first (Resolve does).
func SpectatorCompatible(terms []Term) bool {
	for _, t := range terms {
		if t.Operator == "is" && t.Operand.IsString("resolved") {
			continue
		}
		switch t.Operator {
		case "channel", "stream", "channels", "streams", "topic", "sender", "has", "search", "near", "id", "with":
		default:
			return false
		}
	}
	return true
}
