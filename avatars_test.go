package chat_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func avatarFile(name, contentType, content string) chat.FileUpload {
	return chat.FileUpload{FileName: name, ContentType: contentType, Size: int64(len(content)), Content: strings.NewReader(content)}
}

// openAvatar reads an uploaded avatar by its URL (no credentials).
func openAvatar(h *chattest.Harness, url string) (string, string, error) {
	f, err := h.Service.OpenAvatarImage(context.Background(), h.RealmID, strings.TrimPrefix(url, "/user_avatars/"))
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), f.ContentType, err
}

func TestAvatars(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleGuest)
	before, err := h.Service.GetUser(ctx, bob.Caller, chat.GetUserRequest{UserID: alice.ID})
	require.NoError(t, err)
	takeEvents(t, h)

	// An upload: a new URL with the version in it, everyone told.
	resp, err := h.Service.UploadAvatar(ctx, alice.Caller, chat.UploadAvatarRequest{File: avatarFile("me.png", "image/png", "\x89PNG one")})
	require.NoError(t, err)
	first := resp.AvatarURL
	assert.Equal(t, fmt.Sprintf("/user_avatars/%d/avatars/%d-%d", h.RealmID, alice.ID, before.User.AvatarVersion+1), first)
	ev := only(t, takeEvents(t, h), "realm_user", "update")
	assert.Equal(t, activeIDs(t, h), ev.To)
	person := ev.JSON["person"].(map[string]any)
	assert.Equal(t, first, person["avatar_url"])
	assert.Equal(t, "U", person["avatar_source"])
	assert.EqualValues(t, before.User.AvatarVersion+1, person["avatar_version"])
	content, ct, err := openAvatar(h, first)
	require.NoError(t, err)
	assert.Equal(t, "\x89PNG one", content)
	assert.Equal(t, "image/png", ct)
	// Others see it, client_gravatar or not (it is no Gravatar).
	got, err := h.Service.GetUser(ctx, bob.Caller, chat.GetUserRequest{UserID: alice.ID, ClientGravatar: ptr(true)})
	require.NoError(t, err)
	require.NotNil(t, got.User.AvatarURL)
	assert.Equal(t, first, *got.User.AvatarURL)
	own, err := h.Service.GetOwnUser(ctx, alice.Caller)
	require.NoError(t, err)
	assert.Equal(t, first, own.AvatarURL)
	// Her messages carry it.
	id := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "hi"})
	msgs, err := h.Service.GetMessages(ctx, bob.Caller, chat.GetMessagesRequest{MessageIDs: &[]int64{id}, ClientGravatar: ptr(true)})
	require.NoError(t, err)
	require.Len(t, msgs.Messages, 1)
	require.NotNil(t, msgs.Messages[0].AvatarURL)
	assert.Equal(t, first, *msgs.Messages[0].AvatarURL)
	takeEvents(t, h)

	// A second picture replaces the first, whose file goes.
	resp, err = h.Service.UploadAvatar(ctx, alice.Caller, chat.UploadAvatarRequest{File: avatarFile("me.jpg", "image/jpeg", "jpeg two")})
	require.NoError(t, err)
	assert.NotEqual(t, first, resp.AvatarURL)
	_, _, err = openAvatar(h, first)
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "This file does not exist or has been deleted.")
	content, ct, err = openAvatar(h, resp.AvatarURL)
	require.NoError(t, err)
	assert.Equal(t, "jpeg two", content)
	assert.Equal(t, "image/jpeg", ct)
	takeEvents(t, h)

	// Back to Gravatar.
	del, err := h.Service.DeleteAvatar(ctx, alice.Caller)
	require.NoError(t, err)
	assert.Contains(t, del.AvatarURL, "https://secure.gravatar.com/avatar/")
	person = only(t, takeEvents(t, h), "realm_user", "update").JSON["person"].(map[string]any)
	assert.Equal(t, "G", person["avatar_source"])
	_, _, err = openAvatar(h, resp.AvatarURL)
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "This file does not exist or has been deleted.")

	// Guests have avatars too: each person changes only their own.
	_, err = h.Service.UploadAvatar(ctx, bob.Caller, chat.UploadAvatarRequest{File: avatarFile("b.webp", "image/webp", "webp")})
	require.NoError(t, err)
	got, err = h.Service.GetUser(ctx, alice.Caller, chat.GetUserRequest{UserID: alice.ID, ClientGravatar: ptr(false)})
	require.NoError(t, err)
	assert.Contains(t, *got.User.AvatarURL, "gravatar", "Bob's upload is his")
}

func TestAvatarRefusals(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	_, err := h.Service.UploadAvatar(ctx, alice.Caller, chat.UploadAvatarRequest{File: avatarFile("x.svg", "image/svg+xml", "<svg/>")})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid image format")
	_, err = h.Service.UploadAvatar(ctx, alice.Caller, chat.UploadAvatarRequest{File: avatarFile("x.txt", "text/plain", "text")})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid image format")
	big := chat.FileUpload{FileName: "big.png", ContentType: "image/png", Size: 5<<20 + 1, Content: strings.NewReader("")}
	_, err = h.Service.UploadAvatar(ctx, alice.Caller, chat.UploadAvatarRequest{File: big})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Uploaded file is larger than the allowed limit of 5 MiB")
	takeEvents(t, h)

	// A deactivated user can do nothing.
	gone := h.NewUser(t, chat.RoleMember)
	_, err = h.Service.DeactivateUser(ctx, h.Owner.Caller, chat.DeactivateUserRequest{UserID: gone.ID})
	require.NoError(t, err)
	takeEvents(t, h)
	_, err = h.Service.UploadAvatar(ctx, gone.Caller, chat.UploadAvatarRequest{File: avatarFile("a.png", "image/png", "png")})
	assert.Equal(t, chat.KindUnauthenticated, chat.AsError(err).Kind)
	_, err = h.Service.DeleteAvatar(ctx, gone.Caller)
	assert.Equal(t, chat.KindUnauthenticated, chat.AsError(err).Kind)
	assert.Empty(t, takeEvents(t, h), "refusals change nothing")

	// Paths that are not avatars are not served.
	for _, p := range []string{"", "avatars/1-1", fmt.Sprintf("%d/avatars/x-1", h.RealmID), fmt.Sprintf("%d/avatars/1", h.RealmID),
		fmt.Sprintf("%d/avatars/1-1/../../x", h.RealmID), fmt.Sprintf("%d/emoji/images/1.png", h.RealmID), "999/avatars/1-1"} {
		_, err := h.Service.OpenAvatarImage(ctx, h.RealmID, p)
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "This file does not exist or has been deleted.")
	}

	// Without a blob store there are no uploads.
	off := chattest.New(t, chattest.WithServiceOptions(chat.WithBlobStore(nil)))
	carol := off.NewUser(t, chat.RoleMember)
	_, err = off.Service.UploadAvatar(ctx, carol.Caller, chat.UploadAvatarRequest{File: avatarFile("a.png", "image/png", "png")})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "File uploads are not enabled on this server")
}
