package chat

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/storage"
)

// The calls between the servers of a fleet (ServePeer answers them; a
// PeerTransport carries them). Each is JSON in and out.
const (
	peerOpPoll   = "poll"   // a long poll, or DELETE /events, of a queue held there
	peerOpDelete = "delete" // DELETE /events of a queue held there
	peerOpAdopt  = "adopt"  // the queues of a handover, to their new holder
	peerOpHere   = "here"   // which of these users have a live client there
)

// Outcomes of a forwarded poll or delete other than its events: the
// eventq errors, and "moved" when the queue moved on (to MovedTo).
const (
	peerNoQueue    = "no_queue"
	peerPruned     = "pruned"
	peerNotInQueue = "not_in_queue"
	peerMoved      = "moved"
)

type peerPoll struct {
	Realm     int64  `json:"realm"`
	User      int64  `json:"user"`
	Queue     string `json:"queue"`
	Last      int64  `json:"last"`
	DontBlock bool   `json:"dont_block,omitempty"`
	// Hops counts the servers that sent the call on (it moved).
	Hops int `json:"hops,omitempty"`
}

type peerPollResult struct {
	Events  []json.RawMessage `json:"events"`
	Waited  bool              `json:"waited,omitempty"`
	Outcome string            `json:"outcome,omitempty"`
	MovedTo int64             `json:"moved_to,omitempty"`
}

type peerAdoption struct {
	Handover string       `json:"handover"`
	Queues   []queueState `json:"queues"`
}

type peerAdoptionResult struct {
	Missing []string `json:"missing"`
}

type peerHere struct {
	Realm int64   `json:"realm"`
	Users []int64 `json:"users"`
}

type peerHereResult struct {
	// WithQueues are the users with a queue there that takes messages.
	WithQueues []int64        `json:"with_queues"`
	Presence   []peerPresence `json:"presence"`
}

// peerPresence is a user's presence as a server holds it, not yet
// written (its buffer).
type peerPresence struct {
	User      int64  `json:"user"`
	Active    *int64 `json:"active,omitempty"`
	Connected *int64 `json:"connected,omitempty"`
}

// peerTimeout bounds a call that does not wait for events.
const peerTimeout = 5 * time.Second

// ServePeer answers a call of another server of the fleet (see
// FleetConfig): op with its JSON body, authenticated by the fleet's
// secret, which every server reads from the shared database. A transport
// (transport/peer) passes the calls on; nothing else should.
func (s *Service) ServePeer(ctx context.Context, secret, op string, body []byte) ([]byte, error) {
	f := &s.fleet
	if !f.enabled || f.id.Load() == 0 {
		return nil, Unauthorized("This server is not in a fleet")
	}
	f.mu.Lock()
	want := f.secret
	f.mu.Unlock()
	if subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1 {
		return nil, Unauthorized("Invalid fleet secret")
	}
	var out any
	var err error
	switch op {
	case peerOpPoll, peerOpDelete:
		var p peerPoll
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, BadRequest("Malformed peer call: %v", err)
		}
		out = s.servePeerQueue(ctx, op, p)
	case peerOpAdopt:
		var a peerAdoption
		if err := json.Unmarshal(body, &a); err != nil {
			return nil, BadRequest("Malformed peer call: %v", err)
		}
		out, err = s.adopt(ctx, a)
	case peerOpSync:
		var p peerSync
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, BadRequest("Malformed peer call: %v", err)
		}
		if err := f.synced.await(ctx, p.ID); err != nil {
			return nil, Unavailable(err)
		}
		out = struct{}{}
	case peerOpHere:
		var h peerHere
		if err := json.Unmarshal(body, &h); err != nil {
			return nil, BadRequest("Malformed peer call: %v", err)
		}
		out = s.serveHere(h)
	default:
		return nil, NotFound("Unknown peer call %q", op)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// servePeerQueue polls or deletes a queue held here.
func (s *Service) servePeerQueue(ctx context.Context, op string, p peerPoll) *peerPollResult {
	q := s.hub.Find(p.Queue, p.Realm, p.User)
	if q == nil {
		if to, moved := s.movedTo(p.Queue); moved && p.Hops == 0 {
			return &peerPollResult{Outcome: peerMoved, MovedTo: to}
		}
		// The caller may know of a handover that this server's bus has
		// not delivered yet (to this server, or on from it: the caller
		// was sent here): catch up with the bus (every write committed
		// so far), then look again. A stopping server no longer hears
		// the bus and answers with what it knows.
		if s.hub.Started() {
			_ = s.catchUp(ctx)
		}
		if q = s.hub.Find(p.Queue, p.Realm, p.User); q == nil {
			if to, moved := s.movedTo(p.Queue); moved {
				return &peerPollResult{Outcome: peerMoved, MovedTo: to}
			}
			return &peerPollResult{Outcome: peerNoQueue}
		}
	}
	if op == peerOpDelete {
		s.hub.Remove(q)
		return &peerPollResult{}
	}
	events, waited, err := s.hub.Poll(ctx, q, p.Last, p.DontBlock)
	out := &peerPollResult{Events: events, Waited: waited}
	switch {
	case errors.Is(err, eventq.ErrNoQueue):
		out.Outcome = peerNoQueue
	case errors.Is(err, eventq.ErrPruned):
		out.Outcome = peerPruned
	case errors.Is(err, eventq.ErrNotInQueue):
		out.Outcome = peerNotInQueue
	case err != nil:
		// The forwarding server's request ended (its client left).
		out.Outcome = peerNoQueue
	}
	return out
}

