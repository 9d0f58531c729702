package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
)

func ping(t *testing.T, h *chattest.Harness, as chattest.User, status string) {
	t.Helper()
	resp, err := h.Service.UpdatePresence(context.Background(), as.Caller, chat.UpdatePresenceRequest{Status: status, PingOnly: ptr(true)})
	require.NoError(t, err)
	checkSchema(t, "POST", "/users/me/presence", resp)
}

// storedPresence reads a user's row from the database (nil: none).
func storedPresence(t *testing.T, h *chattest.Harness, id int64) *storage.Presence {
	t.Helper()
	rows, err := h.Store.GetPresences(context.Background(), h.RealmID, []int64{id})
	require.NoError(t, err)
	if len(rows) == 0 {
		return nil
	}
	return &rows[0]
}

// presenceEvents takes the events and returns the presence ones.
func presenceEvents(t *testing.T, h *chattest.Harness) []sent {
	t.Helper()
	var out []sent
	for _, e := range takeEvents(t, h) {
		if e.Type == "presence" {
			out = append(out, e)
		}
	}
	return out
}

func realmPresence(t *testing.T, h *chattest.Harness, as chattest.User) map[string]any {
	t.Helper()
	resp, err := h.Service.GetRealmPresence(context.Background(), as.Caller)
	require.NoError(t, err)
	checkSchema(t, "GET", "/realm/presence", resp)
	return resp.Presences
}

// The reference's update rules, step by step on the injected clock.
func TestPresenceUpdateRules(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleGuest)
	t0 := h.Clock.Now().Unix()
	h.Events.Take()

	// A first report creates the row at once and tells everyone.
	ping(t, h, alice, "active")
	p := storedPresence(t, h, alice.ID)
	require.NotNil(t, p)
	assert.Equal(t, t0, *p.LastActive)
	assert.Equal(t, t0, *p.LastConnected)
	evs := presenceEvents(t, h)
	require.Len(t, evs, 1)
	assert.Equal(t, activeIDs(t, h), evs[0].To)
	assert.Equal(t, float64(alice.ID), evs[0].JSON["user_id"])
	assert.Equal(t, map[string]any{"website": map[string]any{"client": "website", "status": "active", "timestamp": float64(t0), "pushable": false}},
		evs[0].JSON["presence"])
	first := p.LastUpdateID

	// Within 55 s nothing moves.
	h.Clock.Advance(30 * time.Second)
	ping(t, h, alice, "active")
	h.Service.FlushPresence(context.Background())
	assert.Equal(t, first, storedPresence(t, h, alice.ID).LastUpdateID, "no write within 55 s")

	// A minute later the times move, in memory until the flush, and
	// nobody is told (alice was online all along).
	h.Clock.Advance(60 * time.Second)
	ping(t, h, alice, "active")
	assert.Equal(t, t0, *storedPresence(t, h, alice.ID).LastActive, "held until the flush")
	h.Service.FlushPresence(context.Background())
	p = storedPresence(t, h, alice.ID)
	assert.Equal(t, t0+90, *p.LastActive)
	assert.Equal(t, t0+90, *p.LastConnected)
	assert.Greater(t, p.LastUpdateID, first)
	assert.Empty(t, presenceEvents(t, h))

	// Idle reports move only the connected time; the legacy form then
	// says idle once active is 70 s behind.
	h.Clock.Advance(100 * time.Second)
	ping(t, h, alice, "idle")
	h.Service.FlushPresence(context.Background())
	p = storedPresence(t, h, alice.ID)
	assert.Equal(t, t0+90, *p.LastActive)
	assert.Equal(t, t0+190, *p.LastConnected)
	got := realmPresence(t, h, bob)[alice.Email].(map[string]chat.LegacyPresence)
	assert.Equal(t, "idle", got["aggregated"].Status)
	assert.Equal(t, t0+190, got["aggregated"].Timestamp)
	assert.Empty(t, presenceEvents(t, h))

	// Active again after more than 130 s: back online, written and told at once.
	h.Clock.Advance(60 * time.Second)
	ping(t, h, alice, "active")
	p = storedPresence(t, h, alice.ID)
	assert.Equal(t, t0+250, *p.LastActive, "written without waiting for a flush")
	evs = presenceEvents(t, h)
	require.Len(t, evs, 1)
	assert.Equal(t, "active", evs[0].JSON["presence"].(map[string]any)["website"].(map[string]any)["status"])

	// A first idle report: connected now, never active (shown as active
	// at date_joined, which is long before).
	ping(t, h, bob, "idle")
	p = storedPresence(t, h, bob.ID)
	assert.Nil(t, p.LastActive)
	assert.Equal(t, t0+250, *p.LastConnected)
	require.Len(t, presenceEvents(t, h), 1, "a new row is announced")
}

