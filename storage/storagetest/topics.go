package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var topicTests = []test{
	{"Topics/ListChannelTopics", testListChannelTopics},
	{"Topics/NewestReceivedMessage", testNewestReceivedMessage},
}

// A channel's topics: case variants are one topic named as its newest
// message spells it, newest first; spans keep the topics (and newest
// messages) within them; other channels and realms stay out.
func testListChannelTopics(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r, other := newRealm(t, s, "a"), newRealm(t, s, "b")
	u := newUser(t, s, r.ID, "u@a")
	far := newUser(t, s, other.ID, "u@b")
	c, d := newStream(t, s, r.ID, "c"), newStream(t, s, r.ID, "d")
	farChannel := newStream(t, s, other.ID, "c")
	list := func(streamID int64, spans []storage.ChannelSpan) []storage.ChannelTopic {
		t.Helper()
		got, err := s.ListChannelTopics(ctx, r.ID, streamID, spans)
		require.NoError(t, err)
		require.NotNil(t, got)
		return got
	}
	assert.Equal(t, []storage.ChannelTopic{}, list(c.ID, nil), "a channel without messages")

	lunch := postTopic(t, s, r.ID, u.ID, c.ID, "Lunch", false)
	straße := postTopic(t, s, r.ID, u.ID, c.ID, "Straße", false)
	empty := postTopic(t, s, r.ID, u.ID, c.ID, "", false)
	postTopic(t, s, r.ID, u.ID, d.ID, "elsewhere", false)
	postTopic(t, s, other.ID, far.ID, farChannel.ID, "far away", false)
	lunch2 := postTopic(t, s, r.ID, u.ID, c.ID, "LUNCH", false)
	straße2 := postTopic(t, s, r.ID, u.ID, c.ID, "STRASSE", false) // folds to another key than ß
	last := postTopic(t, s, r.ID, u.ID, c.ID, "straße", false)

	want := []storage.ChannelTopic{
		{Name: "straße", MaxID: last},
		{Name: "STRASSE", MaxID: straße2},
		{Name: "LUNCH", MaxID: lunch2},
		{Name: "", MaxID: empty},
	}
	if storage.Fold("STRASSE") == storage.Fold("Straße") {
		want = []storage.ChannelTopic{{Name: "straße", MaxID: last}, {Name: "LUNCH", MaxID: lunch2}, {Name: "", MaxID: empty}}
	}
	assert.Equal(t, want, list(c.ID, nil), "newest first, one row per folded topic, named by its newest message")

	// Spans: only what they cover, each topic's newest message within.
	through := straße
	spans := []storage.ChannelSpan{
		{StreamID: c.ID, After: 0, Through: &through},             // Lunch, Straße
		{StreamID: d.ID, After: 0},                                // another channel: ignored
		{StreamID: c.ID, After: lunch2 - 1, Through: ptr(lunch2)}, // LUNCH
	}
	assert.Equal(t, []storage.ChannelTopic{
		{Name: "LUNCH", MaxID: lunch2},
		{Name: "Straße", MaxID: straße},
	}, list(c.ID, spans))
	assert.Equal(t, []storage.ChannelTopic{{Name: "straße", MaxID: last}}, list(c.ID, []storage.ChannelSpan{{StreamID: c.ID, After: straße2}}), "an open span")
	assert.Equal(t, []storage.ChannelTopic{}, list(c.ID, []storage.ChannelSpan{}), "no spans: nothing")
	assert.Equal(t, []storage.ChannelTopic{}, list(c.ID, []storage.ChannelSpan{{StreamID: d.ID}}), "only other channels' spans")
	assert.Equal(t, []storage.ChannelTopic{}, list(c.ID, []storage.ChannelSpan{{StreamID: c.ID, After: last}}), "a span after the last message")
	assert.Equal(t, []storage.ChannelTopic{}, list(farChannel.ID, nil), "another realm's channel")
	_ = lunch

	got, err := s.ListChannelTopics(ctx, other.ID, farChannel.ID, nil)
	require.NoError(t, err)
	assert.Equal(t, []storage.ChannelTopic{{Name: "far away", MaxID: got[0].MaxID}}, got)
}

// The newest received message: the user's rows, what they sent, and the
// channels' messages within their spans.
func testNewestReceivedMessage(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r, other := newRealm(t, s, "a"), newRealm(t, s, "b")
	u, v, x := newUser(t, s, r.ID, "u@a"), newUser(t, s, r.ID, "v@a"), newUser(t, s, r.ID, "x@a")
	far := newUser(t, s, other.ID, "u@b")
	c, d := newStream(t, s, r.ID, "c"), newStream(t, s, r.ID, "d")
	farChannel := newStream(t, s, other.ID, "c")
	newest := func(userID int64, spans ...storage.ChannelSpan) int64 {
		t.Helper()
		id, err := s.NewestReceivedMessage(ctx, r.ID, userID, spans)
		require.NoError(t, err)
		return id
	}
	assert.Zero(t, newest(u.ID), "nothing received")

	conv, err := s.DirectConversation(ctx, r.ID, []int64{u.ID, v.ID})
	require.NoError(t, err)
	dm := &storage.Message{RealmID: r.ID, SenderID: u.ID, ConversationID: &conv, Content: "x", RenderedContent: "<p>x</p>"}
	require.NoError(t, s.CreateMessage(ctx, dm, []storage.UserMessage{{UserID: u.ID, Flags: storage.FlagPrivate | storage.FlagRead}, {UserID: v.ID, Flags: storage.FlagPrivate}}))
	inC := postTopic(t, s, r.ID, x.ID, c.ID, "t", false)
	inD := postTopic(t, s, r.ID, x.ID, d.ID, "t", false)
	sentByU := postTopic(t, s, r.ID, u.ID, d.ID, "t", false)
	laterInC := postTopic(t, s, r.ID, x.ID, c.ID, "t", false)
	postTopic(t, s, other.ID, far.ID, farChannel.ID, "t", false)

	assert.Equal(t, sentByU, newest(u.ID), "what they sent")
	assert.Equal(t, dm.ID, newest(v.ID), "their row; newer messages elsewhere do not count")
	assert.Equal(t, laterInC, newest(v.ID, storage.ChannelSpan{StreamID: c.ID, After: inC}), "an open span")
	assert.Equal(t, inC, newest(v.ID, storage.ChannelSpan{StreamID: c.ID, After: 0, Through: &inC}), "a closed span ends the channel's part")
	assert.Equal(t, laterInC, newest(v.ID, storage.ChannelSpan{StreamID: d.ID, After: 0, Through: &inD}, storage.ChannelSpan{StreamID: c.ID, After: laterInC - 1}))
	assert.Equal(t, inD, newest(v.ID, storage.ChannelSpan{StreamID: d.ID, After: 0, Through: &inD}, storage.ChannelSpan{StreamID: c.ID, After: laterInC}), "an empty span adds nothing")
	id, err := s.NewestReceivedMessage(ctx, other.ID, u.ID, nil)
	require.NoError(t, err)
	assert.Zero(t, id, "the user's realm only")
}
