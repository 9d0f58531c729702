package chat

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/teamchat/chat/internal/eventq"
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

// GetEvents returns the caller's queued events newer than LastEventID
// (dropping the older ones). When there are none it waits: until an event
// arrives, until a newer GetEvents on the same queue takes over (then it
// returns no events), until ctx ends (then it returns ctx's error), or for
// 45 to 55 seconds, after which it returns a heartbeat event.
func (s *Service) GetEvents(ctx context.Context, c Caller, req GetEventsRequest) (*GetEventsResponse, error) {
	me, _, err := s.reads().actor(ctx, c)
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
		id := start.queue.ID()
		return &GetEventsResponse{Events: []json.RawMessage{}, QueueID: &id}, nil
	}
	if req.LastEventID == nil {
		return nil, BadRequest("Missing 'last_event_id' argument")
	}
	id, last := *req.QueueID, *req.LastEventID
	var events []json.RawMessage
	var waited bool
	if q := s.hub.Find(id, me.RealmID, me.ID); q != nil {
		events, waited, err = s.hub.Poll(ctx, q, last, dontBlock)
	} else {
		// Held by another server of the fleet, or gone.
		out, ferr := s.forwardQueue(ctx, peerOpPoll, peerPoll{Realm: me.RealmID, User: me.ID, Queue: id, Last: last, DontBlock: dontBlock})
		if ferr != nil {
			return nil, ferr
		}
		events, waited, err = out.Events, out.Waited, peerOutcomeError(out.Outcome)
	}
	switch {
	case errors.Is(err, eventq.ErrNoQueue):
		return nil, badQueue(id)
	case errors.Is(err, eventq.ErrPruned):
		return nil, BadRequest("An event newer than %d has already been pruned!", last)
	case errors.Is(err, eventq.ErrNotInQueue):
		return nil, BadRequest("Event %d was not in this queue", last)
	case err != nil:
		return nil, err
	}
	resp := &GetEventsResponse{Events: events}
	if waited {
		resp.QueueID = &id
	}
	return resp, nil
}

// DeleteEventsRequest is the input of DeleteEvents (DELETE /events).
type DeleteEventsRequest struct {
	QueueID *string `json:"queue_id"`
}

// DeleteEvents deletes one of the caller's event queues.
func (s *Service) DeleteEvents(ctx context.Context, c Caller, req DeleteEventsRequest) (*EmptyResponse, error) {
	me, _, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if req.QueueID == nil {
		return nil, MissingArgument("queue_id")
	}
	q := s.hub.Find(*req.QueueID, me.RealmID, me.ID)
	if q == nil {
		// Held by another server of the fleet, or gone.
		out, err := s.forwardQueue(ctx, peerOpDelete, peerPoll{Realm: me.RealmID, User: me.ID, Queue: *req.QueueID})
		if err != nil {
			return nil, err
		}
		if out.Outcome != "" {
			return nil, badQueue(*req.QueueID)
		}
		return &EmptyResponse{}, nil
	}
	s.hub.Remove(q)
	return &EmptyResponse{}, nil
}

// peerOutcomeError is the eventq error of a forwarded poll's outcome.
func peerOutcomeError(outcome string) error {
	switch outcome {
	case "":
		return nil
	case peerPruned:
		return eventq.ErrPruned
	case peerNotInQueue:
		return eventq.ErrNotInQueue
	}
	return eventq.ErrNoQueue
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
	st := s.hub.Stats()
	return EventQueueStats{Queues: st.Queues, Waiting: st.Waiting, Events: st.Events, Bytes: st.Bytes}
}

// CollectIdleQueues drops the queues that nobody polled within their
// lifespan, as of now (Run does it every minute); it returns how many.
func (s *Service) CollectIdleQueues(now time.Time) int { return s.hub.Collect(now) }
