package markdown

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Cases of the reference's topic link tests.
func TestTopicLinks(t *testing.T) {
	trac := compileLinkifiers(t, `#(?P<id>[0-9]{2,8})`, "https://trac.example.com/ticket/{id}")
	overlapping := compileLinkifiers(t,
		`ABC-(?P<id>\d+)`, "https://google.com/search?q={id}",
		`[A-Z]+-(?P<id>\d+)`, "https://other.example.com/{id}",
		`(?P<id>[a-z]+)#(?P<n>\d+)`, "https://github.com/zulip/{id}/pull/{n}")
	type L = TopicLink
	for _, tc := range []struct {
		name, topic string
		linkifiers  []*Linkifier
		want        []L
	}{
		{"Plain", "hello world", trac, []L{}},
		{"One", "#444", trac, []L{{"#444", "https://trac.example.com/ticket/444"}}},
		{"Several", "#444 #555, #666", trac, []L{{"#444", "https://trac.example.com/ticket/444"},
			{"#555", "https://trac.example.com/ticket/555"}, {"#666", "https://trac.example.com/ticket/666"}}},
		{"Adjacent share a separator", "#444,#555", trac, []L{{"#444", "https://trac.example.com/ticket/444"},
			{"#555", "https://trac.example.com/ticket/555"}}},
		{"Not inside words", "a#444 #44x", trac, []L{}},
		{"URL", "https://google.com/hello-world", nil, []L{{"https://google.com/hello-world", "https://google.com/hello-world"}}},
		{"Without scheme", "Without scheme google.com/hello-world", nil, []L{{"google.com/hello-world", "https://google.com/hello-world"}}},
		{"Unknown domain", "Without scheme random.words/hello-world", nil, []L{}},
		{"Several URLs", "Try out http://ftp.debian.org, https://google.com/ and https://google.in/.", nil, []L{
			{"http://ftp.debian.org", "http://ftp.debian.org"}, {"https://google.com/", "https://google.com/"}, {"https://google.in/", "https://google.in/"}}},
		{"Linkifier and URL", "#111 https://google.com #222", trac, []L{{"#111", "https://trac.example.com/ticket/111"},
			{"https://google.com", "https://google.com"}, {"#222", "https://trac.example.com/ticket/222"}}},
		{"URL containing a match", "https://google.com/#444", trac, []L{{"https://google.com/#444", "https://google.com/#444"}}},
		{"Earlier linkifier wins", "ABC-123", overlapping, []L{{"ABC-123", "https://google.com/search?q=123"}}},
		{"Linkifiers before URLs", "zulip#123 ABC-4 https://example.com", overlapping, []L{
			{"zulip#123", "https://github.com/zulip/zulip/pull/123"}, {"ABC-4", "https://google.com/search?q=4"},
			{"https://example.com", "https://example.com"}}},
		{"No linkifiers", "#444", nil, []L{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, TopicLinks(tc.topic, tc.linkifiers))
		})
	}
	// An empty match does not loop.
	empty := compileLinkifiers(t, `x?`, "https://example.com/")
	assert.NotPanics(t, func() { TopicLinks("  a b", empty) })
}
