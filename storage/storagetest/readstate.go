package storagetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var readStateTests = []test{
	{"ReadStateRows", testReadStateRows},
	{"ReadStateRanges", testReadStateRanges},
	{"ReadStateChannelMessagesIn", testReadStateChannelMessagesIn},
	{"ReadStateUnreadChannelMessagesRandom", testUnreadChannelMessagesRandom},
	{"Reactions", testReactions},
}

// postTopic posts to a channel's topic, with the given wildcard facts.
func postTopic(t *testing.T, s storage.Store, realmID, senderID, streamID int64, topic string, wildcard bool) int64 {
	t.Helper()
	m := &storage.Message{RealmID: realmID, SenderID: senderID, StreamID: &streamID, Topic: topic,
		Content: "hi", RenderedContent: "<p>hi</p>", DateSent: 1_700_000_000, StreamWildcard: wildcard}
	require.NoError(t, s.CreateMessage(t.Context(), m, nil))
	require.NotZero(t, m.ID)
	return m.ID
}

// Rows: inserted, flags set and cleared in bulk; unread rows listed
// newest first (direct without read, historical without read), mention
// rows from an ID on.
func testReadStateRows(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "general")
	conv, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID})
	require.NoError(t, err)
	var dms []int64
	for range 3 {
		m := &storage.Message{RealmID: realm.ID, SenderID: bob.ID, ConversationID: &conv, Content: "x", RenderedContent: "x", DateSent: 1}
		require.NoError(t, s.CreateMessage(ctx, m, []storage.UserMessage{
			{RealmID: realm.ID, UserID: alice.ID, Flags: storage.FlagPrivate},
			{RealmID: realm.ID, UserID: bob.ID, Flags: storage.FlagPrivate | storage.FlagRead}}))
		dms = append(dms, m.ID)
	}
	old := postTopic(t, s, realm.ID, bob.ID, c.ID, "Topic", false)
	mention := postTopic(t, s, realm.ID, bob.ID, c.ID, "t", false)
	require.NoError(t, s.InsertUserMessages(ctx, []storage.UserMessage{
		{RealmID: realm.ID, UserID: alice.ID, MessageID: old, Flags: storage.FlagHistorical | storage.FlagStarred},
		{RealmID: realm.ID, UserID: alice.ID, MessageID: mention, Flags: storage.FlagMentioned},
	}))
	err = s.InsertUserMessages(ctx, []storage.UserMessage{{RealmID: realm.ID, UserID: alice.ID, MessageID: old}})
	assert.ErrorIs(t, err, storage.ErrConflict, "a row that exists")

	unread := func(streamID *int64) []int64 {
		t.Helper()
		rows, err := s.ListUnreadRows(ctx, realm.ID, alice.ID, streamID, 10)
		require.NoError(t, err)
		var ids []int64
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		return ids
	}
	assert.Equal(t, []int64{old, dms[2], dms[1], dms[0]}, unread(nil), "newest first, historical and direct")
	rows, err := s.ListUnreadRows(ctx, realm.ID, alice.ID, nil, 2)
	require.NoError(t, err)
	require.Len(t, rows, 2, "up to the limit")
	assert.Equal(t, storage.FlagHistorical|storage.FlagStarred, rows[0].Flags)
	assert.Equal(t, "Topic", rows[0].Topic)
	assert.Equal(t, c.ID, *rows[0].StreamID)
	assert.Equal(t, conv, *rows[1].ConversationID)
	assert.Equal(t, bob.ID, rows[1].SenderID)
	assert.Equal(t, []int64{old}, unread(&c.ID), "one channel's historical rows")

	require.NoError(t, s.UpdateUserMessageFlags(ctx, realm.ID, alice.ID, []int64{old, dms[1], mention + 100}, storage.FlagRead, storage.FlagStarred))
	assert.Equal(t, []int64{dms[2], dms[0]}, unread(nil))
	got, err := s.ListUserMessages(ctx, realm.ID, alice.ID, []int64{old})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, storage.FlagHistorical|storage.FlagRead, got[0].Flags)
	others, err := s.ListUserMessages(ctx, realm.ID, bob.ID, dms)
	require.NoError(t, err)
	for _, r := range others {
		assert.Equal(t, storage.FlagPrivate|storage.FlagRead, r.Flags, "other users' rows untouched")
	}
	assert.Empty(t, unread(ptrTo(int64(0))))

	mentions, err := s.ListMentionRows(ctx, realm.ID, alice.ID, 0)
	require.NoError(t, err)
	require.Len(t, mentions, 1)
	assert.Equal(t, mention, mentions[0].MessageID)
	mentions, err = s.ListMentionRows(ctx, realm.ID, alice.ID, mention+1)
	require.NoError(t, err)
	assert.Empty(t, mentions)
}

