package bunstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Edits, moves and deletions of messages (migration 0014).

// EditMessages updates the messages in chunks: channel, topic (and its
// key), content, and the edit history with the new entry first; then the
// full-text index of the messages whose text changed.
func (s *Store) EditMessages(ctx context.Context, realmID int64, ids []int64, e storage.MessageEdit) error {
	op := fmt.Sprintf("edit %d messages in realm %d", len(ids), realmID)
	return s.withTx(ctx, func(tx *Store) error {
		err := chunked(ids, func(part []int64) error {
			q := tx.w.NewUpdate().Model((*messageRow)(nil)).
				Where("realm_id = ?", realmID).Where("id IN (?)", bun.List(part))
			if e.StreamID != nil {
				q = q.Set("stream_id = ?", *e.StreamID)
			}
			if e.Topic != nil {
				q = q.Set("topic = ?", *e.Topic).Set("topic_key = ?", storage.Fold(*e.Topic))
			}
			if c := e.Content; c != nil {
				q = q.Set("content = ?", c.Content).Set("rendered_content = ?", c.RenderedContent).
					Set("has_link = ?", c.HasLink).Set("has_image = ?", c.HasImage).Set("has_attachment = ?", c.HasAttachment).
					Set("is_me_message = ?", c.IsMeMessage).Set("stream_wildcard = ?", c.StreamWildcard).
					Set("topic_wildcard = ?", c.TopicWildcard)
			}
			if e.HistoryEntry != "" {
				q = q.Set(`edit_history = CASE WHEN edit_history = '' THEN '[' || ? || ']'
					ELSE '[' || ? || ',' || substr(edit_history, 2) END`, e.HistoryEntry, e.HistoryEntry).
					Set("last_edit_time = ?", e.LastEditTime)
			}
			_, err := q.Exec(ctx)
			return wrapErr(op, err)
		})
		if err != nil || e.Topic == nil && e.Content == nil {
			return err
		}
		return chunked(ids, func(part []int64) error {
			if err := tx.ops.unindexMessages(ctx, tx.w, part); err != nil {
				return wrapErr(op, err)
			}
			var rows []messageRow
			if err := tx.w.NewSelect().Model(&rows).Column("id", "topic", "rendered_content").
				Where("realm_id = ?", realmID).Where("id IN (?)", bun.List(part)).Scan(ctx); err != nil {
				return wrapErr(op, err)
			}
			ms := make([]storage.Message, len(rows))
			for i := range rows {
				ms[i] = rows[i].Message
			}
			return wrapErr(op, tx.indexMessagesOf(ctx, tx.w, ms))
		})
	})
}

// DeleteMessages deletes in chunks; the foreign keys cascade to the
// messages' rows, reactions and upload links.
func (s *Store) DeleteMessages(ctx context.Context, realmID int64, ids []int64) error {
	op := fmt.Sprintf("delete %d messages in realm %d", len(ids), realmID)
	return s.withTx(ctx, func(tx *Store) error {
		return chunked(ids, func(part []int64) error {
			if err := tx.ops.unindexMessages(ctx, tx.w, part); err != nil {
				return wrapErr(op, err)
			}
			_, err := tx.w.NewDelete().Model((*messageRow)(nil)).
				Where("realm_id = ?", realmID).Where("id IN (?)", bun.List(part)).Exec(ctx)
			return wrapErr(op, err)
		})
	})
}

// ListStreamPeriods reads subscription_periods_stream_idx.
func (s *Store) ListStreamPeriods(ctx context.Context, realmID, streamID, lo, hi int64) ([]storage.SubscriptionPeriod, error) {
	var out []storage.SubscriptionPeriod
	err := s.r.NewSelect().Model(&out).
		Where("realm_id = ?", realmID).Where("stream_id = ?", streamID).
		Where("start_message_id < ?", hi).Where("(end_message_id IS NULL OR end_message_id >= ?)", lo).
		OrderExpr("user_id ASC, id ASC").Scan(ctx)
	return nonNil(out), wrapErr(fmt.Sprintf("periods of channel %d in realm %d", streamID, realmID), err)
}

// ListTopicPolicies reads user_topics_stream_idx.
func (s *Store) ListTopicPolicies(ctx context.Context, realmID, streamID int64, topic string) ([]storage.UserTopic, error) {
	var out []storage.UserTopic
	err := s.r.NewSelect().Model(&out).
		Where("realm_id = ?", realmID).Where("stream_id = ?", streamID).Where("topic_key = ?", storage.Fold(topic)).
		OrderExpr("user_id ASC").Scan(ctx)
	return nonNil(out), wrapErr(fmt.Sprintf("policies of a topic of channel %d in realm %d", streamID, realmID), err)
}

// MessageReaders reads the message's rows, and for a channel message the
// periods that cover it (subscription_periods_stream_idx) with a range of
// the same user covering it.
func (s *Store) MessageReaders(ctx context.Context, realmID int64, m *storage.Message) ([]int64, error) {
	out := []int64{}
	var err error
	if m.StreamID == nil {
		err = s.r.NewRaw(`SELECT user_id FROM user_messages WHERE realm_id = ? AND message_id = ? AND (flags & 1) <> 0 ORDER BY user_id`,
			realmID, m.ID).Scan(ctx, &out)
	} else {
		err = s.r.NewRaw(`SELECT sp.user_id FROM subscription_periods AS sp
			WHERE sp.realm_id = ? AND sp.stream_id = ? AND sp.start_message_id < ? AND (sp.end_message_id IS NULL OR sp.end_message_id >= ?)
			AND EXISTS (SELECT 1 FROM read_ranges AS rr WHERE rr.realm_id = sp.realm_id AND rr.user_id = sp.user_id
				AND rr.stream_id = sp.stream_id AND rr.first_id <= ? AND rr.last_id >= ?)
			UNION
			SELECT user_id FROM user_messages WHERE realm_id = ? AND message_id = ? AND (flags & 1025) = 1025
			ORDER BY 1`, realmID, *m.StreamID, m.ID, m.ID, m.ID, m.ID, realmID, m.ID).Scan(ctx, &out)
	}
	return out, wrapErr(fmt.Sprintf("readers of message %d in realm %d", m.ID, realmID), err)
}
