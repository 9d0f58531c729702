package chat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/teamchat/chat/internal/outbox"
	"github.com/teamchat/chat/storage"
)

// Delivering missed-message notifications (see notifications.go). A round
// expands the due fan-outs, then sends the due pushes, then the due
// emails; each kind is claimed a batch of recipients at a time. The
// deliverer's writes touch only the pending rows (nothing anyone sees,
// no events), so they are plain transactions outside the write path, and
// the claim spans organizations, as the webhook outbox's does.

const (
	// notifyLease is how long a claim lasts (seconds); a Notifier call
	// starts no later than notifyCallBudget after the claim, so no other
	// server takes the rows while this one still works on them.
	notifyLease      = 60
	notifyCallBudget = 45 * time.Second
	// notifyBatch is how many recipients (or fan-outs) a claim takes;
	// notifyWorkers how many recipients are served at once; notifyAgain
	// how soon RunNotifications looks again at due rows it did not claim
	// (another server holds them).
	notifyBatch   = 50
	notifyWorkers = 8
	notifyAgain   = 10 * time.Millisecond
	// notifyMaxAttempts bounds the calls of one notification; after a
	// failed one it waits notifyRetry doubled each time.
	notifyMaxAttempts = 5
	notifyRetry       = 30 * time.Second
	// fanoutPage is how many subscribers one step of a fan-out reads.
	fanoutPage = 1000
	// defaultNotifyInterval is how long RunNotifications waits at most
	// between looks at the pending notifications.
	defaultNotifyInterval = 5 * time.Second
)

// RunNotifications delivers missed-message notifications as they fall
// due, until ctx ends; then it returns ctx's error. Run starts it; several
// loops, on this server or others sharing the database, deliver each
// notification once. Without a Notifier it only waits.
func (s *Service) RunNotifications(ctx context.Context) error {
	if s.notifier == nil {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.notify.Run(ctx)
}

// DeliverDueNotifications delivers every notification due now (by the
// Service's clock) and returns how many emails and pushes it sent.
// Failures are logged and the notifications stay pending; the first
// error is returned.
func (s *Service) DeliverDueNotifications(ctx context.Context) (int, error) {
	if s.notifier == nil {
		return 0, nil
	}
	res := s.notify.Drain(ctx)
	return res.Done, res.Err
}

// notifyClaim is one recipient's claimed rows of one kind (or one
// fan-out row), with the time its calls must start by.
type notifyClaim struct {
	rows     []storage.PendingNotification
	deadline time.Time
}

// notifyOutbox is the outbox runner's deliverer of one kind of pending
// notification. The runner serves the kinds in turn (fan-outs first, so
// that the rows they make go out in the same pass, then pushes, then
// emails), each claimed a batch of recipients at a time for notifyLease.
type notifyOutbox struct {
	s    *Service
	kind int
}

func newNotifyRunner(s *Service) *outbox.Runner[notifyClaim] {
	return outbox.New[notifyClaim](outbox.Config{Batch: notifyBatch, Workers: notifyWorkers, Interval: defaultNotifyInterval,
		Retry: notifyAgain, Now: func() time.Time { return s.now() }, NextDue: s.nextNotification},
		notifyOutbox{s, storage.NotificationFanout}, notifyOutbox{s, storage.NotificationPush}, notifyOutbox{s, storage.NotificationEmail})
}

// Claim takes a batch of the kind, a recipient's rows together.
func (o notifyOutbox) Claim(ctx context.Context, now time.Time, _ *notifyClaim, limit int) ([]notifyClaim, error) {
	at := now.UTC().Unix()
	rows, err := o.s.store.ClaimNotifications(ctx, o.kind, at, at+notifyLease, randomHex(12), limit)
	if err != nil {
		return nil, o.s.internal(ctx, "claim notifications", err)
	}
	deadline := time.Now().Add(notifyCallBudget)
	var out []notifyClaim
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && o.kind != storage.NotificationFanout && rows[j].UserID == rows[i].UserID {
			j++
		}
		out = append(out, notifyClaim{rows: rows[i:j], deadline: deadline})
		i = j
	}
	return out, nil
}

