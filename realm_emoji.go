package chat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/blob"
)

// Custom emoji: an organization's images with names, usable in messages
// (":name:") and reactions. Their images are public to the organization,
// served at /user_avatars/{realm_id}/emoji/images/{file} like the
// reference's.

// CustomEmoji is a custom emoji as GET /realm/emoji shows it.
type CustomEmoji struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	SourceURL   string  `json:"source_url"`
	StillURL    *string `json:"still_url"`
	Deactivated bool    `json:"deactivated"`
	AuthorID    *int64  `json:"author_id"`
}

// GetCustomEmojiResponse is the success body of GetCustomEmoji.
type GetCustomEmojiResponse struct {
	// Emoji are by ID (as a string), deactivated ones included.
	Emoji map[string]CustomEmoji `json:"emoji"`
}

// RealmEmojiEvent carries the organization's whole custom emoji set
// after a change.
type RealmEmojiEvent struct {
	Op         string                 `json:"op"`
	RealmEmoji map[string]CustomEmoji `json:"realm_emoji"`
}

// EventType implements EventBody.
func (RealmEmojiEvent) EventType() string { return "realm_emoji" }

// GetCustomEmoji lists the organization's custom emoji (GET /realm/emoji).
func (s *Service) GetCustomEmoji(ctx context.Context, c Caller) (*GetCustomEmojiResponse, error) {
	return s.reads().getCustomEmoji(ctx, c)
}

// getCustomEmoji is GetCustomEmoji reading through r.
func (r reads) getCustomEmoji(ctx context.Context, c Caller) (*GetCustomEmojiResponse, error) {
	_, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	all, err := r.customEmoji(ctx, realm.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get custom emoji", err)
	}
	return &GetCustomEmojiResponse{Emoji: all}, nil
}

func (r reads) customEmoji(ctx context.Context, realmID int64) (map[string]CustomEmoji, error) {
	list, err := r.st.ListRealmEmoji(ctx, realmID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]CustomEmoji, len(list))
	for _, e := range list {
		out[e.Code()] = CustomEmoji{ID: e.Code(), Name: e.Name, SourceURL: emojiURL(realmID, e.FileName),
			Deactivated: e.Deactivated, AuthorID: e.AuthorID}
	}
	return out, nil
}

// emojiKey is a custom emoji image's key in the blob store.
func emojiKey(realmID int64, fileName string) string {
	return strconv.FormatInt(realmID, 10) + "/emoji/images/" + fileName
}

func emojiURL(realmID int64, fileName string) string {
	return "/user_avatars/" + emojiKey(realmID, fileName)
}

// UploadCustomEmojiRequest is the input of UploadCustomEmoji (POST
// /realm/emoji/{emoji_name}).
type UploadCustomEmojiRequest struct {
	EmojiName string     `json:"emoji_name"`
	File      FileUpload `json:"-"`
}

var (
	emojiNameOK     = regexp.MustCompile(`^[0-9a-z\-_]+$`)
	emojiImageTypes = map[string]string{"image/avif": ".avif", "image/gif": ".gif", "image/jpeg": ".jpeg", "image/png": ".png", "image/webp": ".webp"}
)

// checkEmojiName is the reference's check_valid_emoji_name.
func checkEmojiName(name string) error {
	switch {
	case name == "":
		return BadRequest("Emoji name is missing")
	case !emojiNameOK.MatchString(name):
		return BadRequest("Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.")
	case strings.HasSuffix(name, "-") || strings.HasSuffix(name, "_"):
		return BadRequest("Emoji names must end with either a letter or digit.")
	}
	return nil
}

// UploadCustomEmoji adds a custom emoji (members in
// can_add_custom_emoji_group; only administrators may shadow a built-in
// emoji name).
func (s *Service) UploadCustomEmoji(ctx context.Context, c Caller, req UploadCustomEmojiRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	name := strings.ReplaceAll(strings.TrimSpace(req.EmojiName), " ", "_")
	if err := checkEmojiName(name); err != nil {
		return nil, err
	}
	if err := s.reads().mayAddEmoji(ctx, me, realm, name); err != nil {
		return nil, err
	}
	if maxMiB := s.limits.MaxEmojiFileSizeMiB; req.File.Size > int64(maxMiB)<<20 {
		return nil, BadRequest("Uploaded file is larger than the allowed limit of %d MiB", maxMiB)
	}
	ext, ok := emojiImageTypes[fileContentType(req.File)]
	if !ok {
		return nil, BadRequest("Invalid image format")
	}
	var salt [8]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return nil, s.internal(ctx, "upload custom emoji", err)
	}
	e := &storage.RealmEmoji{RealmID: realm.ID, Name: name, AuthorID: &me.ID, FileName: hex.EncodeToString(salt[:]) + ext}
	if err := s.blobs.Put(ctx, emojiKey(realm.ID, e.FileName), req.File.Content, req.File.Size, fileContentType(req.File)); err != nil {
		return nil, s.internal(ctx, "upload custom emoji", err)
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		if err := w.CreateRealmEmoji(ctx, e); errors.Is(err, storage.ErrConflict) {
			return errEmojiExists
		} else if err != nil {
			return err
		}
		return s.emitRealmEmoji(ctx, w, realm.ID)
	})
	if err != nil {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), emojiKey(realm.ID, e.FileName))
		return nil, s.internal(ctx, "upload custom emoji", err)
	}
	return &EmptyResponse{}, nil
}

