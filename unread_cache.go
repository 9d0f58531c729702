package chat

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teamchat/chat/storage"
)

// The unread state of a reader far behind is kept between registrations.
// Listing 50,000 unread messages costs tens of milliseconds (reading them,
// grouping them by topic); a reader with that many registers as often as
// anyone. So a reader's state (the raw list, newest first, and its
// grouped answer) is remembered once it lists at least unreadCacheMin
// messages, and a registration answers from it when nothing it was read
// from has changed, adding only the channel messages sent since.
//
// What the state is read from, and what says it changed:
//
//   - the reader's own records: their message rows and flags, read
//     ranges, subscription periods and settings, muted users and topic
//     policies. Every write to those goes through the write path's store
//     (unreadWatch, below the writeTx), which notes the user; the note
//     travels with the write on the event bus and starts a new generation
//     of the user's state on every server when it arrives.
//   - the channel messages themselves: moves, topic changes, deletions and
//     content edits that add or remove a mention of the whole channel start
//     a new generation of the whole organization's states, the same way.
//   - new channel messages change nothing remembered: within a channel,
//     message IDs increase in commit order (they are drawn inside the
//     channel's lock, see write.go), so the messages sent to a channel
//     since the state was read are exactly those above the newest it read
//     of that channel, which one statement over the reader's unread spans
//     lists.
//
// A remembered state is used only if its generations are still current
// once this server has applied every write its reader's snapshot
// includes. A registration's snapshot may include a write that another
// server committed and whose note has not arrived yet, so before using a
// remembered state it publishes a marker on the bus and waits for it
// (awaitDelivery): the bus delivers in commit order, so every write
// committed before the marker has been applied when it arrives. The
// generations a state is stored with are read before the reads that
// built it began: a write that those reads missed arrives later and
// makes them stale. A reader who is not remembered costs none of this.
//
// Generations are numbers drawn from one counter, never reused, so a
// state can never match a generation that began after it was read.

// unreadCacheMin is the least number of unread messages a state lists to
// be remembered (unreadCache.min; tests lower it).
const unreadCacheMin = 1000

// unreadMarkerWait bounds the wait for a bus marker before a remembered
// state is used; past it the state is listed from scratch.
const unreadMarkerWait = 2 * time.Second

// unreadCacheBudget bounds the unread messages remembered in all; the
// states used least recently are dropped first.
const unreadCacheBudget = 500_000

// unreadTouched is what a write changes of the readers' unread states:
// some readers' own records, or every reader's (All).
type unreadTouched struct {
	Users []int64 `json:"u,omitempty"`
	All   bool    `json:"a,omitempty"`
	// seen indexes Users once they are many (a send notes one or two: a
	// map for them would be an allocation on every send).
	seen map[int64]struct{}
}

func (t *unreadTouched) empty() bool { return t == nil || !t.All && len(t.Users) == 0 }

func (t *unreadTouched) user(id int64) {
	if t.seen == nil {
		if slices.Contains(t.Users, id) {
			return
		}
		t.Users = append(t.Users, id)
		if len(t.Users) > 16 {
			t.seen = make(map[int64]struct{}, 2*len(t.Users))
			for _, u := range t.Users {
				t.seen[u] = struct{}{}
			}
		}
		return
	}
	if _, ok := t.seen[id]; ok {
		return
	}
	t.seen[id] = struct{}{}
	t.Users = append(t.Users, id)
}

// unreadGens are the generations a state was read in: its organization's
// and its reader's.
type unreadGens struct{ org, user uint64 }

// unreadCache holds the remembered states of a Service.
type unreadCache struct {
	min  int // unreadCacheMin
	mu   sync.Mutex
	seq  uint64 // the last generation drawn
	orgs map[int64]*unreadOrg
	size int    // messages held
	tick uint64 // for least recently used
	// marker admits one registration at a time to wait for a bus marker
	// while it holds its snapshot's connection: the marker needs another
	// connection, and registrations holding all of a pool's connections
	// while each waited for one more would wait forever.
	marker chan struct{}
	// hits, merges and misses count what registrations found (for tests).
	hits, merges, misses atomic.Int64
}