// Handle serves one recipient (or expands one fan-out) and returns how
// many emails or pushes it sent.
func (o notifyOutbox) Handle(ctx context.Context, c notifyClaim) (int, error) {
	s, n := o.s, o.s.notifier
	var sent int
	var err error
	switch o.kind {
	case storage.NotificationFanout:
		err = s.expandFanout(ctx, c.rows[0])
	case storage.NotificationPush:
		sent, err = s.deliverPushes(ctx, n, c.rows, c.deadline)
	default:
		sent, err = s.deliverEmails(ctx, n, c.rows, c.deadline)
	}
	if err != nil {
		err = s.internal(ctx, "deliver notifications", err)
	}
	return sent, err
}

// nextNotification is when the next unclaimed notification is due.
func (s *Service) nextNotification(ctx context.Context, now time.Time) (time.Time, bool) {
	at, ok, err := s.store.NextNotificationAt(ctx, now.UTC().Unix())
	if err != nil {
		_ = s.internal(ctx, "next notification", err)
	}
	return time.Unix(at, 0), ok && err == nil
}

// notifyItem is a pending notification that still stands: its message
// and trigger as of now.
type notifyItem struct {
	row     storage.PendingNotification
	msg     *storage.Message
	trigger string
}

// decideNotifications decides again, with the settings, read state and
// presence of the moment, which of one recipient's claimed rows still
// notify them; the others are to be dropped.
func (r reads) decideNotifications(ctx context.Context, realm *storage.Realm, user *storage.User, rows []storage.PendingNotification, push bool) (keep []notifyItem, drop []storage.PendingNotification, err error) {
	ids := make([]int64, len(rows))
	for i, row := range rows {
		ids[i] = row.MessageID
	}
	rs, err := r.readerState(ctx, realm, user, uniqueSorted(ids))
	if err != nil {
		return nil, nil, err
	}
	away, err := r.isAway(ctx, realm, user)
	if err != nil {
		return nil, nil, err
	}
	muted, err := r.mutedSenders(ctx, realm.ID, user.ID)
	if err != nil {
		return nil, nil, err
	}
	set := settingsOf(user)
	subs := map[int64]*storage.Subscription{}
	policies := map[string]int{}
	for _, row := range rows {
		ms := rs.msgs[row.MessageID]
		if ms == nil || ms.flags&storage.FlagRead != 0 || !ms.hasRow && !ms.received {
			drop = append(drop, row) // deleted, read, or never received
			continue
		}
		m := ms.m
		c := notifyCase{direct: m.StreamID == nil, flags: ms.flags, set: set, self: m.SenderID == user.ID,
			bot: user.IsBot, senderMuted: muted[m.SenderID]}
		if m.StreamID != nil {
			sub, ok := subs[*m.StreamID]
			if !ok {
				list, err := r.st.ListSubscriptionsOf(ctx, realm.ID, *m.StreamID, []int64{user.ID})
				if err != nil {
					return nil, nil, err
				}
				if len(list) > 0 {
					sub = &list[0]
				}
				subs[*m.StreamID] = sub
			}
			key := fmt.Sprintf("%d\x00%s", *m.StreamID, storage.Fold(m.Topic))
			policy, ok := policies[key]
			if !ok {
				var err error
				if policy, err = r.storedTopicPolicy(ctx, realm.ID, user.ID, *m.StreamID, m.Topic); err != nil {
					return nil, nil, err
				}
				policies[key] = policy
			}
			c.sub, c.policy = sub, policy
		}
		t := c.trigger(push, away)
		if t == "" {
			drop = append(drop, row)
			continue
		}
		keep = append(keep, notifyItem{row: row, msg: m, trigger: t})
	}
	return keep, drop, nil
}

// recipientBatch loads a claimed group's recipient and keeps the rows
// that still notify them, dropping the others; keep is empty when there
// is nobody to notify any more (deactivated, a bot, or their
// organization deactivated).
func (s *Service) recipientBatch(ctx context.Context, rows []storage.PendingNotification, push bool) (*storage.User, *storage.Realm, []notifyItem, error) {
	user, realm, err := s.reads().actor(ctx, Caller{RealmID: rows[0].RealmID, UserID: rows[0].UserID})
	if err != nil && AsError(err).Kind == KindInternal {
		return nil, nil, nil, err
	}
	if err != nil || user.IsBot {
		return nil, nil, nil, s.finishNotifications(ctx, rows)
	}
	keep, drop, err := s.reads().decideNotifications(ctx, realm, user, rows, push)
	if err == nil {
		err = s.finishNotifications(ctx, drop)
	}
	return user, realm, keep, err
}

