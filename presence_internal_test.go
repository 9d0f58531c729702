package chat

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/internal/presencebuf"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

// A flush that took a user's held times just before the user switched to
// invisible mode must not write them over the hidden presence.
func TestPresenceFlushDoesNotUndoInvisibleMode(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := New(bunstore.OpenTestSQLite(t), WithClock(func() time.Time { return now }),
		WithPasswordHasher(Argon2id{Time: 1, MemoryKiB: 64}))
	realm, err := s.CreateRealm(ctx, CreateRealmRequest{Name: "Org", URL: "http://chat.example.com",
		OwnerEmail: "owner@example.com", OwnerFullName: "Owner", OwnerPassword: "a long enough password"})
	require.NoError(t, err)
	owner := Caller{RealmID: realm.RealmID, UserID: realm.OwnerID}
	ping := func() {
		_, err := s.UpdatePresence(ctx, owner, UpdatePresenceRequest{Status: "active", PingOnly: ptrTo(true)})
		require.NoError(t, err)
	}
	ping()
	now = now.Add(time.Minute)
	ping() // held in memory

	// The flush takes what is held...
	flushed := 0
	s.presence.Flush(presenceFlushBatch, func(realmID int64, batch []presencebuf.Entry) error {
		require.Len(t, batch, 1)
		flushed++
		// ... the user switches to invisible mode ...
		req := UpdateSettingsRequest{}
		req.PresenceEnabled = ptrTo(false)
		_, err = s.UpdateSettings(ctx, owner, req)
		require.NoError(t, err)
		// ... and the flush writes.
		return s.flushPresenceBatch(ctx, realmID, batch)
	})
	require.Equal(t, 1, flushed)
	rows, err := s.store.GetPresences(ctx, realm.RealmID, []int64{realm.OwnerID})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Nil(t, rows[0].LastActive, "still hidden")
	assert.Equal(t, now.Unix()-presenceOfflineThresholdSeconds-120, *rows[0].LastConnected)
}

func ptrTo[T any](v T) *T { return &v }

// BenchmarkPresencePingColdCaller is a ping in a 10,000-user organization
// whose caller is not in the caller cache, as a once-a-minute ping finds
// it (the cache keeps callers 5 s): the ping's whole cost, its
// authentication included; beside it, pings of 100 users whose callers
// stay cached (the ping's own work).
// TEAMCHAT_TEST_STORE=postgres (with TEAMCHAT_POSTGRES_DSN) runs it on
// PostgreSQL.
//
//	go test -run XXX -bench PresencePingColdCaller .
func BenchmarkPresencePingColdCaller(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var st storage.Store
	if os.Getenv("TEAMCHAT_TEST_STORE") == "postgres" {
		st = bunstore.OpenTestPostgres(b)
	} else {
		st = bunstore.OpenTestSQLite(b)
	}
	s := New(st, WithClock(func() time.Time { return now }), WithPasswordHasher(Argon2id{Time: 1, MemoryKiB: 64}))
	realm, err := s.CreateRealm(ctx, CreateRealmRequest{Name: "Org", URL: "http://chat.example.com",
		OwnerEmail: "owner@example.com", OwnerFullName: "Owner", OwnerPassword: "a long enough password"})
	if err != nil {
		b.Fatal(err)
	}
	const users = 10000
	var callers []Caller
	for start := 0; start < users; start += 1000 {
		err := st.InTx(ctx, func(tx storage.Store) error {
			for i := start; i < start+1000; i++ {
				u := &storage.User{RealmID: realm.RealmID, Email: fmt.Sprintf("p%d@example.com", i), FullName: "P",
					Role: RoleMember, IsActive: true, APIKey: fmt.Sprintf("p%031d", i), AvatarSource: "G", AvatarVersion: 1}
				if err := tx.CreateUser(ctx, u); err != nil {
					return err
				}
				callers = append(callers, Caller{RealmID: realm.RealmID, UserID: u.ID})
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	ping := func(c Caller) {
		if _, err := s.UpdatePresence(ctx, c, UpdatePresenceRequest{Status: "active", PingOnly: ptrTo(true)}); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range callers {
		ping(c) // first reports: written, now online
	}
	// The pings go round the users across the sub-benchmarks' runs, a
	// minute a round: every user stays online (a ping then moves their
	// times in memory; none is written at once).
	k := 0
	for _, cold := range []bool{true, false} {
		name := "cached"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if k%users == 0 {
					now = now.Add(time.Minute)
				}
				if cold {
					s.records.bump(realm.RealmID)
					ping(callers[k%users])
				} else {
					ping(callers[k%100])
				}
				k++
			}
			b.StopTimer()
			s.FlushPresence(ctx)
		})
	}
}
