package narrow

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRealm is a Resolver over a few channels and users.
type fakeRealm struct {
	channels  map[string]int64 // folded name → ID
	webPublic map[int64]bool
	users     map[string]int64 // folded email → ID
	messages  map[int64]Conversation
}

func newFakeRealm() *fakeRealm {
	return &fakeRealm{
		channels:  map[string]int64{"verona": 10, "denmark": 11, "secret": 12},
		webPublic: map[int64]bool{10: true},
		users:     map[string]int64{"me@x": 1, "iago@x": 2, "othello@x": 3, "cordelia@x": 4},
		messages: map[int64]Conversation{
			100: {ChannelID: 11, Topic: "moved here"},
			101: {DMUserIDs: []int64{1, 2, 3}},
		},
	}
}

func (f *fakeRealm) ChannelByName(name string) (int64, bool) {
	id, ok := f.channels[fold(name)]
	return id, ok
}
func (f *fakeRealm) ChannelByID(id int64) bool {
	for _, v := range f.channels {
		if v == id {
			return true
		}
	}
	return false
}
func (f *fakeRealm) UserByEmail(e string) (int64, bool) { id, ok := f.users[fold(e)]; return id, ok }
func (f *fakeRealm) UserByID(id int64) bool             { return id >= 1 && id <= 4 }
func (f *fakeRealm) ChannelIsWebPublic(id int64) bool   { return f.webPublic[id] }
func (f *fakeRealm) WithTarget(id int64) (Conversation, bool) {
	c, ok := f.messages[id]
	return c, ok
}

func mustParse(t *testing.T, raw string) []Term {
	t.Helper()
	terms, err := Parse(raw)
	require.NoError(t, err)
	return terms
}

func requireNarrowError(t *testing.T, err error, code, msg, desc string) {
	t.Helper()
	require.Error(t, err)
	var e *Error
	require.True(t, errors.As(err, &e), "%T", err)
	assert.Equal(t, code, e.Code)
	assert.Equal(t, msg, e.Msg)
	assert.Equal(t, desc, e.Desc)
}

func TestCanonicalErrors(t *testing.T) {
	const both = "No message can be both a channel message and direct message"
	cases := []struct{ raw, desc string }{
		{`[["foo","x"]]`, "unknown operator foo"},
		{`[["","x"]]`, "unknown operator "},
		{`[["channel:verona",""]]`, "unknown operator channel:verona"},
		{`[["__init__",""]]`, "unknown operator __init__"},
		{`[["subject","x"]]`, "unknown operator subject"},
		{`[["dm_including","a@x"]]`, "unknown operator dm_including"},
		{`[["is","foo"]]`, "unknown 'is' operand foo"},
		{`[["is","DM"]]`, "unknown 'is' operand DM"},
		{`[{"operator":"is","operand":"bogus","negated":true}]`, "unknown 'is' operand bogus"},
		{`[["has","emoji"]]`, "unknown 'has' operand emoji"},
		{`[["in","inbox"]]`, "unknown 'in' operand inbox"},
		{`[["channels","private"]]`, "unknown channels operand private"},
		{`[["streams",""]]`, "unknown channels operand "},
		{`[["id","abc"]]`, "Invalid message ID"},
		{`[["id",""]]`, "Invalid message ID"},
		{`[["id"," 5"]]`, "Invalid message ID"},
		{`[{"operator":"id","operand":-1}]`, "Invalid message ID"},
		{`[{"operator":"id","operand":2147483648}]`, "Invalid message ID"},
		{`[["id","99999999999999999999999"]]`, "Invalid message ID"},
		{`[["channel","verona"],["dm","a@x"]]`, both},
		{`[["stream","verona"],["is","private"]]`, both},
		{`[["topic","x"],["dm-including","a@x"]]`, both},
		{`[["channels","public"],["group-pm-with","a@x"]]`, both},
		{`[["pm-with","a@x"],["channel","verona"]]`, both},
		{`[{"operator":"is","operand":"dm","negated":true},["dm","a@x"]]`, both},
		{`[["is","dm"],{"operator":"is","operand":"dm","negated":true}]`, both},
		{`[["with","3.2"]]`, "Invalid 'with' operator"},
		{`[["with","abc"]]`, "Invalid 'with' operator"},
		{`[["with",""]]`, "Invalid 'with' operator"},
		{`[["with","1__0"]]`, "Invalid 'with' operator"},
		{`[["with","--1"]]`, "Invalid 'with' operator"},
		// The first failing term decides, in order; search comes last.
		{`[["is","foo"],["has","bar"]]`, "unknown 'is' operand foo"},
		{`[["search","x"],["has","bar"]]`, "unknown 'has' operand bar"},
		// The conflict check precedes the channels operand check.
		{`[["dm","a@x"],["channels","nope"]]`, both},
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			_, err := Canonical(mustParse(t, c.raw))
			requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: "+c.desc, c.desc)
		})
	}
	_, err := Canonical(mustParse(t, `[["channel","verona"],{"operator":"with","operand":1},["topic","x"],["with","2"]]`))
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator combination: Duplicate 'with' operators.", "Duplicate 'with' operators.")
	// Duplicate with is checked before an invalid with operand.
	_, err = Canonical(mustParse(t, `[["with","x"],["with","y"]]`))
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator combination: Duplicate 'with' operators.", "Duplicate 'with' operators.")
}

