package narrow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEventsNarrowErrors(t *testing.T) {
	cases := []struct{ raw, msg string }{
		{``, "narrow is not valid JSON"},
		{`False`, "narrow is not valid JSON"},
		{`{"a":1}`, "narrow is not a list"},
		{`5`, "narrow is not a list"},
		{`[{"operator":"is","operand":"dm"}]`, "narrow[0] is not a list"},
		{`[["is","dm"],"x"]`, "narrow[1] is not a list"},
		{`[["is",5]]`, "narrow[0][1] is not a string"},
		{`[[null,"x"]]`, "narrow[0][0] is not a string"},
		{`[["is","dm","x"]]`, "Invalid narrow[0]: element is not a string pair"},
		{`[["is"]]`, "Invalid narrow[0]: element is not a string pair"},
		{`[["search","x"]]`, "Operator search not supported."},
		{`[["dm","a@x"]]`, "Operator dm not supported."},
		{`[["channels","public"]]`, "Operator channels not supported."},
		{`[["id","1"]]`, "Operator id not supported."},
		{`[["Stream","x"]]`, "Operator Stream not supported."},
		{`[["is","followed"]]`, "Operand followed not supported."},
		{`[["topic","x"],["has","link"]]`, "Operator has not supported."},
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			terms, err := ParseEventsNarrowJSON(c.raw)
			assert.Nil(t, terms)
			requireNarrowError(t, err, CodeBadRequest, c.msg, "")
		})
	}
	_, err := ParseEventsNarrow([][]string{{"is", "dm"}, {"near", "1"}})
	requireNarrowError(t, err, CodeBadRequest, "Operator near not supported.", "")
}

func TestParseEventsNarrow(t *testing.T) {
	terms, err := ParseEventsNarrowJSON(`null`)
	require.NoError(t, err)
	assert.Nil(t, terms)
	terms, err = ParseEventsNarrowJSON(`[]`)
	require.NoError(t, err)
	assert.Empty(t, terms)
	terms, err = ParseEventsNarrowJSON(`[["stream","Verona"],["channel","x"],["topic","t"],["sender","a@x"],["is","bogus"]]`)
	require.NoError(t, err)
	assert.Equal(t, []Term{
		{Operator: "stream", Operand: StringOperand("Verona")},
		{Operator: "channel", Operand: StringOperand("x")},
		{Operator: "topic", Operand: StringOperand("t")},
		{Operator: "sender", Operand: StringOperand("a@x")},
		{Operator: "is", Operand: StringOperand("bogus")},
	}, terms)
}

func TestMatchEvent(t *testing.T) {
	channelMsg := EventMessage{ChannelName: "Verona", Topic: "Lunch", SenderEmail: "Iago@X", Flags: []string{"read", "starred"}}
	resolved := EventMessage{ChannelName: "Denmark", Topic: "✔ done", SenderEmail: "me@x"}
	general := EventMessage{ChannelName: "Verona", Topic: "general chat", SenderEmail: "me@x", Flags: []string{"wildcard_mentioned", "stream_wildcard_mentioned"}}
	dm := EventMessage{Private: true, SenderEmail: "iago@x", Flags: []string{"mentioned"}}
	alert := EventMessage{Private: true, SenderEmail: "othello@x", Flags: []string{"has_alert_word", "read"}}
	msgs := []EventMessage{channelMsg, resolved, general, dm, alert}
	cases := []struct {
		pairs [][]string
		want  []bool
	}{
		{nil, []bool{true, true, true, true, true}},
		{[][]string{{"stream", "verona"}}, []bool{true, false, true, false, false}},
		{[][]string{{"channel", "VERONA"}, {"topic", "lunch"}}, []bool{true, false, false, false, false}},
		{[][]string{{"topic", "general chat"}}, []bool{false, false, true, false, false}},
		{[][]string{{"topic", ""}}, []bool{false, false, false, false, false}},
		{[][]string{{"sender", "iago@x"}}, []bool{true, false, false, true, false}},
		{[][]string{{"is", "dm"}}, []bool{false, false, false, true, true}},
		{[][]string{{"is", "private"}}, []bool{false, false, false, true, true}},
		{[][]string{{"is", "starred"}}, []bool{true, false, false, false, false}},
		{[][]string{{"is", "unread"}}, []bool{false, true, true, true, false}},
		{[][]string{{"is", "mentioned"}}, []bool{false, false, false, true, false}},
		// Quirk: alerted checks the mentioned flag, not has_alert_word.
		{[][]string{{"is", "alerted"}}, []bool{false, false, false, true, false}},
		{[][]string{{"is", "resolved"}}, []bool{false, true, false, false, false}},
		// Unrecognised is operands do not filter.
		{[][]string{{"is", "muted"}}, []bool{true, true, true, true, true}},
		{[][]string{{"is", "Starred"}}, []bool{true, true, true, true, true}},
		{[][]string{{"is", "dm"}, {"sender", "OTHELLO@x"}}, []bool{false, false, false, false, true}},
	}
	for _, c := range cases {
		terms, err := ParseEventsNarrow(c.pairs)
		require.NoError(t, err)
		for i, m := range msgs {
			assert.Equal(t, c.want[i], MatchEvent(terms, m), "%v on message %d", c.pairs, i)
		}
	}
}
