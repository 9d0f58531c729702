package chat_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func upload(t *testing.T, h *chattest.Harness, as chattest.User, name, contentType, content string) string {
	t.Helper()
	resp, err := h.Service.UploadFile(context.Background(), as.Caller, chat.UploadFileRequest{File: chat.FileUpload{
		FileName: name, ContentType: contentType, Size: int64(len(content)), Content: strings.NewReader(content)}})
	require.NoError(t, err)
	checkSchema(t, "POST", "/user_uploads", resp)
	require.Equal(t, resp.URL, resp.URI)
	return resp.URL
}

// readUpload opens the file at url as the user: its content, or the error.
func readUpload(h *chattest.Harness, as chattest.User, url string) (string, error) {
	f, err := h.Service.OpenUpload(context.Background(), as.Caller, strings.TrimPrefix(url, "/user_uploads/"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

func TestUploads(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "secret", true)
	subscribe(t, h, alice, "secret", bob.ID)

	url := upload(t, h, alice, "Quarterly report (final).pdf", "application/pdf", "%PDF-1.7 numbers")
	assert.Regexp(t, fmt.Sprintf(`^/user_uploads/%d/[0-9a-f]{1,2}/[A-Za-z0-9_-]{24}/Quarterly-report-final.pdf$`, h.RealmID), url)
	got, err := readUpload(h, alice, url)
	require.NoError(t, err)
	assert.Equal(t, "%PDF-1.7 numbers", got, "the uploader may open it")
	_, err = readUpload(h, bob, url)
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "You are not authorized to view this file.")

	// Linked in a private channel: its subscribers may open it, others not.
	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("secret"), Topic: ptr("t"),
		Content: fmt.Sprintf("[report](%s)", url)})
	got, err = readUpload(h, bob, url)
	require.NoError(t, err)
	assert.Equal(t, "%PDF-1.7 numbers", got)
	_, err = readUpload(h, carol, url)
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "You are not authorized to view this file.")
	msg := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(1), Narrow: ptr(`[{"operator":"has","operand":"attachment"}]`)})
	assert.Equal(t, []int64{id}, fetchedIDs(msg))

	// Sharing a file one may not open links nothing.
	secretFile := upload(t, h, alice, "plan.png", "", "\x89PNG...")
	send(t, h, carol, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: fmt.Sprintf("[x](%s)", secretFile)})
	_, err = readUpload(h, bob, secretFile)
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "")
	// A direct message links it for its participants.
	send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(carol.ID), Content: fmt.Sprintf("[plan](%s)", secretFile)})
	got, err = readUpload(h, carol, secretFile)
	require.NoError(t, err)
	assert.Equal(t, "\x89PNG...", got)
	f, err := h.Service.OpenUpload(ctx, carol.Caller, strings.TrimPrefix(secretFile, "/user_uploads/"))
	require.NoError(t, err)
	assert.Equal(t, "image/png", f.ContentType, "guessed from the name")
	assert.Equal(t, "plan.png", f.FileName)
	f.Close()

	// Temporary URLs: a minute, no credentials.
	rel := strings.TrimPrefix(url, fmt.Sprintf("/user_uploads/%d/", h.RealmID))
	tmp, err := h.Service.GetFileTemporaryURL(ctx, bob.Caller, chat.GetFileTemporaryURLRequest{RealmIDStr: fmt.Sprint(h.RealmID), Filename: rel})
	require.NoError(t, err)
	checkSchema(t, "GET", "/user_uploads/{realm_id_str}/{filename}", tmp)
	token := strings.Split(strings.TrimPrefix(tmp.URL, "/user_uploads/temporary/"), "/")[0]
	f, err = h.Service.OpenTemporaryUpload(ctx, h.RealmID, token)
	require.NoError(t, err)
	f.Close()
	_, err = h.Service.OpenTemporaryUpload(ctx, h.RealmID, token+"x")
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "This file does not exist or has been deleted.")
	h.Clock.Advance(61 * time.Second)
	_, err = h.Service.OpenTemporaryUpload(ctx, h.RealmID, token)
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "This file does not exist or has been deleted.")
	_, err = h.Service.GetFileTemporaryURL(ctx, carol.Caller, chat.GetFileTemporaryURLRequest{RealmIDStr: fmt.Sprint(h.RealmID), Filename: rel})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "You are not authorized to view this file.")

	_, err = readUpload(h, alice, fmt.Sprintf("/user_uploads/%d/ab/nothing/here.txt", h.RealmID))
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "This file does not exist or has been deleted.")
	_, err = readUpload(h, alice, "/user_uploads/999/ab/nothing/here.txt")
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "This file does not exist or has been deleted.")
	_, err = h.Service.UploadFile(ctx, alice.Caller, chat.UploadFileRequest{File: chat.FileUpload{FileName: "big.bin",
		Size: 25<<20 + 1, Content: bytes.NewReader(nil)}})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "File is larger than this server's configured maximum upload size (25 MiB).")
	// Editing the link away detaches the file: nothing links it now.
	draft := upload(t, h, alice, "draft.txt", "text/plain", "v1")
	mid := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: fmt.Sprintf("[draft](%s)", draft)})
	edited, err := h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: mid, Content: ptr("never mind")})
	require.NoError(t, err)
	checkSchema(t, "PATCH", "/messages/{message_id}", edited)
	require.Len(t, edited.DetachedUploads, 1)
	assert.Equal(t, strings.TrimPrefix(draft, "/user_uploads/"), edited.DetachedUploads[0].PathID)
	assert.Equal(t, "draft.txt", edited.DetachedUploads[0].Name)
	_, err = readUpload(h, bob, draft)
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "You are not authorized to view this file.")

	weird := upload(t, h, alice, "../../etc/passwd", "", "x")
	assert.True(t, strings.HasSuffix(weird, "/etcpasswd"), weird)
}