// deliverEmails serves one recipient's claimed email rows: one email per
// conversation, least recently active first (the reference's order).
func (s *Service) deliverEmails(ctx context.Context, n Notifier, rows []storage.PendingNotification, deadline time.Time) (int, error) {
	user, realm, keep, err := s.recipientBatch(ctx, rows, false)
	if err != nil || len(keep) == 0 {
		return 0, err
	}
	buckets := map[string][]notifyItem{}
	var order []string
	for _, it := range keep {
		k := conversationKey(it.msg)
		if buckets[k] == nil {
			order = append(order, k)
		}
		buckets[k] = append(buckets[k], it)
	}
	newest := func(k string) int64 {
		return slices.MaxFunc(buckets[k], func(a, b notifyItem) int { return cmp.Compare(a.msg.ID, b.msg.ID) }).msg.ID
	}
	slices.SortFunc(order, func(a, b string) int { return cmp.Compare(newest(a), newest(b)) })
	sent := 0
	for _, k := range order {
		items := buckets[k]
		if !time.Now().Before(deadline) {
			// Too late in the claim to call: hand them back untried.
			if err := s.retryNotifications(ctx, items, false); err != nil {
				return sent, err
			}
			continue
		}
		email, err := s.buildEmail(ctx, realm, user, items)
		if err != nil {
			return sent, err
		}
		callCtx, cancel := context.WithDeadline(ctx, deadline.Add(notifyLease*time.Second-notifyCallBudget))
		err = n.NotifyEmail(callCtx, *email)
		cancel()
		if ctx.Err() != nil {
			return sent, nil // shutting down: the claim expires and they are tried again
		}
		if err != nil {
			s.log.WarnContext(ctx, "notification email not sent", "user_id", user.ID, "messages", len(items), "err", err)
			if err := s.retryNotifications(ctx, items, true); err != nil {
				return sent, err
			}
			continue
		}
		if err := s.finishNotifications(ctx, rowsOf(items)); err != nil {
			return sent, err
		}
		sent++
	}
	return sent, nil
}

// deliverPushes serves one recipient's claimed push rows, one push each.
func (s *Service) deliverPushes(ctx context.Context, n Notifier, rows []storage.PendingNotification, deadline time.Time) (int, error) {
	user, realm, keep, err := s.recipientBatch(ctx, rows, true)
	if err != nil || len(keep) == 0 {
		return 0, err
	}
	sent := 0
	for _, it := range keep {
		if !time.Now().Before(deadline) {
			if err := s.retryNotifications(ctx, []notifyItem{it}, false); err != nil {
				return sent, err
			}
			continue
		}
		push, err := s.buildPush(ctx, realm, user, it)
		if err != nil {
			return sent, err
		}
		callCtx, cancel := context.WithDeadline(ctx, deadline.Add(notifyLease*time.Second-notifyCallBudget))
		err = n.NotifyPush(callCtx, *push)
		cancel()
		if ctx.Err() != nil {
			return sent, nil
		}
		if err != nil {
			s.log.WarnContext(ctx, "push notification not sent", "user_id", user.ID, "message_id", it.msg.ID, "err", err)
			if err := s.retryNotifications(ctx, []notifyItem{it}, true); err != nil {
				return sent, err
			}
			continue
		}
		if err := s.finishNotifications(ctx, []storage.PendingNotification{it.row}); err != nil {
			return sent, err
		}
		sent++
	}
	return sent, nil
}

func rowsOf(items []notifyItem) []storage.PendingNotification {
	out := make([]storage.PendingNotification, len(items))
	for i, it := range items {
		out[i] = it.row
	}
	return out
}

// finishNotifications deletes claimed rows in one transaction; a claim
// lost meanwhile (the lease ran out and another server took them) is
// reported, since that server sends them too.
func (s *Service) finishNotifications(ctx context.Context, rows []storage.PendingNotification) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	n, err := s.store.FinishNotifications(ctx, ids, rows[0].Claim)
	if err == nil && n < len(rows) {
		s.log.WarnContext(ctx, "notification claim lost before it was finished", "user_id", rows[0].UserID, "rows", len(rows), "finished", n)
	}
	return err
}