type unreadOrg struct {
	gen     uint64
	users   map[int64]uint64
	entries map[int64]*unreadEntry
}

// unreadEntry is a remembered state. Nothing in it changes once stored.
type unreadEntry struct {
	gens unreadGens
	raw  *rawUnreads
	// above: the channels' newest messages read (channel messages above
	// them came later); floor: when raw was cut at the limit, the oldest
	// message kept (nothing older can enter).
	above map[int64]int64
	floor int64
	// grouping and agg are the groupings and the grouped answers, without
	// and with the empty topic's own name (allow_empty_topic_name), made
	// on first use.
	grouping [2]atomic.Pointer[unreadGrouping]
	agg      [2]atomic.Pointer[UnreadMessages]
	used     uint64
}

func newUnreadCache() *unreadCache {
	return &unreadCache{min: unreadCacheMin, orgs: map[int64]*unreadOrg{}, marker: make(chan struct{}, 1)}
}

// org returns the organization's record, made on first use; c.mu held.
func (c *unreadCache) org(realmID int64) *unreadOrg {
	o := c.orgs[realmID]
	if o == nil {
		o = &unreadOrg{users: map[int64]uint64{}, entries: map[int64]*unreadEntry{}}
		c.orgs[realmID] = o
	}
	return o
}

// gens returns the current generations of a reader's state.
func (c *unreadCache) gens(realmID, userID int64) unreadGens {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.orgs[realmID]
	if o == nil {
		return unreadGens{}
	}
	return unreadGens{org: o.gen, user: o.users[userID]}
}

// has reports whether a state of the reader is remembered.
func (c *unreadCache) has(realmID, userID int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.orgs[realmID]
	return o != nil && o.entries[userID] != nil
}

// current returns the reader's remembered state if it was read in gens
// and gens are still current.
func (c *unreadCache) current(realmID, userID int64, gens unreadGens) *unreadEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.orgs[realmID]
	if o == nil {
		return nil
	}
	e := o.entries[userID]
	if e == nil || e.gens != gens || o.gen != gens.org || o.users[userID] != gens.user {
		return nil
	}
	c.tick++
	e.used = c.tick
	return e
}

