package chat

import (
	"context"
	"time"

	"github.com/teamchat/chat/internal/cache"
	"github.com/teamchat/chat/storage"
)

// messageCache keeps recently read messages by ID, as the reference keeps
// message dictionaries in its cache: the messages of a busy conversation
// are read by everyone in it, and a window of them then costs the store
// only an index scan for their IDs. It is an internal/cache bounded by
// the bytes of message text it holds, without generations: a write that
// changes messages (edits, moves, deletions, reactions) forgets them when
// it commits, here and through the event bus on other servers. Entries
// also expire after a few seconds of the Service's clock (as cached
// callers do), which bounds how long a change written to the store
// directly can go unseen.
type messageCache struct {
	c *cache.Cache[int64, cachedMessage]
}

type cachedMessage struct {
	msg storage.Message
	// reactions, once loaded (attached to a live entry only, so a list
	// read before a change forgot the message is not kept).
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
	return func(s *Service) { s.messageCacheBytes = bytes }
}

// newMessageCache is a cache of maxBytes (none for 0) on the clock now.
func newMessageCache(maxBytes int, now func() time.Time) *messageCache {
	if maxBytes <= 0 {
		return &messageCache{} // a nil cache holds nothing
	}
	return &messageCache{c: cache.New[int64, cachedMessage](cache.Config[cachedMessage]{
		TTL: messageCacheTTL, MaxBytes: maxBytes, Size: entryBytes, Now: now})}
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

func entryBytes(e cachedMessage) int { return messageBytes(&e.msg) + reactionBytes(e.reactions) }

// get adds to out the live cached messages of the realm among ids.
func (m *messageCache) get(realmID int64, ids []int64, out map[int64]storage.Message) {
	m.c.GetMany(realmID, ids, func(id int64, e cachedMessage) { out[id] = e.msg })
}

func (m *messageCache) put(ms []storage.Message) {
	for i := range ms {
		m.c.Put(ms[i].RealmID, 0, ms[i].ID, cachedMessage{msg: ms[i]})
	}
}

// forget drops messages (after a change to them commits).
func (m *messageCache) forget(ids []int64) { m.c.Forget(ids...) }

// getReactions sets out[id] for the live cached messages among ids whose
// reactions are loaded (an empty list for none) and returns the others.
func (m *messageCache) getReactions(realmID int64, ids []int64, out map[int64][]storage.Reaction) (missing []int64) {
	m.c.GetMany(realmID, ids, func(id int64, e cachedMessage) {
		if e.reactionsLoaded {
			out[id] = e.reactions
		}
	})
	if len(out) == len(ids) {
		return nil
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			missing = append(missing, id)
		}
	}
	return missing
}

// putReactions records the reactions of cached messages (by message;
// ids without any have none).
func (m *messageCache) putReactions(realmID int64, ids []int64, byMessage map[int64][]storage.Reaction) {
	for _, id := range ids {
		m.c.Update(realmID, id, func(e cachedMessage) (cachedMessage, bool) {
			if e.reactionsLoaded {
				return e, false
			}
			e.reactions, e.reactionsLoaded = byMessage[id], true
			return e, true
		})
	}
}

// reactionsByID loads the reactions of messages of the realm, by
// message: from the cache where it has them (with the messages), in one
// query for the rest.
func (r reads) reactionsByID(ctx context.Context, realmID int64, ids []int64) (map[int64][]storage.Reaction, error) {
	out := make(map[int64][]storage.Reaction, len(ids))
	missing := r.msgs.getReactions(realmID, ids, out)
	if len(missing) == 0 {
		return out, nil
	}
	rows, err := r.st.ListReactions(ctx, realmID, missing)
	if err != nil {
		return nil, err
	}
	loaded := make(map[int64][]storage.Reaction, len(missing))
	for _, row := range rows {
		loaded[row.MessageID] = append(loaded[row.MessageID], row)
	}
	r.msgs.putReactions(realmID, missing, loaded)
	for _, id := range missing {
		out[id] = loaded[id]
	}
	return out, nil
}

// messagesByID loads messages of the realm in the order of ids, from the
// cache where it has them and in one query for the rest; missing IDs are
// left out.
func (r reads) messagesByID(ctx context.Context, realmID int64, ids []int64) ([]storage.Message, error) {
	found := make(map[int64]storage.Message, len(ids))
	r.msgs.get(realmID, ids, found)
	var missing []int64
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		rows, err := r.st.GetMessagesByID(ctx, realmID, missing)
		if err != nil {
			return nil, err
		}
		r.msgs.put(rows)
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

// stats reads the cache's counters (for metrics; reaction lookups count
// as lookups of their messages).
func (m *messageCache) stats() cache.Stats { return m.c.Stats() }
