package bunstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/teamchat/chat/storage"
)

// Subscriptions are the subscriptions table (one row per user and channel,
// kept with active FALSE when the user leaves) and its history,
// subscription_periods (one row per span of an active subscription, the
// open one with NULL ends). Both refer to users and channels of their own
// realm through composite foreign keys, with ON DELETE CASCADE; a partial
// unique index allows one open period per subscription.

// subscriptionSettings are the columns of a subscription that
// UpdateSubscription writes: the user's personal settings, never its
// realm, user, channel or state (active).
var subscriptionSettings = []string{
	"color",
	"is_muted",
	"pin_to_top",
	"desktop_notifications",
	"email_notifications",
	"push_notifications",
	"audible_notifications",
	"wildcard_mentions_notify",
}

// Subscribe makes sub active and opens a period starting at the newest
// message ID and now, in one transaction (the caller's, when called on a
// tx-bound Store):
//
//   - an inactive row of the realm is reactivated with its stored
//     settings, which are copied into sub;
//   - without a row, sub is inserted with Active set;
//   - an active row gives storage.ErrConflict.
//
// A user or channel that is missing or of another realm than sub.RealmID
// gives storage.ErrNotFound. sub is written only on success.
//
// The already-subscribed case is detected without a failing statement
// (UPDATE ... WHERE NOT active, then INSERT ... ON CONFLICT DO NOTHING),
// so that on PostgreSQL a caller's transaction is still usable after
// ErrConflict. Two concurrent Subscribes of one subscription cannot both
// succeed: the second one's UPDATE or INSERT waits for the first and then
// matches nothing, and the open-period index is a last guard.
//
// The period's start is read inside the transaction. On PostgreSQL a
// message of the channel whose ID was drawn before and committed after
// would be misplaced, so the caller serializes sends and subscription
// changes of a realm (the Service's write path takes the realm's lock).
func (s *Store) Subscribe(ctx context.Context, sub *storage.Subscription, now int64) error {
	op := fmt.Sprintf("subscribe user %d to channel %d in realm %d", sub.UserID, sub.StreamID, sub.RealmID)
	var result storage.Subscription
	err := s.withTx(ctx, func(tx *Store) error {
		res, err := tx.w.NewUpdate().Model((*storage.Subscription)(nil)).
			Set("active = TRUE").
			Where("realm_id = ?", sub.RealmID).
			Where("user_id = ?", sub.UserID).
			Where("stream_id = ?", sub.StreamID).
			Where("NOT active").
			Exec(ctx)
		if err != nil {
			return wrapErr(op, err)
		}
		reactivated, err := res.RowsAffected()
		if err != nil {
			return wrapErr(op, err)
		}
		if reactivated > 0 {
			stored, err := tx.GetSubscription(ctx, sub.RealmID, sub.UserID, sub.StreamID)
			if err != nil {
				return err
			}
			result = *stored
		} else {
			result = *sub
			result.Active = true
			res, err := tx.w.NewInsert().Model(&result).
				On("CONFLICT (user_id, stream_id) DO NOTHING").
				Exec(ctx)
			if err != nil {
				return wrapErr(op, err)
			}
			inserted, err := res.RowsAffected()
			if err != nil {
				return wrapErr(op, err)
			}
			if inserted == 0 {
				// The row exists: active (the UPDATE did not match it) if
				// it is of this realm; otherwise the user is another
				// realm's.
				if _, err := tx.GetSubscription(ctx, sub.RealmID, sub.UserID, sub.StreamID); err != nil {
					return err
				}
				return fmt.Errorf("bunstore: %s: %w (already subscribed)", op, storage.ErrConflict)
			}
		}
		start, err := tx.MaxMessageID(ctx)
		if err != nil {
			return err
		}
		period := &storage.SubscriptionPeriod{
			RealmID:        sub.RealmID,
			UserID:         sub.UserID,
			StreamID:       sub.StreamID,
			StartMessageID: start,
			StartedAt:      now,
		}
		_, err = tx.w.NewInsert().Model(period).Returning("id").Exec(ctx)
		return wrapErr(op, err)
	})
	if err != nil {
		return err
	}
	*sub = result
	return nil
}