func TestCanonicalAliases(t *testing.T) {
	got, err := Canonical(mustParse(t, `[["stream","Verona"],["streams","public"],["is","private"],
		{"operator":"pm-with","operand":[1],"negated":true},["pm_with","a@x"],
		["group_pm_with","a@x"],["group-pm-with","b@x"],["dm-including","c@x"],["near","5"],
		["search","foo"],["topic","general chat"],["topic","general chat"],["id","0012"],
		["in","home"],["has","link"],{"operator":"search","operand":"\"bar baz\"","negated":true},
		{"operator":"with","operand":" +7 "}]`))
	// A positive channel term and positive dm terms conflict (the negated
	// pm-with alone would not).
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: No message can be both a channel message and direct message",
		"No message can be both a channel message and direct message")
	assert.Nil(t, got)

	got, err = Canonical(mustParse(t, `[["stream","Verona"],["streams","public"],{"operator":"is","operand":"private","negated":true},
		["near","5"],["search","foo"],["topic","general chat"],["topic","general chat"],["id","0012"],
		["in","home"],["has","link"],{"operator":"search","operand":"\"bar baz\"","negated":true},
		{"operator":"with","operand":" +7 "}]`))
	require.NoError(t, err)
	assert.Equal(t, []Term{
		{Operator: "channel", Operand: StringOperand("Verona")},
		{Operator: "channels", Operand: StringOperand("public")},
		{Operator: "is", Operand: StringOperand("dm"), Negated: true},
		{Operator: "near", Operand: StringOperand("5")},
		{Operator: "topic", Operand: StringOperand("")},
		{Operator: "topic", Operand: StringOperand("general chat")},
		{Operator: "id", Operand: StringOperand("0012"), MessageID: 12},
		{Operator: "in", Operand: StringOperand("home")},
		{Operator: "has", Operand: StringOperand("link")},
		{Operator: "with", Operand: StringOperand(" +7 "), MessageID: 7},
		{Operator: "search", Operand: StringOperand(`foo "bar baz"`)},
	}, got)

	got, err = Canonical(mustParse(t, `[{"operator":"pm-with","operand":[1],"negated":true},["pm_with","a@x"],
		["group_pm_with","a@x"],["dm-including","c@x"],["is","dm"]]`))
	require.NoError(t, err)
	assert.Equal(t, []string{"dm", "dm", "group-pm-with", "dm-including", "is"}, operators(got))

	// Only an exact "general chat" in the first topic term is renamed.
	got, err = Canonical(mustParse(t, `[["topic","General Chat"],["topic","general chat"]]`))
	require.NoError(t, err)
	assert.Equal(t, "General Chat", got[0].Operand.Str)
	assert.Equal(t, "general chat", got[1].Operand.Str)

	// The input is not modified.
	in := mustParse(t, `[["topic","general chat"]]`)
	_, err = Canonical(in)
	require.NoError(t, err)
	assert.Equal(t, "general chat", in[0].Operand.Str)

	for _, ok := range []string{"resolved", "starred", "unread", "mentioned", "alerted", "followed", "muted", "dm", "private"} {
		_, err := Canonical([]Term{{Operator: "is", Operand: StringOperand(ok)}})
		assert.NoError(t, err, ok)
	}
	for _, ok := range []string{"link", "image", "attachment", "reaction"} {
		_, err := Canonical([]Term{{Operator: "has", Operand: StringOperand(ok), Negated: true}})
		assert.NoError(t, err, ok)
	}
}

