package chat

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/storage"
)

// Several servers on one database (the fleet).
//
// Writes already work from any server: they meet in the database, and the
// event bus (storage.EventStore) carries every committed write's events to
// every server. What lives in one server's memory is its event queues. So
// that a client keeps its queue whichever server an ordinary round-robin
// balancer sends its requests to:
//
//   - each server records itself in the database (storage.FleetStore):
//     where its peers reach it, and a heartbeat every FleetConfig.Heartbeat;
//   - a queue's ID names the server that made it (its first eight hex
//     digits), so any server knows where to find it; a request for a queue
//     held elsewhere (a poll, blocking or not, or DELETE /events) is
//     forwarded to its holder through the PeerTransport, and the answer
//     comes back as if the queue were here;
//   - a server that stops gracefully hands its queues over (HandOverEvents):
//     to live peers, at a cut in the event bus's order, so that nothing is
//     lost or repeated, and every server records where they went (the bus,
//     and the queue_moves table for servers that start later); with no
//     peer, to storage, for the next server to start;
//   - "does this user have a live client" (missed-message notifications)
//     asks every live peer as well as this server.
//
// When a queue's holder is gone (killed, or unreachable), a request for it
// answers BAD_EVENT_QUEUE_ID at once, as after a restart of the reference:
// its client registers again.

// FleetConfig makes a Service one of several servers on one database
// (WithFleet).
type FleetConfig struct {
	// Address is where the other servers reach this one: the address of
	// a handler that passes their calls to ServePeer (transport/peer).
	Address string
	// Transport carries this server's calls to the others.
	Transport PeerTransport
	// Heartbeat is how often the server records that it is alive
	// (default 2 s); a server not seen for three heartbeats is taken
	// for gone.
	Heartbeat time.Duration
}

// PeerTransport carries a call from one server of the fleet to another:
// Call sends op with body to the server at addr, authenticated by
// secret, and returns its ServePeer answer. An error means the call did
// not get an answer (the peer is unreachable, or failed).
type PeerTransport interface {
	Call(ctx context.Context, addr, secret, op string, body []byte) ([]byte, error)
}

// WithFleet makes the Service one server of a fleet sharing its database
// (PostgreSQL): see FleetConfig. Run must run, so that the server keeps
// its heartbeat.
func WithFleet(cfg FleetConfig) Option {
	return func(s *Service) {
		if cfg.Heartbeat <= 0 {
			cfg.Heartbeat = 2 * time.Second
		}
		s.fleet.cfg = cfg
		s.fleet.enabled = cfg.Transport != nil && cfg.Address != ""
	}
}

// fleetState is what a Service knows of its fleet.
type fleetState struct {
	cfg     FleetConfig
	enabled bool
	id      atomic.Int64 // this server's ID (0 until registered)
	secret  string       // set at registration, read after

	draining atomic.Bool

	mu        sync.Mutex
	peers     map[int64]storage.Server // the live servers, this one included
	refreshed time.Time                // when peers was last read
	moved     map[string]int64         // queue ID -> the server it moved to
	// handovers are the handovers this server has seen on the bus (by
	// their ID): an adoption waits for its handover.
	handovers map[string]chan struct{}
	// transfers are the adoptions this server is sending.
	transfers sync.WaitGroup
	// synced are the writes of other servers that waited for this one
	// (fleet_sync.go).
	synced syncSeen
}

// newQueueID makes a queue ID that names this server (a random UUID when
// it is not in a fleet).
func (s *Service) newQueueID() string {
	return eventq.NewQueueID(uint32(s.fleet.id.Load()))
}

// startEvents takes back the queues a server saved when it stopped
// alone, starts listening to the bus, and then records this server in
// the fleet and starts its heartbeat. It runs once (eventHub.Start).
func (s *Service) startEvents(ctx context.Context) error {
	f := &s.fleet
	if err := s.restoreQueues(ctx); err != nil {
		return err
	}
	if err := s.store.ListenEvents(ctx, s.onBusBatch); err != nil {
		return err
	}
	if f.enabled {
		// Only now may the others hand this server queues: it hears
		// their handovers.
		if f.id.Load() == 0 {
			if err := s.joinFleet(ctx); err != nil {
				return err
			}
		}
		// Moves recorded before the bus listened; later ones arrive on it.
		moves, err := s.store.ListQueueMoves(ctx)
		if err != nil {
			return err
		}
		f.mu.Lock()
		for _, m := range moves {
			if _, ok := f.moved[m.QueueID]; !ok {
				f.moved[m.QueueID] = m.ServerID
			}
		}
		f.mu.Unlock()
		go s.heartbeat(ctx)
	}
	return nil
}

