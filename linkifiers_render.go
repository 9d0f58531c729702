package chat

import (
	"context"
	"sync"
	"time"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// linkifierCache keeps each organization's compiled linkifiers, which
// every rendering of a message needs. An entry belongs to the caller
// cache's generation it was read at: linkifier changes go through the
// write path without keepCallers, so they start a new generation and the
// entry is ignored from then on. Entries also expire with the callers'
// (callerCacheTTL), which bounds how long another server's change goes
// unseen. The zero value is ready to use.
type linkifierCache struct {
	mu sync.Mutex
	m  map[int64]compiledLinkifiers
}

type compiledLinkifiers struct {
	list    []*markdown.Linkifier
	gen     uint64
	expires time.Time
}

// compiledLinkifiers returns the organization's linkifiers, compiled, in
// the order they apply. A stored pattern that no longer compiles is left
// out (the reference's renderer lets it match nothing). What is not
// cached is read from st (a write transaction reads through itself).
func (s *Service) compiledLinkifiers(ctx context.Context, st storage.Store, realmID int64) ([]*markdown.Linkifier, error) {
	c := s.linkifiers
	gen := s.callers.generation(realmID)
	c.mu.Lock()
	e, ok := c.m[realmID]
	c.mu.Unlock()
	if ok && e.gen == gen && time.Now().Before(e.expires) {
		return e.list, nil
	}
	rows, err := st.ListLinkifiers(ctx, realmID)
	if err != nil {
		return nil, err
	}
	list := make([]*markdown.Linkifier, 0, len(rows))
	for _, r := range rows {
		if l, err := markdown.CompileLinkifier(r.Pattern, r.URLTemplate); err == nil {
			list = append(list, l)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[int64]compiledLinkifiers{}
	}
	if len(c.m) >= callerCacheMax {
		clear(c.m)
	}
	// Stored under the generation read before: if a write committed
	// since, the entry is already stale and is never used.
	c.m[realmID] = compiledLinkifiers{list: list, gen: gen, expires: time.Now().Add(callerCacheTTL)}
	return list, nil
}

// topicLinks is a message's topic_links: the links the linkifiers and
// bare URLs make in its topic (none for a direct message, whose topic is
// empty).
func topicLinks(linkifiers []*markdown.Linkifier, topic string) []TopicLink {
	if topic == "" {
		return []TopicLink{}
	}
	found := markdown.TopicLinks(topic, linkifiers)
	out := make([]TopicLink, len(found))
	for i, l := range found {
		out[i] = TopicLink{Text: l.Text, URL: l.URL}
	}
	return out
}
