package storage

import "context"

// Linkifier is one of an organization's linkifiers: a regular expression
// (RE2 syntax, named groups) whose matches in messages and topics become
// links, the URL built from URLTemplate, an RFC 6570 template whose
// variables are the pattern's groups. Linkifiers apply in Order (then ID).
type Linkifier struct {
	ID          int64  `bun:"id,pk,autoincrement"`
	RealmID     int64  `bun:"realm_id"`
	Pattern     string `bun:"pattern"`
	URLTemplate string `bun:"url_template"`
	Order       int    `bun:"linkifier_order"`
}

// LinkifierStore persists linkifiers.
type LinkifierStore interface {
	// CreateLinkifier inserts l after the realm's others (Order one more
	// than their largest, 0 for the first) and sets l.ID and l.Order. A
	// linkifier of the realm with the same Pattern (compared exactly)
	// gives ErrConflict; a missing realm gives ErrNotFound.
	CreateLinkifier(ctx context.Context, l *Linkifier) error
	// ListLinkifiers returns the realm's linkifiers by Order, then ID.
	ListLinkifiers(ctx context.Context, realmID int64) ([]Linkifier, error)
	// UpdateLinkifier writes l's Pattern and URLTemplate (not its Order).
	// A missing linkifier, or another realm's, gives ErrNotFound; a
	// pattern another linkifier of the realm has gives ErrConflict.
	UpdateLinkifier(ctx context.Context, l *Linkifier) error
	// DeleteLinkifier deletes the realm's linkifier; a missing one, or
	// another realm's, gives ErrNotFound.
	DeleteLinkifier(ctx context.Context, realmID, id int64) error
	// ReorderLinkifiers sets the Order of each of the realm's linkifiers
	// listed in ids to its index there. IDs that are not the realm's are
	// skipped; the caller checks that ids lists them all.
	ReorderLinkifiers(ctx context.Context, realmID int64, ids []int64) error
}