// apply starts new generations for what a committed write touched.
func (c *unreadCache) apply(realmID int64, t *unreadTouched) {
	if t.empty() {
		return
	}
	if realmID == 0 {
		// A write outside any one organization's lanes: what it touched
		// is not told apart by organization.
		c.reset(0)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.org(realmID)
	c.seq++
	if t.All {
		o.gen = c.seq
		c.dropAll(o)
		return
	}
	for _, u := range t.Users {
		o.users[u] = c.seq
		c.drop(o, u)
	}
}

// drop forgets the user's state, if remembered; c.mu held.
func (c *unreadCache) drop(o *unreadOrg, userID int64) {
	if e := o.entries[userID]; e != nil {
		c.size -= len(e.raw.msgs)
		delete(o.entries, userID)
	}
}

// reset starts a new generation of every state of the organization, or
// of every organization (realmID 0: the bus lost writes).
func (c *unreadCache) reset(realmID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if realmID != 0 {
		o := c.org(realmID)
		o.gen = c.seq
		c.dropAll(o)
		return
	}
	for _, o := range c.orgs {
		o.gen = c.seq
		c.dropAll(o)
	}
}

// dropAll forgets the organization's states; c.mu held.
func (c *unreadCache) dropAll(o *unreadOrg) {
	for u := range o.entries {
		c.drop(o, u)
	}
}

// store remembers a state read in gens, unless a generation began since.
func (c *unreadCache) store(realmID, userID int64, e *unreadEntry) {
	n := len(e.raw.msgs)
	if n < c.min || n > unreadCacheBudget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.org(realmID)
	if o.gen != e.gens.org || o.users[userID] != e.gens.user {
		return
	}
	c.drop(o, userID)
	c.tick++
	e.used = c.tick
	o.entries[userID] = e
	c.size += n
	for c.size > unreadCacheBudget {
		c.evictOne()
	}
}

// evictOne drops the state used least recently; c.mu held.
func (c *unreadCache) evictOne() {
	var org *unreadOrg
	var user int64
	var oldest *unreadEntry
	for _, o := range c.orgs {
		for u, e := range o.entries {
			if oldest == nil || e.used < oldest.used {
				org, user, oldest = o, u, e
			}
		}
	}
	if oldest == nil {
		c.size = 0
		return
	}
	c.drop(org, user)
}

// newUnreadEntry describes a state listed from scratch (raw, newest
// first) for remembering.
func newUnreadEntry(gens unreadGens, raw *rawUnreads) *unreadEntry {
	e := &unreadEntry{gens: gens, raw: raw, above: map[int64]int64{}}
	for _, m := range raw.msgs {
		if m.streamID != 0 && m.id > e.above[m.streamID] {
			e.above[m.streamID] = m.id
		}
	}
	if raw.missing && len(raw.msgs) > 0 {
		e.floor = raw.msgs[len(raw.msgs)-1].id
	}
	return e
}

// unreadsRemembered answers from the reader's remembered state, or
// returns nil (the caller lists from scratch). gens were read before the
// reads of this request began.
func (r reads) unreadsRemembered(ctx context.Context, realm *storage.Realm, me *storage.User, gens unreadGens, allowEmptyTopic bool) (*UnreadMessages, error) {
	c := r.s.unread
	if r.tx || !c.has(realm.ID, me.ID) {
		return nil, nil
	}
	if r.unreadAt != nil {
		// A registration, holding its snapshot's connection.
		select {
		case c.marker <- struct{}{}:
			defer func() { <-c.marker }()
		default:
			return nil, nil // another registration waits for its marker
		}
	}
	wctx, cancel := context.WithTimeout(ctx, unreadMarkerWait)
	err := r.s.awaitDelivery(wctx, realm.ID)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The bus is slow or away: list from scratch.
		r.s.log.Warn("unread state: no bus marker; listing it", "err", err)
		return nil, nil
	}
	e := c.current(realm.ID, me.ID, gens)
	if e == nil {
		c.misses.Add(1)
		return nil, nil
	}
	more, err := r.unreadSince(ctx, realm.ID, e)
	if err != nil {
		return nil, err
	}
	if more == nil {
		c.hits.Add(1)
		return r.rememberedAnswer(ctx, realm, me, e, allowEmptyTopic)
	}
	c.merges.Add(1)
	next := newUnreadEntry(gens, more)
	for f := range e.grouping {
		if g := e.grouping[f].Load(); g != nil {
			next.grouping[f].Store(g.extend(more))
		}
	}
	c.store(realm.ID, me.ID, next)
	return r.rememberedAnswer(ctx, realm, me, next, allowEmptyTopic)
}

// rememberedAnswer is the state's grouped answer, made once per form; the
// caller gets a copy of its own.
func (r reads) rememberedAnswer(ctx context.Context, realm *storage.Realm, me *storage.User, e *unreadEntry, allowEmptyTopic bool) (*UnreadMessages, error) {
	slot := &e.agg[boolIndex(allowEmptyTopic)]
	if out := slot.Load(); out != nil {
		return out.clone(), nil
	}
	g := e.grouping[boolIndex(allowEmptyTopic)].Load()
	if g == nil {
		var err error
		if g, err = r.prepareUnreads(ctx, realm, me, e.raw, allowEmptyTopic); err != nil {
			return nil, err
		}
		e.grouping[boolIndex(allowEmptyTopic)].Store(g)
	}
	out := g.emit(me.ID, e.raw)
	slot.Store(out)
	return out.clone(), nil
}

