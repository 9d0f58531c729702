package chat

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strings that exercise every escaping rule of encoding/json
var jsonCorners = []string{"", "plain", `quote " and \ backslash`, "<b>&amp;</b> stays", "tab\tnew\nline\rcr",
	"\x00\x01\x1f\x7f", "\b\f", "line\u2028para\u2029", "bad \xff utf-8 \xc3", "emoji 😀 ünïcødé", "/slash/"}

func randomFetched(r *rand.Rand) FetchedMessage {
	s := func() string { return jsonCorners[r.IntN(len(jsonCorners))] }
	id := r.Int64N(1 << 40)
	v := MessageView{ID: id, SenderID: r.Int64N(100), Content: s(), ContentType: "text/html", RecipientID: r.Int64N(1 << 41),
		Timestamp: r.Int64N(2e9), Client: s(), Subject: s(), IsMeMessage: r.IntN(2) == 0,
		SenderFullName: s(), SenderEmail: s(), SenderRealmStr: s(), Type: s()}
	switch r.IntN(3) {
	case 0:
		v.TopicLinks = []TopicLink{}
	case 1:
		v.TopicLinks = []TopicLink{{Text: s(), URL: s()}, {Text: s(), URL: s()}}
	}
	switch r.IntN(3) {
	case 0:
		v.Reactions = []Reaction{}
	case 1:
		v.Reactions = []Reaction{{EmojiName: s(), EmojiCode: s(), ReactionType: s(), UserID: 7}}
	}
	if r.IntN(2) == 0 {
		v.Submessages = []any{}
	}
	switch r.IntN(4) {
	case 0:
		v.DisplayRecipient = s()
		v.StreamID = &id
	case 1:
		v.DisplayRecipient = []DisplayUser{{ID: 1, Email: s(), FullName: s()}, {ID: 2, Email: s(), FullName: s(), IsMirrorDummy: true}}
	case 2:
		v.DisplayRecipient = []DisplayUser{}
	}
	if r.IntN(2) == 0 {
		avatar := s()
		v.AvatarURL = &avatar
	}
	if r.IntN(3) == 0 {
		prev := s()
		v.EditHistory = []any{editHistoryEntry{Timestamp: 5, PrevContent: &prev}, map[string]any{"a": s()}}
		v.LastEditTime = &v.Timestamp
	}
	if r.IntN(3) == 0 {
		v.LastMovedTime = &v.ID
	}
	m := FetchedMessage{MessageView: v}
	switch r.IntN(3) {
	case 0:
		m.Flags = []string{}
	case 1:
		m.Flags = []string{"read", s()}
	}
	if r.IntN(3) == 0 {
		c, t := s(), s()
		m.MatchContent, m.MatchSubject = &c, &t
	}
	return m
}

func TestMessageJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		resp := &GetMessagesResponse{FoundAnchor: r.IntN(2) == 0, FoundOldest: r.IntN(2) == 0,
			FoundNewest: r.IntN(2) == 0, HistoryLimited: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			a := r.Int64N(1000)
			resp.Anchor = &a
		}
		if round%10 != 0 {
			resp.Messages = []FetchedMessage{}
			for range r.IntN(5) {
				resp.Messages = append(resp.Messages, randomFetched(r))
			}
		}
		want, err := marshalNoEscape(resp)
		require.NoError(t, err)
		got, err := resp.AppendJSON(nil)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "round %d", round)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonCorners {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := marshalNoEscape(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendJSONString(nil, s)))
	})
}
