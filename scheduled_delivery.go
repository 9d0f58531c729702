package chat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/teamchat/chat/internal/outbox"
	"github.com/teamchat/chat/storage"
)

// Delivering scheduled messages, exactly once. A due message is sent
// through the send path (sendMessageAs), as its author, with the checks
// and rendering of the moment; inside the message's own write
// transaction the delivery claims the scheduled row (a conditional update
// on SQLite, FOR UPDATE SKIP LOCKED on PostgreSQL: storage's
// ClaimScheduledMessage) and marks it delivered. The claim, the message
// and the mark commit together or not at all: a crash or an error before
// the commit leaves the row pending and no message, and the next round
// (on this server or another sharing the database) sends it; a server
// that loses the claim to another rolls its copy back. The claim also
// names the version of the row that was checked, so an edit made
// meanwhile is never sent in its old form.
//
// A message that can no longer be sent (its channel archived, its author's
// permission lost, a recipient deactivated, the author or organization
// deactivated, or more than ten minutes late) is marked failed, kept for
// its author to edit with a new time, and, as the reference does, its
// author gets an update event and a direct message from the notification
// bot (not when the author or organization is deactivated). The mark and
// the notice are one transaction too. Where the reference marks a message
// failed on any unexpected error ("Internal server error"), a failure of
// the database here leaves it pending to be tried again, until the
// ten-minute limit fails it.
//
// RunScheduler delivers through the outbox runner (internal/outbox): each
// round reads the due messages from the front of an index of the pending
// ones, then the time of the next, and sleeps until then (at most the
// interval, so that messages scheduled through other servers are seen;
// this server's own scheduling wakes it).
// A round's cost follows the messages due, not those scheduled for later.

// scheduledLateCutoff is how late a message may still be sent (the
// reference's SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES).
const scheduledLateCutoff = 10 * time.Minute

// scheduledBatch is how many due messages a round reads at a time.
const scheduledBatch = 100

// defaultSchedulerInterval is how often RunScheduler looks at the
// database when nothing is due sooner.
const defaultSchedulerInterval = 5 * time.Second

// schedulerRetry is how soon RunScheduler tries again a due message whose
// delivery hit an unexpected error.
const schedulerRetry = time.Second

// WithSchedulerInterval sets how long RunScheduler waits at most between
// looks at the database (default 5 s): scheduled messages added or
// edited through other servers are seen within it. Messages scheduled
// through this Service wake it at once.
func WithSchedulerInterval(d time.Duration) Option {
	return func(s *Service) { s.scheduler.Every = d }
}

// wakeScheduler tells RunScheduler that the next delivery time may have
// changed.
func (s *Service) wakeScheduler() { s.scheduler.Poke() }

// RunScheduler delivers scheduled messages as they fall due, until ctx
// ends; then it returns ctx's error. Run starts it; a host that does not
// call Run may call it instead. Several loops, on this server or others
// sharing the database, deliver each message once.
func (s *Service) RunScheduler(ctx context.Context) error {
	return s.scheduler.Run(ctx)
}

// DeliverDueScheduledMessages sends every scheduled message due now (by
// the Service's clock), of every organization, and returns how many it
// sent. Each is sent once, whatever other calls run at the same time on
// this server or others; those that can no longer be sent are marked
// failed. A message whose delivery fails unexpectedly (the database)
// stays pending for the next call, and the first such error is returned
// after the others were tried.
func (s *Service) DeliverDueScheduledMessages(ctx context.Context) (int, error) {
	res := s.scheduler.Drain(ctx)
	return res.Done, res.Err
}

// dueScheduled is a due message as the outbox runner hands it out, with
// the time it was found due at.
type dueScheduled struct {
	m   storage.ScheduledMessage
	now time.Time
}

