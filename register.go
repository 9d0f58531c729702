package chat

import (
	"context"
	"slices"
	"time"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/narrow"
	"github.com/teamchat/chat/storage"
)

// QueueParams are the registration choices of an event queue, shared by
// POST /register and by GET /events when it creates a queue.
type QueueParams struct {
	// ApplyMarkdown (default false): message events carry rendered HTML
	// rather than the Markdown source.
	ApplyMarkdown *bool `json:"apply_markdown"`
	// ClientGravatar (default true): avatar_url is null for users on
	// Gravatar whose email the client may see.
	ClientGravatar *bool `json:"client_gravatar"`
	// SlimPresence and PresenceHistoryLimitDays shape presence data.
	SlimPresence             *bool `json:"slim_presence"`
	PresenceHistoryLimitDays *int  `json:"presence_history_limit_days"`
	// EventTypes (default: all) are the event types the queue receives;
	// unknown names are ignored.
	EventTypes *[]string `json:"event_types" null:"absent"`
	// Narrow, a JSON list of [operator, operand] pairs, filters message
	// events (channel, topic, sender, is).
	Narrow *string `json:"narrow" null:"absent"`
	// AllPublicStreams (default: the user's default_all_public_streams)
	// receives every public channel's messages; guests may not.
	AllPublicStreams *bool `json:"all_public_streams"`
	// ClientCapabilities declare what the client understands (see
	// ClientCapabilities).
	ClientCapabilities *ClientCapabilities `json:"client_capabilities" null:"absent"`
	// QueueLifespanSecs keeps an unpolled queue for longer than the
	// default 600 s, up to 7 days.
	QueueLifespanSecs *int `json:"queue_lifespan_secs"`
}

// ClientCapabilities are the client_capabilities of a registration.
// NotificationSettingsNull is required when the object is given.
type ClientCapabilities struct {
	NotificationSettingsNull    *bool `json:"notification_settings_null"`
	BulkMessageDeletion         bool  `json:"bulk_message_deletion"`
	UserAvatarURLFieldOptional  bool  `json:"user_avatar_url_field_optional"`
	StreamTypingNotifications   bool  `json:"stream_typing_notifications"`
	UserSettingsObject          bool  `json:"user_settings_object"`
	LinkifierURLTemplate        bool  `json:"linkifier_url_template"`
	UserListIncomplete          bool  `json:"user_list_incomplete"`
	IncludeDeactivatedGroups    bool  `json:"include_deactivated_groups"`
	ArchivedChannels            bool  `json:"archived_channels"`
	EmptyTopicName              bool  `json:"empty_topic_name"`
	SimplifiedPresenceEvents    bool  `json:"simplified_presence_events"`
	ExternalAuthenticationUsers bool  `json:"-"`
}

// RegisterRequest is the input of Register (POST /register).
type RegisterRequest struct {
	QueueParams
	// FetchEventTypes are the event types whose initial state is returned
	// (default: EventTypes, then all).
	FetchEventTypes *[]string `json:"fetch_event_types" null:"absent"`
	// IncludeSubscribers adds each channel's subscribers.
	IncludeSubscribers *bool `json:"include_subscribers"`
}

// RegisterResponse is the success body of Register: the queue, and the
// initial state of the requested event types (State, whose keys are the
// reference's: realm_users, subscriptions, unread_msgs, ...).
type RegisterResponse struct {
	QueueID     string
	LastEventID int64
	State       map[string]any
}

// MarshalJSON writes the queue, the version keys (both names, whatever
// fetch_event_types asked for, as the reference always sends them) and
// the state as one object (see AppendJSON).
func (r RegisterResponse) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// object is the answer's members.
func (r RegisterResponse) object() map[string]any {
	m := make(map[string]any, len(r.State)+8)
	for k, v := range r.State {
		m[k] = v
	}
	m["queue_id"] = r.QueueID
	m["last_event_id"] = r.LastEventID
	serverVersions.put(m)
	return m
}

