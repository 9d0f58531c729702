package chat

import (
	"context"
	"sync"
	"time"

	"github.com/teamchat/chat/internal/loop"
)

// WithMaintenanceInterval sets how often Run does its periodic work
// (default: hourly).
func WithMaintenanceInterval(d time.Duration) Option {
	return func(s *Service) { s.maintenanceEvery = d }
}

// Run does the Service's background work until ctx ends, and then returns
// ctx's error. A host program starts it once (go svc.Run(ctx)) and cancels
// ctx to stop it. Today that work is the periodic full-member promotion of
// every organization (role:fullmembers follows the waiting period, the
// counterpart of the reference's daily job), the delivery of scheduled
// messages (RunScheduler), of outgoing webhooks (RunWebhooks) and of
// missed-message notifications (RunNotifications), and the
// periodic writes of presence (a last one when ctx ends); Run waits for
// them before it returns.
func (s *Service) Run(ctx context.Context) error {
	// Listen to the event bus from the start: other servers' writes then
	// refresh this one's caches at once.
	if err := s.listening(ctx); err != nil {
		s.log.Warn("event bus not listening yet; the first event queue retries", "err", err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.runPresenceFlusher(ctx) })
	wg.Go(func() { _ = s.RunScheduler(ctx) })
	wg.Go(func() { _ = s.RunWebhooks(ctx) })
	wg.Go(func() { _ = s.RunNotifications(ctx) })
	maintenance := loop.Loop{Every: s.maintenanceEvery}
	return maintenance.Run(ctx, time.Hour, func(ctx context.Context) time.Duration {
		s.maintain(ctx)
		return loop.NoSooner
	})
}

// maintain runs one round of periodic work; failures are logged (once,
// by the operation) and retried next round.
func (s *Service) maintain(ctx context.Context) {
	realms, err := s.store.ListRealms(ctx)
	if err != nil {
		_ = s.internal(ctx, "maintenance: list organizations", err)
		return
	}
	for _, r := range realms {
		if ctx.Err() != nil {
			return
		}
		if r.Deactivated {
			continue
		}
		_, _ = s.PromoteFullMembers(ctx, r.ID)
	}
	s.pruneEmailGateway(ctx)
}
