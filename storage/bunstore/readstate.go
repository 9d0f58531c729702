package bunstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// The per-user read state beyond sending: rows changed in bulk, read
// ranges replaced over a region, and the queries that list what a user
// has not read. Each reads through an index whose size follows the
// user's state (their ranges, their unread rows) or the messages listed.

// InsertUserMessages inserts the rows in chunks.
func (s *Store) InsertUserMessages(ctx context.Context, rows []storage.UserMessage) error {
	if len(rows) == 0 {
		return nil
	}
	return s.withTx(ctx, func(tx *Store) error {
		return inChunks(rows, func(part []storage.UserMessage) error {
			models := make([]userMessageRow, len(part))
			for i, r := range part {
				models[i] = userMessageRow{UserMessage: r}
			}
			_, err := tx.w.NewInsert().Model(&models).Exec(ctx)
			return wrapErr("insert message rows", err)
		})
	})
}

// UpdateUserMessageFlags updates the rows in chunks.
func (s *Store) UpdateUserMessageFlags(ctx context.Context, realmID, userID int64, messageIDs []int64, add, remove int64) error {
	op := fmt.Sprintf("update message flags of user %d in realm %d", userID, realmID)
	return s.withTx(ctx, func(tx *Store) error {
		return chunked(messageIDs, func(ids []int64) error {
			q := tx.w.NewUpdate().Model((*userMessageRow)(nil)).
				Set("flags = (flags | ?) & ?", add, ^remove).
				Where("realm_id = ?", realmID).Where("user_id = ?", userID).
				Where("message_id IN (?)", bun.List(ids))
			if tx.ops.name == DialectPostgres {
				// The IDs' span, as a row comparison only the primary
				// key can use, bounds the scan to the user's rows in it
				// (see window_postgres.go).
				q = q.Where("(user_id, message_id) >= (?, ?)", userID, slices.Min(ids)).
					Where("(user_id, message_id) <= (?, ?)", userID, slices.Max(ids))
			}
			_, err := q.Exec(ctx)
			return wrapErr(op, err)
		})
	})
}

// ReplaceReadRanges deletes and inserts in one transaction.
func (s *Store) ReplaceReadRanges(ctx context.Context, realmID, userID, streamID, lo, hi int64, ranges []storage.ReadRange) error {
	op := fmt.Sprintf("replace read ranges of user %d in channel %d in realm %d", userID, streamID, realmID)
	return s.withTx(ctx, func(tx *Store) error {
		_, err := tx.w.NewDelete().Model((*readRangeRow)(nil)).
			Where("realm_id = ?", realmID).Where("user_id = ?", userID).Where("stream_id = ?", streamID).
			Where("first_id <= ?", hi).Where("last_id >= ?", lo).Exec(ctx)
		if err != nil {
			return wrapErr(op, err)
		}
		if len(ranges) == 0 {
			return nil
		}
		return inChunks(ranges, func(part []storage.ReadRange) error {
			models := make([]readRangeRow, len(part))
			for i, r := range part {
				if r.FirstID > r.LastID {
					return fmt.Errorf("bunstore: %s: empty range [%d, %d]", op, r.FirstID, r.LastID)
				}
				r.RealmID, r.UserID, r.StreamID = realmID, userID, streamID
				models[i] = readRangeRow{ReadRange: r}
			}
			_, err := tx.w.NewInsert().Model(&models).Exec(ctx)
			return wrapErr(op, err)
		})
	})
}

// lightMessageColumns are the columns of a message that the unread
// state needs.
const lightMessageColumns = "id, stream_id, conversation_id, topic, sender_id, date_sent, stream_wildcard, topic_wildcard"

// spansPerQuery bounds the UNION ALL arms of one query (SQLite allows
// 500 compound terms).
const spansPerQuery = 200