// joinFleet records this server and reads the fleet's secret.
func (s *Service) joinFleet(ctx context.Context) error {
	f := &s.fleet
	secret, err := s.store.FleetSecret(ctx, randomHex(32))
	if err != nil {
		return err
	}
	now := wallClock()
	me := storage.Server{Address: f.cfg.Address, StartedAt: now, SeenAt: now}
	if err := s.store.RegisterServer(ctx, &me); err != nil {
		return err
	}
	if me.ID >= 1<<32 {
		return errors.New("fleet: server IDs are exhausted (2^32); empty the servers table")
	}
	f.mu.Lock()
	f.secret = secret
	f.peers = map[int64]storage.Server{me.ID: me}
	f.moved = map[string]int64{}
	f.handovers = map[string]chan struct{}{}
	f.mu.Unlock()
	f.id.Store(me.ID)
	s.log.Info("joined the fleet", "server", me.ID, "address", me.Address)
	return s.refreshPeers(ctx)
}

// heartbeat records every Heartbeat that this server is alive, and reads
// who else is, until ctx ends. Servers not seen for a minute are forgotten
// now and then.
func (s *Service) heartbeat(ctx context.Context) {
	f := &s.fleet
	t := time.NewTicker(f.cfg.Heartbeat)
	defer t.Stop()
	lastForget := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.beat(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("fleet heartbeat failed", "err", err)
			continue
		}
		if time.Since(lastForget) > time.Minute {
			lastForget = time.Now()
			if err := s.store.ForgetServers(ctx, wallClock()-60); err != nil && ctx.Err() == nil {
				s.log.Warn("fleet: forgetting stopped servers failed", "err", err)
			}
		}
	}
}

// beat records this server's heartbeat and reads the live servers. A
// server whose record was forgotten (it stalled for a minute) records
// itself again under its ID.
func (s *Service) beat(ctx context.Context) error {
	f := &s.fleet
	id, now := f.id.Load(), wallClock()
	err := s.store.BeatServer(ctx, id, now, f.draining.Load())
	if errors.Is(err, storage.ErrNotFound) {
		err = s.store.RegisterServer(ctx, &storage.Server{ID: id, Address: f.cfg.Address, StartedAt: now, SeenAt: now,
			Draining: f.draining.Load()})
	}
	if err != nil {
		return err
	}
	return s.refreshPeers(ctx)
}

// refreshPeers reads the live servers.
func (s *Service) refreshPeers(ctx context.Context) error {
	f := &s.fleet
	live, err := s.store.ListServers(ctx, wallClock()-int64(3*f.cfg.Heartbeat/time.Second)-1)
	if err != nil {
		return err
	}
	peers := make(map[int64]storage.Server, len(live))
	for _, p := range live {
		peers[p.ID] = p
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.peers, f.refreshed = peers, time.Now()
	for q, to := range f.moved {
		if _, ok := peers[to]; !ok {
			delete(f.moved, q) // its holder is gone, and the queue with it
		}
	}
	return nil
}

// peer returns the live server id, reading the servers again if it is
// not known and may have started since they were last read: its ID is
// above every one known (IDs grow), or the list is a while old.
func (s *Service) peer(ctx context.Context, id int64) (storage.Server, bool) {
	f := &s.fleet
	f.mu.Lock()
	p, ok := f.peers[id]
	newer := true
	for known := range f.peers {
		newer = newer && id > known
	}
	stale := time.Since(f.refreshed) > f.cfg.Heartbeat/4
	f.mu.Unlock()
	if ok || !newer && !stale {
		return p, ok
	}
	if err := s.refreshPeers(ctx); err != nil {
		return storage.Server{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok = f.peers[id]
	return p, ok
}

// livePeers returns the other live servers; fresh reads them from the
// database first.
func (s *Service) livePeers(ctx context.Context, fresh bool) ([]storage.Server, error) {
	f := &s.fleet
	if !f.enabled || f.id.Load() == 0 {
		return nil, nil
	}
	if fresh {
		if err := s.refreshPeers(ctx); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]storage.Server, 0, len(f.peers))
	for id, p := range f.peers {
		if id != f.id.Load() {
			out = append(out, p)
		}
	}
	return out, nil
}

// holderOf returns the live server that holds queue id, which this
// server does not have: the server it moved to, else the one its ID names
// (a move recorded before this server knew of it is looked up). It may be
// this server, when a queue moved here and the bus has not said so yet.
func (s *Service) holderOf(ctx context.Context, id string) (storage.Server, bool) {
	f := &s.fleet
	if !f.enabled || f.id.Load() == 0 {
		return storage.Server{}, false
	}
	f.mu.Lock()
	to, moved := f.moved[id]
	f.mu.Unlock()
	if !moved {
		to = int64(eventq.HolderOf(id))
		if to == 0 {
			return storage.Server{}, false
		}
		if _, live := s.peer(ctx, to); !live || to == f.id.Load() {
			// Its maker is gone or is this server: the queue may have
			// moved before this server started.
			m, err := s.store.GetQueueMove(ctx, id)
			if err != nil {
				return storage.Server{}, false
			}
			to = m.ServerID
		}
	}
	return s.peer(ctx, to)
}

// wallClock is the fleet's time: heartbeats, liveness and the records of
// moved and saved queues are compared across processes, so they follow
// the machines' clocks, not the Service's injected one (which tests move).
func wallClock() int64 { return time.Now().Unix() }
