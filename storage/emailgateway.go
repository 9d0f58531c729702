package storage

import "context"

// ChannelEmailAddress is a channel's address at the email gateway (the
// reference's ChannelEmailAddress): one per (channel, creator, sender),
// whoever asked for it its creator, its sender who the mails it receives
// are posted as. The token is the secret part of the address, unique
// across realms.
type ChannelEmailAddress struct {
	ID          int64  `bun:"id,pk,autoincrement"`
	RealmID     int64  `bun:"realm_id"`
	StreamID    int64  `bun:"stream_id"`
	CreatorID   int64  `bun:"creator_id"`
	SenderID    int64  `bun:"sender_id"`
	EmailToken  string `bun:"email_token"`
	DateCreated int64  `bun:"date_created"`
	Deactivated bool   `bun:"deactivated"`
}

// EmailReplyAddress is the reply address of a missed-message email (the
// reference's MissedMessageEmailAddress): a reply to it is posted into
// the message's conversation as the user it was mailed to, while it is
// young enough and has uses left.
type EmailReplyAddress struct {
	ID         int64  `bun:"id,pk,autoincrement"`
	RealmID    int64  `bun:"realm_id"`
	MessageID  int64  `bun:"message_id"`
	UserID     int64  `bun:"user_id"`
	EmailToken string `bun:"email_token"`
	CreatedAt  int64  `bun:"created_at"`
	TimesUsed  int    `bun:"times_used"`
}

// GatewayReceipt records a mail the gateway posted: to which address
// (its token), under which key (its Message-ID or a digest of it), as
// which message.
type GatewayReceipt struct {
	RealmID    int64
	EmailToken string
	MessageKey string
	MessageID  int64
	ReceivedAt int64
}

// EmailGatewayStore keeps the gateway's addresses and what it received.
// Addresses are found by token, whatever the realm: the token is the
// address.
type EmailGatewayStore interface {
	// ChannelEmailAddress returns the address of (channel, creator,
	// sender); with none, it inserts a (its ID and DateCreated as given,
	// its token kept) and returns it.
	ChannelEmailAddress(ctx context.Context, a *ChannelEmailAddress) (*ChannelEmailAddress, error)
	// ChannelEmailAddressByToken finds an address by its token.
	ChannelEmailAddressByToken(ctx context.Context, token string) (*ChannelEmailAddress, error)
	// CreateEmailReplyAddress inserts a reply address (ID set).
	CreateEmailReplyAddress(ctx context.Context, a *EmailReplyAddress) error
	// EmailReplyAddressByToken finds a reply address by its token.
	EmailReplyAddressByToken(ctx context.Context, token string) (*EmailReplyAddress, error)
	// UseEmailReplyAddress counts one use of the address if it was used
	// fewer than max times, and ErrNotFound otherwise (a conditional
	// update: of two concurrent uses of the last one, one wins).
	UseEmailReplyAddress(ctx context.Context, realmID, id int64, max int) error
	// RecordGatewayReceipt records a posted mail: ErrConflict when one
	// with the same token and key is recorded.
	RecordGatewayReceipt(ctx context.Context, r GatewayReceipt) error
	// GatewayReceipt returns the recorded mail of token and key.
	GatewayReceipt(ctx context.Context, token, key string) (*GatewayReceipt, error)
	// PruneEmailGateway deletes up to limit reply addresses made before
	// repliesBefore and receipts older than receiptsBefore, and says how
	// many rows went.
	PruneEmailGateway(ctx context.Context, repliesBefore, receiptsBefore int64, limit int) (int, error)
}
