package chat

import (
	"context"
	"sync"
	"time"

	"github.com/teamchat/chat/internal/cache"
	"github.com/teamchat/chat/storage"
)

// messageCache keeps recently read messages by ID, as the reference keeps
// message dictionaries in its cache: the messages of a busy conversation
// are read by everyone in it, and a window of them then costs the store
// only an index scan for their IDs. Entries expire after a few seconds
// (as cached callers do), which bounds how long a change made by another
// server on the same database can go unseen; a write that changes
// messages (edits, moves, deletions) must forget them when it commits.
// The cache holds at most
// maxBytes of message text; when full it starts again empty.
type messageCache struct {
	mu       sync.Mutex
	entries  map[int64]cachedMessage
	bytes    int
	maxBytes int
	// counts: lookups that found their message or not, messages
	// forgotten (for metrics).
	counts cache.Stats
}

type cachedMessage struct {
	msg     storage.Message
	expires time.Time
	// reactions, once loaded (a write that changes them forgets the
	// message, as edits do).
	reactions       []storage.Reaction
	reactionsLoaded bool
}

const (
	messageCacheTTL = 5 * time.Second
	// defaultMessageCacheBytes bounds the text the cache holds.
	defaultMessageCacheBytes = 32 << 20
)

// WithMessageCache sets how many bytes of message text the Service keeps
// in memory to serve reads (default 32 MiB); 0 turns the cache off.
func WithMessageCache(bytes int) Option {
	return func(s *Service) { s.messages = newMessageCache(bytes) }
}

func newMessageCache(maxBytes int) *messageCache {
	return &messageCache{entries: map[int64]cachedMessage{}, maxBytes: maxBytes}
}

func messageBytes(m *storage.Message) int {
	return len(m.Content) + len(m.RenderedContent) + len(m.Topic) + len(m.SendingClient) + 128
}

// reactionBytes is what a message's cached reactions count for.
func reactionBytes(rs []storage.Reaction) int {
	n := 0
	for i := range rs {
		n += len(rs[i].EmojiName) + len(rs[i].EmojiCode) + 64
	}
	return n
}

func entryBytes(e *cachedMessage) int { return messageBytes(&e.msg) + reactionBytes(e.reactions) }

// get returns the live cached messages of the realm among ids.
func (c *messageCache) get(realmID int64, ids []int64, out map[int64]storage.Message) {
	if c.maxBytes <= 0 {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if e, ok := c.entries[id]; ok && e.msg.RealmID == realmID && now.Before(e.expires) {
			out[id] = e.msg
			c.counts.Hits++
		} else {
			c.counts.Misses++
		}
	}
}

// stats reads the cache's counters.
func (c *messageCache) stats() cache.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts
}

func (c *messageCache) put(ms []storage.Message) {
	if c.maxBytes <= 0 {
		return
	}
	expires := time.Now().Add(messageCacheTTL)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range ms {
		n := messageBytes(&ms[i])
		if n > c.maxBytes {
			continue // larger than the whole cache
		}
		if c.bytes+n > c.maxBytes {
			clear(c.entries)
			c.bytes = 0
		}
		if old, ok := c.entries[ms[i].ID]; ok {
			c.bytes -= entryBytes(&old)
		}
		c.entries[ms[i].ID] = cachedMessage{msg: ms[i], expires: expires}
		c.bytes += n
	}
}

// forget drops messages (after a change to them commits).
func (c *messageCache) forget(ids []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if old, ok := c.entries[id]; ok {
			c.bytes -= entryBytes(&old)
			delete(c.entries, id)
			c.counts.Forgotten++
		}
	}
}

// getReactions sets out[id] for the live cached messages among ids whose
// reactions are loaded (an empty list for none) and returns the others.
func (c *messageCache) getReactions(realmID int64, ids []int64, out map[int64][]storage.Reaction) (missing []int64) {
	if c.maxBytes <= 0 {
		return ids
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if e, ok := c.entries[id]; ok && e.msg.RealmID == realmID && now.Before(e.expires) && e.reactionsLoaded {
			out[id] = e.reactions
		} else {
			missing = append(missing, id)
		}
	}
	return missing
}

// putReactions records the reactions of cached messages (by message;
// ids without any have none).
func (c *messageCache) putReactions(realmID int64, ids []int64, byMessage map[int64][]storage.Reaction) {
	if c.maxBytes <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		e, ok := c.entries[id]
		if !ok || e.msg.RealmID != realmID || e.reactionsLoaded {
			continue
		}
		rs := byMessage[id]
		if c.bytes+reactionBytes(rs) > c.maxBytes {
			return
		}
		e.reactions, e.reactionsLoaded = rs, true
		c.entries[id] = e
		c.bytes += reactionBytes(rs)
	}
}

// reactionsByID loads the reactions of messages of the realm, by
// message: from the cache where it has them (with the messages), in one
// query for the rest.
func (s *Service) reactionsByID(ctx context.Context, realmID int64, ids []int64) (map[int64][]storage.Reaction, error) {
	out := make(map[int64][]storage.Reaction, len(ids))
	missing := s.messages.getReactions(realmID, ids, out)
	if len(missing) == 0 {
		return out, nil
	}
	rows, err := s.store.ListReactions(ctx, realmID, missing)
	if err != nil {
		return nil, err
	}
	loaded := make(map[int64][]storage.Reaction, len(missing))
	for _, r := range rows {
		loaded[r.MessageID] = append(loaded[r.MessageID], r)
	}
	s.messages.putReactions(realmID, missing, loaded)
	for _, id := range missing {
		out[id] = loaded[id]
	}
	return out, nil
}

// messagesByID loads messages of the realm in the order of ids, from the
// cache where it has them and in one query for the rest; missing IDs are
// left out.
func (s *Service) messagesByID(ctx context.Context, realmID int64, ids []int64) ([]storage.Message, error) {
	found := make(map[int64]storage.Message, len(ids))
	s.messages.get(realmID, ids, found)
	var missing []int64
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		rows, err := s.store.GetMessagesByID(ctx, realmID, missing)
		if err != nil {
			return nil, err
		}
		s.messages.put(rows)
		for _, m := range rows {
			found[m.ID] = m
		}
	}
	out := make([]storage.Message, 0, len(ids))
	for _, id := range ids {
		if m, ok := found[id]; ok {
			out = append(out, m)
		}
	}
	return out, nil
}
