package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/narrow"
	"github.com/teamchat/chat/storage"
)

// A stopping server keeps its clients' queues alive, as the reference
// does across a restart. The host calls DrainEvents as it begins to shut
// down, and HandOverEvents once its HTTP server has stopped (and Run has
// returned, so that nothing of this server writes any more):
//
//   - with live peers, the queues move to them (spread evenly). A
//     handover is published on the event bus like a write: each server
//     applies it at the same point of the bus's order. There the old holder
//     takes the queues out (with every event before that point) and sends
//     them to the new one, which keeps the events after that point for
//     them until they arrive (internal/eventq's transfer.go). Every server
//     records where they went, and so does the queue_moves table, for
//     servers that start later.
//   - with none, the queues are saved to storage, after every write this
//     server made has reached them, and the next server to start takes
//     them back.
//
// Clients notice nothing: a poll waiting on a queue that moves ends with
// no events, and the next one finds the queue on its new holder. What is
// lost: queues being handed to a server that dies before it has them.

// errDraining is why a draining Service is not ready.
var errDraining = errors.New("shutting down: handing event queues over")

// handoverWait bounds how long a handover's new holder waits for the
// queues, and the old holder for their sending.
const handoverWait = 30 * time.Second

// busHandover moves queues From one server To another (a bus message).
type busHandover struct {
	ID     string          `json:"id"`
	From   int64           `json:"from"`
	To     int64           `json:"to"`
	Queues []handoverQueue `json:"q"`
}

type handoverQueue struct {
	ID    string `json:"i"`
	Realm int64  `json:"r"`
	User  int64  `json:"u"`
}

// DrainEvents begins a graceful stop: it ends every pending long poll
// (with the events waiting, often none: the client polls again), makes
// later polls wait at most a second (so that the host's shutdown does not
// wait for them), tells the fleet that this server takes no more queues,
// and hands the queues to live peers if there are any. Events keep
// arriving until HandOverEvents.
func (s *Service) DrainEvents(ctx context.Context) error {
	s.hub.Drain()
	f := &s.fleet
	if !f.enabled || f.id.Load() == 0 {
		return nil
	}
	f.draining.Store(true)
	if err := s.beat(ctx); err != nil {
		s.log.Warn("fleet: recording the drain failed", "err", err)
	}
	_, err := s.handOver(ctx)
	return err
}

// HandOverEvents ends this Service's event queues without losing them: to
// live peers when there are any, else to storage, where the next server
// to start on the database takes them (see DrainEvents). Then it stops
// event delivery and leaves the fleet. Call it once the host has stopped
// serving requests and Run has returned.
func (s *Service) HandOverEvents(ctx context.Context) error {
	s.hub.Drain()
	f := &s.fleet
	f.draining.Store(true)
	defer func() {
		s.hub.Stop()
		if id := f.id.Load(); f.enabled && id != 0 {
			if err := s.store.RemoveServer(context.WithoutCancel(ctx), id); err != nil {
				s.log.Warn("fleet: removing this server's record failed", "err", err)
			}
		}
	}()
	if !s.hub.Started() {
		return nil
	}
	handed, err := s.handOver(ctx)
	if err != nil {
		return err
	}
	if handed {
		// Queues that became ready since (their registration was under
		// way) go the same way.
		_, err := s.handOver(ctx)
		return err
	}
	// With no peer, the queues are saved once every write made so far has
	// reached them.
	if err := s.awaitDelivery(ctx, 0); err != nil {
		return err
	}
	states := s.hub.Detach(func(*eventQueue) bool { return true })
	if len(states) == 0 {
		return nil
	}
	rows := make([]storage.SavedEventQueue, 0, len(states))
	now := wallClock()
	for _, st := range states {
		b, err := json.Marshal(encodeQueueState(st))
		if err != nil {
			return err
		}
		rows = append(rows, storage.SavedEventQueue{QueueID: st.ID, RealmID: st.Realm, UserID: st.User, SavedAt: now, State: string(b)})
	}
	if err := s.store.SaveEventQueues(ctx, rows); err != nil {
		return s.internal(ctx, "save event queues", err)
	}
	s.log.Info("saved event queues for the next start", "queues", len(rows))
	return nil
}

