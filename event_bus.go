package chat

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/storage"
)

// busWrite is what one write transaction publishes on the event bus
// (storage.EventStore): its events and the cache invalidations every
// other server on the database must apply. It is JSON on the wire.
type busWrite struct {
	// Origin is the Service that made the write (its own caches are
	// already up to date).
	Origin string `json:"o"`
	Realm  int64  `json:"r"`
	// Bump: the organization's cached callers are stale.
	Bump bool `json:"b,omitempty"`
	// Forget: these messages' cached forms are stale.
	Forget []int64     `json:"f,omitempty"`
	Events []*busEvent `json:"e,omitempty"`
	// Mark: a marker of the origin (see awaitDelivery), which carries
	// nothing else.
	Mark uint64 `json:"m,omitempty"`
	// At is when the write published its events (Unix nanoseconds, set
	// only by a Service that measures delivery latency).
	At int64 `json:"at,omitempty"`
	// Handover moves event queues between servers (fleet_handover.go); it
	// carries nothing else.
	Handover *busHandover `json:"h,omitempty"`
	// Sync: the writer waits until the other servers have applied this
	// write (fleet_sync.go).
	Sync string `json:"y,omitempty"`
	// Received: what the write changes in max_message_id's values
	// (max_message_id.go).
	Received *receivedChanges `json:"rc,omitempty"`
	// Unread: what the write changes of readers' unread states
	// (unread_cache.go). Every server applies it when the write arrives,
	// the writer's own included (a marker proves that it has).
	Unread *unreadTouched `json:"ur,omitempty"`
}

// busEvent is one event as it travels to the queues: the reference's JSON
// body and what the queues need to decide who gets it and in which form.
type busEvent struct {
	Type     string          `json:"t"`
	Audience Audience        `json:"a"`
	Body     json.RawMessage `json:"d"`
	// Message: a message event's per-queue forms.
	Message *messageVariants `json:"m,omitempty"`
	// Capability, when set, limits the event to queues whose client
	// capability of that name is CapabilityValue.
	Capability      string `json:"c,omitempty"`
	CapabilityValue bool   `json:"cv,omitempty"`
	// State: how the event changes what a queue knows about its user.
	State *eventq.Change `json:"s,omitempty"`
	// EmptyTopic: a topic field of the event is the empty topic, which
	// clients without the empty_topic_name capability are shown as
	// "general chat".
	EmptyTopic bool `json:"et,omitempty"`
}

func isEmpty(p *string) bool { return p != nil && *p == "" }

// busPayload encodes w's events and invalidations; nil when the write
// has nothing to tell.
func (s *Service) busPayload(w *writeTx) ([]byte, error) {
	if len(w.events) == 0 && w.callersKept && len(w.forgotten) == 0 && w.received.empty() && w.unread.empty() {
		return nil, nil
	}
	out := busWrite{Origin: s.busOrigin, Realm: w.realmID, Bump: !w.callersKept, Forget: w.forgotten}
	if !w.received.empty() {
		out.Received = &w.received
	}
	if !w.unread.empty() {
		out.Unread = &w.unread
	}
	if s.needsSync(w) {
		w.syncID = randomHex(8)
		out.Sync = w.syncID
	}
	if s.tel.metrics && len(w.events) > 0 {
		out.At = time.Now().UnixNano()
	}
	for i, ev := range w.events {
		be, err := newBusEvent(ev)
		if err != nil {
			return nil, err
		}
		be.State = w.changes[i]
		out.Events = append(out.Events, be)
	}
	return json.Marshal(out)
}

func newBusEvent(ev Event) (*busEvent, error) {
	body, err := marshalEventBody(ev.Body)
	if err != nil {
		return nil, err
	}
	be := &busEvent{Type: ev.Body.EventType(), Audience: ev.Audience, Body: body}
	switch b := ev.Body.(type) {
	case MessageEvent:
		be.Message = b.variants
	case UserGroupEvent:
		if b.Op == "remove" {
			be.Capability, be.CapabilityValue = "include_deactivated_groups", false
		} else if _, ok := b.Data["deactivated"]; ok && b.Op == "update" {
			be.Capability, be.CapabilityValue = "include_deactivated_groups", true
		}
	case UpdateDisplaySettingsEvent, UpdateGlobalNotificationsEvent:
		be.Capability, be.CapabilityValue = "user_settings_object", false
	case TypingEvent:
		if b.MessageType == "stream" {
			be.Capability, be.CapabilityValue = "stream_typing_notifications", true
		}
		be.EmptyTopic = isEmpty(b.Topic)
	case TypingEditEvent:
		be.EmptyTopic = isEmpty(b.Recipient.Topic)
	case DeleteMessageEvent:
		be.EmptyTopic = isEmpty(b.Topic)
	case UpdateMessageEvent:
		be.EmptyTopic = isEmpty(b.OrigSubject) || isEmpty(b.Subject)
	case UserTopicEvent:
		be.EmptyTopic = b.TopicName == ""
	}
	return be, nil
}

