package chat

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/teamchat/chat/storage"
)

// Event is one real-time event, produced by a state change and published
// after its transaction commits. Body is the event as the reference sends
// it, minus the queue's "id"; Audience says who receives it.
type Event struct {
	RealmID  int64
	Audience Audience
	Body     EventBody
}

// EventBody is the payload of an event: one of the *Event types of this
// package. Its JSON form carries "type" (and "op" where the type has one).
type EventBody interface {
	EventType() string
}

// MarshalJSON writes the body with its "type" field.
func (e Event) MarshalJSON() ([]byte, error) { return marshalEventBody(e.Body) }

func marshalEventBody(b EventBody) ([]byte, error) {
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	typ, _ := json.Marshal(b.EventType())
	if string(raw) == "{}" {
		return []byte(`{"type":` + string(typ) + `}`), nil
	}
	return append([]byte(`{"type":`+string(typ)+`,`), raw[1:]...), nil
}

// Audience is who receives an event. An audience that covers a whole
// organization is kept as a rule (the roles that receive it) rather than a
// list of IDs, so that a change seen by everyone costs the write no more in
// a large organization; ResolveAudience expands it when a list is needed.
type Audience struct {
	// Users receive the event (in addition to Roles).
	Users []int64 `json:"u,omitempty"`
	// Roles: every active user with one of these roles (Role* values).
	Roles []int `json:"r,omitempty"`
	// Subscribers: every active subscriber of these channels, as they are
	// when the event is delivered (so a write never lists a channel's
	// subscribers to announce a change).
	Subscribers []int64 `json:"s,omitempty"`
	// Groups: every active member who is not a guest of these groups,
	// directly or through subgroups, resolved on delivery.
	Groups []int64 `json:"g,omitempty"`
	// Except never receive it (the users an event is about, when they
	// are told through another event).
	Except []int64 `json:"x,omitempty"`
}

// rolesUpTo lists the roles at least as privileged as role.
func rolesUpTo(role int) []int {
	var out []int
	for _, r := range allRoles {
		if r <= role {
			out = append(out, r)
		}
	}
	return out
}

func toUsers(ids ...int64) Audience { return Audience{Users: ids} }

var (
	everyone = Audience{Roles: allRoles}
	members  = Audience{Roles: rolesUpTo(RoleMember)}
	admins   = Audience{Roles: rolesUpTo(RoleAdministrator)}
)

// plus returns the audience with more users.
func (a Audience) plus(ids ...int64) Audience {
	a.Users = append(slices.Clone(a.Users), ids...)
	return a
}

// Includes reports whether the audience reaches u, given the channels u
// is subscribed to and the groups u is in.
func (a Audience) Includes(u *storage.User, subscribed, inGroup func(id int64) bool) bool {
	if !u.IsActive || u.IsSystemBot || slices.Contains(a.Except, u.ID) {
		return false // the internal bots have no event queues
	}
	return slices.Contains(a.Users, u.ID) || slices.Contains(a.Roles, u.Role) ||
		slices.ContainsFunc(a.Subscribers, subscribed) ||
		u.Role != RoleGuest && slices.ContainsFunc(a.Groups, inGroup)
}

// ResolveAudience lists the IDs of the active users an event reaches,
// ascending. It reads the organization's users when the audience is a
// rule: it is meant for tests and for tools, not for the write path.
func (s *Service) ResolveAudience(ctx context.Context, ev Event) ([]int64, error) {
	return s.reads().resolveAudience(ctx, ev)
}

// resolveAudience is ResolveAudience reading through r.
func (r reads) resolveAudience(ctx context.Context, ev Event) ([]int64, error) {
	subs, err := r.st.ListActiveSubscribers(ctx, ev.RealmID, ev.Audience.Subscribers)
	if err != nil {
		return nil, r.s.internal(ctx, "resolve audience", err)
	}
	subscribed := map[[2]int64]bool{}
	ids := slices.Clone(ev.Audience.Users)
	for _, sub := range subs {
		subscribed[[2]int64{sub.UserID, sub.StreamID}] = true
		ids = append(ids, sub.UserID)
	}
	inGroup := map[[2]int64]bool{}
	for _, g := range ev.Audience.Groups {
		below, err := r.st.GroupClosure(ctx, ev.RealmID, g)
		if err != nil {
			return nil, r.s.internal(ctx, "resolve audience", err)
		}
		ms, err := r.st.ListGroupMembershipsOf(ctx, ev.RealmID, below)
		if err != nil {
			return nil, r.s.internal(ctx, "resolve audience", err)
		}
		for _, m := range ms {
			inGroup[[2]int64{m.UserID, g}] = true
			ids = append(ids, m.UserID)
		}
	}
	var users []storage.User
	if len(ev.Audience.Roles) > 0 {
		users, err = r.st.ListUsers(ctx, ev.RealmID)
	} else {
		users, err = r.st.FindUsers(ctx, ev.RealmID, storage.UserFilter{IDs: nonNil(ids)})
	}
	if err != nil {
		return nil, r.s.internal(ctx, "resolve audience", err)
	}
	out := []int64{}
	for i := range users {
		u := &users[i]
		if ev.Audience.Includes(u, func(ch int64) bool { return subscribed[[2]int64{u.ID, ch}] },
			func(g int64) bool { return inGroup[[2]int64{u.ID, g}] }) {
			out = append(out, u.ID)
		}
	}
	return out, nil
}

// emitWholeList tells everyone a list the write changed, read through the
// write's transaction and sent whole, as the reference sends the
// collections a client keeps as one list (linkifiers, playgrounds, custom
// profile fields).
func emitWholeList[T any](ctx context.Context, w *writeTx, realmID int64, list func(reads, context.Context, int64) (T, error), event func(T) EventBody) error {
	v, err := list(w.reads(), ctx, realmID)
	if err != nil {
		return err
	}
	w.emit(everyone, event(v))
	return nil
}

// WithEventSink registers fn to receive every event of the writes made
// through this Service, right after each commits, on the committing
// goroutine: a transaction's events arrive together and in order, one
// transaction at a time. (Clients get every server's events through event
// queues: Register and GetEvents.) fn must not block for long and must not
// call back into the Service's writes. Several sinks may be registered.
func WithEventSink(fn func(Event)) Option {
	return func(s *Service) { s.sinks = append(s.sinks, fn) }
}

// publish hands committed events to the sinks.
func (s *Service) publish(events []Event) {
	if len(events) == 0 || len(s.sinks) == 0 {
		return
	}
	s.publishMu.Lock()
	defer s.publishMu.Unlock()
	for _, ev := range events {
		for _, sink := range s.sinks {
			sink(ev)
		}
	}
}
