package chat

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/teamchat/chat/storage"
)

func TestMessageCache(t *testing.T) {
	c := newMessageCache(1000, time.Now)
	a := storage.Message{ID: 1, RealmID: 7, RenderedContent: "<p>a</p>"}
	b := storage.Message{ID: 2, RealmID: 7, RenderedContent: "<p>b</p>"}
	c.put([]storage.Message{a, b})
	got := map[int64]storage.Message{}
	c.get(7, []int64{1, 2, 3}, got)
	assert.Equal(t, map[int64]storage.Message{1: a, 2: b}, got)
	got = map[int64]storage.Message{}
	c.get(8, []int64{1, 2}, got)
	assert.Empty(t, got, "another realm's messages are not served")

	c.forget([]int64{1})
	got = map[int64]storage.Message{}
	c.get(7, []int64{1, 2}, got)
	assert.Equal(t, map[int64]storage.Message{2: b}, got)

	huge := storage.Message{ID: 4, RealmID: 7, RenderedContent: strings.Repeat("x", 1000)}
	c.put([]storage.Message{huge})
	got = map[int64]storage.Message{}
	c.get(7, []int64{2, 4}, got)
	assert.Equal(t, map[int64]storage.Message{2: b}, got, "a message larger than the cache is not kept")
	big := storage.Message{ID: 3, RealmID: 7, RenderedContent: strings.Repeat("x", 800)}
	c.put([]storage.Message{big})
	got = map[int64]storage.Message{}
	c.get(7, []int64{2, 3}, got)
	assert.Equal(t, map[int64]storage.Message{3: big}, got, "over the budget: started again empty")
	assert.LessOrEqual(t, c.c.Bytes(), 1000)

	off := newMessageCache(0, time.Now)
	off.put([]storage.Message{a})
	got = map[int64]storage.Message{}
	off.get(7, []int64{1}, got)
	assert.Empty(t, got, "a zero budget turns the cache off")

	// Reactions attach to a cached message only, and leave with it.
	c.put([]storage.Message{a})
	c.putReactions(7, []int64{1, 5}, map[int64][]storage.Reaction{1: {{MessageID: 1, EmojiName: "smile"}}})
	rs := map[int64][]storage.Reaction{}
	assert.Equal(t, []int64{5}, c.getReactions(7, []int64{1, 5}, rs), "no message 5 to attach to")
	assert.Equal(t, "smile", rs[1][0].EmojiName)
	c.forget([]int64{1})
	c.put([]storage.Message{a})
	assert.Equal(t, []int64{1}, c.getReactions(7, []int64{1}, map[int64][]storage.Reaction{}), "forgotten with the message")
}
