// Package chattest runs a real chat.Service in-process for tests: on a
// temporary SQLite file, with a movable clock and helpers that make users of
// every role. It is what our own tests use, and it is meant for programs
// that embed the library and want to unit-test their chat features.
//
//	h := chattest.New(t)
//	alice := h.NewUser(t, chat.RoleMember)
//	me, err := h.Service.GetOwnUser(ctx, alice.Caller)
package chattest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/blob"
	"github.com/teamchat/chat/storage/bunstore"
)

// Clock is a settable clock for the Service.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// User is an account made by the harness, with its credentials.
type User struct {
	ID       int64
	Email    string
	FullName string
	Password string
	APIKey   string
	Role     int
	Caller   chat.Caller
}

// Harness is a Service on a fresh database with one organization.
type Harness struct {
	Service *chat.Service
	Store   storage.Store
	Clock   *Clock
	// RealmID is the organization made at start; Owner is its owner.
	RealmID  int64
	RealmURL string
	Owner    User
	// Events records every event the Service publishes (of every
	// organization on the Service).
	Events *EventLog
	seq    *atomic.Int64 // shared by the harnesses of one store
}

// EventLog records published events in order. It is safe for concurrent use.
type EventLog struct {
	mu     sync.Mutex
	events []chat.Event
}

