package storagetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var uploadTests = []test{
	{"Upload/AttachmentsAndRealmTotal", testUploadAttachments},
}

// Attachments are found by path, linked to messages, and counted in
// their organization's upload total (and only there).
func testUploadAttachments(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	other := newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	stranger := newUser(t, s, other.ID, "stranger@example.com")
	create := func(a *storage.Attachment) error {
		return s.InTx(ctx, func(tx storage.Store) error { return tx.CreateAttachment(ctx, a) })
	}
	a := &storage.Attachment{RealmID: realm.ID, OwnerID: alice.ID, PathID: "1/ab/a.txt", FileName: "a.txt", Size: 100, ContentType: "text/plain", CreateTime: 1}
	b := &storage.Attachment{RealmID: realm.ID, OwnerID: alice.ID, PathID: "1/cd/b.png", FileName: "b.png", Size: 250, ContentType: "image/png", CreateTime: 2}
	require.NoError(t, create(a))
	require.NoError(t, create(b))
	require.NoError(t, create(&storage.Attachment{RealmID: other.ID, OwnerID: stranger.ID, PathID: "2/ef/c.txt", FileName: "c.txt", Size: 7, CreateTime: 3}))
	assert.NotZero(t, a.ID)
	err := create(&storage.Attachment{RealmID: realm.ID, OwnerID: alice.ID, PathID: "1/ab/a.txt", FileName: "again", Size: 1000, CreateTime: 4})
	assert.ErrorIs(t, err, storage.ErrConflict)

	total, err := s.RealmUploadBytes(ctx, realm.ID)
	require.NoError(t, err)
	assert.EqualValues(t, 350, total, "a refused upload is not counted")
	total, err = s.RealmUploadBytes(ctx, other.ID)
	require.NoError(t, err)
	assert.EqualValues(t, 7, total)

	found, err := s.GetAttachmentsByPath(ctx, realm.ID, []string{"1/cd/b.png", "2/ef/c.txt", "missing"})
	require.NoError(t, err)
	require.Len(t, found, 1, "another organization's file is not found")
	assert.Equal(t, *b, found[0])
}