func ptrTo[T any](v T) *T { return &v }

// Ranges replaced over a region; neighbours of a run of IDs.
func testReadStateRanges(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c, d := newStream(t, s, realm.ID, "c"), newStream(t, s, realm.ID, "d")
	var m []int64
	for range 5 {
		m = append(m, post(t, s, realm.ID, u.ID, c.ID))
		post(t, s, realm.ID, u.ID, d.ID)
	}
	prev, next, err := s.ChannelNeighbours(ctx, realm.ID, c.ID, m[1], m[2])
	require.NoError(t, err)
	assert.Equal(t, [2]int64{m[0], m[3]}, [2]int64{prev, next})
	prev, next, err = s.ChannelNeighbours(ctx, realm.ID, c.ID, m[0], m[4])
	require.NoError(t, err)
	assert.Equal(t, [2]int64{0, 0}, [2]int64{prev, next}, "none on either side")

	ranges := func() [][2]int64 {
		rs, err := s.ListReadRanges(ctx, realm.ID, u.ID, c.ID, 0, 1<<40)
		require.NoError(t, err)
		out := [][2]int64{}
		for _, r := range rs {
			out = append(out, [2]int64{r.FirstID, r.LastID})
		}
		return out
	}
	require.NoError(t, s.ReplaceReadRanges(ctx, realm.ID, u.ID, c.ID, 0, 1<<40, []storage.ReadRange{{FirstID: m[0], LastID: m[1]}, {FirstID: m[3], LastID: m[4]}}))
	assert.Equal(t, [][2]int64{{m[0], m[1]}, {m[3], m[4]}}, ranges())
	require.NoError(t, s.ReplaceReadRanges(ctx, realm.ID, u.ID, c.ID, m[3], m[3], []storage.ReadRange{{FirstID: m[3], LastID: m[3]}}))
	assert.Equal(t, [][2]int64{{m[0], m[1]}, {m[3], m[3]}}, ranges(), "the intersecting range replaced")
	require.NoError(t, s.ReplaceReadRanges(ctx, realm.ID, u.ID, c.ID, m[0], m[4], nil))
	assert.Equal(t, [][2]int64{}, ranges(), "deleted")
	require.NoError(t, s.ReplaceReadRanges(ctx, realm.ID, u.ID, d.ID, 0, 1<<40, []storage.ReadRange{{FirstID: 2, LastID: 3}, {FirstID: 7, LastID: 8}}))
	require.NoError(t, s.ResetReadRanges(ctx, realm.ID, u.ID, []int64{c.ID, d.ID}, m[4]))
	assert.Equal(t, [][2]int64{{1, m[4]}}, ranges(), "one range from 1")
	rs, err := s.ListReadRanges(ctx, realm.ID, u.ID, d.ID, 0, 1<<40)
	require.NoError(t, err)
	require.Len(t, rs, 1, "d's two ranges replaced by one")
	assert.Equal(t, [2]int64{1, m[4]}, [2]int64{rs[0].FirstID, rs[0].LastID})
	err = s.ReplaceReadRanges(ctx, realm.ID, u.ID, c.ID, 0, 10, []storage.ReadRange{{FirstID: 5, LastID: 4}})
	assert.Error(t, err, "an empty range")
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrConflict) {
		t.Errorf("an empty range is a caller's error, not %v", err)
	}
}

