package chat

import (
	"context"
	"time"
)

// SetWebhookAttemptBudget shortens how long after its claim a webhook
// attempt may run (webhookAttemptBudget), for tests.
func SetWebhookAttemptBudget(s *Service, d time.Duration) { s.webhookBudget = d }

// SchedulerRounds counts the rounds RunScheduler has completed, each
// ending once it has read when the next message is due: a test waits on
// it to know the loop has looked and sleeps.
func SchedulerRounds(s *Service) int64 { return s.scheduler.Rounds() }

// AwaitEventDelivery returns once the event bus has delivered to s's
// queues every write of the organization committed before the call (a
// marker sent through the bus after them has come back): a queue polled
// then holds every event those writes will ever give it.
func AwaitEventDelivery(s *Service, realmID int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.awaitDelivery(ctx, realmID)
}

// SetNotifier replaces the Service's Notifier (a benchmark counts each
// phase apart).
func SetNotifier(s *Service, n Notifier) { s.notifier = n }

// UserHere reports whether the user has a client on any server of s's
// fleet (a queue that takes messages): what notifications ask.
func UserHere(s *Service, realmID, userID int64) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	here, _ := s.userHere(ctx, realmID, userID)
	return here, ctx.Err()
}

// FleetPeers counts the other live servers s knows of.
func FleetPeers(s *Service) (int, error) {
	peers, err := s.livePeers(context.Background(), false)
	return len(peers), err
}

// SetUnreadCacheMin sets how many unread messages a reader's state lists
// to be remembered (unreadCacheMin), before s serves a request.
func SetUnreadCacheMin(s *Service, n int) { s.unread.min = n }

// UnreadCacheStats counts what s's requests found of remembered unread
// states: used as they were, used with newer messages added, and stale.
func UnreadCacheStats(s *Service) (hits, merges, misses int64) {
	return s.unread.hits.Load(), s.unread.merges.Load(), s.unread.misses.Load()
}