// onBusBatch receives every committed write of the database, from this
// Service and every other one, in commit order.
func (s *Service) onBusBatch(b storage.EventBatch) {
	if b.Gap {
		// Writes may have been missed: no queue can be trusted to be
		// complete. Clients re-register, as after a server restart.
		s.log.Warn("event bus reconnected; dropping every event queue")
		s.hub.DropAll()
		s.unread.reset(0)
		return
	}
	for _, p := range b.Payloads {
		var w busWrite
		if err := json.Unmarshal(p, &w); err != nil {
			s.log.Error("undecodable event bus payload", "err", err)
			continue
		}
		if w.Mark != 0 {
			if w.Origin == s.busOrigin {
				s.marks.arrived(w.Mark)
			}
			continue
		}
		if w.Handover != nil {
			s.onHandover(w.Handover)
			continue
		}
		if w.Unread != nil {
			s.unread.apply(w.Realm, w.Unread)
		}
		if w.Origin != s.busOrigin {
			if w.Bump {
				s.records.bump(w.Realm)
			}
			if len(w.Forget) > 0 {
				s.messages.forget(w.Forget)
			}
			if w.Received != nil {
				s.received.apply(w.Realm, w.Received)
			}
			if w.Sync != "" {
				s.fleet.synced.arrived(w.Sync)
			}
		}
		if len(w.Events) > 0 && s.deliver(b.Token, w.Realm, w.Events) && w.At != 0 && s.tel.metrics {
			s.tel.deliveryLatency.Record(context.Background(), time.Since(time.Unix(0, w.At)).Seconds())
		}
	}
}

// listening starts listening to the event bus, and the collection of idle
// queues (once); Run and the first queue call it.
func (s *Service) listening(ctx context.Context) error {
	err := s.hub.Start(s.startEvents)
	if errors.Is(err, eventq.ErrStopped) {
		return Internal(context.Canceled)
	}
	if err != nil {
		return s.internal(ctx, "listen for events", err)
	}
	return nil
}

// busMarks are the markers this Service has on the event bus, each with
// the channel closed when it comes back.
type busMarks struct {
	mu      sync.Mutex
	last    uint64
	waiting map[uint64]chan struct{}
}

func (m *busMarks) add() (uint64, chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.waiting == nil {
		m.waiting = map[uint64]chan struct{}{}
	}
	m.last++
	ch := make(chan struct{})
	m.waiting[m.last] = ch
	return m.last, ch
}

func (m *busMarks) arrived(id uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch := m.waiting[id]; ch != nil {
		close(ch)
		delete(m.waiting, id)
	}
}

func (m *busMarks) drop(id uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.waiting, id)
}

// publishOnBus publishes a payload that goes with no write (a marker, a
// typing notification) on the event bus, in a transaction of its own.
func (s *Service) publishOnBus(ctx context.Context, payload []byte) error {
	return s.store.InTx(ctx, func(st storage.Store) error { return st.PublishEvents(ctx, payload) })
}

// awaitDelivery returns once the event bus has delivered to this
// Service's queues every write committed before it was called: it
// publishes a marker, which the bus delivers after those writes (in
// commit order, each to every queue before the next), and waits for it.
// Tests use it (export_test.go) to wait for what they expect, and to
// prove that a queue received nothing.
func (s *Service) awaitDelivery(ctx context.Context, realmID int64) error {
	if err := s.listening(ctx); err != nil {
		return err
	}
	id, arrived := s.marks.add()
	defer s.marks.drop(id)
	payload, err := json.Marshal(busWrite{Origin: s.busOrigin, Realm: realmID, Mark: id})
	if err != nil {
		return Internal(err)
	}
	if err := s.publishOnBus(ctx, payload); err != nil {
		return s.internal(ctx, "publish a marker", err)
	}
	select {
	case <-arrived:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