// unreadSince lists the channel messages sent since e was read, and
// returns e's state with them (nil when there are none).
func (r reads) unreadSince(ctx context.Context, realmID int64, e *unreadEntry) (*rawUnreads, error) {
	var spans []storage.IDSpan
	for _, g := range e.raw.gaps {
		lo := max(e.above[g.StreamID], e.floor)
		if g.Last > lo {
			spans = append(spans, storage.IDSpan{StreamID: g.StreamID, First: max(g.First, lo+1), Last: g.Last})
		}
	}
	if len(spans) == 0 {
		return nil, nil
	}
	got, err := r.st.ListUnreadChannelMessages(ctx, realmID, spans, e.raw.muted, maxUnreadMessages)
	if err != nil || len(got.Messages) == 0 {
		return nil, err
	}
	return mergeUnreads(e.raw, got, maxUnreadMessages), nil
}

// mergeUnreads returns old with newer channel messages added, the newest
// limit of them; the topic entries are old's followed by got's.
func mergeUnreads(old *rawUnreads, got *storage.UnreadChannelMessages, limit int) *rawUnreads {
	base := int32(len(old.topics))
	next := &rawUnreads{gaps: old.gaps, muted: old.muted,
		topics: append(old.topics[:len(old.topics):len(old.topics)], got.Topics...),
		msgs:   make([]unreadMessage, 0, min(limit, len(old.msgs)+len(got.Messages)))}
	i, j := 0, 0
	for len(next.msgs) < limit && (i < len(got.Messages) || j < len(old.msgs)) {
		if j == len(old.msgs) || i < len(got.Messages) && got.Messages[i].ID > old.msgs[j].id {
			m := &got.Messages[i]
			u := unreadMessage{id: m.ID, streamID: m.StreamID, topic: base + m.Topic, streamWildcard: m.StreamWildcard}
			if m.StreamWildcard {
				u.flags = storage.FlagStreamWildcardMentioned
			}
			next.msgs = append(next.msgs, u)
			i++
			continue
		}
		next.msgs = append(next.msgs, old.msgs[j])
		j++
	}
	next.missing = old.missing || len(old.msgs)+len(got.Messages) >= limit
	return next
}

// clone copies the answer, so that its holder may change it.
func (u *UnreadMessages) clone() *UnreadMessages {
	out := *u
	out.PMs = slices.Clone(u.PMs)
	for i := range out.PMs {
		out.PMs[i].UnreadMessageIDs = slices.Clone(out.PMs[i].UnreadMessageIDs)
	}
	out.Huddles = slices.Clone(u.Huddles)
	for i := range out.Huddles {
		out.Huddles[i].UnreadMessageIDs = slices.Clone(out.Huddles[i].UnreadMessageIDs)
	}
	out.Mentions = slices.Clone(u.Mentions)
	// The topics' IDs share one array (topicBuckets.list): copy it once.
	out.Streams = slices.Clone(u.Streams)
	n := 0
	for _, t := range u.Streams {
		n += len(t.UnreadMessageIDs)
	}
	all := make([]int64, 0, n)
	for i, t := range u.Streams {
		at := len(all)
		all = append(all, t.UnreadMessageIDs...)
		out.Streams[i].UnreadMessageIDs = all[at:len(all):len(all)]
	}
	return &out
}

// unreadWatch is the store of a write transaction, below its writeTx:
// each write to a reader's records that their unread state is read from
// notes the reader, and each change of existing channel messages notes
// every reader (see the top of this file). Reads pass through.
type unreadWatch struct {
	storage.Store
	t *unreadTouched
}

func (u unreadWatch) CreateMessage(ctx context.Context, m *storage.Message, readers []storage.UserMessage) error {
	for _, r := range readers {
		u.t.user(r.UserID)
	}
	return u.Store.CreateMessage(ctx, m, readers)
}

func (u unreadWatch) InsertUserMessages(ctx context.Context, rows []storage.UserMessage) error {
	for _, r := range rows {
		u.t.user(r.UserID)
	}
	return u.Store.InsertUserMessages(ctx, rows)
}

