package narrow

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reader is user 1 (me@x); iago 2, othello 3, cordelia 4.
const me = 1

type fixture struct {
	m Message
	u UserView
}

func fixtures() []fixture {
	return []fixture{
		{Message{ID: 1, ChannelID: 10, ChannelName: "Verona", ChannelPublic: true, ChannelWebPublic: true, Topic: "Lunch",
			SenderID: 2, SenderEmail: "iago@x", Content: "Hello **world**, see https://x.org", RenderedContent: `<p>Hello <strong>world</strong>, see <a href="https://x.org">https://x.org</a></p>`, HasLink: true},
			UserView{UserID: me, Flags: FlagRead | FlagStarred}},
		{Message{ID: 2, ChannelID: 11, ChannelName: "Denmark", ChannelPublic: true, Topic: "✔ done", SenderID: me, SenderEmail: "me@x",
			Content: "an image", HasImage: true, HasReaction: true},
			UserView{UserID: me, Flags: FlagRead, ChannelMuted: true}},
		{Message{ID: 3, ChannelID: 12, ChannelName: "secret", Topic: "", SenderID: 3, SenderEmail: "othello@x", Content: "@**all** fish &amp; chips",
			HasAttachment: true},
			UserView{UserID: me, Flags: FlagStreamWildcardMentioned, ChannelMuted: true, TopicPolicy: PolicyFollowed}},
		{Message{ID: 4, ChannelID: 10, ChannelName: "Verona", ChannelPublic: true, ChannelWebPublic: true, Topic: "lunch", SenderID: 3,
			Content: "Soup"},
			UserView{UserID: me, Flags: FlagMentioned | FlagHasAlertWord, TopicPolicy: PolicyMuted}},
		{Message{ID: 5, DMUserIDs: []int64{2, me}, SenderID: 2, SenderEmail: "iago@x", Content: "hi me"}, UserView{UserID: me, Flags: FlagTopicWildcardMentioned}},
		{Message{ID: 6, DMUserIDs: []int64{me}, SenderID: me, Content: "note to self"}, UserView{UserID: me, Flags: FlagRead}},
		{Message{ID: 7, DMUserIDs: []int64{3, 1, 2}, SenderID: 3, Content: "group"}, UserView{UserID: me, Flags: FlagGroupMentioned}},
		{Message{ID: 8, DMUserIDs: []int64{me, 3, me}, SenderID: me, Content: "to othello"}, UserView{UserID: me, Flags: FlagRead}},
		{Message{ID: 9, DMUserIDs: []int64{me, 3, 4}, SenderID: 4, Content: "other group"}, UserView{UserID: me}},
		{Message{ID: 10, ChannelID: 11, ChannelName: "Denmark", ChannelPublic: true, Topic: "plans", SenderID: 4, Content: "unmuted topic"},
			UserView{UserID: me, ChannelMuted: true, TopicPolicy: PolicyUnmuted}},
	}
}

var all = []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}

func matching(terms []Term) []int64 {
	var ids []int64
	for _, f := range fixtures() {
		if Match(terms, f.m, f.u) {
			ids = append(ids, f.m.ID)
		}
	}
	return ids
}

func complement(ids []int64) []int64 {
	var out []int64
	for _, id := range all {
		if !slices.Contains(ids, id) {
			out = append(out, id)
		}
	}
	return out
}

