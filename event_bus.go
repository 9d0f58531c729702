package chat

import (
	"context"
	"encoding/json"
	"slices"

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
	State *queueStateChange `json:"s,omitempty"`
	// EmptyTopic: a topic field of the event is the empty topic, which
	// clients without the empty_topic_name capability are shown as
	// "general chat".
	EmptyTopic bool `json:"et,omitempty"`
}

func isEmpty(p *string) bool { return p != nil && *p == "" }

// queueStateChange is what an event changes in the queues' replica of
// their user's standing: the channels they receive, their role, whether
// they are active.
type queueStateChange struct {
	Users        []int64 `json:"u,omitempty"`
	Subscribed   []int64 `json:"+,omitempty"`
	Unsubscribed []int64 `json:"-,omitempty"`
	Role         *int    `json:"r,omitempty"`
	Deactivated  bool    `json:"d,omitempty"`
	// DeletedChannels are gone for everyone.
	DeletedChannels []int64 `json:"dc,omitempty"`
}

// busPayload encodes w's events and invalidations; nil when the write
// has nothing to tell.
func (s *Service) busPayload(w *writeTx) ([]byte, error) {
	if len(w.events) == 0 && w.callersKept && len(w.forgotten) == 0 {
		return nil, nil
	}
	out := busWrite{Origin: s.shared.hub.origin, Realm: w.realmID, Bump: !w.callersKept, Forget: w.forgotten}
	for _, ev := range w.events {
		be, err := newBusEvent(ev)
		if err != nil {
			return nil, err
		}
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
	case SubscriptionEvent:
		switch b.Op {
		case "add":
			st := &queueStateChange{Users: ev.Audience.Users}
			for _, sub := range b.Subscriptions {
				st.Subscribed = append(st.Subscribed, sub.StreamID)
			}
			be.State = st
		case "remove":
			st := &queueStateChange{Users: ev.Audience.Users}
			for _, r := range b.Removed {
				st.Unsubscribed = append(st.Unsubscribed, r.StreamID)
			}
			be.State = st
		}
	case StreamEvent:
		if b.Op == "delete" {
			be.State = &queueStateChange{DeletedChannels: b.StreamIDs}
		}
	case RealmUserEvent:
		if person, ok := b.Person.(map[string]any); ok && b.Op == "update" {
			id, _ := person["user_id"].(int64)
			st := &queueStateChange{Users: []int64{id}}
			if role, ok := person["role"].(int); ok {
				st.Role = &role
			}
			if active, ok := person["is_active"].(bool); ok && !active {
				st.Deactivated = true
			}
			if st.Role != nil || st.Deactivated {
				be.State = st
			}
		}
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
func (h *eventHub) onBusBatch(b storage.EventBatch) {
	if b.Gap {
		// Writes may have been missed: no queue can be trusted to be
		// complete. Clients re-register, as after a server restart.
		h.s.log.Warn("event bus reconnected; dropping every event queue")
		h.dropAll()
		return
	}
	for _, p := range b.Payloads {
		var w busWrite
		if err := json.Unmarshal(p, &w); err != nil {
			h.s.log.Error("undecodable event bus payload", "err", err)
			continue
		}
		if w.Origin != h.origin {
			if w.Bump {
				h.s.callers.bump(w.Realm)
			}
			if len(w.Forget) > 0 {
				h.s.messages.forget(w.Forget)
			}
		}
		if len(w.Events) > 0 {
			h.deliver(b.Token, w.Realm, w.Events)
		}
	}
}

// capability reports a queue's client capability by name.
func (o *queueOptions) capability(name string) bool {
	switch name {
	case "include_deactivated_groups":
		return o.includeDeactivatedGroups
	case "user_settings_object":
		return o.userSettingsObject
	case "stream_typing_notifications":
		return o.streamTyping
	}
	return false
}

// listening starts the bus listener (once); Run and the first queue call it.
func (h *eventHub) listening(ctx context.Context) error {
	h.startMu.Lock()
	defer h.startMu.Unlock()
	if h.cancel != nil {
		return nil
	}
	if h.closed {
		return Internal(context.Canceled)
	}
	lctx, cancel := context.WithCancel(context.Background())
	if err := h.s.store.ListenEvents(lctx, h.onBusBatch); err != nil {
		cancel()
		return h.s.internal(ctx, "listen for events", err)
	}
	h.cancel = cancel
	go h.collectLoop(lctx)
	return nil
}

// subscribedSet is a set of channel IDs.
type subscribedSet map[int64]struct{}

func (s subscribedSet) apply(st *queueStateChange, userID int64) {
	for _, id := range st.DeletedChannels {
		delete(s, id)
	}
	if !slices.Contains(st.Users, userID) {
		return
	}
	for _, id := range st.Subscribed {
		s[id] = struct{}{}
	}
	for _, id := range st.Unsubscribed {
		delete(s, id)
	}
}