func (u unreadWatch) UpdateUserMessageFlags(ctx context.Context, realmID, userID int64, messageIDs []int64, add, remove int64) error {
	u.t.user(userID)
	return u.Store.UpdateUserMessageFlags(ctx, realmID, userID, messageIDs, add, remove)
}

func (u unreadWatch) AddReadRange(ctx context.Context, realmID, userID, streamID, first, last int64) error {
	u.t.user(userID)
	return u.Store.AddReadRange(ctx, realmID, userID, streamID, first, last)
}

func (u unreadWatch) ExtendReadRange(ctx context.Context, realmID, userID, streamID, messageID int64) error {
	u.t.user(userID)
	return u.Store.ExtendReadRange(ctx, realmID, userID, streamID, messageID)
}

func (u unreadWatch) ReplaceReadRanges(ctx context.Context, realmID, userID, streamID, lo, hi int64, ranges []storage.ReadRange) error {
	u.t.user(userID)
	return u.Store.ReplaceReadRanges(ctx, realmID, userID, streamID, lo, hi, ranges)
}

func (u unreadWatch) ResetReadRanges(ctx context.Context, realmID, userID int64, streamIDs []int64, last int64) error {
	u.t.user(userID)
	return u.Store.ResetReadRanges(ctx, realmID, userID, streamIDs, last)
}

// EditMessages notes every reader when the messages move or change
// topic, or when a new content changes whether a message mentions the
// whole channel (which the unread state's mentions follow). A content
// edit that keeps that changes no state: personal and topic mentions are
// the mentioned readers' rows, noted as they are written.
func (u unreadWatch) EditMessages(ctx context.Context, realmID int64, ids []int64, e storage.MessageEdit) error {
	switch {
	case e.StreamID != nil || e.Topic != nil:
		u.t.All = true
	case e.Content != nil && !u.t.All:
		old, err := u.Store.GetMessagesByID(ctx, realmID, ids)
		if err != nil {
			return err
		}
		if len(old) != len(ids) {
			u.t.All = true
		}
		for _, m := range old {
			if m.StreamWildcard != e.Content.StreamWildcard {
				u.t.All = true
			}
		}
	}
	return u.Store.EditMessages(ctx, realmID, ids, e)
}

func (u unreadWatch) DeleteMessages(ctx context.Context, realmID int64, ids []int64) error {
	u.t.All = true
	return u.Store.DeleteMessages(ctx, realmID, ids)
}

func (u unreadWatch) AddUserMute(ctx context.Context, m *storage.UserMute) error {
	u.t.user(m.UserID)
	return u.Store.AddUserMute(ctx, m)
}

func (u unreadWatch) RemoveUserMute(ctx context.Context, realmID, userID, mutedUserID int64) error {
	u.t.user(userID)
	return u.Store.RemoveUserMute(ctx, realmID, userID, mutedUserID)
}

func (u unreadWatch) Subscribe(ctx context.Context, sub *storage.Subscription, now int64) error {
	u.t.user(sub.UserID)
	return u.Store.Subscribe(ctx, sub, now)
}

func (u unreadWatch) Unsubscribe(ctx context.Context, realmID, userID, streamID, now int64) error {
	u.t.user(userID)
	return u.Store.Unsubscribe(ctx, realmID, userID, streamID, now)
}

func (u unreadWatch) UpdateSubscription(ctx context.Context, sub *storage.Subscription, columns ...string) error {
	u.t.user(sub.UserID)
	return u.Store.UpdateSubscription(ctx, sub, columns...)
}

func (u unreadWatch) SetUserTopic(ctx context.Context, t *storage.UserTopic) error {
	u.t.user(t.UserID)
	return u.Store.SetUserTopic(ctx, t)
}

func (u unreadWatch) DeleteUserTopic(ctx context.Context, realmID, userID, streamID int64, topic string) error {
	u.t.user(userID)
	return u.Store.DeleteUserTopic(ctx, realmID, userID, streamID, topic)
}