func TestMatchOperators(t *testing.T) {
	r := newFakeRealm()
	cases := []struct {
		raw  string // one positive term (Parse + Resolve)
		want []int64
		// notNegatable: negation is ignored (in:all, near, with).
		notNegatable bool
	}{
		{raw: `{"operator":"channel","operand":"verona"}`, want: []int64{1, 4}},
		{raw: `{"operator":"stream","operand":11}`, want: []int64{2, 10}},
		{raw: `{"operator":"channels","operand":"public"}`, want: []int64{1, 2, 4, 10}},
		{raw: `{"operator":"streams","operand":"web-public"}`, want: []int64{1, 4}},
		{raw: `{"operator":"topic","operand":"LUNCH"}`, want: []int64{1, 4}},
		{raw: `{"operator":"topic","operand":"general chat"}`, want: []int64{3}},
		{raw: `{"operator":"topic","operand":""}`, want: []int64{3}},
		{raw: `{"operator":"topic","operand":"✔ DONE"}`, want: []int64{2}},
		{raw: `{"operator":"sender","operand":"Othello@X"}`, want: []int64{3, 4, 7}},
		{raw: `{"operator":"sender","operand":1}`, want: []int64{2, 6, 8}},
		{raw: `{"operator":"dm","operand":"iago@x"}`, want: []int64{5}},
		{raw: `{"operator":"dm","operand":[1,2]}`, want: []int64{5}},
		{raw: `{"operator":"pm-with","operand":"othello@x"}`, want: []int64{8}},
		{raw: `{"operator":"pm_with","operand":"me@x"}`, want: []int64{6}},
		{raw: `{"operator":"dm","operand":[1]}`, want: []int64{6}},
		{raw: `{"operator":"dm","operand":[2,3]}`, want: []int64{7}},
		{raw: `{"operator":"dm","operand":[3,2,1,3]}`, want: []int64{7}},
		{raw: `{"operator":"dm","operand":"cordelia@x,othello@x"}`, want: []int64{9}},
		{raw: `{"operator":"dm","operand":[4]}`, want: nil},
		{raw: `{"operator":"dm","operand":[]}`, want: nil},
		{raw: `{"operator":"dm-including","operand":"othello@x"}`, want: []int64{7, 8, 9}},
		{raw: `{"operator":"dm-including","operand":2}`, want: []int64{5, 7}},
		{raw: `{"operator":"dm-including","operand":1}`, want: []int64{5, 6, 7, 8, 9}},
		{raw: `{"operator":"group-pm-with","operand":"othello@x"}`, want: []int64{7, 9}},
		{raw: `{"operator":"group_pm_with","operand":"cordelia@x"}`, want: []int64{9}},
		{raw: `{"operator":"group-pm-with","operand":1}`, want: []int64{7, 9}},
		{raw: `{"operator":"is","operand":"dm"}`, want: []int64{5, 6, 7, 8, 9}},
		{raw: `{"operator":"is","operand":"private"}`, want: []int64{5, 6, 7, 8, 9}},
		{raw: `{"operator":"is","operand":"starred"}`, want: []int64{1}},
		{raw: `{"operator":"is","operand":"unread"}`, want: []int64{3, 4, 5, 7, 9, 10}},
		{raw: `{"operator":"is","operand":"mentioned"}`, want: []int64{3, 4, 5, 7}},
		{raw: `{"operator":"is","operand":"alerted"}`, want: []int64{4}},
		{raw: `{"operator":"is","operand":"resolved"}`, want: []int64{2}},
		{raw: `{"operator":"is","operand":"followed"}`, want: []int64{3}},
		{raw: `{"operator":"is","operand":"muted"}`, want: []int64{2, 4}},
		{raw: `{"operator":"in","operand":"home"}`, want: []int64{1, 3, 5, 6, 7, 8, 9, 10}},
		{raw: `{"operator":"in","operand":"all"}`, want: all, notNegatable: true},
		{raw: `{"operator":"has","operand":"link"}`, want: []int64{1}},
		{raw: `{"operator":"has","operand":"image"}`, want: []int64{2}},
		{raw: `{"operator":"has","operand":"attachment"}`, want: []int64{3}},
		{raw: `{"operator":"has","operand":"reaction"}`, want: []int64{2}},
		{raw: `{"operator":"id","operand":4}`, want: []int64{4}},
		{raw: `{"operator":"id","operand":"0007"}`, want: []int64{7}},
		{raw: `{"operator":"id","operand":"77"}`, want: nil},
		{raw: `{"operator":"near","operand":"3"}`, want: all, notNegatable: true},
		{raw: `{"operator":"search","operand":"WORLD hello"}`, want: []int64{1}},
		{raw: `{"operator":"search","operand":"lunch"}`, want: []int64{1, 4}},
		{raw: `{"operator":"search","operand":"fish chips"}`, want: []int64{3}},
		{raw: `{"operator":"search","operand":"\"note to\""}`, want: []int64{6}},
		{raw: `{"operator":"search","operand":"\"to self\" note"}`, want: []int64{6}},
		{raw: `{"operator":"search","operand":"strong"}`, want: nil}, // HTML tags are not words
		{raw: `{"operator":"search","operand":"wor"}`, want: nil},    // whole words only
		{raw: `{"operator":"search","operand":"!!"}`, want: nil},     // no words: nothing
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			terms, err := Resolve(mustParse(t, "["+c.raw+"]"), r, Options{})
			require.NoError(t, err)
			require.Len(t, terms, 1)
			assert.Equal(t, c.want, matching(terms), "positive")
			terms[0].Negated = true
			if c.notNegatable {
				assert.Equal(t, c.want, matching(terms), "negated")
			} else {
				assert.Equal(t, complement(c.want), matching(terms), "negated")
			}
		})
	}
}

