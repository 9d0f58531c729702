package storage

import "context"

// ScheduledMessage is a message its sender asked to be sent later. It is
// pending until it is delivered (Delivered, with DeliveredMessageID) or
// delivery fails (Failed, with FailureMessage); editing a failed one makes
// it pending again. Version counts the changes of an undelivered message,
// so that a delivery or failure decided on one version never applies to
// another.
type ScheduledMessage struct {
	ID       int64 `bun:"id,pk,autoincrement"`
	RealmID  int64 `bun:"realm_id"`
	SenderID int64 `bun:"sender_id"`
	// StreamID is the channel of a channel message (nil for a direct
	// message), Topic its topic.
	StreamID *int64 `bun:"stream_id"`
	Topic    string `bun:"topic"`
	// Recipients is the JSON list of a direct message's recipients' user
	// IDs (the sender's own ID only for a message to oneself); empty for
	// a channel message.
	Recipients      string `bun:"recipients"`
	Content         string `bun:"content"`
	RenderedContent string `bun:"rendered_content"`
	// ScheduledTimestamp is when it is due.
	ScheduledTimestamp int64 `bun:"scheduled_timestamp"`
	// ReadBySender: the delivered message starts read for its sender.
	ReadBySender bool `bun:"read_by_sender"`
	// SendingClient is the client that scheduled it (or last edited it).
	SendingClient      string  `bun:"sending_client"`
	Version            int64   `bun:"version"`
	Delivered          bool    `bun:"delivered"`
	DeliveredMessageID *int64  `bun:"delivered_message_id"`
	Failed             bool    `bun:"failed"`
	FailureMessage     *string `bun:"failure_message"`
}

// ScheduledCursor is a position in the order of delivery (time, then ID).
// The zero value is before every message.
type ScheduledCursor struct {
	Timestamp int64
	ID        int64
}

// ScheduledMessageStore persists scheduled messages. A message belongs to
// its sender: the per-user methods match realm, sender and ID, so another
// user's or realm's message is ErrNotFound.
type ScheduledMessageStore interface {
	// CreateScheduledMessage inserts m (with Version 1, pending) and sets
	// m.ID. A sender or channel that is missing or of another realm gives
	// ErrNotFound.
	CreateScheduledMessage(ctx context.Context, m *ScheduledMessage) error
	// GetScheduledMessage returns one of the sender's scheduled messages,
	// delivered or not.
	GetScheduledMessage(ctx context.Context, realmID, senderID, id int64) (*ScheduledMessage, error)
	// ListScheduledMessages returns the sender's undelivered messages
	// (failed ones included) by delivery time, then ID.
	ListScheduledMessages(ctx context.Context, realmID, senderID int64) ([]ScheduledMessage, error)
	// UpdateScheduledMessage writes m's recipient (StreamID, Topic,
	// Recipients), Content, RenderedContent, ScheduledTimestamp,
	// SendingClient, Failed and FailureMessage, if the stored message is
	// undelivered and still at m.Version, and then increments m.Version.
	// Otherwise (missing, another sender's, delivered, or changed since
	// m was read) it gives ErrNotFound and writes nothing.
	UpdateScheduledMessage(ctx context.Context, m *ScheduledMessage) error
	// DeleteScheduledMessage deletes one of the sender's scheduled
	// messages, delivered or not.
	DeleteScheduledMessage(ctx context.Context, realmID, senderID, id int64) error
	// ListDueScheduledMessages returns at most limit pending messages of
	// every realm due at or before now and after the cursor, in delivery
	// order: one bounded range of an index of the pending messages, so
	// that its cost does not grow with the messages scheduled for later
	// or already delivered.
	ListDueScheduledMessages(ctx context.Context, now int64, after ScheduledCursor, limit int) ([]ScheduledMessage, error)
	// NextScheduledDelivery returns the delivery time of the first pending
	// message of every realm (ok false when there is none).
	NextScheduledDelivery(ctx context.Context) (at int64, ok bool, err error)
	// ClaimScheduledMessage claims the pending message at version for
	// delivery and marks it delivered as messageID. It is meant to run in
	// the transaction that stores the delivered message, so that both
	// commit or neither does. A message that is not pending at that
	// version (delivered, failed, edited, deleted), or that another
	// uncommitted transaction is claiming, gives ErrNotFound: on
	// PostgreSQL the claim locks the row with FOR UPDATE SKIP LOCKED and
	// never waits for another claim; on SQLite, whose writer is one
	// transaction at a time, it is a conditional update.
	ClaimScheduledMessage(ctx context.Context, realmID, id, version, messageID int64) error
	// FailScheduledMessage marks the pending message at version failed
	// with the reason and increments its version; like Claim, anything
	// else gives ErrNotFound.
	FailScheduledMessage(ctx context.Context, realmID, id, version int64, reason string) error
}