func TestPresenceErrors(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bot := h.NewBot(t, alice)
	gone := h.NewUser(t, chat.RoleMember)
	h.Deactivate(t, gone)

	_, err := h.Service.UpdatePresence(ctx, alice.Caller, chat.UpdatePresenceRequest{Status: "away"})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid status: away")
	_, err = h.Service.UpdatePresence(ctx, bot.Caller, chat.UpdatePresenceRequest{Status: "active"})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "This endpoint does not accept bot requests.")

	for _, tc := range []struct {
		target, msg string
		kind        chat.Kind
	}{
		{"999999", "No such user", chat.KindNotFound},
		{strconv.FormatInt(gone.ID, 10), "No such user", chat.KindNotFound},
		{"nobody@example.com", "No such user", chat.KindNotFound},
		{strconv.FormatInt(bot.ID, 10), "Presence is not supported for bot users.", 0},
		{strconv.FormatInt(alice.ID, 10), "No presence data for " + strconv.FormatInt(alice.ID, 10), 0},
		{alice.Email, "No presence data for " + alice.Email, 0},
	} {
		_, err = h.Service.GetUserPresence(ctx, alice.Caller, chat.GetUserPresenceRequest{UserIDOrEmail: tc.target})
		requireError(t, err, orInvalid(tc.kind), chat.CodeBadRequest, tc.msg)
	}
}

// One user's presence, by ID or email, legacy or modern; the aggregated
// status says offline after the offline threshold.
func TestGetUserPresence(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	t0 := h.Clock.Now().Unix()
	ping(t, h, alice, "active")
	for _, target := range []string{strconv.FormatInt(alice.ID, 10), alice.Email} {
		resp, err := h.Service.GetUserPresence(ctx, guest.Caller, chat.GetUserPresenceRequest{UserIDOrEmail: target})
		require.NoError(t, err)
		checkSchema(t, "GET", "/users/{user_id_or_email}/presence", resp)
		assert.Equal(t, map[string]chat.LegacyPresence{"website": {Status: "active", Timestamp: t0},
			"aggregated": {Status: "active", Timestamp: t0}}, resp.Presence)
	}
	resp, err := h.Service.GetUserPresence(ctx, guest.Caller, chat.GetUserPresenceRequest{UserIDOrEmail: alice.Email, SlimPresence: ptr(true)})
	require.NoError(t, err)
	assert.Equal(t, chat.ModernPresence{ActiveTimestamp: t0, IdleTimestamp: t0}, resp.Presence)

	h.Clock.Advance(201 * time.Second)
	resp, err = h.Service.GetUserPresence(ctx, guest.Caller, chat.GetUserPresenceRequest{UserIDOrEmail: alice.Email})
	require.NoError(t, err)
	assert.Equal(t, map[string]chat.LegacyPresence{"website": {Status: "active", Timestamp: t0},
		"aggregated": {Status: "offline", Timestamp: t0}}, resp.Presence)
}