// The messages of spans, newest first, by topic, up to a limit.
func testReadStateChannelMessagesIn(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	c, d := newStream(t, s, realm.ID, "c"), newStream(t, s, realm.ID, "d")
	var cm, dm []int64
	for i := range 6 {
		cm = append(cm, postTopic(t, s, realm.ID, u.ID, c.ID, []string{"A", "b"}[i%2], i == 4))
		dm = append(dm, postTopic(t, s, realm.ID, u.ID, d.ID, "a", false))
	}
	list := func(spans []storage.IDSpan, topic *string, limit int) []int64 {
		t.Helper()
		ms, err := s.ListChannelMessagesIn(ctx, realm.ID, spans, topic, limit)
		require.NoError(t, err)
		ids := []int64{}
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
		return ids
	}
	spans := []storage.IDSpan{{StreamID: c.ID, First: cm[0], Last: cm[1]}, {StreamID: d.ID, First: dm[2], Last: dm[5]}, {StreamID: c.ID, First: cm[4], Last: 1 << 40}}
	assert.Equal(t, []int64{dm[5], cm[5], dm[4], cm[4], dm[3], dm[2], cm[1], cm[0]}, list(spans, nil, 100))
	assert.Equal(t, []int64{dm[5], cm[5], dm[4]}, list(spans, nil, 3))
	assert.Equal(t, []int64{dm[5], dm[4], cm[4], dm[3], dm[2], cm[0]}, list(spans, ptrTo("a"), 100), "topics compare case-insensitively")
	assert.Equal(t, []int64{}, list(nil, nil, 100))
	assert.Equal(t, []int64{}, list(spans, nil, 0))
	many := make([]storage.IDSpan, 0, 450)
	for i := range 450 {
		many = append(many, storage.IDSpan{StreamID: c.ID, First: cm[i%6], Last: cm[i%6]})
	}
	got := list(many, nil, 1000)
	assert.Len(t, got, 450, "many spans, over several queries")
	// The unread form: the same order and limit, the columns counts need.
	unread := func(spans []storage.IDSpan, limit int) []int64 {
		t.Helper()
		ms, err := s.ListUnreadChannelMessages(ctx, realm.ID, spans, nil, limit)
		require.NoError(t, err)
		ids := []int64{}
		for _, m := range ms.Messages {
			ids = append(ids, m.ID)
		}
		return ids
	}
	assert.Equal(t, list(spans, nil, 100), unread(spans, 100))
	assert.Equal(t, list(spans, nil, 3), unread(spans, 3))
	assert.Equal(t, []int64{}, unread(nil, 10))
	assert.Len(t, unread(many, 1000), 450, "many spans")
	um, err := s.ListUnreadChannelMessages(ctx, realm.ID, []storage.IDSpan{{StreamID: c.ID, First: cm[4], Last: cm[4]}}, nil, 1)
	require.NoError(t, err)
	assert.Equal(t, &storage.UnreadChannelMessages{Messages: []storage.UnreadChannelMessage{{ID: cm[4], StreamID: c.ID, Topic: 0, StreamWildcard: true}},
		Topics: []storage.UnreadTopic{{StreamID: c.ID, Name: "A"}}}, um)
	other := newRealm(t, s, "other")
	um, err = s.ListUnreadChannelMessages(ctx, other.ID, spans, nil, 10)
	require.NoError(t, err)
	assert.Empty(t, um.Messages, "realms apart")
	ms, err := s.ListChannelMessagesIn(ctx, realm.ID, []storage.IDSpan{{StreamID: c.ID, First: cm[4], Last: cm[4]}}, nil, 1)
	require.NoError(t, err)
	assert.Equal(t, storage.Message{ID: cm[4], StreamID: &c.ID, Topic: "A", SenderID: u.ID, DateSent: 1_700_000_000, StreamWildcard: true}, ms[0], "the light columns")
}

// Reactions: added in order, duplicates refused, deleted by key.
func testReactions(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "c")
	m1, m2 := post(t, s, realm.ID, alice.ID, c.ID), post(t, s, realm.ID, alice.ID, c.ID)
	add := func(msg, user int64, typ, code, name string) error {
		return s.AddReaction(ctx, &storage.Reaction{RealmID: realm.ID, MessageID: msg, UserID: user, ReactionType: typ, EmojiCode: code, EmojiName: name})
	}
	require.NoError(t, add(m2, bob.ID, "unicode_emoji", "1f44d", "+1"))
	require.NoError(t, add(m1, bob.ID, "unicode_emoji", "1f44d", "thumbs_up"))
	require.NoError(t, add(m1, alice.ID, "unicode_emoji", "1f44d", "+1"))
	require.NoError(t, add(m1, alice.ID, "realm_emoji", "7", "party"))
	assert.ErrorIs(t, add(m1, bob.ID, "unicode_emoji", "1f44d", "+1"), storage.ErrConflict, "same user, type and code")
	assert.Error(t, add(m1+100, bob.ID, "unicode_emoji", "1f600", "grinning"), "a missing message")
	rs, err := s.ListReactions(ctx, realm.ID, []int64{m1, m2})
	require.NoError(t, err)
	require.Len(t, rs, 4)
	assert.Equal(t, []string{"thumbs_up", "+1", "party", "+1"}, []string{rs[0].EmojiName, rs[1].EmojiName, rs[2].EmojiName, rs[3].EmojiName}, "by message, then as added")
	assert.Equal(t, m2, rs[3].MessageID)
	assert.NotZero(t, rs[0].ID)
	require.NoError(t, s.DeleteReaction(ctx, realm.ID, m1, bob.ID, "unicode_emoji", "1f44d"))
	assert.ErrorIs(t, s.DeleteReaction(ctx, realm.ID, m1, bob.ID, "unicode_emoji", "1f44d"), storage.ErrNotFound)
	other := newRealm(t, s, "other")
	rs, err = s.ListReactions(ctx, other.ID, []int64{m1, m2})
	require.NoError(t, err)
	assert.Empty(t, rs, "realms apart")
}
