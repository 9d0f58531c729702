package chat

import "time"

// SetWebhookAttemptBudget shortens how long after its claim a webhook
// attempt may run (webhookAttemptBudget), for tests.
func SetWebhookAttemptBudget(s *Service, d time.Duration) { s.shared.webhooks.budget = d }

// SetNotifier replaces the Service's Notifier (a benchmark counts each
// phase apart).
func SetNotifier(s *Service, n Notifier) { s.shared.notify.notifier = n }