// ListChannelMessagesIn reads each span newest first through the
// channel's index (or the topic's) and merges them, so the cost follows
// the messages in the spans, not the channel's history.
func (s *Store) ListChannelMessagesIn(ctx context.Context, realmID int64, spans []storage.IDSpan, topic *string, limit int) ([]storage.Message, error) {
	out := []storage.Message{}
	if limit <= 0 || len(spans) == 0 {
		return out, nil
	}
	for start := 0; start < len(spans); start += spansPerQuery {
		part := spans[start:min(len(spans), start+spansPerQuery)]
		var sb strings.Builder
		args := []any{}
		for i, sp := range part {
			if i > 0 {
				sb.WriteString(" UNION ALL ")
			}
			sb.WriteString("SELECT * FROM (SELECT " + lightMessageColumns +
				" FROM messages WHERE realm_id = ? AND stream_id = ? AND id >= ? AND id <= ?")
			args = append(args, realmID, sp.StreamID, sp.First, sp.Last)
			if topic != nil {
				sb.WriteString(" AND topic_key = ?")
				args = append(args, storage.Fold(*topic))
			}
			sb.WriteString(" ORDER BY id DESC LIMIT ?) AS s")
			fmt.Fprintf(&sb, "%d", i)
			args = append(args, limit)
		}
		sb.WriteString(" ORDER BY id DESC LIMIT ?")
		args = append(args, limit)
		got, err := s.scanLight(ctx, sb.String(), args...)
		if err != nil {
			return nil, wrapErr(fmt.Sprintf("list channel messages in %d spans in realm %d", len(part), realmID), err)
		}
		out = mergeNewest(out, got, limit, func(m *storage.Message) int64 { return m.ID })
	}
	return out, nil
}

