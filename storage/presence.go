package storage

import "context"

// Presence is a user's presence row (the reference's UserPresence): the
// last time a client reported them actively using it, and the last time
// any client was connected at all, as Unix seconds (nil: never).
// LastUpdateID is the value of the realm's presence sequence when the row
// last changed; clients fetch the rows changed after the last one they
// saw.
type Presence struct {
	RealmID       int64  `bun:"realm_id"`
	UserID        int64  `bun:"user_id,pk"`
	LastActive    *int64 `bun:"last_active_time"`
	LastConnected *int64 `bun:"last_connected_time"`
	LastUpdateID  int64  `bun:"last_update_id"`
}

// PresenceEntry is a presence row with what formatting it needs of its
// user.
type PresenceEntry struct {
	Presence
	Email      string `bun:"email"`
	DateJoined int64  `bun:"date_joined"`
	Settings   string `bun:"settings"`
}

// PresenceStore persists presence rows and each realm's presence sequence.
type PresenceStore interface {
	// GetPresences returns the rows of these users (those without one are
	// left out), in no particular order.
	GetPresences(ctx context.Context, realmID int64, userIDs []int64) ([]Presence, error)
	// SavePresences inserts or replaces the rows, giving them consecutive
	// new values of the realm's presence sequence in their order (set in
	// rows[i].LastUpdateID). Callers serialize it per realm (it runs in
	// the realm's write transaction).
	SavePresences(ctx context.Context, realmID int64, rows []Presence) error
	// DeletePresence removes the user's row (nothing when there is none).
	DeletePresence(ctx context.Context, realmID, userID int64) error
	// ListPresences returns the rows of the realm's active human users
	// whose LastUpdateID is above afterID and whose LastConnected is at
	// least connectedSince (a row never connected counts as connected at
	// its user's date_joined), by LastUpdateID.
	ListPresences(ctx context.Context, realmID, afterID, connectedSince int64) ([]PresenceEntry, error)
	// ActiveUsersAtMost reports whether the realm has at most n active
	// users (bots included), reading at most n+1 of them.
	ActiveUsersAtMost(ctx context.Context, realmID int64, n int) (bool, error)
}
