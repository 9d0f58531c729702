package chat

import (
	"context"
	"sync"
	"time"

	"github.com/teamchat/chat/storage"
)

// callerCache keeps recently loaded callers (the user and their
// organization), by ID and by email, so that an authenticated request does
// not read them again. Every write through the write path bumps its
// organization's generation when it commits, and entries of an older
// generation are ignored: a key change, a role change or a deactivation
// takes effect on the next request. Entries also expire after a few
// seconds, which bounds how long a change made by another server on the
// same database (until the event bus carries invalidations) or written to
// the store directly (call Service.InvalidateCaches) can go unseen.
type callerCache struct {
	mu      sync.RWMutex
	gens    map[int64]uint64
	byID    map[[2]int64]cachedCaller
	byEmail map[emailKey]cachedCaller
	// channels are channel records, under the same rules: message reads
	// look up the same few channels on every request.
	channels map[[2]int64]cached[storage.Stream]
	// groups are the groups each user is in (EffectiveGroupIDs), which
	// every send's permission check needs.
	groups map[[2]int64]cached[[]int64]
	// periods are each user's subscription periods (what they received),
	// which every message read needs; only subscription changes, which
	// are writes, change them.
	periods map[[2]int64]cached[[]storage.SubscriptionPeriod]
	// mutes are the users each user muted, which every message read
	// needs (their messages are read for the muter).
	mutes map[[2]int64]cached[map[int64]bool]
	// muters are the users who muted each sender, which every send needs.
	muters map[[2]int64]cached[[]int64]
}

// cached is a record of an organization, keyed by (realm, ID), read at
// generation gen.
type cached[T any] struct {
	val     T
	gen     uint64
	expires time.Time
}

// cacheGet returns the live entry of (realmID, id) in m.
func cacheGet[T any](c *callerCache, m map[[2]int64]cached[T], realmID, id int64) (T, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := m[[2]int64{realmID, id}]
	if !ok || e.gen != c.gens[realmID] || time.Now().After(e.expires) {
		var zero T
		return zero, false
	}
	return e.val, true
}

// cachePut remembers v, read at generation gen, unless a write committed
// since.
func cachePut[T any](c *callerCache, m map[[2]int64]cached[T], gen uint64, realmID, id int64, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gens[realmID] {
		return
	}
	if len(m) >= callerCacheMax {
		clear(m)
	}
	m[[2]int64{realmID, id}] = cached[T]{val: v, gen: gen, expires: time.Now().Add(callerCacheTTL)}
}

type emailKey struct {
	realmID int64
	email   string
}

type cachedCaller struct {
	realm   storage.Realm
	user    storage.User
	gen     uint64
	expires time.Time
}

const (
	callerCacheTTL = 5 * time.Second
	// callerCacheMax bounds the entries of each map; past it the map is
	// emptied (a burst of distinct callers just misses for a while).
	callerCacheMax = 100_000
)

func newCallerCache() *callerCache {
	return &callerCache{gens: map[int64]uint64{}, byID: map[[2]int64]cachedCaller{}, byEmail: map[emailKey]cachedCaller{},
		channels: map[[2]int64]cached[storage.Stream]{}, groups: map[[2]int64]cached[[]int64]{},
		periods: map[[2]int64]cached[[]storage.SubscriptionPeriod]{}, mutes: map[[2]int64]cached[map[int64]bool]{},
		muters: map[[2]int64]cached[[]int64]{}}
}

// generation is the organization's current generation: take it before
// reading from the store, and store the result under it.
func (c *callerCache) generation(realmID int64) uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gens[realmID]
}

// bump invalidates every entry of the organization.
func (c *callerCache) bump(realmID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gens[realmID]++
}

func (c *callerCache) get(realmID, userID int64) (*storage.Realm, *storage.User, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.byID[[2]int64{realmID, userID}]
	return c.fresh(e, ok, realmID)
}

func (c *callerCache) getByEmail(realmID int64, email string) (*storage.Realm, *storage.User, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.byEmail[emailKey{realmID, storage.Fold(email)}]
	return c.fresh(e, ok, realmID)
}

// getUsers adds to out a copy of each live cached user among ids.
func (c *callerCache) getUsers(realmID int64, ids []int64, out map[int64]*storage.User) {
	now := time.Now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	gen := c.gens[realmID]
	for _, id := range ids {
		if e, ok := c.byID[[2]int64{realmID, id}]; ok && e.gen == gen && now.Before(e.expires) {
			u := e.user
			out[id] = &u
		}
	}
}

