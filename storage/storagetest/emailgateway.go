package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var emailGatewayTests = []test{
	{"EmailGateway/ChannelAddresses", testChannelEmailAddresses},
	{"EmailGateway/ReplyAddresses", testEmailReplyAddresses},
	{"EmailGateway/Receipts", testGatewayReceipts},
}

func testChannelEmailAddresses(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bot := newUser(t, s, realm.ID, "bot@example.com")
	want := storage.ChannelEmailAddress{RealmID: realm.ID, StreamID: 7, CreatorID: alice.ID, SenderID: bot.ID, EmailToken: "aaaa", DateCreated: 5}
	a, err := s.ChannelEmailAddress(ctx, &want)
	require.NoError(t, err)
	assert.NotZero(t, a.ID)
	again, err := s.ChannelEmailAddress(ctx, &storage.ChannelEmailAddress{RealmID: realm.ID, StreamID: 7, CreatorID: alice.ID, SenderID: bot.ID, EmailToken: "bbbb"})
	require.NoError(t, err)
	assert.Equal(t, a, again, "one address per (channel, creator, sender): the first token stays")
	other, err := s.ChannelEmailAddress(ctx, &storage.ChannelEmailAddress{RealmID: realm.ID, StreamID: 7, CreatorID: alice.ID, SenderID: alice.ID, EmailToken: "cccc"})
	require.NoError(t, err)
	assert.NotEqual(t, a.ID, other.ID)
	_, err = s.ChannelEmailAddress(ctx, &storage.ChannelEmailAddress{RealmID: realm.ID, StreamID: 8, CreatorID: alice.ID, SenderID: alice.ID, EmailToken: "cccc"})
	assert.ErrorIs(t, err, storage.ErrConflict, "tokens are unique")
	require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
		_, err := tx.ChannelEmailAddress(ctx, &storage.ChannelEmailAddress{RealmID: realm.ID, StreamID: 9, CreatorID: alice.ID, SenderID: alice.ID, EmailToken: "aaaa"})
		assert.ErrorIs(t, err, storage.ErrConflict)
		_, err = tx.ChannelEmailAddressByToken(ctx, "aaaa")
		return err // the transaction is still usable
	}))

	found, err := s.ChannelEmailAddressByToken(ctx, "aaaa")
	require.NoError(t, err)
	assert.Equal(t, a, found)
	_, err = s.ChannelEmailAddressByToken(ctx, "bbbb")
	assert.ErrorIs(t, err, storage.ErrNotFound)
}

func testEmailReplyAddresses(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	a := &storage.EmailReplyAddress{RealmID: realm.ID, MessageID: 3, UserID: alice.ID, EmailToken: "mm01", CreatedAt: 100}
	require.NoError(t, s.CreateEmailReplyAddress(ctx, a))
	assert.NotZero(t, a.ID)
	assert.ErrorIs(t, s.CreateEmailReplyAddress(ctx, &storage.EmailReplyAddress{RealmID: realm.ID, MessageID: 4, UserID: alice.ID, EmailToken: "mm01"}),
		storage.ErrConflict)
	found, err := s.EmailReplyAddressByToken(ctx, "mm01")
	require.NoError(t, err)
	assert.Equal(t, *a, *found)

	require.NoError(t, s.UseEmailReplyAddress(ctx, realm.ID, a.ID, 2))
	require.NoError(t, s.UseEmailReplyAddress(ctx, realm.ID, a.ID, 2))
	assert.ErrorIs(t, s.UseEmailReplyAddress(ctx, realm.ID, a.ID, 2), storage.ErrNotFound, "out of uses")
	other := newRealm(t, s, "other")
	assert.ErrorIs(t, s.UseEmailReplyAddress(ctx, other.ID, a.ID, 9), storage.ErrNotFound, "another realm's")
	found, err = s.EmailReplyAddressByToken(ctx, "mm01")
	require.NoError(t, err)
	assert.Equal(t, 2, found.TimesUsed)

	old := &storage.EmailReplyAddress{RealmID: realm.ID, MessageID: 5, UserID: alice.ID, EmailToken: "mm02", CreatedAt: 10}
	require.NoError(t, s.CreateEmailReplyAddress(ctx, old))
	n, err := s.PruneEmailGateway(ctx, 50, 0, 100)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = s.EmailReplyAddressByToken(ctx, "mm02")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	_, err = s.EmailReplyAddressByToken(ctx, "mm01")
	assert.NoError(t, err, "younger: kept")
}

func testGatewayReceipts(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	r := storage.GatewayReceipt{RealmID: realm.ID, EmailToken: "tok", MessageKey: "<1@example.com>", MessageID: 9, ReceivedAt: 100}
	require.NoError(t, s.RecordGatewayReceipt(ctx, r))
	assert.ErrorIs(t, s.RecordGatewayReceipt(ctx, r), storage.ErrConflict)
	require.NoError(t, s.RecordGatewayReceipt(ctx, storage.GatewayReceipt{RealmID: realm.ID, EmailToken: "other", MessageKey: "<1@example.com>", MessageID: 10, ReceivedAt: 100}),
		"the same mail to another address")
	got, err := s.GatewayReceipt(ctx, "tok", "<1@example.com>")
	require.NoError(t, err)
	assert.Equal(t, r, *got)
	_, err = s.GatewayReceipt(ctx, "tok", "<2@example.com>")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	for i := range 3 {
		require.NoError(t, s.RecordGatewayReceipt(ctx, storage.GatewayReceipt{RealmID: realm.ID, EmailToken: "old", MessageKey: string(rune('a' + i)), ReceivedAt: 10}))
	}
	n, err := s.PruneEmailGateway(ctx, 0, 50, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "bounded")
	n, err = s.PruneEmailGateway(ctx, 0, 50, 2)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = s.GatewayReceipt(ctx, "tok", "<1@example.com>")
	assert.NoError(t, err, "younger: kept")
}
