package narrow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Kind says which of its values an Operand holds.
type Kind uint8

// The kinds of operand. The zero Kind is an absent operand.
const (
	KindString Kind = iota + 1
	KindInt
	KindIntList
)

// Operand is a term's operand: a string, an integer or a list of
// integers (the only shapes the reference accepts; which operator takes
// which is checked by Parse). Exactly one of Str, Int, Ints is meaningful,
// per Kind.
type Operand struct {
	Kind Kind
	Str  string
	Int  int64
	Ints []int64
}

// StringOperand, IntOperand and IntListOperand build operands.
func StringOperand(s string) Operand     { return Operand{Kind: KindString, Str: s} }
func IntOperand(n int64) Operand         { return Operand{Kind: KindInt, Int: n} }
func IntListOperand(ns []int64) Operand  { return Operand{Kind: KindIntList, Ints: ns} }
func (o Operand) IsString(s string) bool { return o.Kind == KindString && o.Str == s }

// String renders the operand as the reference's str() does in its error
// texts: a string as itself, an integer in decimal, a list as "[1, 2]".
func (o Operand) String() string {
	switch o.Kind {
	case KindString:
		return o.Str
	case KindInt:
		return strconv.FormatInt(o.Int, 10)
	case KindIntList:
		parts := make([]string, len(o.Ints))
		for i, n := range o.Ints {
			parts[i] = strconv.FormatInt(n, 10)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return ""
}

// MarshalJSON writes the operand as its JSON value.
func (o Operand) MarshalJSON() ([]byte, error) {
	switch o.Kind {
	case KindString:
		return json.Marshal(o.Str)
	case KindInt:
		return json.Marshal(o.Int)
	case KindIntList:
		if o.Ints == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(o.Ints)
	}
	return []byte("null"), nil
}

// Term is one narrow term. Parse fills Operator, Operand and Negated as
// sent; Canonical and Resolve rewrite aliases (see Canonical) and Resolve
// fills the resolved fields.
type Term struct {
	Operator string  `json:"operator"`
	Operand  Operand `json:"operand"`
	Negated  bool    `json:"negated"`

	// Resolved is set by Resolve on channel, sender, dm, dm-including
	// and group-pm-with terms once their operand is turned into IDs.
	Resolved bool `json:"-"`
	// ChannelID is the channel term's channel (set by Resolve).
	ChannelID int64 `json:"-"`
	// UserIDs is, for sender, dm-including and group-pm-with, the one
	// user; for dm, the operand's users (possibly empty for the operand
	// [], which matches nothing). Set by Resolve.
	UserIDs []int64 `json:"-"`
	// MessageID is the id term's message (set by Canonical and Resolve).
	MessageID int64 `json:"-"`
}

// Operators whose operand is a string or an integer, and those taking a
// string or an integer list (the reference's operators_supporting_id and
// operators_supporting_ids; underscore aliases are not among them).
var (
	idOperators  = map[string]bool{"channel": true, "stream": true, "id": true, "sender": true, "group-pm-with": true, "dm-including": true, "with": true}
	idsOperators = map[string]bool{"pm-with": true, "dm": true}
)

// Parse reads the narrow parameter of GET /messages, GET
// /messages/matches_narrow and POST /messages/flags/narrow: a JSON list
// of {"operator", "operand", "negated"} dicts and/or legacy
// ["operator", "operand"] string pairs. JSON null is no narrow (nil, nil).
//
// Errors are *Error with the reference's texts. Like the reference
// (pydantic), a malformed element does not stop the scan: the first
// malformed element's error is reported unless a later element has an
// operand of the wrong type, whose error wins (the reference raises that
// one directly).
//
// Deliberate differences: a JSON boolean operand is refused as a wrong
// type (Python would take it as the integer 0 or 1), as is an integer
// beyond int64 (which Python would carry to a later "unknown" error).
func Parse(raw string) ([]Term, error) {
	data := []byte(raw)
	if !json.Valid(data) {
		return nil, badRequest("narrow is not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
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
	terms := make([]Term, 0, len(list))
	var firstSoft *Error
	for i, elem := range list {
		t, soft, hard := parseElement(i, elem)
		if hard != nil {
			return nil, hard
		}
		if soft != nil {
			if firstSoft == nil {
				firstSoft = soft
			}
			continue
		}
		terms = append(terms, t)
	}
	if firstSoft != nil {
		return nil, firstSoft
	}
	return terms, nil
}

// ParseRequired is Parse for GET /messages/matches_narrow, whose narrow
// the reference does not let be null: JSON null is "narrow is not a
// list" there.
func ParseRequired(raw string) ([]Term, error) {
	terms, err := Parse(raw)
	if err == nil && terms == nil {
		return nil, badRequest("narrow is not a list")
	}
	return terms, err
}

// parseElement reads one element. A soft error is the reference's
// collected validation error for that element; a hard one is raised at
// once (operand type).
func parseElement(i int, elem any) (t Term, soft, hard *Error) {
	prefix := fmt.Sprintf("Invalid narrow[%d]: Value error, ", i)
	var operator, operand any
	negated := any(false)
	switch e := elem.(type) {
	case []any:
		if len(e) != 2 {
			return t, badRequest(prefix + "element is not a string pair"), nil
		}
		for _, x := range e {
			if _, ok := x.(string); !ok {
				return t, badRequest(prefix + "element is not a string pair"), nil
			}
		}
		operator, operand = e[0], e[1]
	case map[string]any:
		if x, ok := e["operand"]; !ok || x == nil {
			return t, badRequest(prefix + "operand is missing"), nil
		}
		if x, ok := e["operator"]; !ok || x == nil {
			return t, badRequest(prefix + "operator is missing"), nil
		}
		operator, operand = e["operator"], e["operand"]
		if x, ok := e["negated"]; ok {
			negated = x
		}
	default:
		return t, badRequest(prefix + "dict or list required"), nil
	}
	// Field types (pydantic, strict), in field order.
	op, ok := operator.(string)
	if !ok {
		return t, badRequest(fmt.Sprintf(`narrow[%d]["operator"] is not a string`, i)), nil
	}
	neg, ok := negated.(bool)
	if !ok {
		return t, badRequest(fmt.Sprintf(`narrow[%d]["negated"] is not a boolean`, i)), nil
	}
	o, err := checkOperand(op, operand)
	if err != nil {
		return t, nil, err
	}
	return Term{Operator: op, Operand: o, Negated: neg}, nil, nil
}

// checkOperand is the reference's operand validator for the operator.
func checkOperand(op string, v any) (Operand, *Error) {
	switch {
	case idOperators[op]:
		if s, ok := v.(string); ok {
			return StringOperand(s), nil
		}
		if n, ok := jsonInt(v); ok {
			return IntOperand(n), nil
		}
		return Operand{}, badRequest("operand is not a string or integer")
	case idsOperators[op]:
		if s, ok := v.(string); ok {
			return StringOperand(s), nil
		}
		list, ok := v.([]any)
		if !ok {
			return Operand{}, badRequest("operand is not a string or an integer list")
		}
		ids := make([]int64, len(list))
		for j, x := range list {
			n, ok := jsonInt(x)
			if !ok {
				return Operand{}, badRequest(fmt.Sprintf("operand[%d] is not an integer", j))
			}
			ids[j] = n
		}
		return IntListOperand(ids), nil
	case op == "search":
		s, ok := v.(string)
		if !ok {
			return Operand{}, badRequest("operand is not a string")
		}
		if strings.TrimFunc(s, pyIsSpace) == "" {
			return Operand{}, badRequest("operand cannot be blank.")
		}
		return StringOperand(s), nil
	default:
		s, ok := v.(string)
		if !ok {
			return Operand{}, badRequest("operand is not a string")
		}
		return StringOperand(s), nil
	}
}

// jsonInt is a JSON integer (not a float literal) that fits int64.
func jsonInt(v any) (int64, bool) {
	num, ok := v.(json.Number)
	if !ok || strings.ContainsAny(string(num), ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	return n, err == nil
}

// pyIsSpace is Python's str.isspace for one character (what strip()
// removes).
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}