// options checks the parameters and resolves their defaults.
func (p *QueueParams) options(me *storage.User, lim QueueLimits) (queueOptions, error) {
	o := queueOptions{clientGravatar: true, lifespan: p.lifespan(lim)}
	if p.ApplyMarkdown != nil {
		o.applyMarkdown = *p.ApplyMarkdown
	}
	if p.ClientGravatar != nil {
		o.clientGravatar = *p.ClientGravatar
	}
	// default_all_public_streams is false for every account here.
	if p.AllPublicStreams != nil {
		o.allPublicStreams = *p.AllPublicStreams
	}
	if o.allPublicStreams && me.Role == RoleGuest {
		return o, refused("User not authorized for this query")
	}
	if p.EventTypes != nil {
		o.eventTypes = map[string]bool{}
		for _, t := range *p.EventTypes {
			o.eventTypes[t] = true
		}
	}
	if p.Narrow != nil {
		terms, err := narrow.ParseEventsNarrowJSON(*p.Narrow)
		if err != nil {
			return o, narrowError(err)
		}
		o.narrow = terms
	}
	if c := p.ClientCapabilities; c != nil {
		if c.NotificationSettingsNull == nil {
			return o, BadRequest(`client_capabilities["notification_settings_null"] field is missing: Field required`)
		}
		o.bulkMessageDeletion = c.BulkMessageDeletion
		o.userSettingsObject = c.UserSettingsObject
		o.streamTyping = c.StreamTypingNotifications
		o.includeDeactivatedGroups = c.IncludeDeactivatedGroups
		o.emptyTopicName = c.EmptyTopicName
		o.linkifierURLTemplate = c.LinkifierURLTemplate
	}
	return o, nil
}

// lifespan is how long the queue may go unpolled.
func (p *QueueParams) lifespan(lim QueueLimits) time.Duration {
	if p.QueueLifespanSecs == nil || *p.QueueLifespanSecs <= 0 {
		return lim.IdleTimeout
	}
	return min(max(time.Duration(*p.QueueLifespanSecs)*time.Second, lim.IdleTimeout), lim.MaxLifespan)
}

// Register creates an event queue for the caller and returns it with the
// initial state of the requested event types, read atomically with the
// queue's start: every change committed after the state was read arrives
// as an event, and none that the state already shows.
func (s *Service) Register(ctx context.Context, c Caller, req RegisterRequest) (*RegisterResponse, error) {
	me, _, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	opts, err := req.options(me, s.queueLimit)
	if err != nil {
		return nil, err
	}
	fetch := req.EventTypes
	if req.FetchEventTypes != nil {
		fetch = req.FetchEventTypes
	}
	// Read before the snapshot begins (unread_cache.go).
	unreadAt := s.unread.gens(c.RealmID, c.UserID)
	q, err := s.openQueue(ctx, me, opts, func(view reads, out *queueStart) error {
		view.unreadAt = &unreadAt
		state, err := view.initialState(ctx, c, &req, &opts, fetch)
		out.state = state
		return err
	})
	if err != nil {
		return nil, err
	}
	return &RegisterResponse{QueueID: q.queue.ID(), LastEventID: -1, State: q.state}, nil
}

// queueStart is what opening a queue read from its snapshot.
type queueStart struct {
	queue *eventQueue
	state map[string]any
}

// openQueue creates a queue and, in one read snapshot, the queue's
// replica of its user's standing and whatever read wants; events that
// commit while the snapshot is being read wait in the queue and are kept
// only if the snapshot does not include them.
func (s *Service) openQueue(ctx context.Context, me *storage.User, opts queueOptions, read func(view reads, out *queueStart) error) (*queueStart, error) {
	if err := s.listening(ctx); err != nil {
		return nil, err
	}
	hub := s.hub
	q := hub.Open(me.RealmID, me.ID, opts, opts.lifespan)
	out := &queueStart{queue: q}
	var snap storage.Snapshot
	standing := eventq.Standing{Subscribed: map[int64]struct{}{}}
	err := s.store.ReadSnapshot(ctx, func(rs storage.Store, sn storage.Snapshot) error {
		snap = sn
		rs = newSnapshotMemo(rs)
		view := s.privateReads(rs)
		u, err := rs.GetUser(ctx, me.RealmID, me.ID)
		if err != nil {
			return err
		}
		if !u.IsActive {
			return errUserDeactivated
		}
		standing.Role = u.Role
		subs, err := rs.ListUserSubscriptions(ctx, me.RealmID, me.ID)
		if err != nil {
			return err
		}
		for _, sub := range subs {
			if sub.Active {
				standing.Subscribed[sub.StreamID] = struct{}{}
			}
		}
		if read != nil {
			return read(view, out)
		}
		return nil
	})
	if err != nil {
		hub.Remove(q)
		return nil, s.internal(ctx, "register", err)
	}
	hub.Ready(q, snap, standing)
	return out, nil
}

// wants reports whether the fetch list asks for an event type's state.
func wants(fetch *[]string, types ...string) bool {
	if fetch == nil {
		return true
	}
	for _, t := range types {
		if !slices.Contains(*fetch, t) {
			return false
		}
	}
	return true
}