// scheduledOutbox is the outbox runner's deliverer of scheduled
// messages. Nothing is leased: a message stays pending until the
// transaction that sends it (or marks it failed) claims it, so a round
// reads on after the last message it saw, and the messages are sent one
// after another, in their order.
type scheduledOutbox struct{ s *Service }

func newScheduler(s *Service) *outbox.Runner[dueScheduled] {
	return outbox.New[dueScheduled](outbox.Config{Batch: scheduledBatch, Workers: 1, Interval: defaultSchedulerInterval,
		Retry: schedulerRetry, Now: func() time.Time { return s.now() }, NextDue: s.nextScheduled}, scheduledOutbox{s})
}

func (o scheduledOutbox) Claim(ctx context.Context, now time.Time, after *dueScheduled, limit int) ([]dueScheduled, error) {
	var cursor storage.ScheduledCursor
	if after != nil {
		cursor = storage.ScheduledCursor{Timestamp: after.m.ScheduledTimestamp, ID: after.m.ID}
	}
	due, err := o.s.store.ListDueScheduledMessages(ctx, now.UTC().Unix(), cursor, limit)
	if err != nil {
		return nil, o.s.internal(ctx, "list due scheduled messages", err)
	}
	out := make([]dueScheduled, len(due))
	for i := range due {
		out[i] = dueScheduled{m: due[i], now: now}
	}
	return out, nil
}

func (o scheduledOutbox) Handle(ctx context.Context, d dueScheduled) (int, error) {
	ok, err := o.s.deliverScheduled(ctx, &d.m, d.now)
	if !ok {
		return 0, err
	}
	return 1, err
}

// nextScheduled is when the next pending message is due.
func (s *Service) nextScheduled(ctx context.Context, _ time.Time) (time.Time, bool) {
	at, ok, err := s.store.NextScheduledDelivery(ctx)
	if err != nil {
		_ = s.internal(ctx, "next scheduled delivery", err)
	}
	return time.Unix(at, 0), ok && err == nil
}

// deliverScheduled sends one due message, or marks it failed; ok is true
// when this call sent it. An error leaves the message pending.
func (s *Service) deliverScheduled(ctx context.Context, m *storage.ScheduledMessage, now time.Time) (ok bool, err error) {
	me, realm, err := s.reads().actor(ctx, Caller{RealmID: m.RealmID, UserID: m.SenderID})
	if err != nil {
		if e := AsError(err); e.Kind != KindInternal {
			// The organization or the author is deactivated: nobody to tell.
			return false, s.failScheduled(ctx, nil, nil, m, e.Msg)
		}
		return false, err
	}
	if now.After(time.Unix(m.ScheduledTimestamp, 0).Add(scheduledLateCutoff)) {
		return false, s.failScheduled(ctx, realm, me, m, "Message could not be sent at the scheduled time.")
	}
	typ := MessageTypeDirect
	to := ScheduleToUsers(scheduledRecipients(m)...)
	if m.StreamID != nil {
		typ, to = MessageTypeChannel, ScheduleToChannel(*m.StreamID)
	}
	topic := m.Topic
	req, err := scheduledSendRequest(typ, to, &topic, m.Content)
	if err == nil {
		readBySender, client := m.ReadBySender, m.SendingClient
		req.ReadBySender, req.Client = &readBySender, &client
		_, err = s.sendMessageAs(ctx, me, realm, req, func(ctx context.Context, w *writeTx, msg *storage.Message) error {
			if err := w.ClaimScheduledMessage(ctx, m.RealmID, m.ID, m.Version, msg.ID); errors.Is(err, storage.ErrNotFound) {
				return errScheduledClaimLost
			} else if err != nil {
				return err
			}
			w.emit(toUsers(m.SenderID), ScheduledMessagesEvent{Op: "remove", ScheduledMessageID: m.ID})
			return nil
		})
	}
	switch e := AsError(err); {
	case err == nil:
		s.countScheduled(ctx, true, now.Sub(time.Unix(m.ScheduledTimestamp, 0)))
		return true, nil
	case errors.Is(err, errScheduledClaimLost):
		return false, nil // sent elsewhere, or changed: the next round sees it as it is
	case e.Kind == KindInternal:
		return false, err // logged by the send path; tried again next round
	default:
		return false, s.failScheduled(ctx, realm, me, m, e.Msg)
	}
}