func TestMatchCombined(t *testing.T) {
	r := newFakeRealm()
	cases := []struct {
		raw  string
		want []int64
	}{
		{`[]`, all},
		{`[["channel","verona"],["topic","lunch"],["is","unread"]]`, []int64{4}},
		{`[["channel","verona"],{"operator":"sender","operand":3,"negated":true}]`, []int64{1}},
		{`[{"operator":"is","operand":"dm","negated":true},["in","home"]]`, []int64{1, 3, 10}},
		{`[["is","dm"],["is","unread"]]`, []int64{5, 7, 9}},
		{`[["dm-including","othello@x"],{"operator":"is","operand":"mentioned","negated":true}]`, []int64{8, 9}},
		// Search terms are joined into one positive search (the negation
		// of a search term is lost, as in the reference).
		{`[{"operator":"search","operand":"lunch","negated":true},["search","soup"]]`, []int64{4}},
		// with is replaced by its message's conversation.
		{`[["channel","verona"],["topic","lunch"],["with","100"]]`, []int64{}},
		{`[["dm","cordelia@x"],["with","101"]]`, []int64{7}},
	}
	for _, c := range cases {
		terms, err := Resolve(mustParse(t, c.raw), r, Options{})
		require.NoError(t, err, c.raw)
		got := matching(terms)
		if len(c.want) == 0 {
			assert.Empty(t, got, c.raw)
		} else {
			assert.Equal(t, c.want, got, c.raw)
		}
	}
}

func TestMatchUnresolved(t *testing.T) {
	// Terms from Canonical only: operands that carry IDs or names match.
	cases := []struct {
		raw  string
		want []int64
	}{
		{`[["stream","VERONA"]]`, []int64{1, 4}},
		{`[{"operator":"channel","operand":11}]`, []int64{2, 10}},
		{`[["sender","IAGO@x"]]`, []int64{1, 5}},
		{`[{"operator":"sender","operand":4}]`, []int64{9, 10}},
		{`[{"operator":"dm","operand":[2]}]`, []int64{5}},
		{`[["dm","iago@x"]]`, nil}, // emails need Resolve
		{`[{"operator":"dm-including","operand":2}]`, []int64{5, 7}},
		{`[["dm-including","iago@x"]]`, nil},
		{`[{"operator":"group-pm-with","operand":4}]`, []int64{9}},
		{`[["with","5"],["near","1"]]`, all},
	}
	for _, c := range cases {
		terms, err := Canonical(mustParse(t, c.raw))
		require.NoError(t, err, c.raw)
		assert.Equal(t, c.want, matching(terms), c.raw)
	}
	// An operator Match does not know matches nothing.
	assert.Empty(t, matching([]Term{{Operator: "bogus", Operand: StringOperand("x")}}))
	assert.Empty(t, matching([]Term{{Operator: "has", Operand: StringOperand("bogus")}}))
	assert.Empty(t, matching([]Term{{Operator: "is", Operand: StringOperand("bogus")}}))
}

func TestSearchPhraseQuirks(t *testing.T) {
	m := Message{ID: 1, ChannelID: 5, Topic: "Release plan", Content: "we ship *Friday*", RenderedContent: "<p>we ship <em>Friday</em></p>"}
	cases := map[string]bool{
		`"ship *friday*" ship`: true, // phrases look at the source
		`"ship friday"`:        false,
		`"release plan"`:       true,  // ... or the topic
		`plan ship`:            true,  // words: topic and text
		`""`:                   false, // an empty phrase, and no words
		`" ship`:               true,  // a lone quote is an empty phrase
		`"PLAN" "we"`:          true,
	}
	for q, want := range cases {
		assert.Equal(t, want, matchSearch(q, m), q)
	}
	// A direct message's topic is not searched for phrases.
	dm := Message{ID: 2, Topic: "hidden", Content: "text"}
	assert.False(t, matchSearch(`"hidden"`, dm))
	// Without rendered content the source is tokenized; without source
	// the phrases look at the rendered text.
	assert.True(t, matchSearch("friday", Message{Content: "see you Friday!"}))
	assert.True(t, matchSearch(`"you friday"`, Message{RenderedContent: "<p>see you Friday</p>"}))
	// Every word of a phrase must also be a whole word.
	assert.False(t, matchSearch(`"you fri"`, Message{RenderedContent: "<p>see you Friday</p>"}))
}
