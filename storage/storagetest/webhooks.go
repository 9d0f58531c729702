package storagetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var webhookTests = []test{
	{"Webhooks/Services", testBotServices},
	{"Webhooks/ClaimFinishRetry", testWebhookClaims},
	{"Webhooks/ConcurrentClaims", testWebhookConcurrentClaims},
}

func newService(t *testing.T, s storage.Store, realmID, botID int64) *storage.BotService {
	t.Helper()
	svc := &storage.BotService{RealmID: realmID, BotID: botID, Name: "echo", BaseURL: "https://bot.example.com/", Interface: 1, Token: "tok"}
	require.NoError(t, s.CreateBotService(t.Context(), svc))
	require.NotZero(t, svc.ID)
	return svc
}

func testBotServices(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	bot := newUser(t, s, realm.ID, "echo-bot@example.com")
	svc := newService(t, s, realm.ID, bot.ID)
	err := s.CreateBotService(ctx, &storage.BotService{RealmID: other.ID, BotID: bot.ID, Name: "x", BaseURL: "u", Interface: 1, Token: "t"})
	assert.Error(t, err, "a bot of another realm")

	svc.BaseURL, svc.Interface, svc.Token = "https://elsewhere.example.com/", 2, "ignored"
	require.NoError(t, s.UpdateBotService(ctx, svc))
	list, err := s.ListBotServices(ctx, realm.ID, []int64{bot.ID, bot.ID})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "https://elsewhere.example.com/", list[0].BaseURL)
	assert.Equal(t, 2, list[0].Interface)
	assert.Equal(t, "tok", list[0].Token, "the token stays")
	list, err = s.ListBotServices(ctx, other.ID, []int64{bot.ID})
	require.NoError(t, err)
	assert.Empty(t, list)
	assert.ErrorIs(t, s.UpdateBotService(ctx, &storage.BotService{ID: svc.ID, RealmID: other.ID}), storage.ErrNotFound)
}

func testWebhookClaims(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	bot := newUser(t, s, realm.ID, "echo-bot@example.com")
	svc := newService(t, s, realm.ID, bot.ID)
	ds := []storage.WebhookDelivery{
		{RealmID: realm.ID, BotID: bot.ID, ServiceID: svc.ID, MessageID: 1, Trigger: "mention", NextAttemptAt: 100, CreatedAt: 100},
		{RealmID: realm.ID, BotID: bot.ID, ServiceID: svc.ID, MessageID: 2, Trigger: "direct_message", NextAttemptAt: 50, CreatedAt: 50},
		{RealmID: realm.ID, BotID: bot.ID, ServiceID: svc.ID, MessageID: 3, Trigger: "mention", NextAttemptAt: 500, CreatedAt: 100},
	}
	require.NoError(t, s.EnqueueWebhooks(ctx, ds))
	at, ok, err := s.NextWebhookAt(ctx, 0)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, int64(50), at)

	got, err := s.ClaimWebhooks(ctx, 200, 260, "a", 10)
	require.NoError(t, err)
	require.Len(t, got, 2, "the third is not due")
	assert.Equal(t, []int64{2, 1}, []int64{got[0].MessageID, got[1].MessageID}, "oldest due first")
	assert.Equal(t, "a", got[0].Claim)
	assert.Equal(t, int64(260), got[0].ClaimedUntil)
	again, err := s.ClaimWebhooks(ctx, 210, 270, "b", 10)
	require.NoError(t, err)
	assert.Empty(t, again, "claimed rows are not claimed twice")

	ok, err = s.FinishWebhook(ctx, got[0].ID, "b")
	require.NoError(t, err)
	assert.False(t, ok, "not b's claim")
	ok, err = s.FinishWebhook(ctx, got[0].ID, "a")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.RetryWebhook(ctx, got[1].ID, "a", 1, 300)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.RetryWebhook(ctx, got[1].ID, "a", 2, 300)
	require.NoError(t, err)
	assert.False(t, ok, "the claim was released")

	got, err = s.ClaimWebhooks(ctx, 300, 360, "c", 10)
	require.NoError(t, err)
	require.Len(t, got, 1, "due again at 300")
	assert.Equal(t, 1, got[0].Attempts)
	assert.Equal(t, int64(1), got[0].MessageID)
	// An expired claim is taken again.
	got, err = s.ClaimWebhooks(ctx, 600, 660, "d", 10)
	require.NoError(t, err)
	assert.Len(t, got, 2, "c's claim expired at 360; the third is due")
	ok, err = s.FinishWebhook(ctx, got[0].ID, "c")
	require.NoError(t, err)
	assert.False(t, ok, "c lost its claim")
}

// Concurrent deliverers never claim the same row.
func testWebhookConcurrentClaims(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	bot := newUser(t, s, realm.ID, "echo-bot@example.com")
	svc := newService(t, s, realm.ID, bot.ID)
	var ds []storage.WebhookDelivery
	for i := range 60 {
		ds = append(ds, storage.WebhookDelivery{RealmID: realm.ID, BotID: bot.ID, ServiceID: svc.ID, MessageID: int64(i + 1),
			Trigger: "mention", NextAttemptAt: 1, CreatedAt: 1})
	}
	require.NoError(t, s.EnqueueWebhooks(ctx, ds))
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := s.ClaimWebhooks(ctx, 10, 100, fmt.Sprint("w", w), 5)
				if !assert.NoError(t, err) || len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					seen[d.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, 60)
	for id, n := range seen {
		assert.Equal(t, 1, n, "delivery %d claimed %d times", id, n)
	}
}