// Unsubscribe deactivates the realm's active subscription and closes its
// open period at the newest message ID (read in the transaction, as
// Subscribe does) and now, in one transaction (the caller's, when called
// on a tx-bound Store). A missing or inactive subscription,
// or one of another realm, gives storage.ErrNotFound. A subscription
// without an open period (not written by Subscribe) is deactivated all
// the same.
func (s *Store) Unsubscribe(ctx context.Context, realmID, userID, streamID, now int64) error {
	op := fmt.Sprintf("unsubscribe user %d from channel %d in realm %d", userID, streamID, realmID)
	return s.withTx(ctx, func(tx *Store) error {
		res, err := tx.w.NewUpdate().Model((*storage.Subscription)(nil)).
			Set("active = FALSE").
			Where("realm_id = ?", realmID).
			Where("user_id = ?", userID).
			Where("stream_id = ?", streamID).
			Where("active").
			Exec(ctx)
		if err != nil {
			return wrapErr(op, err)
		}
		if err := checkAffected(op, res); err != nil {
			return err
		}
		end, err := tx.MaxMessageID(ctx)
		if err != nil {
			return err
		}
		_, err = tx.w.NewUpdate().Model((*storage.SubscriptionPeriod)(nil)).
			Set("end_message_id = ?", end).
			Set("ended_at = ?", now).
			Where("realm_id = ?", realmID).
			Where("user_id = ?", userID).
			Where("stream_id = ?", streamID).
			Where("ended_at IS NULL").
			Exec(ctx)
		return wrapErr(op, err)
	})
}

// GetSubscription returns the realm's subscription of the user to the
// channel, active or not.
func (s *Store) GetSubscription(ctx context.Context, realmID, userID, streamID int64) (*storage.Subscription, error) {
	sub := new(storage.Subscription)
	err := s.r.NewSelect().Model(sub).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		Where("stream_id = ?", streamID).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get subscription of user %d to channel %d in realm %d", userID, streamID, realmID), err)
	}
	return sub, nil
}

// ListUserSubscriptions returns the user's subscriptions, active and not,
// ordered by channel ID.
func (s *Store) ListUserSubscriptions(ctx context.Context, realmID, userID int64) ([]storage.Subscription, error) {
	subs := []storage.Subscription{}
	err := s.r.NewSelect().Model(&subs).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		OrderExpr("stream_id ASC").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list subscriptions of user %d in realm %d", userID, realmID), err)
	}
	return nonNil(subs), nil
}

// ListRealmSubscriptions returns the realm's active subscriptions ordered
// by channel ID, then user ID.
func (s *Store) ListRealmSubscriptions(ctx context.Context, realmID int64) ([]storage.Subscription, error) {
	subs := []storage.Subscription{}
	err := s.r.NewSelect().Model(&subs).
		Where("realm_id = ?", realmID).
		Where("active").
		OrderExpr("stream_id ASC, user_id ASC").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list subscriptions of realm %d", realmID), err)
	}
	return nonNil(subs), nil
}

// ListStreamSubscribers returns the IDs of the channel's active
// subscribers, ascending. A channel without subscribers, or a missing
// one, gives an empty list.
func (s *Store) ListStreamSubscribers(ctx context.Context, realmID, streamID int64) ([]int64, error) {
	ids := []int64{}
	err := s.r.NewSelect().Model((*storage.Subscription)(nil)).
		Column("user_id").
		Where("realm_id = ?", realmID).
		Where("stream_id = ?", streamID).
		Where("active").
		OrderExpr("user_id ASC").
		Scan(ctx, &ids)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list subscribers of channel %d in realm %d", streamID, realmID), err)
	}
	return nonNil(ids), nil
}

// UpdateSubscription writes the named settings of sub (all of them when
// none are named): color, is_muted, pin_to_top and the five notification
// settings, never the realm, user, channel or Active; naming another
// column is an error, and writes nothing. The row is matched by
// sub.RealmID, sub.UserID and sub.StreamID, active or not: a missing row,
// or one of another realm, gives storage.ErrNotFound.
func (s *Store) UpdateSubscription(ctx context.Context, sub *storage.Subscription, columns ...string) error {
	op := fmt.Sprintf("update subscription of user %d to channel %d in realm %d", sub.UserID, sub.StreamID, sub.RealmID)
	if len(columns) == 0 {
		columns = subscriptionSettings
	}
	for _, c := range columns {
		if !slices.Contains(subscriptionSettings, c) {
			return fmt.Errorf("bunstore: %s: %q is not a subscription setting", op, c)
		}
	}
	res, err := s.w.NewUpdate().Model(sub).
		Column(columns...).
		Where("realm_id = ?", sub.RealmID).
		Where("user_id = ?", sub.UserID).
		Where("stream_id = ?", sub.StreamID).
		Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// ListSubscriptionPeriods returns the user's periods in the channel,
// oldest (lowest ID) first. None, or a missing subscription, gives an
// empty list.
func (s *Store) ListSubscriptionPeriods(ctx context.Context, realmID, userID, streamID int64) ([]storage.SubscriptionPeriod, error) {
	periods := []storage.SubscriptionPeriod{}
	err := s.r.NewSelect().Model(&periods).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		Where("stream_id = ?", streamID).
		OrderExpr("id ASC").
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list subscription periods of user %d in channel %d in realm %d", userID, streamID, realmID), err)
	}
	return nonNil(periods), nil
}
