package chat

import (
	"context"
	"time"

	"github.com/teamchat/chat/internal/cache"
	"github.com/teamchat/chat/storage"
)

// recordCache keeps the records an organization's requests read again
// and again: its callers (the user and their organization, by ID and by
// email, so that an authenticated request does not read them again), its
// channels and their names, and the per-user records every request needs
// (groups, subscription periods, mutes, alert words, topic policies). All
// of it is one internal/cache per kind of record on one set of
// generations: every write through the write path bumps its
// organization's generation when it commits (unless it keeps callers), so
// a key change, a role change or a deactivation takes effect on the next
// request. Entries also expire after a few seconds of the Service's clock,
// which bounds how long a change made by another server on the same
// database (until the event bus carries invalidations) or written to the
// store directly (call Service.InvalidateCaches) can go unseen.
type recordCache struct {
	gens    *cache.Generations
	byID    *cache.Cache[int64, cachedCaller]
	byEmail *cache.Cache[emailKey, cachedCaller]
	// channels are channel records: message reads look up the same few
	// channels on every request.
	channels *cache.Cache[int64, storage.Stream]
	// groups are the groups each user is in (EffectiveGroupIDs), which
	// every send's permission check needs.
	groups *cache.Cache[int64, []int64]
	// periods are each user's subscription periods (what they received),
	// which every message read needs; only subscription changes, which
	// are writes, change them.
	periods *cache.Cache[int64, []storage.SubscriptionPeriod]
	// mutes are the users each user muted, which every message read
	// needs (their messages are read for the muter).
	mutes *cache.Cache[int64, map[int64]bool]
	// muters are the users who muted each sender, which every send needs.
	muters *cache.Cache[int64, []int64]
	// channelNames are channel IDs by folded name: sends and narrows name
	// their channel (the record itself is in channels). A rename or a new
	// channel is a write that starts a new generation.
	channelNames *cache.Cache[nameKey, int64]
	// alertTokens are the alert words of active users by first token, one
	// entry per token a send looked up (none found is an entry too): a
	// send reads only the tokens of its content no send read before.
	// Alert word changes start a new generation.
	alertTokens *cache.Cache[nameKey, []storage.AlertWord]
	// anyAlertWords says, per organization, whether anyone has an alert
	// word: a send to an organization without any looks up none.
	anyAlertWords *cache.Cache[int64, bool]
	// topicPolicies are users' visibility policies of topics (0 when they
	// have none), which every send to a channel reads for its sender.
	// Besides new generations, a transaction that sets or removes a
	// policy forgets it when it commits (writeTx.SetUserTopic); another
	// server's send that sets one is seen when the entry expires.
	topicPolicies *cache.Cache[topicKey, int]
	// profileValues are each user's custom profile field values, which
	// every GET /users/me answers; changing one is a write that starts a
	// new generation.
	profileValues *cache.Cache[int64, []storage.ProfileFieldValue]
}

// topicKey is a user's topic (folded, as policies are matched).
type topicKey struct {
	realmID, userID, streamID int64
	topic                     string
}

// nameKey is a name (folded) or a token in an organization.
type nameKey struct {
	realmID int64
	name    string
}

type emailKey struct {
	realmID int64
	email   string
}

type cachedCaller struct {
	realm storage.Realm
	user  storage.User
}

const (
	recordCacheTTL = 5 * time.Second
	// recordCacheMax bounds the entries of each cache.
	recordCacheMax = 100_000
)

// newCache is an organization-scoped cache on gens with the callers'
// expiry and bound.
func newCache[K comparable, V any](gens *cache.Generations, now func() time.Time) *cache.Cache[K, V] {
	return cache.New[K, V](cache.Config[V]{TTL: recordCacheTTL, MaxEntries: recordCacheMax, Now: now, Generations: gens})
}

