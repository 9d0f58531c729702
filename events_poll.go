package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/teamchat/chat/storage"
)

// GetEventsRequest is the input of GetEvents (GET /events). Without a
// QueueID and with DontBlock, the call creates a queue from QueueParams
// and returns its ID.
type GetEventsRequest struct {
	QueueParams
	QueueID     *string `json:"queue_id"`
	LastEventID *int64  `json:"last_event_id"`
	// DontBlock returns at once, even with no events.
	DontBlock *bool `json:"dont_block"`
}

// GetEventsResponse is the success body of GetEvents: the queue's events
// after LastEventID, each a JSON object with "id" and "type". QueueID is
// set when the call created the queue or waited for its events.
type GetEventsResponse struct {
	Events  []json.RawMessage `json:"events"`
	QueueID *string           `json:"queue_id,omitempty"`
}

// queueOf is the user's queue with that ID; nil when there is none (or it
// is another user's).
func (h *eventHub) queueOf(id string, me *storage.User) *eventQueue {
	h.mu.RLock()
	q := h.queues[id]
	h.mu.RUnlock()
	if q == nil || q.userID != me.ID || q.realmID != me.RealmID {
		return nil
	}
	return q
}

// badQueue is the error for a queue that is gone or not the caller's.
func badQueue(id string) *Error {
	return (&Error{Kind: KindInvalid, Code: CodeBadEventQueueID, Msg: "Bad event queue ID: " + id}).With("queue_id", id)
}

// GetEvents returns the caller's queued events newer than LastEventID
// (dropping the older ones). When there are none it waits: until an event
// arrives, until a newer GetEvents on the same queue takes over (then it
// returns no events), until ctx ends (then it returns ctx's error), or for
// 45 to 55 seconds, after which it returns a heartbeat event.
func (s *Service) GetEvents(ctx context.Context, c Caller, req GetEventsRequest) (*GetEventsResponse, error) {
	me, _, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	dontBlock := req.DontBlock != nil && *req.DontBlock
	if req.QueueID == nil {
		if !dontBlock {
			return nil, BadRequest("Missing 'queue_id' argument")
		}
		opts, err := req.options(me, s.queueLimit)
		if err != nil {
			return nil, err
		}
		start, err := s.openQueue(ctx, me, opts, nil)
		if err != nil {
			return nil, err
		}
		return &GetEventsResponse{Events: []json.RawMessage{}, QueueID: &start.queue.id}, nil
	}
	if req.LastEventID == nil {
		return nil, BadRequest("Missing 'last_event_id' argument")
	}
	id, last := *req.QueueID, *req.LastEventID
	hub := s.shared.hub
	q := hub.queueOf(id, me)
	if q == nil {
		return nil, badQueue(id)
	}
	q.mu.Lock()
	if q.dropped {
		q.mu.Unlock()
		return nil, badQueue(id)
	}
	if last < q.prunedID {
		q.mu.Unlock()
		return nil, BadRequest("An event newer than %d has already been pruned!", last)
	}
	q.prune(hub, last)
	if last != q.prunedID {
		q.mu.Unlock()
		return nil, BadRequest("Event %d was not in this queue", last)
	}
	q.touched = time.Now()
	if len(q.events) > 0 || dontBlock {
		out := q.contents(hub)
		q.mu.Unlock()
		return &GetEventsResponse{Events: out}, nil
	}
	if q.poll != nil {
		q.poll.superseded = true
		q.poll.signal()
	}
	p := &pendingPoll{wake: make(chan struct{})}
	q.poll = p
	q.mu.Unlock()

	timer := time.NewTimer(hub.heartbeatAfter())
	defer timer.Stop()
	heartbeat := false
	select {
	case <-p.wake:
	case <-timer.C:
		heartbeat = true
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.poll == p {
		q.poll = nil
		q.touched = time.Now()
	}
	switch {
	case q.dropped:
		return nil, badQueue(id)
	case p.superseded:
		return &GetEventsResponse{Events: []json.RawMessage{}, QueueID: &q.id}, nil
	case ctx.Err() != nil && len(q.events) == 0:
		return nil, ctx.Err()
	}
	if heartbeat && len(q.events) == 0 {
		q.push(hub, []byte(`{"type":"heartbeat"}`), nil)
	}
	return &GetEventsResponse{Events: q.contents(hub), QueueID: &q.id}, nil
}

// DeleteEventsRequest is the input of DeleteEvents (DELETE /events).
type DeleteEventsRequest struct {
	QueueID *string `json:"queue_id"`
}

// DeleteEvents deletes one of the caller's event queues.
func (s *Service) DeleteEvents(ctx context.Context, c Caller, req DeleteEventsRequest) (*EmptyResponse, error) {
	me, _, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if req.QueueID == nil {
		return nil, MissingArgument("queue_id")
	}
	hub := s.shared.hub
	q := hub.queueOf(*req.QueueID, me)
	if q == nil {
		return nil, badQueue(*req.QueueID)
	}
	hub.remove(q)
	return &EmptyResponse{}, nil
}

// EventQueueStats describe a Service's event queues.
type EventQueueStats struct {
	Queues int
	// Waiting counts the queues with a long poll waiting for events.
	Waiting int
	Events  int
	Bytes   int64
}

// EventQueueStats counts the Service's queues and what they hold.
func (s *Service) EventQueueStats() EventQueueStats {
	hub := s.shared.hub
	st := EventQueueStats{Bytes: hub.bytes.Load()}
	for _, q := range hub.list(0) {
		q.mu.Lock()
		if !q.dropped {
			st.Queues++
			st.Events += len(q.events)
			if q.poll != nil {
				st.Waiting++
			}
		}
		q.mu.Unlock()
	}
	return st
}

// CollectIdleQueues drops the queues that nobody polled within their
// lifespan, as of now (Run does it every minute); it returns how many.
func (s *Service) CollectIdleQueues(now time.Time) int { return s.shared.hub.collect(now) }