// The last_update_id protocol: a first fetch returns everyone with the
// highest update ID, a later one what changed since (or the same ID when
// nothing did); the history limit bounds first fetches only.
func TestPresenceIncrementalFetch(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	t0 := h.Clock.Now().Unix()
	ping(t, h, carol, "active")
	h.Clock.Advance(20 * 24 * time.Hour) // carol's presence is 20 days old
	ping(t, h, alice, "active")
	ping(t, h, bob, "idle")
	t1 := h.Clock.Now().Unix()

	fetch := func(req chat.UpdatePresenceRequest) *chat.UpdatePresenceResponse {
		t.Helper()
		req.Status = "idle"
		resp, err := h.Service.UpdatePresence(ctx, alice.Caller, req)
		require.NoError(t, err)
		checkSchema(t, "POST", "/users/me/presence", resp)
		return resp
	}
	first := fetch(chat.UpdatePresenceRequest{LastUpdateID: ptr[int64](-1)})
	assert.Equal(t, map[string]any{
		strconv.FormatInt(alice.ID, 10): chat.ModernPresence{ActiveTimestamp: t1, IdleTimestamp: t1},
		strconv.FormatInt(bob.ID, 10):   chat.ModernPresence{ActiveTimestamp: chattest.Start.Unix(), IdleTimestamp: t1},
	}, first.Presences, "carol is older than 14 days")
	require.NotNil(t, first.PresenceLastUpdateID)
	last := *first.PresenceLastUpdateID
	assert.Equal(t, storedPresence(t, h, bob.ID).LastUpdateID, last)

	again := fetch(chat.UpdatePresenceRequest{LastUpdateID: &last})
	assert.Empty(t, again.Presences)
	assert.Equal(t, last, *again.PresenceLastUpdateID, "nothing changed: the same ID")

	wide := fetch(chat.UpdatePresenceRequest{LastUpdateID: ptr[int64](-1), HistoryLimitDays: ptr(30)})
	assert.Len(t, wide.Presences, 3)
	assert.Equal(t, chat.ModernPresence{ActiveTimestamp: t0, IdleTimestamp: t0}, wide.Presences[strconv.FormatInt(carol.ID, 10)])
	none := fetch(chat.UpdatePresenceRequest{LastUpdateID: ptr[int64](-1), HistoryLimitDays: ptr(0)})
	assert.Empty(t, none.Presences)
	assert.Equal(t, int64(-1), *none.PresenceLastUpdateID)

	// Carol comes back: only she is new.
	h.Clock.Advance(time.Minute)
	ping(t, h, carol, "active")
	next := fetch(chat.UpdatePresenceRequest{LastUpdateID: &last})
	assert.Equal(t, []string{strconv.FormatInt(carol.ID, 10)}, keys(next.Presences))
	assert.Greater(t, *next.PresenceLastUpdateID, last)

	// Without last_update_id: legacy by email (or modern with
	// slim_presence), and -1 only when nothing is returned.
	legacy := fetch(chat.UpdatePresenceRequest{})
	assert.Len(t, legacy.Presences, 3)
	assert.Contains(t, legacy.Presences, alice.Email)
	assert.Equal(t, *next.PresenceLastUpdateID, *legacy.PresenceLastUpdateID)
	slim := fetch(chat.UpdatePresenceRequest{SlimPresence: ptr(true)})
	assert.Contains(t, slim.Presences, strconv.FormatInt(alice.ID, 10))
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Invisible mode: a user with presence_enabled off reports nothing and
// looks offline since a few minutes before they turned it off; turning
// it back on shows them active at once. Both changes are announced.
func TestPresenceInvisibleMode(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	ping(t, h, alice, "active")
	h.Clock.Advance(10 * time.Minute)
	h.Events.Take()

	req := chat.UpdateSettingsRequest{}
	req.PresenceEnabled = ptr(false)
	_, err := h.Service.UpdateSettings(ctx, alice.Caller, req)
	require.NoError(t, err)
	hidden := h.Clock.Now().Unix() - 200 - 120
	evs := presenceEvents(t, h)
	require.Len(t, evs, 1)
	hiddenEv := map[string]any{"client": "website", "status": "idle", "timestamp": float64(hidden), "pushable": false}
	assert.Equal(t, hiddenEv, evs[0].JSON["presence"].(map[string]any)["website"], "idle since before the offline threshold")
	p := storedPresence(t, h, alice.ID)
	assert.Nil(t, p.LastActive)
	assert.Equal(t, hidden, *p.LastConnected)

	// Reports change nothing while invisible.
	h.Clock.Advance(2 * time.Minute)
	ping(t, h, alice, "active")
	h.Service.FlushPresence(ctx)
	assert.Equal(t, p.LastUpdateID, storedPresence(t, h, alice.ID).LastUpdateID)
	assert.Empty(t, presenceEvents(t, h))
	got := realmPresence(t, h, bob)[alice.Email].(map[string]chat.LegacyPresence)
	assert.Equal(t, "idle", got["aggregated"].Status)
	assert.Equal(t, hidden, got["aggregated"].Timestamp)

	// The deprecated away status turns it back on.
	_, err = h.Service.UpdateStatus(ctx, alice.Caller, chat.UpdateStatusRequest{Away: ptr(false)})
	require.NoError(t, err)
	now := h.Clock.Now().Unix()
	evs = presenceEvents(t, h)
	require.Len(t, evs, 1)
	assert.Equal(t, float64(now), evs[0].JSON["presence"].(map[string]any)["website"].(map[string]any)["timestamp"])
	assert.Equal(t, now, *storedPresence(t, h, alice.ID).LastActive)
}

// An organization can turn presence off: fetches return nothing (-1),
// reports are kept but announced to nobody.
func TestPresenceDisabledOrganization(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	admin := h.NewUser(t, chat.RoleAdministrator)
	_, err := h.Service.UpdateRealm(ctx, alice.Caller, chat.UpdateRealmRequest{PresenceDisabled: ptr(true)})
	requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	_, err = h.Service.UpdateRealm(ctx, admin.Caller, chat.UpdateRealmRequest{PresenceDisabled: ptr(true)})
	require.NoError(t, err)
	ev := only(t, takeEvents(t, h), "realm", "update")
	assert.Equal(t, "presence_disabled", ev.JSON["property"])

	ping(t, h, alice, "active")
	assert.NotNil(t, storedPresence(t, h, alice.ID))
	assert.Empty(t, presenceEvents(t, h))
	resp, err := h.Service.UpdatePresence(ctx, admin.Caller, chat.UpdatePresenceRequest{Status: "active", LastUpdateID: ptr[int64](-1)})
	require.NoError(t, err)
	assert.Empty(t, resp.Presences)
	assert.Equal(t, int64(-1), *resp.PresenceLastUpdateID)
	assert.Empty(t, realmPresence(t, h, alice))

	state := registerState(t, h, alice, "realm", "presence")
	assert.Equal(t, true, state["realm_presence_disabled"])
	assert.Equal(t, map[string]any{}, state["presences"])
	assert.EqualValues(t, -1, state["presence_last_update_id"])
	assert.EqualValues(t, 200, state["server_presence_offline_threshold_seconds"])
}

// Presence events go only to organizations of at most 100 active users.
func TestPresenceEventsOnlyInSmallOrganizations(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	err := h.Store.InTx(ctx, func(tx storage.Store) error {
		for i := range 100 {
			u := &storage.User{RealmID: h.RealmID, Email: fmt.Sprintf("crowd%d@example.com", i), FullName: "Crowd",
				Role: chat.RoleMember, IsActive: true, APIKey: fmt.Sprintf("crowd%028d", i), AvatarSource: "G", AvatarVersion: 1}
			if err := tx.CreateUser(ctx, u); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	h.Events.Take()
	ping(t, h, alice, "active")
	assert.NotNil(t, storedPresence(t, h, alice.ID))
	assert.Empty(t, presenceEvents(t, h), "more than 100 active users")
}

// The register snapshot carries presences, presence_last_update_id and
// server_timestamp.
func TestPresenceInRegister(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	ping(t, h, alice, "active")
	t0 := h.Clock.Now().Unix()
	state := registerState(t, h, bob, "presence")
	assert.Equal(t, map[string]any{alice.Email: map[string]any{
		"aggregated": map[string]any{"client": "website", "status": "active", "timestamp": float64(t0)},
		"website":    map[string]any{"client": "website", "status": "active", "timestamp": float64(t0), "pushable": false},
	}}, state["presences"])
	assert.EqualValues(t, storedPresence(t, h, alice.ID).LastUpdateID, state["presence_last_update_id"])
	assert.EqualValues(t, t0, state["server_timestamp"])
	slim := registerStateWith(t, h, bob, chat.RegisterRequest{QueueParams: chat.QueueParams{SlimPresence: ptr(true)}}, "presence")
	assert.Equal(t, map[string]any{strconv.FormatInt(alice.ID, 10): map[string]any{"active_timestamp": float64(t0), "idle_timestamp": float64(t0)}},
		slim["presences"])
}

func registerState(t *testing.T, h *chattest.Harness, as chattest.User, fetch ...string) map[string]any {
	t.Helper()
	return registerStateWith(t, h, as, chat.RegisterRequest{}, fetch...)
}

func registerStateWith(t *testing.T, h *chattest.Harness, as chattest.User, req chat.RegisterRequest, fetch ...string) map[string]any {
	t.Helper()
	req.FetchEventTypes = &fetch
	resp, err := h.Service.Register(context.Background(), as.Caller, req)
	require.NoError(t, err)
	checkSchema(t, "POST", "/register", resp)
	raw, err := json.Marshal(resp)
	require.NoError(t, err)
	var state map[string]any
	require.NoError(t, json.Unmarshal(raw, &state))
	return state
}

// Two servers on one database agree through it: a report held by one is
// seen by the other once flushed (Run flushes every 15 s, Close at the
// end), and a user coming online is written at once.
func TestPresenceTwoServers(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			open := sharedDatabase(t, dialect)
			h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return open() }))
			other := chat.New(open(), chat.WithClock(h.Clock.Now))
			alice := h.NewUser(t, chat.RoleMember)
			bob := h.NewUser(t, chat.RoleMember)
			seen := func(svc *chat.Service) int64 {
				t.Helper()
				resp, err := svc.UpdatePresence(ctx, bob.Caller, chat.UpdatePresenceRequest{Status: "idle", LastUpdateID: ptr[int64](-1)})
				require.NoError(t, err)
				p, ok := resp.Presences[strconv.FormatInt(alice.ID, 10)].(chat.ModernPresence)
				if !ok {
					return 0
				}
				return p.ActiveTimestamp
			}
			t0 := h.Clock.Now().Unix()
			ping(t, h, alice, "active")
			assert.Equal(t, t0, seen(other), "coming online is written at once")
			h.Clock.Advance(time.Minute)
			ping(t, h, alice, "active")
			assert.Equal(t, t0, seen(other), "held by the first server")
			h.Service.FlushPresence(ctx)
			assert.Equal(t, t0+60, seen(other))
			h.Clock.Advance(time.Minute)
			_, err := other.UpdatePresence(ctx, alice.Caller, chat.UpdatePresenceRequest{Status: "active", PingOnly: ptr(true)})
			require.NoError(t, err)
			require.NoError(t, other.Close())
			assert.Equal(t, t0+120, seen(h.Service), "Close writes what it held")
		})
	}
}
