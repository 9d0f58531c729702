package chat

import (
	"context"
	"sync"
	"time"
)

// Read your writes across servers. Each server caches callers (accounts,
// roles, keys, settings) and messages, and drops what a write made stale
// when the write reaches it on the event bus, a moment after the commit.
// Behind a round-robin balancer a client's next request usually lands on
// another server, sooner than that moment: a regenerated API key would
// still work there once, an edited message read as before. So a write
// that makes other servers' caches stale does not answer until every live
// peer has applied it: its bus payload carries a sync ID, and the writer
// asks each peer (in parallel) to answer once that ID has arrived. Sends,
// reactions and flags leave the caches alone and never wait. A peer that
// does not answer within syncWait is not waited for (it is gone, or will
// apply the write when its bus catches up).

// syncWait bounds the wait for peers to apply a write.
const syncWait = 2 * time.Second

const peerOpSync = "sync" // answer once this write has arrived here

type peerSync struct {
	ID string `json:"id"`
}

// syncSeen are the sync IDs of writes this server's bus delivered
// recently (and those a peer asks about before they arrive).
type syncSeen struct {
	mu   sync.Mutex
	byID map[string]*syncEntry
	last time.Time // the last sweep
}

type syncEntry struct {
	ch      chan struct{} // closed when the write arrived
	arrived bool
	at      time.Time
}

// entry returns id's entry (under m.mu), sweeping old ones now and then.
func (m *syncSeen) entry(id string) *syncEntry {
	now := time.Now()
	if m.byID == nil {
		m.byID = map[string]*syncEntry{}
	}
	if now.Sub(m.last) > 10*time.Second {
		for k, e := range m.byID {
			if now.Sub(e.at) > time.Minute {
				delete(m.byID, k)
			}
		}
		m.last = now
	}
	e := m.byID[id]
	if e == nil {
		e = &syncEntry{ch: make(chan struct{}), at: now}
		m.byID[id] = e
	}
	return e
}

// arrived records that the write with sync ID id reached this server.
func (m *syncSeen) arrived(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entry(id); !e.arrived {
		e.arrived = true
		close(e.ch)
	}
}

// await waits until the write with sync ID id has reached this server.
func (m *syncSeen) await(ctx context.Context, id string) error {
	m.mu.Lock()
	e := m.entry(id)
	m.mu.Unlock()
	select {
	case <-e.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// needsSync reports whether a write's bus payload must carry a sync ID:
// it makes caches stale, and this server has live peers.
func (s *Service) needsSync(w *writeTx) bool {
	f := &s.fleet
	if !f.enabled || f.id.Load() == 0 || w.callersKept && len(w.forgotten) == 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.peers) > 1
}

// syncPeers waits until every live peer has applied the write with sync
// ID id (see the top of this file).
func (s *Service) syncPeers(ctx context.Context, id string) {
	peers, err := s.livePeers(ctx, false)
	if err != nil || len(peers) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncWait)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Go(func() {
			var out struct{}
			if err := s.callPeer(ctx, p, peerOpSync, peerSync{ID: id}, &out); err != nil {
				s.log.Warn("fleet: a peer did not confirm a write", "peer", p.ID, "err", err)
			}
		})
	}
	wg.Wait()
}
