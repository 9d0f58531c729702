package storage

import "context"

// BotService is an outgoing-webhook bot's service (the reference's
// Service): where messages that trigger the bot are posted, in which
// format (Interface 1 generic, 2 Slack-compatible), and the token the
// bot's server checks.
type BotService struct {
	ID        int64  `bun:"id,pk,autoincrement"`
	RealmID   int64  `bun:"realm_id"`
	BotID     int64  `bun:"bot_id"`
	Name      string `bun:"name"`
	BaseURL   string `bun:"base_url"`
	Interface int    `bun:"interface"`
	Token     string `bun:"token"`
}

// WebhookDelivery is one trigger waiting to be delivered to a bot
// service: the outbox that takes outgoing webhooks off the send path and
// keeps them across restarts. A deliverer claims a row until ClaimedUntil
// under a Claim token; only the holder of the claim may finish it or
// schedule its next attempt, and an expired claim may be taken again.
type WebhookDelivery struct {
	ID            int64  `bun:"id,pk,autoincrement"`
	RealmID       int64  `bun:"realm_id"`
	BotID         int64  `bun:"bot_id"`
	ServiceID     int64  `bun:"service_id"`
	MessageID     int64  `bun:"message_id"`
	Trigger       string `bun:"trigger_name"`
	Attempts      int    `bun:"attempts"`
	NextAttemptAt int64  `bun:"next_attempt_at"`
	ClaimedUntil  int64  `bun:"claimed_until"`
	Claim         string `bun:"claim"`
	CreatedAt     int64  `bun:"created_at"`
}

// WebhookStore persists bot services and the webhook outbox.
type WebhookStore interface {
	// CreateBotService inserts a service (ID set).
	CreateBotService(ctx context.Context, s *BotService) error
	// UpdateBotService writes a service's base URL and interface.
	UpdateBotService(ctx context.Context, s *BotService) error
	// ListBotServices returns the services of these bots, by ID.
	ListBotServices(ctx context.Context, realmID int64, botIDs []int64) ([]BotService, error)
	// EnqueueWebhooks inserts deliveries (their IDs set).
	EnqueueWebhooks(ctx context.Context, ds []WebhookDelivery) error
	// ClaimWebhooks claims, under claim until leaseUntil, at most limit
	// deliveries of any realm that are due at now and not claimed (or
	// whose claim expired), oldest due first, and returns them. Two
	// concurrent calls never claim the same row.
	ClaimWebhooks(ctx context.Context, now, leaseUntil int64, claim string, limit int) ([]WebhookDelivery, error)
	// FinishWebhook deletes the delivery if claim still holds it.
	FinishWebhook(ctx context.Context, id int64, claim string) (bool, error)
	// RetryWebhook releases the delivery for another attempt at next,
	// having made attempts, if claim still holds it.
	RetryWebhook(ctx context.Context, id int64, claim string, attempts int, next int64) (bool, error)
	// NextWebhookAt returns the earliest due time of the deliveries not
	// claimed now (ok false when there are none).
	NextWebhookAt(ctx context.Context, now int64) (at int64, ok bool, err error)
}
