package chat

import (
	"context"

	"github.com/teamchat/chat/storage"
)

// reads is where a rule reads: one store and the caches that hold for it.
// Which store a read goes to is decided by the value a rule is given, not
// by comparing stores:
//
//   - Service.reads reads the Service's store through its shared caches;
//   - writeTx.reads reads the write transaction, so that a rule inside a
//     write sees the transaction's own writes. Records that only a
//     committed write changes (channels, users: each change starts a new
//     generation when it commits) are still read through the shared
//     caches; those a rule may change and read back in one transaction
//     (mutes, alert words, topic policies) are read from the transaction;
//   - a registration's snapshot view reads its snapshot through caches of
//     its own (privateReads), so that nothing newer leaks in.
type reads struct {
	// s is the Service's configuration and machinery (its clock, limits,
	// logger); a rule never reads s's store, only st.
	s     *Service
	st    storage.Store
	c     *recordCache
	links *linkifierCache
	msgs  *messageCache
	// tx: st is a write transaction (see above).
	tx bool
	// recv answers max_message_id from memory: only the Service's own
	// reads have it (a snapshot or a transaction reads the store).
	recv *receivedIndex
	// unreadAt: a registration's snapshot, and the generations of the
	// reader's unread state read before it began (unread_cache.go).
	unreadAt *unreadGens
}

// reads reads the Service's store through its shared caches.
func (s *Service) reads() reads {
	return reads{s: s, st: s.store, c: s.records, links: s.linkifiers, msgs: s.messages, recv: &s.received}
}

// reads reads the transaction (see the reads type).
func (w *writeTx) reads() reads {
	s := w.svc
	return reads{s: s, st: w, c: s.records, links: s.linkifiers, msgs: s.messages, tx: true}
}

// privateReads reads st through caches of its own: a registration's
// snapshot, so that nothing newer than the snapshot leaks in, or a
// transaction that must see its own writes in every record (markReadFrom).
func (s *Service) privateReads(st storage.Store) reads {
	c := newRecordCache(s.now)
	return reads{s: s, st: st, c: c, links: newLinkifierCache(c, s.now), msgs: newMessageCache(1<<20, s.now)}
}

// channelsByID loads channels of the organization, from the cache where
// it has them and in one query for the rest; missing IDs are left out.
func (r reads) channelsByID(ctx context.Context, realmID int64, ids []int64) (map[int64]*storage.Stream, error) {
	ids = uniqueSorted(ids)
	out := make(map[int64]*storage.Stream, len(ids))
	r.c.channels.GetMany(realmID, ids, func(id int64, ch storage.Stream) { out[id] = &ch })
	var missing []int64
	for _, id := range ids {
		if out[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	gen := r.c.generation(realmID)
	found, err := r.st.GetStreamsByID(ctx, realmID, missing)
	if err != nil {
		return nil, err
	}
	for i := range found {
		out[found[i].ID] = &found[i]
		r.c.channels.Put(realmID, gen, found[i].ID, found[i])
	}
	return out, nil
}

// channelByID is channelsByID for one channel: storage.ErrNotFound when
// there is none.
func (r reads) channelByID(ctx context.Context, realmID, id int64) (*storage.Stream, error) {
	found, err := r.channelsByID(ctx, realmID, []int64{id})
	if err != nil {
		return nil, err
	}
	if ch := found[id]; ch != nil {
		return ch, nil
	}
	return nil, storage.ErrNotFound
}

// usersByID loads users of the organization, from the record cache where
// it has them (senders of a busy conversation usually are) and in one
// query for the rest, which it then caches.
func (r reads) usersByID(ctx context.Context, realm *storage.Realm, ids []int64) (map[int64]*storage.User, error) {
	ids = uniqueSorted(ids)
	out := make(map[int64]*storage.User, len(ids))
	var missing []int64
	r.c.getUsers(realm.ID, ids, out)
	for _, id := range ids {
		if out[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	gen := r.c.generation(realm.ID)
	users, err := r.st.FindUsers(ctx, realm.ID, storage.UserFilter{IDs: missing})
	if err != nil {
		return nil, err
	}
	for i := range users {
		out[users[i].ID] = &users[i]
		r.c.put(gen, realm, &users[i])
	}
	return out, nil
}

// mutedSenders is the set of users userID muted: cached (a mute is a
// write that refreshes it) except inside a transaction, which sees its
// own mutes and unmutes.
func (r reads) mutedSenders(ctx context.Context, realmID, userID int64) (map[int64]bool, error) {
	if r.tx {
		return r.muteSet(ctx, realmID, userID)
	}
	return r.c.mutes.Load(realmID, userID, func() (map[int64]bool, error) {
		return r.muteSet(ctx, realmID, userID)
	})
}

// muters lists the users who muted sender. A send reads them inside its
// transaction, through the cache: a mute is a write of its own that
// starts a new generation when it commits.
func (r reads) muters(ctx context.Context, realmID, sender int64) ([]int64, error) {
	return r.c.muters.Load(realmID, sender, func() ([]int64, error) {
		return r.st.ListMuters(ctx, realmID, sender)
	})
}
