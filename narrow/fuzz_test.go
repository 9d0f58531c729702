package narrow

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes the package panic and that every
// error is an *Error with a known code, through Parse, Canonical,
// Resolve, Match and the events path.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `[]`, `0`, `[1,2]`, `[["x","y","z"]]`, `[["channel","verona"],["topic","general chat"]]`,
		`[{"operator":"dm","operand":[1,2],"negated":true}]`, `[{"operator":"search","operand":"\"a b\" c"}]`,
		`[{"operator":"with","operand":"1_0"},["dm","iago@x,me@x"]]`, `[{"operator":"id","operand":2147483648}]`,
		`[{"operator":"channels","operand":"web-public"},["in","home"],["is","resolved"]]`,
		`[{"operator":"is","operand":"dm","negated":true},{"operator":"dm-including","operand":3}]`,
		`[{"operand":null}]`, `[{"operator":"x","operand":{}}]`, `[["is","followed"]]`,
		// Integer operands and their numeric strings (issue 22).
		`[{"operator":"id","operand":42}]`, `[{"operator":"id","operand":"42"}]`, `[{"operator":"near","operand":42}]`,
		`[{"operator":"near","operand":"42"}]`, `[{"operator":"with","operand":42}]`, `[{"operator":"with","operand":"+4_2"}]`,
		`[{"operator":"channel","operand":7},{"operator":"sender","operand":3}]`, `[{"operator":"dm-including","operand":-1}]`,
		`[{"operator":"group-pm-with","operand":"3"}]`, `[{"operator":"id","operand":-0}]`, `[{"operator":"id","operand":4.0}]`,
		`[{"operator":"stream","operand":"12"},{"operator":"id","operand":"0042"}]`,
	} {
		f.Add(seed)
	}
	r := newFakeRealm()
	check := func(t *testing.T, err error) {
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T %v is not *Error", err, err)
		}
		switch e.Code {
		case CodeBadRequest, CodeUnauthorized:
			if e.Desc != "" {
				t.Fatalf("desc on %s", e.Code)
			}
		case CodeBadNarrow:
			if e.Desc == "" || !strings.HasSuffix(e.Msg, ": "+e.Desc) {
				t.Fatalf("BAD_NARROW msg %q desc %q", e.Msg, e.Desc)
			}
		default:
			t.Fatalf("code %q", e.Code)
		}
	}
	f.Fuzz(func(t *testing.T, raw string) {
		terms, err := Parse(raw)
		check(t, err)
		for _, term := range terms {
			// Integers only where the reference takes them; a parsed narrow
			// reads back the same from its JSON.
			if term.Operand.Kind == KindInt && !idOperators[term.Operator] || term.Operand.Kind == KindIntList && !idsOperators[term.Operator] {
				t.Fatalf("%s took operand %v", term.Operator, term.Operand)
			}
		}
		if err == nil && terms != nil {
			again, err := json.Marshal(terms)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(string(again))
			if err != nil || !reflect.DeepEqual(back, terms) {
				t.Fatalf("%s read back as %v (%v), not %v", again, back, err, terms)
			}
		}
		if _, err := ParseEventsNarrowJSON(raw); err == nil {
			ev, _ := ParseEventsNarrowJSON(raw)
			MatchEvent(ev, EventMessage{ChannelName: "x", Topic: "y"})
		} else {
			check(t, err)
		}
		if err != nil {
			return
		}
		_, err = Canonical(terms)
		check(t, err)
		for _, opts := range []Options{{}, {NoWith: true}, {Spectator: true, SpectatorAccess: true}} {
			resolved, err := Resolve(terms, r, opts)
			check(t, err)
			if err != nil {
				continue
			}
			IncludeHistory(resolved, func(int64) bool { return true }, true)
			for _, fx := range fixtures() {
				Match(resolved, fx.m, fx.u)
			}
		}
	})
}
