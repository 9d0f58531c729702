package narrow

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, raw, msg string
	}{
		{"empty", ``, "narrow is not valid JSON"},
		{"python False", `False`, "narrow is not valid JSON"},
		{"malformed", `{malformed json,`, "narrow is not valid JSON"},
		{"unquoted keys", `{foo: 3}`, "narrow is not valid JSON"},
		{"trailing", `[] []`, "narrow is not valid JSON"},
		{"zero", `0`, "narrow is not a list"},
		{"false", `false`, "narrow is not a list"},
		{"dict", `{"operator":"is","operand":"dm"}`, "narrow is not a list"},
		{"string", `"is:dm"`, "narrow is not a list"},
		{"ints", `[1,2]`, "Invalid narrow[0]: Value error, dict or list required"},
		{"null element", `[null]`, "Invalid narrow[0]: Value error, dict or list required"},
		{"string element", `["is"]`, "Invalid narrow[0]: Value error, dict or list required"},
		{"triple", `[["x","y","z"]]`, "Invalid narrow[0]: Value error, element is not a string pair"},
		{"single", `[["x"]]`, "Invalid narrow[0]: Value error, element is not a string pair"},
		{"empty pair", `[[]]`, "Invalid narrow[0]: Value error, element is not a string pair"},
		{"pair with int", `[["channel",0]]`, "Invalid narrow[0]: Value error, element is not a string pair"},
		{"pair with list", `[["dm",["x","y"]]]`, "Invalid narrow[0]: Value error, element is not a string pair"},
		{"pair with negative", `[["dm",-24]]`, "Invalid narrow[0]: Value error, element is not a string pair"},
		{"second element", `[["is","dm"],5]`, "Invalid narrow[1]: Value error, dict or list required"},
		{"operand missing", `[{"operator":"is"}]`, "Invalid narrow[0]: Value error, operand is missing"},
		{"operand null", `[{"operator":"is","operand":null}]`, "Invalid narrow[0]: Value error, operand is missing"},
		{"operand checked first", `[{}]`, "Invalid narrow[0]: Value error, operand is missing"},
		{"operator missing", `[{"operand":"dm"}]`, "Invalid narrow[0]: Value error, operator is missing"},
		{"operator null", `[{"operator":null,"operand":"dm"}]`, "Invalid narrow[0]: Value error, operator is missing"},
		{"operator int", `[{"operator":5,"operand":"dm"}]`, `narrow[0]["operator"] is not a string`},
		{"negated string", `[{"operator":"is","operand":"dm","negated":"true"}]`, `narrow[0]["negated"] is not a boolean`},
		{"negated null", `[{"operator":"is","operand":"dm","negated":null}]`, `narrow[0]["negated"] is not a boolean`},
		{"negated int", `[{"operator":"is","operand":"dm","negated":1}]`, `narrow[0]["negated"] is not a boolean`},
		{"operator before negated", `[{"operator":1,"operand":"dm","negated":1}]`, `narrow[0]["operator"] is not a string`},
		{"first soft error wins", `[[1],{"operator":1,"operand":"x"}]`, "Invalid narrow[0]: Value error, element is not a string pair"},
		{"operand error beats earlier soft error", `[[1],{"operator":"is","operand":5}]`, "operand is not a string"},
		{"search blank", `[{"operator":"search","operand":""}]`, "operand cannot be blank."},
		{"search spaces", `[{"operator":"search","operand":" \t\n"}]`, "operand cannot be blank."},
		{"search legacy blank", `[["search"," "]]`, "operand cannot be blank."},
		{"search int", `[{"operator":"search","operand":5}]`, "operand is not a string"},
		{"dm string list", `[{"operator":"dm","operand":["2"]}]`, "operand[0] is not an integer"},
		{"dm second bad", `[{"operator":"pm-with","operand":[1,"2"]}]`, "operand[1] is not an integer"},
		{"dm float", `[{"operator":"dm","operand":[1.5]}]`, "operand[0] is not an integer"},
		{"dm int", `[{"operator":"dm","operand":5}]`, "operand is not a string or an integer list"},
		{"dm dict", `[{"operator":"dm","operand":{}}]`, "operand is not a string or an integer list"},
		{"pm_with list", `[{"operator":"pm_with","operand":[1]}]`, "operand is not a string"},
		{"group_pm_with int", `[{"operator":"group_pm_with","operand":1}]`, "operand is not a string"},
		{"streams int", `[{"operator":"streams","operand":1}]`, "operand is not a string"},
		{"unknown operator int", `[{"operator":"foo","operand":1}]`, "operand is not a string"},
		{"float id", `[{"operator":"id","operand":1.0}]`, "operand is not a string or integer"},
		{"exp id", `[{"operator":"id","operand":1e3}]`, "operand is not a string or integer"},
		{"bool id", `[{"operator":"id","operand":true}]`, "operand is not a string or integer"},
		{"huge id", `[{"operator":"id","operand":123456789012345678901234}]`, "operand is not a string or integer"},
	}
	for _, op := range []string{"id", "sender", "channel", "stream", "dm-including", "group-pm-with", "with"} {
		cases = append(cases, struct{ name, raw, msg string }{op + " list", `[{"operator":"` + op + `","operand":["1"]}]`, "operand is not a string or integer"})
	}
	for _, op := range []string{"is", "near", "has", "in", "topic", "channels"} {
		cases = append(cases,
			struct{ name, raw, msg string }{op + " int", `[{"operator":"` + op + `","operand":2}]`, "operand is not a string"},
			struct{ name, raw, msg string }{op + " list", `[{"operator":"` + op + `","operand":[1]}]`, "operand is not a string"},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			terms, err := Parse(c.raw)
			require.Error(t, err)
			assert.Nil(t, terms)
			var e *Error
			require.True(t, errors.As(err, &e))
			assert.Equal(t, CodeBadRequest, e.Code)
			assert.Equal(t, c.msg, e.Msg)
			assert.Equal(t, c.msg, err.Error())
			assert.Empty(t, e.Desc)
		})
	}
}

