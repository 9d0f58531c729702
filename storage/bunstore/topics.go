package bunstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/teamchat/chat/storage"
)

// spanCond is the condition that col lies in the span (After < col <=
// Through), with its arguments.
func spanCond(sp storage.ChannelSpan, col string) (string, []any) {
	if sp.Through == nil {
		return col + " > ?", []any{sp.After}
	}
	return col + " > ? AND " + col + " <= ?", []any{sp.After, *sp.Through}
}

// NewestReceivedMessage takes the greatest of index seeks: the user's
// newest row (the primary key), their newest sent message
// (messages_sender_idx) and, for each span, the channel's newest message
// in it (messages_stream_cover_idx), all in one statement.
func (s *Store) NewestReceivedMessage(ctx context.Context, realmID, userID int64, spans []storage.ChannelSpan) (int64, error) {
	// Its text depends only on the number of spans and their kinds, so it
	// is prepared once per shape (scan), not compiled per request.
	p := s.params()
	parts := []string{
		"SELECT max(message_id) AS v FROM user_messages WHERE realm_id = ? AND user_id = ?",
		"SELECT max(id) AS v FROM messages WHERE realm_id = ? AND sender_id = ?",
	}
	// On PostgreSQL each seek is written as one (ORDER BY ... LIMIT 1):
	// without statistics the planner may take max() over a whole
	// channel's (or user's) index for as cheap as one seek, and a span's
	// lower bound is a row comparison that only the channel's index can
	// use (see window_postgres.go).
	pg := s.ops.name == DialectPostgres
	if pg {
		parts = []string{
			"(SELECT message_id AS v FROM user_messages WHERE realm_id = ? AND user_id = ? ORDER BY message_id DESC LIMIT 1)",
			"(SELECT id AS v FROM messages WHERE realm_id = ? AND sender_id = ? ORDER BY id DESC LIMIT 1)",
		}
	}
	args := []any{p.v(realmID), p.v(userID), p.v(realmID), p.v(userID)}
	// Open spans first, then closed ones: the shape is then two counts.
	sorted := slices.Clone(spans)
	slices.SortStableFunc(sorted, func(a, b storage.ChannelSpan) int {
		return cmp.Compare(boolInt(a.Through != nil), boolInt(b.Through != nil))
	})
	if pg {
		parts, args = newestInSpansPostgres(p, realmID, sorted, parts, args)
	} else {
		for _, sp := range sorted {
			cond, bound := spanCond(sp, "id")
			parts = append(parts, "SELECT max(id) AS v FROM messages WHERE realm_id = ? AND stream_id = ? AND "+cond)
			args = append(args, p.v(realmID), p.v(sp.StreamID))
			for _, b := range bound {
				args = append(args, p.v(b))
			}
		}
	}
	var id int64
	q := s.r.NewRaw("SELECT COALESCE(max(v), 0) FROM ("+strings.Join(parts, " UNION ALL ")+") AS received", args...)
	err := s.scan(ctx, q, p, &id)
	return id, wrapErr(fmt.Sprintf("newest received message of user %d in realm %d", userID, realmID), err)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// topicRow is one row of ListChannelTopics.
type topicRow struct {
	Topic string `bun:"topic"`
	MaxID int64  `bun:"max_id"`
}

// ListChannelTopics walks the channel's distinct topic keys with a
// recursive skip scan of messages_stream_topic_idx (each step seeks the
// next key), takes each topic's newest message (in each span, when there
// are spans) with one more seek, and reads that message's spelling of the
// topic by its ID (a lookup per topic: a join lets PostgreSQL's planner
// hash the realm's messages instead). Neither SQLite nor PostgreSQL skips
// through an index for a GROUP BY by itself: the plain grouped query reads
// every message of the channel.
func (s *Store) ListChannelTopics(ctx context.Context, realmID, streamID int64, spans []storage.ChannelSpan) ([]storage.ChannelTopic, error) {
	out := []storage.ChannelTopic{}
	newest := "SELECT max(n.id) FROM messages AS n WHERE n.realm_id = ? AND n.stream_id = ? AND n.topic_key = keys.k"
	newestArgs := []any{realmID, streamID}
	first := "SELECT min(topic_key) FROM messages WHERE realm_id = ? AND stream_id = ?"
	// On PostgreSQL each seek is written as one, the topic's newest
	// bounded by a row comparison only the topic's index can use (see
	// NewestReceivedMessage and window_postgres.go).
	pg := s.ops.name == DialectPostgres
	if pg {
		first = "SELECT (SELECT topic_key FROM messages WHERE realm_id = ? AND stream_id = ? ORDER BY topic_key LIMIT 1)"
	}
	seek := func(after int64, through *int64) (string, []any) {
		if !pg {
			cond, bound := spanCond(storage.ChannelSpan{After: after, Through: through}, "n.id")
			return "SELECT max(n.id) FROM messages AS n WHERE n.realm_id = ? AND n.stream_id = ? AND n.topic_key = keys.k AND " + cond,
				append([]any{realmID, streamID}, bound...)
		}
		q := "SELECT n.id FROM messages AS n WHERE n.realm_id = ? AND n.stream_id = ? AND n.topic_key = keys.k AND (n.topic_key, n.id) > (keys.k, ?)"
		args := []any{realmID, streamID, after}
		if through != nil {
			q += " AND n.id <= ?"
			args = append(args, *through)
		}
		return q + " ORDER BY n.id DESC LIMIT 1", args
	}
	if pg {
		newest, newestArgs = seek(0, nil)
	}
	if spans != nil {
		var parts []string
		var args []any
		for _, sp := range spans {
			if sp.StreamID != streamID {
				continue
			}
			q, qargs := seek(sp.After, sp.Through)
			parts = append(parts, "SELECT ("+q+") AS v")
			args = append(args, qargs...)
		}
		if len(parts) == 0 {
			return out, nil
		}
		newest, newestArgs = "SELECT max(v) FROM ("+strings.Join(parts, " UNION ALL ")+") AS in_spans", args
	}
	query := `WITH RECURSIVE keys(k) AS (
	` + first + `
	UNION ALL
	SELECT (SELECT min(f.topic_key) FROM messages AS f WHERE f.realm_id = ? AND f.stream_id = ? AND f.topic_key > keys.k)
	FROM keys WHERE keys.k IS NOT NULL
), tops(max_id) AS MATERIALIZED (
	SELECT (` + newest + `) FROM keys WHERE keys.k IS NOT NULL
)
SELECT (SELECT m.topic FROM messages AS m WHERE m.realm_id = ? AND m.id = tops.max_id) AS topic, tops.max_id
FROM tops WHERE tops.max_id IS NOT NULL ORDER BY tops.max_id DESC`
	args := append([]any{realmID, streamID, realmID, streamID}, newestArgs...)
	var rows []topicRow
	if err := s.r.NewRaw(query, append(args, realmID)...).Scan(ctx, &rows); err != nil {
		return nil, wrapErr(fmt.Sprintf("topics of channel %d in realm %d", streamID, realmID), err)
	}
	for _, r := range rows {
		out = append(out, storage.ChannelTopic{Name: r.Topic, MaxID: r.MaxID})
	}
	return out, nil
}

// newestInSpansPostgres adds to a NewestReceivedMessage statement on
// PostgreSQL the newest message of each span. The open spans (a user's
// current subscriptions: most of them) are one correlated seek over a
// VALUES list, planned once whatever their number (30 seeks written
// apart took PostgreSQL 6 ms to plan and 1 ms to run): a plain lower
// bound, at which the backward scan stops, and an upper bound as a row
// comparison that only the channel's index can use, so that the planner
// takes it with statistics or without (see dialect_postgres.go's
// unreadAggregates); the scan starts at the channel's end, which is the
// span's. A closed span is a seek of its own, which starts at its end.
func newestInSpansPostgres(p *params, realmID int64, spans []storage.ChannelSpan, parts []string, args []any) ([]string, []any) {
	var rows []string
	var open []any
	for _, sp := range spans {
		if sp.Through == nil {
			rows = append(rows, "(?::bigint, ?::bigint)")
			open = append(open, sp.StreamID, sp.After)
		}
	}
	if len(rows) > 0 {
		args = append(args, p.v(realmID))
		for _, v := range open {
			args = append(args, p.v(v))
		}
		parts = append(parts, "SELECT (SELECT m.id FROM messages AS m WHERE m.realm_id = ? AND m.stream_id = sp.sid AND m.id > sp.after"+
			" AND (m.stream_id, m.id) <= (sp.sid, "+strconv.FormatInt(math.MaxInt64, 10)+") ORDER BY m.id DESC LIMIT 1) AS v"+
			" FROM (VALUES "+strings.Join(rows, ", ")+") AS sp(sid, after)")
	}
	for _, sp := range spans {
		if sp.Through != nil {
			parts = append(parts, "(SELECT id AS v FROM messages WHERE realm_id = ? AND stream_id = ? AND (stream_id, id) > (?, ?) AND id <= ? ORDER BY id DESC LIMIT 1)")
			args = append(args, p.v(realmID), p.v(sp.StreamID), p.v(sp.StreamID), p.v(sp.After), p.v(*sp.Through))
		}
	}
	return parts, args
}