// fresh returns copies of a live entry's records (callers may change them).
func (c *callerCache) fresh(e cachedCaller, ok bool, realmID int64) (*storage.Realm, *storage.User, bool) {
	if !ok || e.gen != c.gens[realmID] || time.Now().After(e.expires) {
		return nil, nil, false
	}
	r, u := e.realm, e.user
	return &r, &u, true
}

// put remembers a caller read at generation gen.
func (c *callerCache) put(gen uint64, realm *storage.Realm, u *storage.User) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gens[realm.ID] {
		return // a write committed while it was read
	}
	if len(c.byID) >= callerCacheMax || len(c.byEmail) >= callerCacheMax {
		clear(c.byID)
		clear(c.byEmail)
	}
	e := cachedCaller{realm: *realm, user: *u, gen: gen, expires: time.Now().Add(callerCacheTTL)}
	c.byID[[2]int64{realm.ID, u.ID}] = e
	c.byEmail[emailKey{realm.ID, storage.Fold(u.Email)}] = e
}

// userPeriods is ListUserPeriods through the cache (the slice is shared:
// read only).
func (s *Service) userPeriods(ctx context.Context, realmID, userID int64) ([]storage.SubscriptionPeriod, error) {
	if periods, ok := cacheGet(s.callers, s.callers.periods, realmID, userID); ok {
		return periods, nil
	}
	gen := s.callers.generation(realmID)
	periods, err := s.store.ListUserPeriods(ctx, realmID, userID)
	if err != nil {
		return nil, err
	}
	cachePut(s.callers, s.callers.periods, gen, realmID, userID, periods)
	return periods, nil
}

// cachedScope is callerScope outside a transaction, from the cache when
// it holds the user's groups.
func (s *Service) cachedScope(ctx context.Context, realmID, userID int64) (*groupScope, error) {
	if ids, ok := cacheGet(s.callers, s.callers.groups, realmID, userID); ok {
		return newGroupScope(ids), nil
	}
	gen := s.callers.generation(realmID)
	ids, err := s.store.EffectiveGroupIDs(ctx, realmID, userID)
	if err != nil {
		return nil, err
	}
	cachePut(s.callers, s.callers.groups, gen, realmID, userID, ids)
	return newGroupScope(ids), nil
}

// channelsByID loads channels of the organization, from the cache where
// it has them and in one query for the rest; missing IDs are left out.
func (s *Service) channelsByID(ctx context.Context, realmID int64, ids []int64) (map[int64]*storage.Stream, error) {
	return s.channelsByIDFrom(ctx, s.store, realmID, ids)
}

// channelsByIDFrom is channelsByID reading what is not cached from st (a
// write transaction reads through itself).
func (s *Service) channelsByIDFrom(ctx context.Context, st storage.Store, realmID int64, ids []int64) (map[int64]*storage.Stream, error) {
	ids = uniqueSorted(ids)
	out := make(map[int64]*storage.Stream, len(ids))
	var missing []int64
	for _, id := range ids {
		if ch, ok := cacheGet(s.callers, s.callers.channels, realmID, id); ok {
			out[id] = &ch
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	gen := s.callers.generation(realmID)
	found, err := st.GetStreamsByID(ctx, realmID, missing)
	if err != nil {
		return nil, err
	}
	for i := range found {
		out[found[i].ID] = &found[i]
		cachePut(s.callers, s.callers.channels, gen, realmID, found[i].ID, found[i])
	}
	return out, nil
}

// channelByID is channelsByID for one channel: storage.ErrNotFound when
// there is none.
func (s *Service) channelByID(ctx context.Context, realmID, id int64) (*storage.Stream, error) {
	return s.channelByIDFrom(ctx, s.store, realmID, id)
}

// channelByIDFrom is channelByID reading what is not cached from st.
func (s *Service) channelByIDFrom(ctx context.Context, st storage.Store, realmID, id int64) (*storage.Stream, error) {
	found, err := s.channelsByIDFrom(ctx, st, realmID, []int64{id})
	if err != nil {
		return nil, err
	}
	if ch := found[id]; ch != nil {
		return ch, nil
	}
	return nil, storage.ErrNotFound
}

// InvalidateCaches forgets what the Service caches about an organization
// (its users as callers, and its channels). Host programs that change the store directly,
// not through the Service, call it afterwards.
func (s *Service) InvalidateCaches(realmID int64) { s.callers.bump(realmID) }