func TestCanonicalBlankSearchBuiltByHand(t *testing.T) {
	for _, o := range []Operand{StringOperand(" "), IntOperand(3), {}} {
		_, err := Canonical([]Term{{Operator: "search", Operand: o}})
		requireNarrowError(t, err, CodeBadRequest, "operand cannot be blank.", "")
	}
}

func operators(terms []Term) []string {
	var ops []string
	for _, t := range terms {
		ops = append(ops, t.Operator)
	}
	return ops
}

func TestResolve(t *testing.T) {
	r := newFakeRealm()
	got, err := Resolve(mustParse(t, `[["stream","VERONA"],["sender","IAGO@x"],{"operator":"sender","operand":3}]`), r, Options{})
	require.NoError(t, err)
	assert.Equal(t, []Term{
		{Operator: "channel", Operand: StringOperand("VERONA"), Resolved: true, ChannelID: 10},
		{Operator: "sender", Operand: StringOperand("IAGO@x"), Resolved: true, UserIDs: []int64{2}},
		{Operator: "sender", Operand: IntOperand(3), Resolved: true, UserIDs: []int64{3}},
	}, got)

	got, err = Resolve(mustParse(t, `[["dm","iago@x,othello@x,iago@x"],{"operator":"dm","operand":[2,3]},{"operator":"dm","operand":[]},
		{"operator":"dm-including","operand":4},["group_pm_with","cordelia@x"],{"operator":"channel","operand":11}]`), r, Options{})
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: No message can be both a channel message and direct message",
		"No message can be both a channel message and direct message")

	got, err = Resolve(mustParse(t, `[["dm","iago@x,othello@x,iago@x"],{"operator":"dm","operand":[2,3]},{"operator":"dm","operand":[]},
		{"operator":"dm-including","operand":4},["group_pm_with","cordelia@x"],{"operator":"channel","operand":11,"negated":true}]`), r, Options{})
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3, 2}, got[0].UserIDs)
	assert.Equal(t, []int64{2, 3}, got[1].UserIDs)
	assert.Equal(t, []int64{}, got[2].UserIDs)
	assert.True(t, got[2].Resolved)
	assert.Equal(t, []int64{4}, got[3].UserIDs)
	assert.Equal(t, "group-pm-with", got[4].Operator)
	assert.Equal(t, []int64{4}, got[4].UserIDs)
	assert.Equal(t, int64(11), got[5].ChannelID)

	errs := []struct{ raw, desc string }{
		{`[["channel","nowhere"]]`, "unknown channel nowhere"},
		{`[{"operator":"channel","operand":1232891381239}]`, "unknown channel 1232891381239"},
		{`[{"operator":"stream","operand":"10"}]`, "unknown channel 10"}, // a string is a name
		{`[["sender","nobody@x"]]`, "unknown user nobody@x"},
		{`[{"operator":"sender","operand":99}]`, "unknown user 99"},
		{`[["dm-including","nobody@x"]]`, "unknown user nobody@x"},
		{`[{"operator":"group-pm-with","operand":-3}]`, "unknown user -3"},
		{`[["dm","non-existent-user@zulip.com"]]`, "unknown user in non-existent-user@zulip.com"},
		{`[["dm","iago@x, othello@x"]]`, "unknown user in iago@x, othello@x"},
		{`[["dm",""]]`, "unknown user in "},
		{`[{"operator":"dm","operand":[2,99]}]`, "unknown user in [2, 99]"},
		// Terms are resolved in order: the first unknown one decides.
		{`[["channel","nowhere"],["is","foo"]]`, "unknown channel nowhere"},
		{`[["is","foo"],["channel","nowhere"]]`, "unknown 'is' operand foo"},
		// The conflict check precedes the lookup.
		{`[["channel","verona"],["dm","nobody@x"]]`, "No message can be both a channel message and direct message"},
		// matches_narrow and flags/narrow do not know `with`.
	}
	for _, c := range errs {
		t.Run(c.raw, func(t *testing.T) {
			_, err := Resolve(mustParse(t, c.raw), r, Options{})
			requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: "+c.desc, c.desc)
		})
	}
	_, err = Resolve(mustParse(t, `[["with","100"]]`), r, Options{NoWith: true})
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: unknown operator with", "unknown operator with")
	// A nil Resolver knows nothing.
	_, err = Resolve(mustParse(t, `[["channel","verona"]]`), nil, Options{})
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: unknown channel verona", "unknown channel verona")
}

