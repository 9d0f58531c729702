package storage

import "context"

// Kinds of pending notifications.
const (
	// NotificationEmail is one message of a missed-message email: the
	// recipient's email rows are sent together, one email per
	// conversation, once the first of them is due.
	NotificationEmail = 1
	// NotificationPush is one mobile push notification.
	NotificationPush = 2
	// NotificationFanout stands for every subscriber of a channel message
	// that mentions the whole channel: a deliverer turns it into the email
	// and push rows of the subscribers it concerns, a page of subscribers
	// at a time (UserID 0; Cursor is the last user ID done).
	NotificationFanout = 3
)

// PendingNotification is a notification waiting to go out: written in the
// transaction of the message that causes it, claimed by a deliverer until
// ClaimedUntil under a Claim token, and deleted in the transaction that
// records it sent (or dropped). Only the holder of a claim may finish,
// retry or advance a row; an expired claim may be taken again.
type PendingNotification struct {
	ID        int64 `bun:"id,pk,autoincrement"`
	RealmID   int64 `bun:"realm_id"`
	UserID    int64 `bun:"user_id"`
	MessageID int64 `bun:"message_id"`
	Kind      int   `bun:"kind"`
	// Trigger is why the message notified its recipient when it was sent
	// (the reference's NotificationTriggers names); a deliverer decides
	// again with the settings of the moment.
	Trigger string `bun:"trigger_name"`
	// MentionedGroupID is the smallest group through which the message
	// mentioned the recipient, when it did not name them (0: none).
	MentionedGroupID int64  `bun:"mentioned_group_id"`
	DueAt            int64  `bun:"due_at"`
	Attempts         int    `bun:"attempts"`
	ClaimedUntil     int64  `bun:"claimed_until"`
	Claim            string `bun:"claim"`
	Cursor           int64  `bun:"cursor_id"`
	CreatedAt        int64  `bun:"created_at"`
}

// NotificationStore persists pending notifications, and finds the few
// subscribers of a channel whose settings make its messages notify them.
type NotificationStore interface {
	// QueueNotifications inserts the rows (IDs not set), skipping any
	// whose message, user and kind already have one. It reads nothing
	// back: on PostgreSQL it travels with the transaction's next
	// statement.
	QueueNotifications(ctx context.Context, rows []PendingNotification) error
	// ChannelNotificationCandidates returns, by user ID, the active
	// subscribers of the channel that may be notified of any of its
	// messages by their settings alone: whose subscription turns email
	// or push notifications on, who inherit a user-level default they
	// turned on (SetChannelNotificationDefaults), or who follow the
	// topic. It reads indexes of those settings, never the channel's
	// other subscribers.
	ChannelNotificationCandidates(ctx context.Context, realmID, streamID int64, topic string) ([]int64, error)
	// SetChannelNotificationDefaults records a user's defaults for
	// channel messages (enable_stream_email_notifications,
	// enable_stream_push_notifications), which
	// ChannelNotificationCandidates reads.
	SetChannelNotificationDefaults(ctx context.Context, realmID, userID int64, email, push bool) error
	// ListSubscriptionsOf returns these users' subscriptions to the
	// channel (active or not), by user ID; users without one are left out.
	ListSubscriptionsOf(ctx context.Context, realmID, streamID int64, userIDs []int64) ([]Subscription, error)
	// ListChannelSubscriptions returns up to limit active subscriptions
	// of the channel with a user ID above afterUserID, by user ID.
	ListChannelSubscriptions(ctx context.Context, realmID, streamID, afterUserID int64, limit int) ([]Subscription, error)
	// ClaimNotifications claims, under claim until leaseUntil, rows of a
	// kind not claimed at now (or whose claim expired). For email and push
	// it takes every such row of the users (at most limit of them) whose
	// oldest due row is due at now, so that a recipient's rows go out
	// together; for fan-outs, at most limit due rows. Two concurrent
	// calls never claim the same row. Rows come back by user, then ID.
	ClaimNotifications(ctx context.Context, kind int, now, leaseUntil int64, claim string, limit int) ([]PendingNotification, error)
	// FinishNotifications deletes those of the rows that claim holds and
	// returns how many.
	FinishNotifications(ctx context.Context, ids []int64, claim string) (int, error)
	// RetryNotifications releases those of the rows that claim holds, due
	// again at next with attempts made, and returns how many.
	RetryNotifications(ctx context.Context, ids []int64, claim string, attempts int, next int64) (int, error)
	// AdvanceNotificationCursor sets a fan-out row's cursor if claim
	// holds it.
	AdvanceNotificationCursor(ctx context.Context, id int64, claim string, cursor int64) (bool, error)
	// DeleteMessageNotifications drops the rows of these messages.
	DeleteMessageNotifications(ctx context.Context, realmID int64, messageIDs []int64) error
	// RescheduleNotifications makes the user's rows of a kind that are not
	// claimed at now due period seconds after they were created.
	RescheduleNotifications(ctx context.Context, realmID, userID int64, kind int, now, period int64) error
	// NextNotificationAt returns the earliest due time of the rows not
	// claimed at now (ok false when there are none).
	NextNotificationAt(ctx context.Context, now int64) (at int64, ok bool, err error)
}