// mergeNewest merges two newest-first lists, keeping the limit newest.
func mergeNewest[T any](a, b []T, limit int, id func(*T) int64) []T {
	if len(a) == 0 {
		return b
	}
	out := make([]T, 0, min(limit, len(a)+len(b)))
	for len(out) < limit && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || len(a) > 0 && id(&a[0]) > id(&b[0]) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// scanLight runs a query that selects lightMessageColumns (and, with
// flags, a trailing flags column).
func (s *Store) scanLight(ctx context.Context, query string, args ...any) ([]storage.Message, error) {
	msgs, _, err := s.scanLightFlags(ctx, false, query, args...)
	return msgs, err
}

func (s *Store) scanLightFlags(ctx context.Context, withFlags bool, query string, args ...any) ([]storage.Message, []int64, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	out := []storage.Message{}
	var flags []int64
	for rows.Next() {
		var m storage.Message
		var f int64
		dest := []any{&m.ID, &m.StreamID, &m.ConversationID, &m.Topic, &m.SenderID, &m.DateSent, &m.StreamWildcard, &m.TopicWildcard}
		if withFlags {
			dest = append(dest, &f)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		out = append(out, m)
		if withFlags {
			flags = append(flags, f)
		}
	}
	return out, flags, rows.Err()
}

// ListUnreadRows reads the two partial indexes of unread rows (direct
// messages, historical channel messages) newest first.
func (s *Store) ListUnreadRows(ctx context.Context, realmID, userID int64, streamID *int64, limit int) ([]storage.FlaggedMessage, error) {
	op := fmt.Sprintf("list unread rows of user %d in realm %d", userID, realmID)
	out := []storage.FlaggedMessage{}
	if limit <= 0 {
		return out, nil
	}
	cols := "m.id, m.stream_id, m.conversation_id, m.topic, m.sender_id, m.date_sent, m.stream_wildcard, m.topic_wildcard, um.flags"
	// The literal conditions are the partial indexes' own predicates, so
	// that PostgreSQL's planner can use them.
	arm := func(cond string) string {
		return "SELECT * FROM (SELECT " + cols + " FROM user_messages AS um JOIN messages AS m ON m.realm_id = um.realm_id AND m.id = um.message_id" +
			" WHERE um.realm_id = ? AND um.user_id = ? AND " + cond
	}
	var q string
	args := []any{}
	if streamID == nil {
		q = arm("(um.flags & 2049) = 2048") + " ORDER BY um.message_id DESC LIMIT ?) AS d UNION ALL " +
			arm("(um.flags & 3073) = 1024") + " ORDER BY um.message_id DESC LIMIT ?) AS h ORDER BY 1 DESC LIMIT ?"
		args = append(args, realmID, userID, limit, realmID, userID, limit, limit)
	} else {
		q = arm("(um.flags & 3073) = 1024") + " AND m.stream_id = ? ORDER BY um.message_id DESC LIMIT ?) AS h"
		args = append(args, realmID, userID, *streamID, limit)
	}
	msgs, flags, err := s.scanLightFlags(ctx, true, q, args...)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	for i, m := range msgs {
		out = append(out, storage.FlaggedMessage{Message: m, Flags: flags[i]})
	}
	return out, nil
}

// ListMentionRows reads user_messages_mentioned_idx.
func (s *Store) ListMentionRows(ctx context.Context, realmID, userID, minID int64) ([]storage.UserMessage, error) {
	var rows []userMessageRow
	err := s.r.NewSelect().Model(&rows).
		Where("realm_id = ?", realmID).Where("user_id = ?", userID).
		Where("(flags & 56) <> 0").Where("message_id >= ?", minID).
		OrderExpr("message_id ASC").Scan(ctx)
	out := make([]storage.UserMessage, len(rows))
	for i, r := range rows {
		out[i] = r.UserMessage
	}
	return out, wrapErr(fmt.Sprintf("list mention rows of user %d in realm %d", userID, realmID), err)
}

// ListUnreadChannelMessages reads the spans through the channel index
// messages_stream_cover_idx, which carries every column wanted: a range
// scan per span and no row visited, each span's messages handed over in
// one row (see unread_lists.go). A reader who muted someone leaves their
// messages out: a short list of IDs written into the query, whose rows
// are then visited for the sender; readers without mutes keep the
// index-only scan.
func (s *Store) ListUnreadChannelMessages(ctx context.Context, realmID int64, spans []storage.IDSpan, exceptSenders []int64, limit int) (*storage.UnreadChannelMessages, error) {
	op := fmt.Sprintf("list unread channel messages of %d spans in realm %d", len(spans), realmID)
	if limit <= 0 || len(spans) == 0 {
		return &storage.UnreadChannelMessages{Messages: []storage.UnreadChannelMessage{}, Topics: []storage.UnreadTopic{}}, nil
	}
	cond := ""
	if len(exceptSenders) > 0 {
		ids := make([]string, 0, len(exceptSenders))
		for _, id := range uniqueIDs(exceptSenders) {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
		cond = "AND m.sender_id NOT IN (" + strings.Join(ids, ", ") + ")"
	}
	out, err := s.listUnreadAggregated(ctx, realmID, spans, cond, limit)
	return out, wrapErr(op, err)
}

// ResetReadRanges deletes the user's ranges of the channels and inserts
// one per channel, in two statements.
func (s *Store) ResetReadRanges(ctx context.Context, realmID, userID int64, streamIDs []int64, last int64) error {
	op := fmt.Sprintf("reset read ranges of user %d in realm %d", userID, realmID)
	return s.withTx(ctx, func(tx *Store) error {
		return chunked(streamIDs, func(ids []int64) error {
			if _, err := tx.w.NewDelete().Model((*readRangeRow)(nil)).
				Where("realm_id = ?", realmID).Where("user_id = ?", userID).Where("stream_id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
				return wrapErr(op, err)
			}
			rows := make([]readRangeRow, len(ids))
			for i, id := range ids {
				rows[i] = readRangeRow{ReadRange: storage.ReadRange{RealmID: realmID, UserID: userID, StreamID: id, FirstID: 1, LastID: last}}
			}
			_, err := tx.w.NewInsert().Model(&rows).Exec(ctx)
			return wrapErr(op, err)
		})
	})
}