func TestResolveWith(t *testing.T) {
	r := newFakeRealm()
	cases := []struct {
		name, raw string
		want      []Term
		desc      string
	}{
		{name: "channel message replaces channel and topic terms",
			raw: `[["channel","verona"],["topic","old"],["with","100"],["is","starred"]]`,
			want: []Term{
				{Operator: "channel", Operand: IntOperand(11), Resolved: true, ChannelID: 11},
				{Operator: "topic", Operand: StringOperand("moved here")},
				{Operator: "is", Operand: StringOperand("starred")},
			}},
		{name: "alone", raw: `[{"operator":"with","operand":100}]`,
			want: []Term{
				{Operator: "channel", Operand: IntOperand(11), Resolved: true, ChannelID: 11},
				{Operator: "topic", Operand: StringOperand("moved here")},
			}},
		{name: "dm message replaces dm terms",
			raw:  `[{"operator":"dm","operand":[4]},["with","101"]]`,
			want: []Term{{Operator: "dm", Operand: IntListOperand([]int64{1, 2, 3}), Resolved: true, UserIDs: []int64{1, 2, 3}}}},
		{name: "inaccessible, channel and topic define the conversation",
			raw: `[["channel","verona"],["topic","t"],["with","999"]]`,
			want: []Term{
				{Operator: "channel", Operand: StringOperand("verona"), Resolved: true, ChannelID: 10},
				{Operator: "topic", Operand: StringOperand("t")},
			}},
		{name: "inaccessible, dm defines the conversation",
			raw:  `[["pm-with","iago@x"],["with","-5"]]`,
			want: []Term{{Operator: "dm", Operand: StringOperand("iago@x"), Resolved: true, UserIDs: []int64{2}}}},
		{name: "huge id is inaccessible", raw: `[["dm","iago@x"],["with","99999999999999999999"]]`,
			want: []Term{{Operator: "dm", Operand: StringOperand("iago@x"), Resolved: true, UserIDs: []int64{2}}}},
		{name: "inaccessible, channel alone", raw: `[["channel","verona"],["with","999"]]`, desc: "Invalid 'with' operator"},
		{name: "inaccessible, topic alone", raw: `[["topic","t"],["with","999"]]`, desc: "Invalid 'with' operator"},
		{name: "inaccessible alone", raw: `[["with","999"]]`, desc: "Invalid 'with' operator"},
		{name: "pm_with does not define a conversation", raw: `[["pm_with","iago@x"],["with","999"]]`, desc: "Invalid 'with' operator"},
		{name: "replacement conflicts with is:dm", raw: `[["with","100"],["is","dm"]]`,
			desc: "No message can be both a channel message and direct message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Resolve(mustParse(t, c.raw), r, Options{})
			if c.desc != "" {
				requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: "+c.desc, c.desc)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestResolveSpectator(t *testing.T) {
	r := newFakeRealm()
	spect := Options{Spectator: true, SpectatorAccess: true}
	got, err := Resolve(mustParse(t, `[["streams","web-public"],["in","home"],["stream","verona"],["topic","x"],
		{"operator":"is","operand":"resolved","negated":true},["sender","iago@x"],["has","image"],["near","1"],["id","3"],["search","hi"]]`), r, spect)
	require.NoError(t, err)
	assert.Equal(t, []string{"channels", "channel", "topic", "is", "sender", "has", "near", "id", "search"}, operators(got))

	unauth := []string{
		`[]`,
		`[["channels","public"]]`,
		`[{"operator":"channels","operand":"web-public","negated":true}]`,
		`[["channels","web-public"],["is","starred"]]`,
		`[["channels","web-public"],["is","dm"]]`,
		`[["channels","web-public"],{"operator":"in","operand":"home","negated":true}]`,
		`[["channels","web-public"],["in","all"]]`,
		`[["channels","web-public"],["dm","iago@x"]]`,
		`[["channels","web-public"],["dm-including","iago@x"]]`,
		`[["channels","web-public"],["foo","x"]]`,
	}
	for _, raw := range unauth {
		_, err := Resolve(mustParse(t, raw), r, spect)
		requireNarrowError(t, err, CodeUnauthorized, unauthorizedMsg, "")
	}
	// A realm without spectator access refuses every spectator narrow,
	// but only after the `with` checks.
	_, err = Resolve(mustParse(t, `[["channels","web-public"]]`), r, Options{Spectator: true})
	requireNarrowError(t, err, CodeUnauthorized, unauthorizedMsg, "")
	_, err = Resolve(mustParse(t, `[["channels","web-public"],["with","x"]]`), r, Options{Spectator: true})
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: Invalid 'with' operator", "Invalid 'with' operator")

	_, err = Resolve(mustParse(t, `[["channels","web-public"],["channel","denmark"]]`), r, spect)
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: unknown web-public channel denmark", "unknown web-public channel denmark")
	_, err = Resolve(mustParse(t, `[["channels","web-public"],["channel","nowhere"]]`), r, spect)
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: unknown channel nowhere", "unknown channel nowhere")
	// Without WebPublicResolver no channel is web-public.
	_, err = Resolve(mustParse(t, `[["channels","web-public"],["channel","verona"]]`), plainResolver{r}, spect)
	requireNarrowError(t, err, CodeBadNarrow, "Invalid narrow operator: unknown web-public channel verona", "unknown web-public channel verona")
}

// plainResolver hides the optional interfaces of a Resolver.
type plainResolver struct{ Resolver }

func TestSpectatorRules(t *testing.T) {
	assert.True(t, IsWebPublicNarrow(mustParse(t, `[["streams","web-public"]]`)))
	assert.True(t, IsWebPublicNarrow(mustParse(t, `[["channels","web-public"]]`)))
	assert.False(t, IsWebPublicNarrow(mustParse(t, `[["channels","public"]]`)))
	assert.False(t, IsWebPublicNarrow(nil))
	for _, op := range []string{"channel", "stream", "channels", "streams", "topic", "sender", "has", "search", "near", "id", "with"} {
		assert.True(t, SpectatorCompatible([]Term{{Operator: op, Operand: StringOperand("x"), Negated: true}}), op)
	}
	assert.True(t, SpectatorCompatible(mustParse(t, `[["is","resolved"]]`)))
	for _, op := range []string{"is", "in", "dm", "pm-with", "dm-including", "group-pm-with", "foo"} {
		assert.False(t, SpectatorCompatible([]Term{{Operator: op, Operand: StringOperand("x")}}), op)
	}
}

func TestIncludeHistory(t *testing.T) {
	r := newFakeRealm()
	access := func(id int64) bool { return id == 10 }
	cases := []struct {
		raw          string
		publicAccess bool
		want         bool
	}{
		{`[]`, true, false},
		{`[["channel","verona"]]`, false, true},
		{`[["channel","secret"]]`, true, false},
		{`[["channel","verona"],["channel","secret"]]`, true, false}, // the last channel term decides
		{`[["channel","secret"],["channel","verona"]]`, false, true},
		{`[{"operator":"channel","operand":"verona","negated":true}]`, true, false},
		{`[["channels","public"]]`, true, true},
		{`[["channels","public"]]`, false, false},
		{`[{"operator":"channels","operand":"public","negated":true}]`, true, false},
		{`[["channels","web-public"]]`, true, false},
		{`[["channel","verona"],["topic","x"],["is","resolved"],["sender","iago@x"],["search","x"]]`, true, true},
		{`[["channel","verona"],["is","starred"]]`, true, false},
		{`[["channel","verona"],{"operator":"is","operand":"unread","negated":true}]`, true, false},
		{`[["channels","public"],["is","muted"]]`, true, false},
		{`[["sender","iago@x"]]`, true, false},
	}
	for _, c := range cases {
		terms, err := Resolve(mustParse(t, c.raw), r, Options{})
		require.NoError(t, err, c.raw)
		assert.Equal(t, c.want, IncludeHistory(terms, access, c.publicAccess), c.raw)
	}
	// Unresolved channel terms never open history.
	assert.False(t, IncludeHistory(mustParse(t, `[["channel","verona"]]`), access, true))
	assert.False(t, IncludeHistory([]Term{{Operator: "channel", Operand: IntOperand(10), Resolved: true, ChannelID: 10}}, nil, true))
}

func TestWithMessageID(t *testing.T) {
	for in, want := range map[string]int64{"7": 7, " 7\n": 7, "+7": 7, "-7": -7, "1_000": 1000, "007": 7} {
		got, ok := withMessageID(StringOperand(in))
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", " ", "+", "-", "_1", "1_", "1__0", "+-1", "1.0", "0x10", "٣", strings.Repeat("x", 3)} {
		_, ok := withMessageID(StringOperand(in))
		assert.False(t, ok, in)
	}
	_, ok := withMessageID(IntListOperand(nil))
	assert.False(t, ok)
}