func TestParseForms(t *testing.T) {
	terms, err := Parse(`null`)
	require.NoError(t, err)
	assert.Nil(t, terms)

	terms, err = Parse(` [] `)
	require.NoError(t, err)
	assert.Empty(t, terms)

	terms, err = Parse(`[["stream","Verona"],{"operator":"topic","operand":"x","negated":true},
		{"operator":"dm","operand":[3,4]},{"operator":"id","operand":"12"},{"operator":"sender","operand":9},
		{"operator":"dm","operand":"a@x,b@y","negated":false,"extra":1},{"operator":"dm","operand":[]},
		{"operator":"with","operand":-0}]`)
	require.NoError(t, err)
	assert.Equal(t, []Term{
		{Operator: "stream", Operand: StringOperand("Verona")},
		{Operator: "topic", Operand: StringOperand("x"), Negated: true},
		{Operator: "dm", Operand: IntListOperand([]int64{3, 4})},
		{Operator: "id", Operand: StringOperand("12")},
		{Operator: "sender", Operand: IntOperand(9)},
		{Operator: "dm", Operand: StringOperand("a@x,b@y")},
		{Operator: "dm", Operand: IntListOperand([]int64{})},
		{Operator: "with", Operand: IntOperand(0)},
	}, terms)

	// Unknown operators and operands pass Parse; Canonical refuses them.
	terms, err = Parse(`[["foo","bar"],{"operator":"","operand":""}]`)
	require.NoError(t, err)
	assert.Len(t, terms, 2)
}

func TestParseRequired(t *testing.T) {
	_, err := ParseRequired(` null `)
	requireNarrowError(t, err, CodeBadRequest, "narrow is not a list", "")
	_, err = ParseRequired(`nul`)
	requireNarrowError(t, err, CodeBadRequest, "narrow is not valid JSON", "")
	terms, err := ParseRequired(`[]`)
	require.NoError(t, err)
	assert.NotNil(t, terms)
	assert.Empty(t, terms)
}

func TestOperandRendering(t *testing.T) {
	assert.Equal(t, "abc", StringOperand("abc").String())
	assert.Equal(t, "-12", IntOperand(-12).String())
	assert.Equal(t, "[1, 2]", IntListOperand([]int64{1, 2}).String())
	assert.Equal(t, "[]", IntListOperand(nil).String())
	assert.Equal(t, "", Operand{}.String())
	for o, want := range map[*Operand]string{
		{Kind: KindString, Str: "a\"b"}:          `"a\"b"`,
		{Kind: KindInt, Int: 5}:                  `5`,
		{Kind: KindIntList}:                      `[]`,
		{Kind: KindIntList, Ints: []int64{1, 2}}: `[1,2]`,
		{}:                                       `null`,
	} {
		b, err := o.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, want, string(b))
	}
}
