package chat

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	b := s.shared.presence
	b.mu.Lock()
	var batch []storage.Presence
	for key := range b.dirty {
		tm := b.known[key]
		batch = append(batch, storage.Presence{UserID: key.user, LastActive: tm.active, LastConnected: tm.connected})
	}
	clear(b.dirty)
	b.mu.Unlock()
	require.Len(t, batch, 1)
	// ... the user switches to invisible mode ...
	req := UpdateSettingsRequest{}
	req.PresenceEnabled = ptrTo(false)
	_, err = s.UpdateSettings(ctx, owner, req)
	require.NoError(t, err)
	// ... and the flush writes.
	require.NoError(t, s.flushPresenceBatch(ctx, realm.RealmID, batch))
	rows, err := s.store.GetPresences(ctx, realm.RealmID, []int64{realm.OwnerID})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Nil(t, rows[0].LastActive, "still hidden")
	assert.Equal(t, now.Unix()-presenceOfflineThresholdSeconds-120, *rows[0].LastConnected)
}

func ptrTo[T any](v T) *T { return &v }
