package storage

import "context"

// UserStatus is a user's status: a text and an emoji (all empty when
// cleared). Away is not stored here: it is the inverse of the user's
// presence_enabled setting.
type UserStatus struct {
	RealmID      int64  `bun:"realm_id"`
	UserID       int64  `bun:"user_id,pk"`
	StatusText   string `bun:"status_text"`
	EmojiName    string `bun:"emoji_name"`
	EmojiCode    string `bun:"emoji_code"`
	ReactionType string `bun:"reaction_type"`
	UpdatedAt    int64  `bun:"updated_at"`
}

// UserStatusStore persists user statuses.
type UserStatusStore interface {
	// GetUserStatus returns the user's status row, or ErrNotFound when
	// they never set one.
	GetUserStatus(ctx context.Context, realmID, userID int64) (*UserStatus, error)
	// SetUserStatus inserts or replaces the user's status row.
	SetUserStatus(ctx context.Context, st *UserStatus) error
	// ListUserStatuses returns the status rows of the realm's active
	// users, by user ID.
	ListUserStatuses(ctx context.Context, realmID int64) ([]UserStatus, error)
}