// retryNotifications hands claimed rows back: after a failed call
// (failed) they wait notifyRetry doubled per attempt, and after the last
// attempt they are dropped; untried, they are due again at once.
func (s *Service) retryNotifications(ctx context.Context, items []notifyItem, failed bool) error {
	rows := rowsOf(items)
	attempts, next := rows[0].Attempts, s.nowUnix()
	if failed {
		attempts++
		if attempts >= notifyMaxAttempts {
			s.log.ErrorContext(ctx, "notification dropped after failed attempts", "user_id", rows[0].UserID, "attempts", attempts)
			return s.finishNotifications(ctx, rows)
		}
		next = s.now().Add(notifyRetry << (attempts - 1)).Unix()
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	_, err := s.store.RetryNotifications(ctx, ids, rows[0].Claim, attempts, next)
	return err
}

// expandFanout turns a claimed channel-wide mention into its
// subscribers' email and push rows, a page of subscribers per
// transaction, each of which also moves the row's cursor (only while the
// claim holds); the last one deletes the row. Those transactions are the
// outbox's own (rows of the notification outbox, no event, guarded by the
// claim), not writes of the write path.
func (s *Service) expandFanout(ctx context.Context, row storage.PendingNotification) error {
	r := s.reads()
	f, err := r.loadFanout(ctx, row)
	if err != nil {
		return err
	}
	if f == nil {
		return s.finishNotifications(ctx, []storage.PendingNotification{row})
	}
	cursor := row.Cursor
	for {
		rows, next, last, err := r.fanoutPage(ctx, f, cursor)
		if err != nil {
			return err
		}
		cursor = next
		err = s.store.InTx(ctx, func(st storage.Store) error {
			if err := st.QueueNotifications(ctx, rows); err != nil {
				return err
			}
			var ok bool
			var err error
			if last {
				var n int
				n, err = st.FinishNotifications(ctx, []int64{row.ID}, row.Claim)
				ok = n == 1
			} else {
				ok, err = st.AdvanceNotificationCursor(ctx, row.ID, row.Claim, cursor)
			}
			if err == nil && !ok {
				err = errNotificationClaimLost
			}
			return err
		})
		if errors.Is(err, errNotificationClaimLost) {
			return nil // another deliverer goes on from the cursor
		}
		if err != nil || last {
			return err
		}
	}
}

// fanout is a channel-wide mention being expanded: the claimed row, its
// message and organization, and who muted the message's sender.
type fanout struct {
	row    storage.PendingNotification
	msg    *storage.Message
	realm  *storage.Realm
	muters []int64
}

// loadFanout reads what expanding row needs: nil when there is nothing
// to expand (the message deleted, or not a channel message).
func (r reads) loadFanout(ctx context.Context, row storage.PendingNotification) (*fanout, error) {
	msg, err := r.st.GetMessage(ctx, row.RealmID, row.MessageID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && msg.StreamID == nil {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	realm, err := r.st.GetRealm(ctx, row.RealmID)
	if err != nil {
		return nil, err
	}
	muters, err := r.muters(ctx, realm.ID, msg.SenderID)
	if err != nil {
		return nil, err
	}
	return &fanout{row: row, msg: msg, realm: realm, muters: muters}, nil
}

// fanoutPage is the notification rows of the channel's subscribers after
// cursor, a page of them, with the cursor after the page and whether it
// was the last.
func (r reads) fanoutPage(ctx context.Context, f *fanout, cursor int64) (rows []storage.PendingNotification, next int64, last bool, err error) {
	msg, realm := f.msg, f.realm
	subs, err := r.st.ListChannelSubscriptions(ctx, realm.ID, *msg.StreamID, cursor, fanoutPage)
	if err != nil {
		return nil, 0, false, err
	}
	last = len(subs) < fanoutPage
	if len(subs) == 0 {
		return nil, cursor, last, nil
	}
	ids := make([]int64, len(subs))
	for i := range subs {
		ids[i] = subs[i].UserID
	}
	cases, err := r.s.channelNotifyCases(ctx, r, realm, *msg.StreamID, msg.Topic, ids)
	if err != nil {
		return nil, 0, false, err
	}
	for _, id := range ids {
		c := cases[id]
		if c == nil || f.row.Trigger == fanoutEdit && alreadyNotified(c) {
			continue
		}
		c.flags = storage.FlagStreamWildcardMentioned
		c.self, c.senderMuted = id == msg.SenderID, slices.Contains(f.muters, id)
		rows = appendNotifications(rows, realm.ID, id, f.row.CreatedAt, c, 0)
	}
	for i := range rows {
		rows[i].MessageID = msg.ID
	}
	return rows, ids[len(ids)-1], last, nil
}
