package bunstore

import (
	"context"
	"fmt"

	"github.com/teamchat/chat/storage"
)

// User topics are the user_topics table: one row per user, channel and
// topic, the topic compared case-insensitively (a unique index on
// (user_id, stream_id, topic_key)), with composite foreign keys
// to users and channels of the row's realm, ON DELETE CASCADE.

// SetUserTopic inserts the policy of (user, channel, topic), or replaces
// the one whose topic differs only in case: the row takes t's topic name
// (the case last written), policy and time. It is one statement (an
// upsert on the expression index). A user or channel that is missing or
// of another realm than t.RealmID gives storage.ErrNotFound and writes
// nothing.
//
// A replaced row also gets realm_id from t, so that t naming another realm
// fails the composite foreign keys instead of silently updating the row.
func (s *Store) SetUserTopic(ctx context.Context, t *storage.UserTopic) error {
	_, err := insertKey(s.w.NewInsert().Model(t), "topic_key", t.TopicName).
		On("CONFLICT (user_id, stream_id, topic_key) DO UPDATE").
		Set("realm_id = EXCLUDED.realm_id").
		Set("topic_name = EXCLUDED.topic_name").
		Set("visibility_policy = EXCLUDED.visibility_policy").
		Set("last_updated = EXCLUDED.last_updated").
		Returning("NULL").
		Exec(deferrable(ctx))
	return wrapErr(fmt.Sprintf("set topic policy of user %d in channel %d in realm %d", t.UserID, t.StreamID, t.RealmID), err)
}

// GetUserTopic returns the user's policy of one topic.
func (s *Store) GetUserTopic(ctx context.Context, realmID, userID, streamID int64, topic string) (*storage.UserTopic, error) {
	t := new(storage.UserTopic)
	err := s.r.NewSelect().Model(t).
		Where("realm_id = ?", realmID).Where("user_id = ?", userID).Where("stream_id = ?", streamID).
		Where("topic_key = ?", storage.Fold(topic)).Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get topic policy of user %d in channel %d in realm %d", userID, streamID, realmID), err)
	}
	return t, nil
}

// DeleteUserTopic removes the user's policy of the topic, matched
// case-insensitively; a missing one (or one of another realm) is no error.
func (s *Store) DeleteUserTopic(ctx context.Context, realmID, userID, streamID int64, topic string) error {
	_, err := s.w.NewDelete().Model((*storage.UserTopic)(nil)).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		Where("stream_id = ?", streamID).
		Where("topic_key = ?", storage.Fold(topic)).
		Exec(ctx)
	return wrapErr(fmt.Sprintf("delete topic policy of user %d in channel %d in realm %d", userID, streamID, realmID), err)
}

// ListUserTopics returns the user's policies ordered by channel ID, then
// storage.Fold(topic name) compared bytewise (the same order on both dialects).
func (s *Store) ListUserTopics(ctx context.Context, realmID, userID int64) ([]storage.UserTopic, error) {
	// Byte order on both dialects: PostgreSQL would otherwise sort by the
	// database's collation (punctuation and spaces ignored or weighed
	// differently).
	order := "stream_id ASC, " + s.ops.bytewise("topic_key") + " ASC"
	topics := []storage.UserTopic{}
	err := s.r.NewSelect().Model(&topics).
		Where("realm_id = ?", realmID).
		Where("user_id = ?", userID).
		OrderExpr(order).
		Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("list topic policies of user %d in realm %d", userID, realmID), err)
	}
	return nonNil(topics), nil
}
