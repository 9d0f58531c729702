package narrow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ParseEventsNarrowJSON reads the narrow parameter of POST /register and
// GET /events: a JSON list of ["operator", "operand"] string pairs (JSON
// null: no narrow), then checks it as ParseEventsNarrow does. Its texts
// are the reference's parameter-validation ones (narrow is not valid
// JSON, narrow is not a list, narrow[0] is not a list, narrow[0][1] is
// not a string). A list of another length than 2 is
// "Invalid narrow[0]: element is not a string pair" (the reference fails
// with a server error there).
func ParseEventsNarrowJSON(raw string) ([]Term, error) {
	data := []byte(raw)
	if !json.Valid(data) {
		return nil, badRequest("narrow is not valid JSON")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, badRequest("narrow is not valid JSON")
	}
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badRequest("narrow is not a list")
	}
	pairs := make([][]string, len(list))
	for i, elem := range list {
		items, ok := elem.([]any)
		if !ok {
			return nil, badRequest(fmt.Sprintf("narrow[%d] is not a list", i))
		}
		pair := make([]string, len(items))
		for j, x := range items {
			s, ok := x.(string)
			if !ok {
				return nil, badRequest(fmt.Sprintf("narrow[%d][%d] is not a string", i, j))
			}
			pair[j] = s
		}
		pairs[i] = pair
	}
	return ParseEventsNarrow(pairs)
}

// ParseEventsNarrow checks an events-path narrow (the reference's
// check_narrow_for_events): only channel (stream), topic, sender and is
// are allowed ("Operator X not supported."), and is:followed is refused
// ("Operand followed not supported."). Terms are never negated and keep
// the operator as sent (stream stays stream). Each pair must have exactly
// two strings.
func ParseEventsNarrow(pairs [][]string) ([]Term, error) {
	terms := make([]Term, 0, len(pairs))
	for i, p := range pairs {
		if len(p) != 2 {
			return nil, badRequest(fmt.Sprintf("Invalid narrow[%d]: element is not a string pair", i))
		}
		op, operand := p[0], p[1]
		switch op {
		case "channel", "stream", "topic", "sender", "is":
		default:
			return nil, badRequest(fmt.Sprintf("Operator %s not supported.", op))
		}
		if op == "is" && operand == "followed" {
			return nil, badRequest(fmt.Sprintf("Operand %s not supported.", operand))
		}
		terms = append(terms, Term{Operator: op, Operand: StringOperand(operand)})
	}
	return terms, nil
}

// EventMessage is a message event as one client receives it.
type EventMessage struct {
	// Private is a direct message (type "private"); otherwise a channel
	// message.
	Private bool
	// ChannelName is the channel message's display_recipient.
	ChannelName string
	// Topic is the topic as in this client's payload: "general chat"
	// stands for the empty topic unless the client declared the
	// empty_topic_name capability.
	Topic       string
	SenderEmail string
	// Flags are the event's flags for this user ("read", "starred",
	// "mentioned", ...).
	Flags []string
}

// MatchEvent says whether a message event passes an events-path narrow
// (the reference's build_narrow_predicate; other event types are not
// filtered). Comparisons ignore case (Python's lower()): channel against
// the channel's name, topic against the topic, sender against the
// sender's email. is:dm (and is:private) keeps direct messages, is:starred
// the starred flag, is:unread messages without the read flag,
// is:resolved topics starting with "✔ "; is:mentioned and is:alerted both
// keep only messages with the "mentioned" flag (the reference's quirk:
// wildcard mentions and alert words do not count); other is operands do
// not filter.
func MatchEvent(terms []Term, m EventMessage) bool {
	for _, t := range terms {
		operand := t.Operand.Str
		switch t.Operator {
		case "channel", "stream":
			if m.Private || strings.ToLower(operand) != strings.ToLower(m.ChannelName) {
				return false
			}
		case "topic":
			if m.Private || strings.ToLower(operand) != strings.ToLower(m.Topic) {
				return false
			}
		case "sender":
			if strings.ToLower(operand) != strings.ToLower(m.SenderEmail) {
				return false
			}
		case "is":
			switch operand {
			case "dm", "private":
				if !m.Private {
					return false
				}
			case "starred":
				if !slices.Contains(m.Flags, "starred") {
					return false
				}
			case "unread":
				if slices.Contains(m.Flags, "read") {
					return false
				}
			case "alerted", "mentioned":
				if !slices.Contains(m.Flags, "mentioned") {
					return false
				}
			case "resolved":
				if m.Private || !strings.HasPrefix(m.Topic, ResolvedTopicPrefix) {
					return false
				}
			}
		}
	}
	return true
}