func newRecordCache(now func() time.Time) *recordCache {
	g := &cache.Generations{}
	return &recordCache{gens: g,
		byID: newCache[int64, cachedCaller](g, now), byEmail: newCache[emailKey, cachedCaller](g, now),
		channels: newCache[int64, storage.Stream](g, now), groups: newCache[int64, []int64](g, now),
		periods: newCache[int64, []storage.SubscriptionPeriod](g, now), mutes: newCache[int64, map[int64]bool](g, now),
		muters: newCache[int64, []int64](g, now), channelNames: newCache[nameKey, int64](g, now),
		alertTokens: newCache[nameKey, []storage.AlertWord](g, now), topicPolicies: newCache[topicKey, int](g, now),
		anyAlertWords: newCache[int64, bool](g, now), profileValues: newCache[int64, []storage.ProfileFieldValue](g, now)}
}

// generation is the organization's current generation: take it before
// reading from the store, and store the result under it.
func (c *recordCache) generation(realmID int64) uint64 { return c.gens.Current(realmID) }

// bump invalidates every entry of the organization, in every cache on
// the callers' generations (the linkifiers' too).
func (c *recordCache) bump(realmID int64) { c.gens.Invalidate(realmID) }

func (c *recordCache) get(realmID, userID int64) (*storage.Realm, *storage.User, bool) {
	e, ok := c.byID.Get(realmID, userID)
	return fresh(e, ok)
}

func (c *recordCache) getByEmail(realmID int64, email string) (*storage.Realm, *storage.User, bool) {
	e, ok := c.byEmail.Get(realmID, emailKey{realmID, storage.Fold(email)})
	return fresh(e, ok)
}

// getUsers adds to out a copy of each live cached user among ids.
func (c *recordCache) getUsers(realmID int64, ids []int64, out map[int64]*storage.User) {
	c.byID.GetMany(realmID, ids, func(id int64, e cachedCaller) {
		u := e.user
		out[id] = &u
	})
}

// fresh returns copies of an entry's records (callers may change them).
func fresh(e cachedCaller, ok bool) (*storage.Realm, *storage.User, bool) {
	if !ok {
		return nil, nil, false
	}
	r, u := e.realm, e.user
	return &r, &u, true
}

// put remembers a caller read at generation gen.
func (c *recordCache) put(gen uint64, realm *storage.Realm, u *storage.User) {
	e := cachedCaller{realm: *realm, user: *u}
	c.byID.Put(realm.ID, gen, u.ID, e)
	c.byEmail.Put(realm.ID, gen, emailKey{realm.ID, storage.Fold(u.Email)}, e)
}

// userPeriods is ListUserPeriods through the cache (the slice is shared:
// read only).
func (r reads) userPeriods(ctx context.Context, realmID, userID int64) ([]storage.SubscriptionPeriod, error) {
	return r.c.periods.Load(realmID, userID, func() ([]storage.SubscriptionPeriod, error) {
		return r.st.ListUserPeriods(ctx, realmID, userID)
	})
}

// cachedScope is callerScope outside a transaction, from the cache when
// it holds the user's groups.
func (r reads) cachedScope(ctx context.Context, realmID, userID int64) (*groupScope, error) {
	ids, err := r.c.groups.Load(realmID, userID, func() ([]int64, error) {
		return r.st.EffectiveGroupIDs(ctx, realmID, userID)
	})
	if err != nil {
		return nil, err
	}
	return newGroupScope(ids), nil
}

// channelByName finds a channel by name, case-insensitively, through
// the caches: storage.ErrNotFound when there is none.
func (r reads) channelByName(ctx context.Context, realmID int64, name string) (*storage.Stream, error) {
	key := nameKey{realmID, storage.Fold(name)}
	if id, ok := r.c.channelNames.Get(realmID, key); ok {
		return r.channelByID(ctx, realmID, id)
	}
	gen := r.c.generation(realmID)
	ch, err := r.st.GetStreamByName(ctx, realmID, name)
	if err != nil {
		return nil, err
	}
	r.c.channelNames.Put(realmID, gen, key, ch.ID)
	r.c.channels.Put(realmID, gen, ch.ID, *ch)
	return ch, nil
}

// InvalidateCaches forgets what the Service caches about an organization
// (its users as callers, its channels, the newest messages its users
// received and the unread states it remembers). Host programs that change
// the store directly, not through the Service, call it afterwards.
func (s *Service) InvalidateCaches(realmID int64) {
	s.records.bump(realmID)
	s.received.reset(realmID)
	s.unread.reset(realmID)
}
