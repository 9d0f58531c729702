package chat

import "time"

// SetWebhookAttemptBudget shortens how long after its claim a webhook
// attempt may run (webhookAttemptBudget), for tests.
func SetWebhookAttemptBudget(s *Service, d time.Duration) { s.shared.webhooks.budget = d }