// forwardQueue sends a poll or delete of a queue this server does not
// hold to the server that does. A holder that is gone, or that cannot be
// reached, means the queue is gone: BAD_EVENT_QUEUE_ID, at once.
func (s *Service) forwardQueue(ctx context.Context, op string, p peerPoll) (*peerPollResult, error) {
	if s.fleet.enabled {
		// This server joins the fleet as it starts listening.
		if err := s.listening(ctx); err != nil {
			return nil, err
		}
	}
	holder, ok := s.holderOf(ctx, p.Queue)
	retried := false
	for hop := 0; ok && hop < 6; hop++ {
		var out peerPollResult
		callCtx, cancel := ctx, context.CancelFunc(func() {})
		if op == peerOpDelete || p.DontBlock {
			callCtx, cancel = context.WithTimeout(ctx, peerTimeout)
		}
		var err error
		if holder.ID == s.fleet.id.Load() {
			// It moved here (this server's bus had not said so yet).
			out = *s.servePeerQueue(callCtx, op, p)
		} else {
			err = s.callPeer(callCtx, holder, op, p, &out)
		}
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			// A holder that stopped after handing the queue over may be
			// gone before this server heard of the move: the database
			// has it.
			if m, merr := s.store.GetQueueMove(ctx, p.Queue); merr == nil && m.ServerID != holder.ID {
				holder, ok = s.peer(ctx, m.ServerID)
				p.Hops++
				continue
			}
			// A broken connection to a holder that is alive is tried
			// again once; a holder that is gone refuses at once.
			if !retried {
				retried = true
				s.log.Info("fleet: calling a queue's holder again", "queue", p.Queue, "holder", holder.ID, "err", err)
				continue
			}
			s.log.Warn("fleet: a queue's holder did not answer", "queue", p.Queue, "holder", holder.ID, "err", err)
			return nil, badQueue(p.Queue)
		case out.Outcome == peerMoved:
			holder, ok = s.peer(ctx, out.MovedTo)
			p.Hops++
			continue
		}
		return &out, nil
	}
	if p.Hops > 0 {
		s.log.Warn("fleet: a moved queue's holder is not among the live servers", "queue", p.Queue, "hops", p.Hops)
	}
	return nil, badQueue(p.Queue)
}

// callPeer calls op on server to.
func (s *Service) callPeer(ctx context.Context, to storage.Server, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	f := &s.fleet
	f.mu.Lock()
	secret := f.secret
	f.mu.Unlock()
	answer, err := f.cfg.Transport.Call(ctx, to.Address, secret, op, body)
	if err != nil {
		return err
	}
	return json.Unmarshal(answer, out)
}

// serveHere tells which of the users have a live client on this server:
// a queue that takes messages, and the presence held in its buffer.
func (s *Service) serveHere(h peerHere) *peerHereResult {
	out := &peerHereResult{WithQueues: []int64{}, Presence: []peerPresence{}}
	for _, u := range h.Users {
		if s.userHasMessageQueue(h.Realm, u) {
			out.WithQueues = append(out.WithQueues, u)
		}
		if t, ok := s.presence.Held(presenceKey(h.Realm, u)); ok {
			out.Presence = append(out.Presence, peerPresence{User: u, Active: t.Active, Connected: t.Connected})
		}
	}
	return out
}

// userHere reports whether the user has a live client on any server of
// the fleet (a queue that takes messages), and the presence the servers
// hold for them, not yet written. Peers that do not answer within a
// second count as having neither.
func (s *Service) userHere(ctx context.Context, realmID, userID int64) (bool, presenceTimes) {
	held, _ := s.presence.Held(presenceKey(realmID, userID))
	queue := s.userHasMessageQueue(realmID, userID)
	peers, err := s.livePeers(ctx, false)
	if err != nil || len(peers) == 0 {
		return queue, held
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Go(func() {
			var out peerHereResult
			if err := s.callPeer(ctx, p, peerOpHere, peerHere{Realm: realmID, Users: []int64{userID}}, &out); err != nil {
				s.log.Warn("fleet: a peer did not say who is here", "peer", p.ID, "err", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			queue = queue || len(out.WithQueues) > 0
			for _, pr := range out.Presence {
				held = held.Merge(presenceTimes{Active: pr.Active, Connected: pr.Connected})
			}
		})
	}
	wg.Wait()
	return queue, held
}

// catchUp returns once this server's bus has delivered every write
// committed before the call (a marker sent through it has come back).
func (s *Service) catchUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, peerTimeout)
	defer cancel()
	return s.awaitDelivery(ctx, 0)
}

// movedTo returns the server queue id moved to, as this server knows.
func (s *Service) movedTo(id string) (int64, bool) {
	f := &s.fleet
	f.mu.Lock()
	defer f.mu.Unlock()
	to, ok := f.moved[id]
	return to, ok
}
