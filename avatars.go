package chat

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/blob"
)

// Avatars: a user uploads a picture of themselves (POST /users/me/avatar)
// or goes back to the Gravatar identicon (DELETE /users/me/avatar), as
// in the reference (its web settings use these endpoints; the OpenAPI
// description leaves them out). An uploaded picture is public to the
// organization like a custom emoji, served at
// /user_avatars/{realm_id}/avatars/{user_id}-{version}: the version is in
// the path, so a new picture has a new URL and caches never show an old
// one. Without a blob store there are no uploads, and the organization
// says so (realm_avatar_changes_disabled).

// MaxAvatarFileSizeMiB is the reference's max_avatar_file_size_mib.
const MaxAvatarFileSizeMiB = referenceImageUploadMiB

// UploadAvatarRequest is the input of UploadAvatar.
type UploadAvatarRequest struct {
	File FileUpload `json:"-"`
}

// AvatarResponse is the success body of UploadAvatar and DeleteAvatar:
// the user's avatar URL now.
type AvatarResponse struct {
	AvatarURL string `json:"avatar_url"`
}

var errAvatarFormat = BadRequest("Invalid image format")

// avatarURL is where a user's avatar is: the uploaded picture, or the
// Gravatar identicon.
func avatarURL(u *storage.User) string {
	if u.AvatarSource == "U" {
		return "/user_avatars/" + avatarKey(u.RealmID, u.ID, u.AvatarVersion)
	}
	return gravatarURL(u)
}

// avatarKey is an uploaded avatar's key in the blob store.
func avatarKey(realmID, userID int64, version int) string {
	return fmt.Sprintf("%d/avatars/%d-%d", realmID, userID, version)
}

// UploadAvatar makes an image the caller's avatar (POST /users/me/avatar).
func (s *Service) UploadAvatar(ctx context.Context, c Caller, req UploadAvatarRequest) (*AvatarResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if s.blobs == nil {
		return nil, errUploadsOff
	}
	if req.File.Size > int64(MaxAvatarFileSizeMiB)<<20 {
		return nil, BadRequest("Uploaded file is larger than the allowed limit of %d MiB", MaxAvatarFileSizeMiB)
	}
	ct := fileContentType(req.File)
	if _, ok := emojiImageTypes[ct]; !ok {
		return nil, errAvatarFormat
	}
	return s.setAvatar(ctx, realm, me, "U", func(version int) error {
		return s.blobs.Put(ctx, avatarKey(realm.ID, me.ID, version), req.File.Content, req.File.Size, ct)
	})
}

// DeleteAvatar puts the caller back on the Gravatar identicon (DELETE
// /users/me/avatar).
func (s *Service) DeleteAvatar(ctx context.Context, c Caller) (*AvatarResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	return s.setAvatar(ctx, realm, me, "G", nil)
}

var errAvatarChanged = clash("Your avatar changed meanwhile; try again.")

// setAvatar moves a user to the next avatar version with source, storing
// the picture first (put, for an upload: outside the transaction, under
// the version it will have), and tells everyone; the previous picture is
// deleted once the change is committed.
func (s *Service) setAvatar(ctx context.Context, realm *storage.Realm, me *storage.User, source string, put func(version int) error) (*AvatarResponse, error) {
	next := *me
	next.AvatarSource, next.AvatarVersion = source, me.AvatarVersion+1
	if put != nil {
		if err := put(next.AvatarVersion); err != nil {
			return nil, s.internal(ctx, "set avatar", err)
		}
	}
	err := s.write(ctx, realm.ID, func(w *writeTx) error {
		fresh, err := w.GetUser(ctx, realm.ID, me.ID)
		if err != nil {
			return err
		}
		if fresh.AvatarVersion != me.AvatarVersion {
			return errAvatarChanged
		}
		if err := w.UpdateUser(ctx, &next, "avatar_source", "avatar_version"); err != nil {
			return err
		}
		url := avatarURL(&next)
		emitUserUpdate(w, next.ID, map[string]any{"avatar_url": url, "avatar_source": source, "avatar_url_medium": url, "avatar_version": next.AvatarVersion})
		return nil
	})
	if err != nil {
		if put != nil {
			_ = s.blobs.Delete(context.WithoutCancel(ctx), avatarKey(realm.ID, me.ID, next.AvatarVersion))
		}
		return nil, s.internal(ctx, "set avatar", err)
	}
	if me.AvatarSource == "U" && s.blobs != nil {
		if err := s.blobs.Delete(context.WithoutCancel(ctx), avatarKey(realm.ID, me.ID, me.AvatarVersion)); err != nil && !errors.Is(err, blob.ErrNotFound) {
			s.log.WarnContext(ctx, "deleting a replaced avatar failed", "err", err)
		}
	}
	return &AvatarResponse{AvatarURL: avatarURL(&next)}, nil
}

// OpenAvatarImage opens an uploaded avatar by its path below
// /user_avatars/ ("{realm_id}/avatars/{user_id}-{version}"), without
// credentials, as custom emoji images are.
func (s *Service) OpenAvatarImage(ctx context.Context, realmID int64, path string) (*UploadedFile, error) {
	name, ok := strings.CutPrefix(path, strconv.FormatInt(realmID, 10)+"/avatars/")
	user, version, dash := strings.Cut(name, "-")
	if s.blobs == nil || !ok || !dash || !allDigits(user) || !allDigits(version) {
		return nil, errNoSuchFile
	}
	rc, info, err := s.blobs.Open(ctx, path)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, errNoSuchFile
	} else if err != nil {
		return nil, s.internal(ctx, "open avatar", err)
	}
	return &UploadedFile{ReadCloser: rc, FileName: "avatar", ContentType: info.ContentType, Size: info.Size}, nil
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == "" && len(s) < 20
}
