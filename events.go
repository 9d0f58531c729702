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
	if !u.IsActive || slices.Contains(a.Except, u.ID) {
		return false
	}
	return slices.Contains(a.Users, u.ID) || slices.Contains(a.Roles, u.Role) ||
		slices.ContainsFunc(a.Subscribers, subscribed) ||
		u.Role != RoleGuest && slices.ContainsFunc(a.Groups, inGroup)
}

// ResolveAudience lists the IDs of the active users an event reaches,
// ascending. It reads the organization's users when the audience is a
// rule: it is meant for tests and for tools, not for the write path.
func (s *Service) ResolveAudience(ctx context.Context, ev Event) ([]int64, error) {
	subs, err := s.store.ListActiveSubscribers(ctx, ev.RealmID, ev.Audience.Subscribers)
	if err != nil {
		return nil, s.internal(ctx, "resolve audience", err)
	}
	subscribed := map[[2]int64]bool{}
	ids := slices.Clone(ev.Audience.Users)
	for _, sub := range subs {
		subscribed[[2]int64{sub.UserID, sub.StreamID}] = true
		ids = append(ids, sub.UserID)
	}
	inGroup := map[[2]int64]bool{}
	for _, g := range ev.Audience.Groups {
		below, err := s.store.GroupClosure(ctx, ev.RealmID, g)
		if err != nil {
			return nil, s.internal(ctx, "resolve audience", err)
		}
		ms, err := s.store.ListGroupMembershipsOf(ctx, ev.RealmID, below)
		if err != nil {
			return nil, s.internal(ctx, "resolve audience", err)
		}
		for _, m := range ms {
			inGroup[[2]int64{m.UserID, g}] = true
			ids = append(ids, m.UserID)
		}
	}
	var users []storage.User
	if len(ev.Audience.Roles) > 0 {
		users, err = s.store.ListUsers(ctx, ev.RealmID)
	} else {
		users, err = s.store.FindUsers(ctx, ev.RealmID, storage.UserFilter{IDs: nonNil(ids)})
	}
	if err != nil {
		return nil, s.internal(ctx, "resolve audience", err)
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
	s.shared.publishMu.Lock()
	defer s.shared.publishMu.Unlock()
	for _, ev := range events {
		for _, sink := range s.sinks {
			sink(ev)
		}
	}
}

// writeTx is one write transaction: the Store bound to it, and the events
// that will be published if it commits.
type writeTx struct {
	storage.Store
	realmID int64
	events  []Event
	// callersKept: the write changes no account, role, group or
	// organization setting (a message, a flag), so the organization's
	// cached callers stay valid.
	callersKept bool
	// forgotten are messages whose cached form the write makes stale.
	forgotten []int64
	// after run once the transaction has committed.
	after []func()
	svc   *Service
}

// keepCallers tells the write path that this write leaves every cached
// caller (account, realm) as it was, so committing it does not empty the
// organization's caller cache. Only writes that touch messages and
// per-user message state may say so.
func (w *writeTx) keepCallers() { w.callersKept = true }

// forgetMessages drops the messages from the message cache now, again
// after the commit (a read in between may cache the old version), and on
// every other server when the write reaches them through the event bus.
func (w *writeTx) forgetMessages(ids ...int64) {
	w.svc.messages.forget(ids)
	w.forgotten = append(w.forgotten, ids...)
}

// afterCommit runs fn once the transaction has committed (never when it
// rolls back).
func (w *writeTx) afterCommit(fn func()) { w.after = append(w.after, fn) }

// emit queues an event of the transaction's realm.
func (w *writeTx) emit(aud Audience, body EventBody) {
	w.events = append(w.events, Event{RealmID: w.realmID, Audience: aud, Body: body})
}

// write is the one write path: it runs fn in a transaction that holds the
// realm's write lock (realmID 0: a new realm, which nobody else can see
// yet), so checks inside fn and the writes they guard mean the same on
// SQLite and PostgreSQL. Inside the same transaction it hands fn's events
// and cache invalidations to the event bus (storage.EventStore), which
// delivers them to every server's event queues after the commit, in commit
// order; the local sinks get them right after the commit. A failed or
// rolled-back fn publishes nothing.
func (s *Service) write(ctx context.Context, realmID int64, fn func(w *writeTx) error) error {
	leave := func() {}
	if realmID != 0 {
		var err error
		if leave, err = s.shared.writeGate.enter(ctx, realmID); err != nil {
			return s.internal(ctx, "wait for the organization's write turn", err)
		}
	}
	var done *writeTx
	err := func() error {
		defer leave() // before the events go out: a sink may write again
		return s.store.InTx(ctx, func(st storage.Store) error {
			w := &writeTx{Store: st, realmID: realmID, svc: s}
			if realmID != 0 {
				if err := st.LockRealm(ctx, realmID); err != nil {
					return err
				}
			}
			if err := fn(w); err != nil {
				return err
			}
			payload, err := s.busPayload(w)
			if err != nil {
				return err
			}
			if payload != nil {
				if err := st.PublishEvents(ctx, payload); err != nil {
					return err
				}
			}
			done = w
			return nil
		})
	}()
	if err != nil {
		return err
	}
	if !done.callersKept {
		s.callers.bump(realmID)
	}
	if len(done.forgotten) > 0 {
		s.messages.forget(done.forgotten)
	}
	for _, fn := range done.after {
		fn()
	}
	s.publish(done.events)
	return nil
}
