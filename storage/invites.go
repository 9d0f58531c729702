package storage

import "context"

// Invitation states.
const (
	// InviteActive: the invitation can be accepted (until it expires).
	InviteActive = 0
	// InviteUsed: an email invitation that made an account.
	InviteUsed = 1
	// InviteRevoked: withdrawn by its creator or an administrator, or
	// superseded (another invitation of the same email made the account).
	InviteRevoked = 2
)

// Invite is an invitation to join a realm: an email invitation (one
// account, for Email) or a reusable invitation link (IsMultiuse: any
// number of accounts until it expires or is revoked). Email invitations
// and links share one ID sequence.
type Invite struct {
	ID         int64 `bun:"id,pk,autoincrement"`
	RealmID    int64 `bun:"realm_id"`
	ReferrerID int64 `bun:"referrer_id"` // the user who made it
	IsMultiuse bool  `bun:"is_multiuse"`
	// Email is the invited address of an email invitation ("" for a
	// link); it compares case-insensitively (Fold).
	Email string `bun:"email"`
	// Key is the secret the invitation link carries: random, unique
	// across realms, compared exactly.
	Key string `bun:"invite_key"`
	// InvitedAs is the role the account gets (100 owner ... 600 guest).
	InvitedAs int   `bun:"invited_as"`
	Created   int64 `bun:"created"`
	// ExpiresAt is the last second at which the invitation may be
	// accepted; nil: never expires.
	ExpiresAt                        *int64 `bun:"expires_at"`
	IncludeRealmDefaultSubscriptions bool   `bun:"include_realm_default_subscriptions"`
	NotifyReferrerOnJoin             bool   `bun:"notify_referrer_on_join"`
	Status                           int    `bun:"status"` // Invite* states
	// StreamIDs and GroupIDs are the channels the new account is
	// subscribed to and the groups it joins, ascending. CreateInvite
	// stores them; GetInvite and GetInviteByKey return them; ListInvites
	// leaves them nil.
	StreamIDs []int64 `bun:"-"`
	GroupIDs  []int64 `bun:"-"`
}

// InviteFilter selects the invitations ListInvites returns.
type InviteFilter struct {
	// ReferrerID, when not 0, keeps the invitations that user made.
	ReferrerID int64
	// ValidAt, when not 0, keeps the active invitations that have not
	// expired at that time (ExpiresAt nil or >= ValidAt) and whose
	// referrer is an active user.
	ValidAt int64
}

// InviteStore persists invitations.
type InviteStore interface {
	// CreateInvite inserts inv with its channels and groups (written whole
	// or not at all) and sets inv.ID. A referrer, channel or group that is
	// missing or of another realm gives ErrNotFound; a key already in use
	// (in any realm) gives ErrConflict.
	CreateInvite(ctx context.Context, inv *Invite) error
	// GetInvite returns the realm's invitation by ID, whatever its state;
	// a missing one, or another realm's, gives ErrNotFound.
	GetInvite(ctx context.Context, realmID, id int64) (*Invite, error)
	// GetInviteByKey returns the realm's invitation whose key is key
	// (exact match), whatever its state; ErrNotFound when none.
	GetInviteByKey(ctx context.Context, realmID int64, key string) (*Invite, error)
	// ListInvites returns the realm's invitations that match f, by ID.
	ListInvites(ctx context.Context, realmID int64, f InviteFilter) ([]Invite, error)
	// SetInviteStatus changes the invitation's state; a missing one, or
	// another realm's, gives ErrNotFound.
	SetInviteStatus(ctx context.Context, realmID, id int64, status int) error
	// RevokeEmailInvites marks the realm's active email invitations of
	// email (compared by Fold), except the one with ID except, revoked,
	// and returns how many it changed.
	RevokeEmailInvites(ctx context.Context, realmID int64, email string, except int64) (int, error)
}
