package markdown

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type topicFixtures struct{ fixtureResolver }

func (topicFixtures) TopicOldestMessageID(channelID int64, topic string) (int64, bool) {
	if channelID == 3 && topic == "lunch" {
		return 42, true
	}
	return 0, false
}

func render(t *testing.T, in string) Result {
	t.Helper()
	res, err := RenderMessage(in, topicFixtures{}, testOptions)
	require.NoError(t, err)
	return res
}

func TestMentions(t *testing.T) {
	cases := []struct{ in, html string }{
		{"@**King Hamlet**", `<p><span class="user-mention" data-user-id="10">@King Hamlet</span></p>`},
		{"@**King Hamlet|10**", `<p><span class="user-mention" data-user-id="10">@King Hamlet</span></p>`},
		{"@**|10**", `<p><span class="user-mention" data-user-id="10">@King Hamlet</span></p>`},
		{"@**Zoe|10**", `<p>@<strong>Zoe|10</strong></p>`},
		{"@_**Cordelia, Lear's daughter**", `<p><span class="user-mention silent" data-user-id="8">Cordelia, Lear's daughter</span></p>`},
		{"@**all**", `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span></p>`},
		{"@**stream**", `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@stream</span></p>`},
		{"@**topic**", `<p><span class="topic-mention">@topic</span></p>`},
		{"@*hamletcharacters*", `<p><span class="user-group-mention" data-user-group-id="17">@hamletcharacters</span></p>`},
		{"@_*hamletcharacters*", `<p><span class="user-group-mention silent" data-user-group-id="17">hamletcharacters</span></p>`},
		{"@**Nobody**", `<p>@<strong>Nobody</strong></p>`},
		{"a@**King Hamlet**", `<p>a@<strong>King Hamlet</strong></p>`},
		{"#**Verona**", `<p><a class="stream" data-stream-id="3" href="/#narrow/channel/3-Verona">#Verona</a></p>`},
		{"#**Verona>lunch**", `<p><a class="stream-topic" data-stream-id="3" href="/#narrow/channel/3-Verona/topic/lunch/with/42">#Verona &gt; lunch</a></p>`},
		{"#**Verona>a.b c**", `<p><a class="stream-topic" data-stream-id="3" href="/#narrow/channel/3-Verona/topic/a.2Eb.20c">#Verona &gt; a.b c</a></p>`},
		{"#**Verona>lunch@123**", `<p><a class="message-link" href="/#narrow/channel/3-Verona/topic/lunch/near/123">#Verona &gt; lunch @ 💬</a></p>`},
		{"#**Nowhere**", `<p>#<strong>Nowhere</strong></p>`},
		{"> @**King Hamlet**", "<blockquote>\n<p><span class=\"user-mention silent\" data-user-id=\"10\">King Hamlet</span></p>\n</blockquote>"},
	}
	for _, c := range cases {
		assert.Equal(t, c.html, render(t, c.in).HTML, c.in)
	}
}

func TestResultFacts(t *testing.T) {
	res := render(t, "@**King Hamlet** @**Zoe** @**King Hamlet** @_**aaron** @*hamletcharacters* @**all** @**topic**")
	assert.Equal(t, []int64{10, 7}, res.MentionedUserIDs)
	assert.Equal(t, []int64{17}, res.MentionedGroupIDs)
	assert.True(t, res.StreamWildcard)
	assert.True(t, res.TopicWildcard)
	assert.False(t, res.HasLink)

	res = render(t, "> @**King Hamlet** @**all**")
	assert.Empty(t, res.MentionedUserIDs)
	assert.False(t, res.StreamWildcard)

	res = render(t, "@_**all**")
	assert.False(t, res.StreamWildcard)

	res = render(t, "see https://example.com and [file](/user_uploads/2/ab/pic.png)")
	assert.True(t, res.HasLink)
	assert.True(t, res.HasAttachment)
	assert.True(t, res.HasImage)

	res = render(t, "/me waves")
	assert.True(t, res.IsMeMessage)
	assert.Equal(t, "<p>/me waves</p>", res.HTML)

	res = render(t, "#**Denmark** #**Verona>lunch**")
	assert.ElementsMatch(t, []int64{1, 3}, res.LinkedChannelIDs)
}

func TestNilResolver(t *testing.T) {
	res, err := RenderMessage("@**King Hamlet** #**Verona** :smile:", nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, `<p>@<strong>King Hamlet</strong> #<strong>Verona</strong> <span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span></p>`, res.HTML)
}

func TestMisc(t *testing.T) {
	cases := []struct{ in, html string }{
		{"$$x$$", `<p><span class="tex-error">$$x$$</span></p>`},
		{":+1: :thumbs_up:", `<p><span aria-label="+1" class="emoji emoji-1f44d" role="img" title="+1">:+1:</span> <span aria-label="thumbs up" class="emoji emoji-1f44d" role="img" title="thumbs up">:thumbs_up:</span></p>`},
		{"~~~go\nfunc f() {}\n~~~", `<div class="codehilite" data-code-language="Go"><pre><span></span><code><span class="kd">func</span><span class="w"> </span><span class="nf">f</span><span class="p">()</span><span class="w"> </span><span class="p">{}</span>` + "\n</code></pre></div>"},
		{"a | b\n--|--\n1 | 2", "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>"},
	}
	for _, c := range cases {
		assert.Equal(t, c.html, render(t, c.in).HTML, c.in)
	}
	opts := testOptions
	opts.RenderTeX = func(tex string, display bool) (string, bool) { return "<katex>" + tex + "</katex>", true }
	res, err := RenderMessage("$$x$$", nil, opts)
	require.NoError(t, err)
	assert.Equal(t, "<p><katex>x</katex></p>", res.HTML)
}

func FuzzRenderMessage(f *testing.F) {
	for _, tc := range loadCorpus(f).Regular {
		f.Add(tc.Input)
	}
	f.Add("@**King Hamlet|10** #**Verona>lunch@1** <time:1496701800> :smile: 💩 ```spoiler x\ny\n```")
	f.Fuzz(func(t *testing.T, in string) {
		res, err := RenderMessage(in, topicFixtures{}, testOptions)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(in) {
			return
		}
		if !utf8.ValidString(res.HTML) {
			t.Fatalf("invalid UTF-8 output for %q", in)
		}
		if strings.ContainsAny(res.HTML, "\x02\x03") {
			t.Fatalf("placeholder left in output for %q: %q", in, res.HTML)
		}
	})
}