func (l *EventLog) add(ev chat.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

// Take returns the events recorded since the last Take and forgets them.
func (l *EventLog) Take() []chat.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

// Password is the password of every user the harness makes.
const Password = "correct horse battery staple"

// Option configures the harness.
type Option func(*config)

type config struct {
	store      func(testing.TB) storage.Store
	opts       []chat.Option
	realm      chat.CreateRealmRequest
	onboarding bool
}

// WithStore makes the harness run on the store open returns (for example a
// PostgreSQL store from bunstore.OpenTestPostgres).
func WithStore(open func(testing.TB) storage.Store) Option {
	return func(c *config) { c.store = open }
}

// WithServiceOptions passes options to chat.New (after the harness's own).
func WithServiceOptions(opts ...chat.Option) Option {
	return func(c *config) { c.opts = append(c.opts, opts...) }
}

// WithRealm changes the organization made at start (its URL, name, email
// visibility); empty fields keep the defaults.
func WithRealm(req chat.CreateRealmRequest) Option {
	return func(c *config) { c.realm = req }
}

// WithOnboarding gives the organization its default channels and welcome
// messages, as chat.CreateRealm does by default; without it the harness
// starts from an organization with no channel and no message.
func WithOnboarding() Option {
	return func(c *config) { c.onboarding = true }
}

// defaultStore is a temporary SQLite file, or a fresh PostgreSQL schema
// when TEAMCHAT_TEST_STORE=postgres (with TEAMCHAT_POSTGRES_DSN set), so a
// whole test suite can run on either database.
func defaultStore(t testing.TB) storage.Store {
	if os.Getenv("TEAMCHAT_TEST_STORE") == "postgres" {
		return bunstore.OpenTestPostgres(t)
	}
	return bunstore.OpenTestSQLite(t)
}

// SkipStoreRerun skips a test that picks its databases itself (it runs on
// SQLite and on PostgreSQL whatever TEAMCHAT_TEST_STORE says) when the
// suite runs again with TEAMCHAT_TEST_STORE=postgres: that run would
// repeat it as it was.
func SkipStoreRerun(t testing.TB) {
	t.Helper()
	if os.Getenv("TEAMCHAT_TEST_STORE") == "postgres" {
		t.Skip("picks its databases itself: it ran in the run without TEAMCHAT_TEST_STORE")
	}
}

// Start is the harness clock's initial time.
var Start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// New starts a harness; everything it opened is closed when t ends.
func New(t testing.TB, opts ...Option) *Harness {
	t.Helper()
	cfg := config{store: defaultStore}
	for _, o := range opts {
		o(&cfg)
	}
	clock := &Clock{now: Start}
	st := cfg.store(t)
	events := &EventLog{}
	blobs, err := blob.NewDir(filepath.Join(t.TempDir(), "uploads"))
	if err != nil {
		t.Fatalf("chattest: uploads directory: %v", err)
	}
	svcOpts := append([]chat.Option{
		chat.WithBlobStore(blobs),
		chat.WithClock(clock.Now),
		chat.WithEventSink(events.add),
		// A cheap hash keeps tests fast; production uses chat.Argon2id{}.
		chat.WithPasswordHasher(chat.Argon2id{Time: 1, MemoryKiB: 64}),
	}, cfg.opts...)
	svc := chat.New(st, svcOpts...)
	t.Cleanup(func() { _ = svc.Close() }) // before the store's own cleanup: stops event delivery
	req := cfg.realm
	if req.Name == "" {
		req.Name = "Test Organization"
	}
	if req.URL == "" {
		req.URL = "http://chat.example.com"
	}
	if req.OwnerEmail == "" {
		req.OwnerEmail = "owner@example.com"
	}
	if req.OwnerFullName == "" {
		req.OwnerFullName = "Olivia Owner"
	}
	if req.OwnerPassword == "" {
		req.OwnerPassword = Password
	}
	req.SkipOnboarding = !cfg.onboarding
	ctx := context.Background()
	realm, err := svc.CreateRealm(ctx, req)
	if err != nil {
		t.Fatalf("chattest: create organization: %v", err)
	}
	events.Take() // the organization's creation
	h := &Harness{Service: svc, Store: st, Clock: clock, RealmID: realm.RealmID, RealmURL: req.URL, Events: events, seq: new(atomic.Int64)}
	h.Owner = User{ID: realm.OwnerID, Email: req.OwnerEmail, FullName: req.OwnerFullName,
		Password: req.OwnerPassword, APIKey: realm.OwnerAPIKey, Role: chat.RoleOwner,
		Caller: chat.Caller{RealmID: realm.RealmID, UserID: realm.OwnerID}}
	return h
}

var roleNames = map[int]string{
	chat.RoleOwner: "owner", chat.RoleAdministrator: "admin", chat.RoleModerator: "moderator",
	chat.RoleMember: "member", chat.RoleGuest: "guest",
}

// NewUser makes an active user of the given role with the harness Password.
func (h *Harness) NewUser(t testing.TB, role int) User {
	t.Helper()
	n := h.seq.Add(1)
	name := roleNames[role]
	return h.provision(t, chat.ProvisionUserRequest{
		Email:    fmt.Sprintf("%s%d@example.com", name, n),
		FullName: fmt.Sprintf("Test %s %d", name, n),
		Password: Password,
		Role:     role,
	})
}

// NewBot makes a generic bot owned by owner.
func (h *Harness) NewBot(t testing.TB, owner User) User {
	t.Helper()
	n := h.seq.Add(1)
	bt := chat.BotTypeGeneric
	return h.provision(t, chat.ProvisionUserRequest{
		Email:      fmt.Sprintf("bot%d-bot@example.com", n),
		FullName:   fmt.Sprintf("Test bot %d", n),
		Role:       chat.RoleMember,
		BotType:    &bt,
		BotOwnerID: &owner.ID,
	})
}

// Provision makes a user from a full request (for permissions and other
// details NewUser does not set).
func (h *Harness) Provision(t testing.TB, req chat.ProvisionUserRequest) User {
	t.Helper()
	return h.provision(t, req)
}

func (h *Harness) provision(t testing.TB, req chat.ProvisionUserRequest) User {
	t.Helper()
	resp, err := h.Service.ProvisionUser(context.Background(), h.RealmID, req)
	if err != nil {
		t.Fatalf("chattest: provision %s: %v", req.Email, err)
	}
	role := req.Role
	if role == 0 {
		role = chat.RoleMember
	}
	return User{ID: resp.UserID, Email: resp.Email, FullName: req.FullName, Password: req.Password,
		APIKey: resp.APIKey, Role: role, Caller: chat.Caller{RealmID: h.RealmID, UserID: resp.UserID}}
}

// Deactivate marks a user deactivated directly in the store, bypassing the
// rules of chat.Service.DeactivateUser (who may, the last owner), for tests
// that need a deactivated account of any kind.
func (h *Harness) Deactivate(t testing.TB, u User) {
	t.Helper()
	ctx := context.Background()
	rec, err := h.Store.GetUser(ctx, h.RealmID, u.ID)
	if err != nil {
		t.Fatalf("chattest: deactivate: %v", err)
	}
	rec.IsActive = false
	if err := h.Store.UpdateUser(ctx, rec, "is_active"); err != nil {
		t.Fatalf("chattest: deactivate: %v", err)
	}
	h.Service.InvalidateCaches(h.RealmID)
}

// DeactivateRealm marks the organization deactivated directly in the store
// (the Service has no operation for it yet).
func (h *Harness) DeactivateRealm(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	r, err := h.Store.GetRealm(ctx, h.RealmID)
	if err != nil {
		t.Fatalf("chattest: deactivate realm: %v", err)
	}
	r.Deactivated = true
	if err := h.Store.UpdateRealm(ctx, r, "deactivated"); err != nil {
		t.Fatalf("chattest: deactivate realm: %v", err)
	}
	h.Service.InvalidateCaches(h.RealmID)
}

// NewRealm creates another organization, served at url, on the same Service
// and store, and returns a harness for it (sharing Service, Store and Clock).
func (h *Harness) NewRealm(t testing.TB, url string) *Harness {
	t.Helper()
	n := h.seq.Add(1)
	email := fmt.Sprintf("owner%d@example.com", n)
	realm, err := h.Service.CreateRealm(context.Background(), chat.CreateRealmRequest{
		Name: fmt.Sprintf("Organization %d", n), URL: url,
		OwnerEmail: email, OwnerFullName: "Other Owner", OwnerPassword: Password, SkipOnboarding: true,
	})
	if err != nil {
		t.Fatalf("chattest: create organization: %v", err)
	}
	other := &Harness{Service: h.Service, Store: h.Store, Clock: h.Clock, RealmID: realm.RealmID, RealmURL: url, Events: h.Events, seq: h.seq}
	other.Owner = User{ID: realm.OwnerID, Email: email, FullName: "Other Owner", Password: Password,
		APIKey: realm.OwnerAPIKey, Role: chat.RoleOwner, Caller: chat.Caller{RealmID: realm.RealmID, UserID: realm.OwnerID}}
	return other
}
