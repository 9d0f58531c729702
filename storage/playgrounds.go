package storage

import "context"

// Playground is one of an organization's code playgrounds: a site that
// opens code blocks of a language (Name tells several of one language
// apart). URLTemplate is an RFC 6570 template whose one variable is code.
type Playground struct {
	ID               int64  `bun:"id,pk,autoincrement"`
	RealmID          int64  `bun:"realm_id"`
	Name             string `bun:"name"`
	PygmentsLanguage string `bun:"pygments_language"`
	URLTemplate      string `bun:"url_template"`
}

// PlaygroundStore persists code playgrounds.
type PlaygroundStore interface {
	// CreatePlayground inserts p and sets p.ID. A playground of the realm
	// with the same PygmentsLanguage and Name (compared exactly) gives
	// ErrConflict; a missing realm gives ErrNotFound.
	CreatePlayground(ctx context.Context, p *Playground) error
	// ListPlaygrounds returns the realm's playgrounds by ID.
	ListPlaygrounds(ctx context.Context, realmID int64) ([]Playground, error)
	// DeletePlayground deletes the realm's playground; a missing one, or
	// another realm's, gives ErrNotFound.
	DeletePlayground(ctx context.Context, realmID, id int64) error
}