func TestCustomEmoji(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	newChannelBy(t, h, alice, "general", false)
	png := "\x89PNG\r\n\x1a\n fake image"
	add := func(u chattest.User, name, contentType string) error {
		_, err := h.Service.UploadCustomEmoji(ctx, u.Caller, chat.UploadCustomEmojiRequest{EmojiName: name,
			File: chat.FileUpload{FileName: "party.png", ContentType: contentType, Size: int64(len(png)), Content: strings.NewReader(png)}})
		return err
	}
	h.Events.Take()
	require.NoError(t, add(alice, "party parrot", "image/png"))
	list, err := h.Service.GetCustomEmoji(ctx, bob.Caller)
	require.NoError(t, err)
	checkSchema(t, "GET", "/realm/emoji", list)
	require.Len(t, list.Emoji, 1)
	var e chat.CustomEmoji
	for _, v := range list.Emoji {
		e = v
	}
	assert.Equal(t, "party_parrot", e.Name, "spaces become underscores")
	assert.Equal(t, alice.ID, *e.AuthorID)
	assert.Regexp(t, fmt.Sprintf(`^/user_avatars/%d/emoji/images/[0-9a-f]{16}\.png$`, h.RealmID), e.SourceURL)
	evs := h.Events.Take()
	require.Len(t, evs, 1)
	assert.Equal(t, "realm_emoji", evs[0].Body.EventType())
	img, err := h.Service.OpenCustomEmojiImage(ctx, h.RealmID, strings.TrimPrefix(e.SourceURL, "/user_avatars/"))
	require.NoError(t, err)
	b, _ := io.ReadAll(img)
	img.Close()
	assert.Equal(t, png, string(b))
	assert.Equal(t, "image/png", img.ContentType)

	// Used in messages and reactions.
	id := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "yay :party_parrot:"})
	m, err := h.Service.GetMessage(ctx, alice.Caller, chat.GetMessageRequest{MessageID: id})
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf(`<p>yay <img alt=":party_parrot:" class="emoji" src="%s" title="party parrot"></p>`, e.SourceURL), m.Message.Content)
	_, err = h.Service.AddReaction(ctx, alice.Caller, chat.AddReactionRequest{MessageID: id, EmojiName: "party_parrot"})
	require.NoError(t, err)
	assert.Equal(t, []chat.Reaction{{EmojiName: "party_parrot", EmojiCode: e.ID, ReactionType: "realm_emoji", UserID: alice.ID}}, reactionsOf(t, h, alice, id))

	for _, tc := range []struct {
		u             chattest.User
		name, ct, msg string
		kind          chat.Kind
	}{
		{alice, "party_parrot", "image/png", "A custom emoji with this name already exists.", chat.KindConflict},
		{alice, "Bad!", "image/png", "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.", 0},
		{alice, "ends_", "image/png", "Emoji names must end with either a letter or digit.", 0},
		{alice, "", "image/png", "Emoji name is missing", 0},
		{alice, "smile", "image/png", "Only administrators can override default emoji.", chat.KindForbidden},
		{alice, "doc", "application/pdf", "Invalid image format", 0},
		{guest, "mine", "image/png", "Not allowed for guest users", chat.KindForbidden},
	} {
		requireError(t, add(tc.u, tc.name, tc.ct), orInvalid(tc.kind), chat.CodeBadRequest, tc.msg)
	}
	require.NoError(t, add(h.Owner, "smile", "image/png"), "administrators may")
	admins := groupID(t, h, "role:administrators")
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{
		CanAddCustomEmojiGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins}}})
	require.NoError(t, err)
	requireError(t, add(bob, "mine", "image/png"), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")

	// Deleting: its author or an administrator; it is deactivated.
	_, err = h.Service.DeleteCustomEmoji(ctx, bob.Caller, chat.DeleteCustomEmojiRequest{EmojiName: "party_parrot"})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Must be an organization administrator or emoji author")
	_, err = h.Service.DeleteCustomEmoji(ctx, alice.Caller, chat.DeleteCustomEmojiRequest{EmojiName: "party_parrot"})
	require.NoError(t, err)
	_, err = h.Service.DeleteCustomEmoji(ctx, alice.Caller, chat.DeleteCustomEmojiRequest{EmojiName: "party_parrot"})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Emoji 'party_parrot' does not exist")
	list, err = h.Service.GetCustomEmoji(ctx, bob.Caller)
	require.NoError(t, err)
	assert.True(t, list.Emoji[e.ID].Deactivated)
	msgID := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"), Content: "hi"})
	_, err = h.Service.AddReaction(ctx, alice.Caller, chat.AddReactionRequest{MessageID: msgID, EmojiName: "party_parrot",
		EmojiCode: ptr(e.ID), ReactionType: ptr("realm_emoji")})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "This custom emoji has been deactivated.")
	_, err = h.Service.AddReaction(ctx, bob.Caller, chat.AddReactionRequest{MessageID: id, EmojiName: "party_parrot",
		EmojiCode: ptr(e.ID), ReactionType: ptr("realm_emoji")})
	require.NoError(t, err, "a vote for an existing reaction needs no valid emoji")
	_, err = h.Service.RemoveReaction(ctx, alice.Caller, chat.RemoveReactionRequest{MessageID: id, EmojiCode: ptr(e.ID), ReactionType: ptr("realm_emoji")})
	require.NoError(t, err, "a deactivated emoji's reaction can be removed")
}
