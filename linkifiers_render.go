package chat

import (
	"context"
	"time"

	"github.com/teamchat/chat/internal/cache"
	"github.com/teamchat/chat/markdown"
)

// linkifierCache keeps each organization's compiled linkifiers, which
// every rendering of a message needs. It is built on the record cache's
// generations: linkifier changes go through the write path without
// keepCallers, so they start a new generation and the entry is ignored
// from then on. Entries also expire with the records' (recordCacheTTL),
// which bounds how long another server's change goes unseen.
type linkifierCache = cache.Cache[int64, []*markdown.Linkifier]

func newLinkifierCache(callers *recordCache, now func() time.Time) *linkifierCache {
	return newCache[int64, []*markdown.Linkifier](callers.gens, now)
}

// compiledLinkifiers returns the organization's linkifiers, compiled, in
// the order they apply. A stored pattern that no longer compiles is left
// out (the reference's renderer lets it match nothing). What is not
// cached is read from r's store (a write transaction reads through itself).
func (r reads) compiledLinkifiers(ctx context.Context, realmID int64) ([]*markdown.Linkifier, error) {
	return r.links.Load(realmID, realmID, func() ([]*markdown.Linkifier, error) {
		rows, err := r.st.ListLinkifiers(ctx, realmID)
		if err != nil {
			return nil, err
		}
		list := make([]*markdown.Linkifier, 0, len(rows))
		for _, row := range rows {
			if l, err := markdown.CompileLinkifier(row.Pattern, row.URLTemplate); err == nil {
				list = append(list, l)
			}
		}
		return list, nil
	})
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