// failScheduled marks the pending message failed with the reason. With
// an author (nil: deactivated, not told) it also sends the author an
// update event and the notification bot's direct message, in the same
// transaction. A message changed meanwhile is left as it is.
func (s *Service) failScheduled(ctx context.Context, realm *storage.Realm, author *storage.User, m *storage.ScheduledMessage, reason string) error {
	failed := *m
	failed.Failed, failed.FailureMessage = true, &reason
	mark := func(ctx context.Context, w *writeTx, _ *storage.Message) error {
		if err := w.FailScheduledMessage(ctx, m.RealmID, m.ID, m.Version, reason); errors.Is(err, storage.ErrNotFound) {
			return errScheduledClaimLost
		} else if err != nil {
			return err
		}
		if author != nil {
			view := scheduledView(&failed)
			w.emit(toUsers(author.ID), ScheduledMessagesEvent{Op: "update", ScheduledMessage: &view})
		}
		return nil
	}
	s.log.InfoContext(ctx, "scheduled message failed", "scheduled_message_id", m.ID, "sender_id", m.SenderID, "reason", reason)
	if author != nil {
		bot, err := s.notificationBot(ctx, realm)
		if err != nil {
			return s.internal(ctx, "fail scheduled message", err)
		}
		if bot.ID != author.ID {
			err = s.sendInternalDirect(ctx, realm, bot, author, scheduledFailureNotice(m.ScheduledTimestamp, reason), mark)
			switch {
			case err == nil:
				s.countScheduled(ctx, false, 0)
				return nil
			case errors.Is(err, errScheduledClaimLost):
				return nil
			case AsError(err).Kind == KindInternal:
				return err // tried again next round, notice included
			}
			// The notice cannot be sent: mark the failure without it.
			s.log.WarnContext(ctx, "scheduled message failure notice not sent", "scheduled_message_id", m.ID, "err", err)
		}
	}
	err := s.write(ctx, m.RealmID, func(w *writeTx) error {
		w.keepCallers()
		return mark(ctx, w, nil)
	})
	if err != nil && !errors.Is(err, errScheduledClaimLost) {
		return s.internal(ctx, "fail scheduled message", err)
	}
	if err == nil {
		s.countScheduled(ctx, false, 0)
	}
	return nil
}

// scheduledFailureNotice is the reference's notice of a scheduled message
// that was not sent (send_failed_scheduled_message_notification), with
// the delivery time as a global time.
func scheduledFailureNotice(at int64, reason string) string {
	when := time.Unix(at, 0).UTC().Format("2006-01-02T15:04:05+00:00")
	return fmt.Sprintf("The message you scheduled for <time:%s> was not sent because of the following error:\n\n> %s\n\n[View scheduled messages](#scheduled)",
		when, reason)
}

// sendInternalDirect sends a direct message from a system bot to a user,
// whatever the organization's direct-message rules (the reference's
// internal_send_private_message); inTx runs in its write transaction.
func (s *Service) sendInternalDirect(ctx context.Context, realm *storage.Realm, bot, to *storage.User, content string,
	inTx func(ctx context.Context, w *writeTx, m *storage.Message) error) error {
	req := SendMessageRequest{Type: "private", To: ToUsers(to.ID), Content: content}
	o := &outgoing{me: bot, realm: realm, client: "Internal", req: &req, internal: true, inTx: inTx}
	if err := s.reads().prepareDirectMessage(ctx, o); err != nil {
		return err
	}
	if err := s.reads().renderOutgoing(ctx, o); err != nil {
		return err
	}
	return s.storeMessage(ctx, o)
}
