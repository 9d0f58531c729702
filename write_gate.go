package chat

import (
	"context"
	"sync"

	"github.com/teamchat/chat/storage"
)

// realmGate lets one write transaction per organization into the
// database at a time, in this process. The database serializes an
// organization's writes anyway (an advisory lock on PostgreSQL, the one
// writer connection on SQLite); waiting here instead means a writer in
// line holds no pooled connection while it waits. Without the gate, a
// burst of writes to one organization could fill the connection pool
// with transactions all waiting for the lock, and the one holding it
// could find no connection for a read it makes outside its transaction.
//
// The gate also keeps the number of write transactions open at once in
// this process within the store's storage.WriteLimiter, so that
// transactions of different organizations never hold every pooled
// connection between them either.
type realmGate struct {
	mu    sync.Mutex
	slots map[int64]*gateSlot
	// open has a token per open write transaction; nil: no limit.
	open chan struct{}
}

// newRealmGate limits open write transactions to limit (0: no limit).
func newRealmGate(limit int) *realmGate {
	g := &realmGate{}
	if limit > 0 {
		g.open = make(chan struct{}, limit)
	}
	return g
}

type gateSlot struct {
	ch    chan struct{} // holds a token while a writer is inside
	users int           // writers holding or waiting for the slot
}

// enter waits for the organization's turn and a free transaction, or
// for ctx to end. The returned function leaves.
func (g *realmGate) enter(ctx context.Context, realmID int64) (func(), error) {
	g.mu.Lock()
	if g.slots == nil {
		g.slots = map[int64]*gateSlot{}
	}
	slot := g.slots[realmID]
	if slot == nil {
		slot = &gateSlot{ch: make(chan struct{}, 1)}
		g.slots[realmID] = slot
	}
	slot.users++
	g.mu.Unlock()
	select {
	case slot.ch <- struct{}{}:
	case <-ctx.Done():
		g.release(realmID, slot)
		return nil, ctx.Err()
	}
	if g.open != nil {
		select {
		case g.open <- struct{}{}:
		case <-ctx.Done():
			<-slot.ch
			g.release(realmID, slot)
			return nil, ctx.Err()
		}
	}
	return func() {
		if g.open != nil {
			<-g.open
		}
		<-slot.ch
		g.release(realmID, slot)
	}, nil
}

// release forgets the slot when nobody holds or waits for it.
func (g *realmGate) release(realmID int64, slot *gateSlot) {
	g.mu.Lock()
	slot.users--
	if slot.users == 0 {
		delete(g.slots, realmID)
	}
	g.mu.Unlock()
}

// writeLimit is the store's limit on open write transactions (0: none).
func writeLimit(store storage.Store) int {
	if l, ok := store.(storage.WriteLimiter); ok {
		return l.MaxConcurrentWrites()
	}
	return 0
}
