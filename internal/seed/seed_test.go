package seed_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/internal/seed"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

func TestSeed(t *testing.T) {
	ctx := context.Background()
	st := bunstore.OpenTestSQLite(t)
	svc := chat.New(st, chat.WithPasswordHasher(chat.Argon2id{Time: 1, MemoryKiB: 64}))
	org, err := seed.Run(ctx, svc, st, seed.Config{Users: 50, ChannelSizes: []int{50, 10, 3}, Messages: 1000,
		DirectShare: 0.2, MentionShare: 0.1, ReadShare: 0.5, Seed: 1, Batch: 300})
	require.NoError(t, err)
	assert.Len(t, org.Users, 50)
	require.Len(t, org.Channels, 3)
	assert.Len(t, org.Channels[1].Subscribers, 10)
	assert.Equal(t, 1000, org.Messages)
	assert.InDelta(t, 200, org.Direct, 60)

	// The history is there and readable through the Service.
	resp, err := svc.GetMessages(ctx, org.Owner, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(50)})
	require.NoError(t, err)
	assert.Len(t, resp.Messages, 50)
	older, _, err := st.ListMessageWindow(ctx, storage.MessageWindow{RealmID: org.RealmID, UserID: org.Users[0],
		Scope: storage.MessageScope{FullChannels: []int64{org.Channels[0].ID}}, Filter: storage.MessageFilter{Search: "lunch"},
		Anchor: org.MaxID, Before: 10})
	require.NoError(t, err)
	assert.NotEmpty(t, older, "the seeded words are searchable")
	ranges, err := st.ListReadRanges(ctx, org.RealmID, org.Users[0], org.Channels[0].ID, 0, org.MaxID)
	require.NoError(t, err)
	assert.Len(t, ranges, 1, "half the history read, as one range")
}

func ptr[T any](v T) *T { return &v }
