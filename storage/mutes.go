package storage

import "context"

// UserMute says that UserID muted MutedUserID (the reference's
// MutedUser): the muted user's messages count as read for the muter.
type UserMute struct {
	RealmID     int64 `bun:"realm_id"`
	UserID      int64 `bun:"user_id,pk"`
	MutedUserID int64 `bun:"muted_user_id,pk"`
	DateMuted   int64 `bun:"date_muted"`
}

// UserMuteStore persists muted users. The read paths of MessageStore
// (the Unread filter, FirstUnreadMessage, ListUnreadChannelMessages)
// treat the channel messages of a muted sender as read for the muter.
type UserMuteStore interface {
	// AddUserMute inserts; ErrConflict when the user already muted them.
	AddUserMute(ctx context.Context, m *UserMute) error
	// RemoveUserMute deletes; ErrNotFound when there is no such mute.
	RemoveUserMute(ctx context.Context, realmID, userID, mutedUserID int64) error
	// ListUserMutes returns the user's mutes by date, then muted user.
	ListUserMutes(ctx context.Context, realmID, userID int64) ([]UserMute, error)
	// ListMuters returns the IDs of the users who muted mutedUserID.
	ListMuters(ctx context.Context, realmID, mutedUserID int64) ([]int64, error)
}