// handOver publishes the handover of every ready queue to the live peers
// that are not draining, and waits until they have been sent. It reports
// whether there were such peers.
func (s *Service) handOver(ctx context.Context) (bool, error) {
	f := &s.fleet
	if !f.enabled || f.id.Load() == 0 {
		return false, nil
	}
	peers, err := s.livePeers(ctx, true)
	if err != nil {
		return false, s.internal(ctx, "hand event queues over", err)
	}
	var targets []int64
	for _, p := range peers {
		if !p.Draining {
			targets = append(targets, p.ID)
		}
	}
	if len(targets) == 0 {
		return false, nil
	}
	byTarget := map[int64][]handoverQueue{}
	for i, q := range s.hub.ReadyQueues() {
		to := targets[i%len(targets)]
		byTarget[to] = append(byTarget[to], handoverQueue{ID: q.ID, Realm: q.Realm, User: q.User})
	}
	var handovers []*busHandover
	for to, qs := range byTarget {
		handovers = append(handovers, &busHandover{ID: randomHex(8), From: f.id.Load(), To: to, Queues: qs})
	}
	if len(handovers) == 0 {
		return true, nil
	}
	err = s.store.InTx(ctx, func(st storage.Store) error {
		for _, h := range handovers {
			ids := make([]string, len(h.Queues))
			for i, q := range h.Queues {
				ids[i] = q.ID
			}
			if err := st.RecordQueueMoves(ctx, h.To, ids, wallClock()); err != nil {
				return err
			}
			payload, err := json.Marshal(busWrite{Origin: s.busOrigin, Handover: h})
			if err != nil {
				return err
			}
			if err := st.PublishEvents(ctx, payload); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return true, s.internal(ctx, "hand event queues over", err)
	}
	// This server sees its handovers on the bus, detaches the queues there
	// and sends them; wait for that.
	for _, h := range handovers {
		if err := s.awaitHandover(ctx, h.ID); err != nil {
			return true, err
		}
	}
	f.transfers.Wait()
	return true, nil
}

// awaitHandover waits until this server has seen handover id on the bus.
func (s *Service) awaitHandover(ctx context.Context, id string) error {
	ch := s.handoverSeen(id)
	t := time.NewTimer(handoverWait)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return Internal(fmt.Errorf("fleet: handover %s did not come back on the event bus", id))
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handoverSeen is the channel closed when handover id is seen on the bus.
func (s *Service) handoverSeen(id string) chan struct{} {
	f := &s.fleet
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := f.handovers[id]
	if ch == nil {
		ch = make(chan struct{})
		f.handovers[id] = ch
	}
	return ch
}

// onHandover applies a handover at its point of the bus's order (on the
// listener's goroutine): every server records where the queues went; the
// new holder opens their placeholders; the old one takes them out and
// sends them.
func (s *Service) onHandover(h *busHandover) {
	f := &s.fleet
	if !f.enabled || f.id.Load() == 0 {
		return
	}
	me := f.id.Load()
	f.mu.Lock()
	for _, q := range h.Queues {
		if h.To == me {
			delete(f.moved, q.ID)
		} else {
			f.moved[q.ID] = h.To
		}
	}
	f.mu.Unlock()
	switch me {
	case h.To:
		for _, q := range h.Queues {
			s.hub.Adopt(q.ID, q.Realm, q.User, handoverWait)
		}
	case h.From:
		ids := make(map[string]bool, len(h.Queues))
		for _, q := range h.Queues {
			ids[q.ID] = true
		}
		states := s.hub.Detach(func(q *eventQueue) bool { return ids[q.ID()] })
		f.transfers.Add(1)
		go func() {
			defer f.transfers.Done()
			s.sendAdoption(h, states)
		}()
	}
	close(s.handoverSeen(h.ID))
}

// sendAdoption sends detached queues to their new holder.
func (s *Service) sendAdoption(h *busHandover, states []eventq.State[queueOptions]) {
	ctx, cancel := context.WithTimeout(context.Background(), handoverWait)
	defer cancel()
	to, ok := s.peer(ctx, h.To)
	if !ok {
		s.log.Warn("fleet: the server queues were handed to is gone; they are lost", "to", h.To, "queues", len(states))
		return
	}
	a := peerAdoption{Handover: h.ID, Queues: make([]queueState, len(states))}
	for i, st := range states {
		a.Queues[i] = encodeQueueState(st)
	}
	var out peerAdoptionResult
	if err := s.callPeer(ctx, to, peerOpAdopt, a, &out); err != nil {
		s.log.Warn("fleet: handing queues over failed; they are lost", "to", h.To, "queues", len(states), "err", err)
		return
	}
	if len(out.Missing) > 0 {
		s.log.Warn("fleet: the new holder had no place for some queues; they are lost", "to", h.To, "queues", len(out.Missing))
	}
}

// adopt fills the placeholders of a handover this server is the new
// holder of, once it has seen the handover on the bus.
func (s *Service) adopt(ctx context.Context, a peerAdoption) (*peerAdoptionResult, error) {
	if err := s.awaitHandover(ctx, a.Handover); err != nil {
		return nil, err
	}
	out := &peerAdoptionResult{Missing: []string{}}
	for _, qs := range a.Queues {
		st, err := qs.decode()
		if err != nil || !s.hub.Fill(st) {
			out.Missing = append(out.Missing, qs.ID)
		}
	}
	return out, nil
}

// restoreQueues takes back the queues saved by a server that stopped
// alone (before the bus listens: nothing was written since).
func (s *Service) restoreQueues(ctx context.Context) error {
	rows, err := s.store.TakeSavedEventQueues(ctx)
	if err != nil || len(rows) == 0 {
		return err
	}
	n := 0
	for _, r := range rows {
		var qs queueState
		if err := json.Unmarshal([]byte(r.State), &qs); err != nil {
			s.log.Warn("a saved event queue is unreadable; its client registers again", "queue", r.QueueID, "err", err)
			continue
		}
		st, err := qs.decode()
		if err == nil && s.hub.Restore(st) {
			n++
		}
	}
	s.log.Info("restored the event queues saved at the last stop", "queues", n)
	return nil
}

// queueState is a queue as it travels between servers and to storage.
type queueState struct {
	eventq.State[queueOptionsState]
}

// queueOptionsState is queueOptions with exported fields.
type queueOptionsState struct {
	EventTypes       []string        `json:"event_types,omitempty"`
	Narrow           []narrowTermRaw `json:"narrow,omitempty"`
	ApplyMarkdown    bool            `json:"apply_markdown,omitempty"`
	ClientGravatar   bool            `json:"client_gravatar,omitempty"`
	AllPublicStreams bool            `json:"all_public_streams,omitempty"`
	Capabilities     []string        `json:"capabilities,omitempty"`
	Lifespan         time.Duration   `json:"lifespan"`
}

type narrowTermRaw struct {
	Operator string `json:"operator"`
	Operand  string `json:"operand"`
	Negated  bool   `json:"negated,omitempty"`
}

// queueCapabilities are queueOptions' capability flags by name.
var queueCapabilities = []struct {
	name  string
	field func(o *queueOptions) *bool
}{
	{"bulk_message_deletion", func(o *queueOptions) *bool { return &o.bulkMessageDeletion }},
	{"user_settings_object", func(o *queueOptions) *bool { return &o.userSettingsObject }},
	{"stream_typing_notifications", func(o *queueOptions) *bool { return &o.streamTyping }},
	{"include_deactivated_groups", func(o *queueOptions) *bool { return &o.includeDeactivatedGroups }},
	{"empty_topic_name", func(o *queueOptions) *bool { return &o.emptyTopicName }},
	{"linkifier_url_template", func(o *queueOptions) *bool { return &o.linkifierURLTemplate }},
}

func encodeQueueState(st eventq.State[queueOptions]) queueState {
	o := &st.Options
	os := queueOptionsState{ApplyMarkdown: o.applyMarkdown, ClientGravatar: o.clientGravatar,
		AllPublicStreams: o.allPublicStreams, Lifespan: o.lifespan}
	if o.eventTypes != nil {
		os.EventTypes = []string{}
		for t, on := range o.eventTypes {
			if on {
				os.EventTypes = append(os.EventTypes, t)
			}
		}
	}
	for _, t := range o.narrow {
		os.Narrow = append(os.Narrow, narrowTermRaw{Operator: t.Operator, Operand: t.Operand.Str, Negated: t.Negated})
	}
	for _, c := range queueCapabilities {
		if *c.field(o) {
			os.Capabilities = append(os.Capabilities, c.name)
		}
	}
	return queueState{eventq.State[queueOptionsState]{ID: st.ID, Realm: st.Realm, User: st.User, Options: os,
		Lifespan: st.Lifespan, Role: st.Role, Channels: st.Channels, Events: st.Events, NextID: st.NextID,
		PrunedID: st.PrunedID, Touched: st.Touched}}
}

func (qs queueState) decode() (eventq.State[queueOptions], error) {
	os := qs.Options
	o := queueOptions{applyMarkdown: os.ApplyMarkdown, clientGravatar: os.ClientGravatar,
		allPublicStreams: os.AllPublicStreams, lifespan: os.Lifespan}
	if os.EventTypes != nil {
		o.eventTypes = make(map[string]bool, len(os.EventTypes))
		for _, t := range os.EventTypes {
			o.eventTypes[t] = true
		}
	}
	for _, t := range os.Narrow {
		o.narrow = append(o.narrow, narrow.Term{Operator: t.Operator, Operand: narrow.StringOperand(t.Operand), Negated: t.Negated})
	}
	for _, name := range os.Capabilities {
		found := false
		for _, c := range queueCapabilities {
			if c.name == name {
				*c.field(&o) = true
				found = true
			}
		}
		if !found {
			return eventq.State[queueOptions]{}, errors.New("unknown queue capability " + name)
		}
	}
	if qs.ID == "" || qs.Realm == 0 || qs.User == 0 {
		return eventq.State[queueOptions]{}, errors.New("incomplete queue state")
	}
	return eventq.State[queueOptions]{ID: qs.ID, Realm: qs.Realm, User: qs.User, Options: o, Lifespan: qs.Lifespan,
		Role: qs.Role, Channels: qs.Channels, Events: qs.Events, NextID: qs.NextID, PrunedID: qs.PrunedID, Touched: qs.Touched}, nil
}