// mayAddEmoji checks that me may add a custom emoji of that name: no
// guest, in can_add_custom_emoji_group, uploads on, the name not taken,
// and a built-in emoji overridden only by an administrator.
func (r reads) mayAddEmoji(ctx context.Context, me *storage.User, realm *storage.Realm, name string) error {
	if me.Role == RoleGuest {
		return errGuestNotAllowed
	}
	scope, err := r.cachedScope(ctx, realm.ID, me.ID)
	if err != nil {
		return r.s.internal(ctx, "upload custom emoji", err)
	}
	if !scope.in(realm.CanAddCustomEmojiGroupID) {
		return errInsufficient
	}
	if r.s.blobs == nil {
		return errUploadsOff
	}
	if _, err := r.st.GetRealmEmojiByName(ctx, realm.ID, name); err == nil {
		return errEmojiExists
	} else if !errors.Is(err, storage.ErrNotFound) {
		return r.s.internal(ctx, "upload custom emoji", err)
	}
	if _, builtIn := markdown.EmojiCode(name); builtIn && !isAdmin(me) {
		return refused("Only administrators can override default emoji.")
	}
	return nil
}

var (
	errEmojiExists     = clash("A custom emoji with this name already exists.")
	errGuestNotAllowed = refused("Not allowed for guest users")
)

func (s *Service) emitRealmEmoji(ctx context.Context, w *writeTx, realmID int64) error {
	all, err := w.reads().customEmoji(ctx, realmID)
	if err != nil {
		return err
	}
	w.emit(everyone, RealmEmojiEvent{Op: "update", RealmEmoji: all})
	return nil
}

// DeleteCustomEmojiRequest is the input of DeleteCustomEmoji.
type DeleteCustomEmojiRequest struct {
	EmojiName string `json:"emoji_name"`
}

// DeleteCustomEmoji deactivates a custom emoji (DELETE
// /realm/emoji/{emoji_name}): administrators, or its author. Its
// reactions stay.
func (s *Service) DeleteCustomEmoji(ctx context.Context, c Caller, req DeleteCustomEmojiRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		e, err := w.GetRealmEmojiByName(ctx, realm.ID, req.EmojiName)
		if errors.Is(err, storage.ErrNotFound) {
			return NotFound("Emoji '%s' does not exist", req.EmojiName)
		} else if err != nil {
			return err
		}
		if !isAdmin(me) && (e.AuthorID == nil || *e.AuthorID != me.ID) {
			return refused("Must be an organization administrator or emoji author")
		}
		if err := w.DeactivateRealmEmoji(ctx, realm.ID, e.ID); err != nil {
			return err
		}
		return s.emitRealmEmoji(ctx, w, realm.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "delete custom emoji", err)
	}
	return &EmptyResponse{}, nil
}

// OpenCustomEmojiImage opens a custom emoji's image by its path below
// /user_avatars/ ("{realm_id}/emoji/images/{file}"); emoji images are
// public, as in the reference.
func (s *Service) OpenCustomEmojiImage(ctx context.Context, realmID int64, path string) (*UploadedFile, error) {
	prefix := strconv.FormatInt(realmID, 10) + "/emoji/images/"
	file, ok := strings.CutPrefix(path, prefix)
	if s.blobs == nil || !ok || blob.ValidKey(path) != nil || strings.Contains(file, "/") {
		return nil, errNoSuchFile
	}
	rc, info, err := s.blobs.Open(ctx, path)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, errNoSuchFile
	} else if err != nil {
		return nil, s.internal(ctx, "open custom emoji", err)
	}
	return &UploadedFile{ReadCloser: rc, FileName: file, ContentType: info.ContentType, Size: info.Size}, nil
}
