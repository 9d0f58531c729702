package storage

import "context"

// AlertWord is one of a user's alert words (or phrases). Key is the word
// lower-cased (words are unique per user by Key); FirstToken is the first
// run of letters and digits of Key ("" when it has none), by which a
// message's words find the alert words they may match.
type AlertWord struct {
	ID         int64  `bun:"id,pk,autoincrement"`
	RealmID    int64  `bun:"realm_id"`
	UserID     int64  `bun:"user_id"`
	Word       string `bun:"word"`
	Key        string `bun:"word_key"`
	FirstToken string `bun:"first_token"`
}

// AlertWordStore persists alert words.
type AlertWordStore interface {
	// AddAlertWords inserts the words (with their Key and FirstToken set)
	// the user does not have yet (by Key); the others are left as they are.
	AddAlertWords(ctx context.Context, words []AlertWord) error
	// RemoveAlertWords deletes the user's words with these keys.
	RemoveAlertWords(ctx context.Context, realmID, userID int64, keys []string) error
	// ListAlertWords returns the user's words in the order they were added.
	ListAlertWords(ctx context.Context, realmID, userID int64) ([]AlertWord, error)
	// FindAlertWords returns the realm's alert words whose FirstToken is
	// one of tokens, of active users.
	FindAlertWords(ctx context.Context, realmID int64, tokens []string) ([]AlertWord, error)
	// AnyAlertWords reports whether an active user of the realm has an
	// alert word (so that a send to a realm without any reads none).
	AnyAlertWords(ctx context.Context, realmID int64) (bool, error)
}
