package storage

import (
	"context"
	"strconv"
)

// Attachment is a file a user uploaded. PathID is its key in the blob
// store and in its URL (/user_uploads/<PathID>).
type Attachment struct {
	ID          int64  `bun:"id,pk,autoincrement"`
	RealmID     int64  `bun:"realm_id"`
	OwnerID     int64  `bun:"owner_id"`
	PathID      string `bun:"path_id"`
	FileName    string `bun:"file_name"`
	Size        int64  `bun:"size"`
	ContentType string `bun:"content_type"`
	CreateTime  int64  `bun:"create_time"`
}

// RealmEmoji is an organization's custom emoji. Its reaction code is its
// ID in decimal (Code).
type RealmEmoji struct {
	ID          int64  `bun:"id,pk,autoincrement"`
	RealmID     int64  `bun:"realm_id"`
	Name        string `bun:"name"`
	FileName    string `bun:"file_name"`
	AuthorID    *int64 `bun:"author_id"`
	IsAnimated  bool   `bun:"is_animated"`
	Deactivated bool   `bun:"deactivated"`
}

// Code is the emoji's reaction code: its ID in decimal.
func (e *RealmEmoji) Code() string { return strconv.FormatInt(e.ID, 10) }

// UploadStore persists uploaded files' records and custom emoji (the
// files themselves live in a blob store).
type UploadStore interface {
	// CreateAttachment inserts a and sets its ID, and adds its size to the
	// realm's upload total; a taken PathID gives ErrConflict. Call it in
	// a transaction.
	CreateAttachment(ctx context.Context, a *Attachment) error
	// RealmUploadBytes is the total size of the realm's uploaded files.
	RealmUploadBytes(ctx context.Context, realmID int64) (int64, error)
	// GetAttachmentsByPath returns the realm's attachments with these
	// path IDs, by ID; missing ones are left out.
	GetAttachmentsByPath(ctx context.Context, realmID int64, pathIDs []string) ([]Attachment, error)
	// LinkAttachments records that the message links the attachments
	// (links that exist are kept).
	LinkAttachments(ctx context.Context, realmID, messageID int64, attachmentIDs []int64) error
	// UnlinkAttachments removes the message's links to the attachments.
	UnlinkAttachments(ctx context.Context, realmID, messageID int64, attachmentIDs []int64) error
	// ListAttachmentMessages lists the messages that link the attachment,
	// ascending, up to limit.
	ListAttachmentMessages(ctx context.Context, realmID, attachmentID int64, limit int) ([]int64, error)
	// ListMessageAttachments lists the attachments the message links, by ID.
	ListMessageAttachments(ctx context.Context, realmID, messageID int64) ([]Attachment, error)
	// ListRealmEmoji returns the organization's custom emoji, active and
	// deactivated, by ID.
	ListRealmEmoji(ctx context.Context, realmID int64) ([]RealmEmoji, error)
	// GetRealmEmojiByName returns the active custom emoji of that name.
	GetRealmEmojiByName(ctx context.Context, realmID int64, name string) (*RealmEmoji, error)
	// GetRealmEmojiByCode returns the custom emoji (active or not) whose
	// Code is code.
	GetRealmEmojiByCode(ctx context.Context, realmID int64, code string) (*RealmEmoji, error)
	// CreateRealmEmoji inserts e and sets its ID; an active emoji of the
	// same name gives ErrConflict.
	CreateRealmEmoji(ctx context.Context, e *RealmEmoji) error
	// DeactivateRealmEmoji deactivates the emoji; a missing one gives
	// ErrNotFound.
	DeactivateRealmEmoji(ctx context.Context, realmID, id int64) error
}
