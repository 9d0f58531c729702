package bunstore

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"strings"

	"github.com/uptrace/bun"
)

// realmLockSpace is the first key of the realms' advisory locks (the
// second is the realm ID), so that they cannot collide with the host
// program's own advisory locks unless it picks the same number.
const realmLockSpace = 7412

// laneLockKey is the single-key advisory lock of a realm's lane (a key
// space of its own, apart from the two-key realm locks).
func laneLockKey(realmID int64, lane uint64) int64 {
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(realmID))
	binary.LittleEndian.PutUint64(b[8:], lane)
	h.Write(b[:])
	return int64(h.Sum64())
}

// postgresOps: PostgreSQL runs write transactions concurrently at READ
// COMMITTED, so a realm's checks and the writes they protect are
// serialized by a transaction-scoped advisory lock on the realm; text
// sorts by the database's collation unless told COLLATE "C".
var postgresOps = &dialectOps{
	name: DialectPostgres,
	ddl: strings.NewReplacer(
		"{{ID}}", "BIGSERIAL PRIMARY KEY",
		"{{SEARCH_SETUP}}", "ALTER TABLE messages ADD COLUMN search_tsv tsvector",
		"{{SEARCH_SETUP_INDEX}}", "CREATE INDEX messages_search_idx ON messages USING GIN (search_tsv)",
		"{{SEARCH_TEARDOWN_INDEX}}", "DROP INDEX messages_search_idx",
		"{{SEARCH_TEARDOWN}}", "ALTER TABLE messages DROP COLUMN search_tsv",
	),
	// The lock statements also read the transaction's ID, which the
	// event bus's notifications carry (notifyPostgres).
	lockRealm: func(ctx context.Context, tx bun.IDB, realmID int64) (string, error) {
		var void, xid string
		err := tx.NewRaw("SELECT pg_advisory_xact_lock(?, ?), pg_current_xact_id()::text",
			realmLockSpace, int32(realmID)).Scan(ctx, &void, &xid)
		return xid, err
	},
	// The realm shared, then the lane, in one round trip (the select
	// list is evaluated left to right). A lane's key is a 64-bit hash of
	// the realm and the lane: a collision only makes two lanes wait for
	// each other.
	//
	// With IDs to reserve, the locks are taken in a subquery that OFFSET 0
	// keeps from being merged into the outer query: every row of the
	// outer query, and so every nextval, comes after them.
	lockLane: func(ctx context.Context, tx bun.IDB, realmID int64, lane uint64, n int) (string, []int64, error) {
		key := laneLockKey(realmID, lane)
		if n <= 0 {
			var void1, void2, xid string
			err := tx.NewRaw("SELECT pg_advisory_xact_lock_shared(?, ?), pg_advisory_xact_lock(?), pg_current_xact_id()::text",
				realmLockSpace, int32(realmID), key).Scan(ctx, &void1, &void2, &xid)
			return xid, nil, err
		}
		rows, err := tx.QueryContext(ctx, tx.NewRaw(`SELECT l.xid, nextval(pg_get_serial_sequence('messages', 'id')) AS id
			FROM (SELECT pg_advisory_xact_lock_shared(?, ?) AS a, pg_advisory_xact_lock(?) AS b,
				pg_current_xact_id()::text AS xid OFFSET 0) AS l, generate_series(1, ?)
			ORDER BY id`, realmLockSpace, int32(realmID), key, n).String())
		if err != nil {
			return "", nil, err
		}
		defer rows.Close()
		var xid string
		ids := make([]int64, 0, n)
		for rows.Next() {
			var id int64
			if err := rows.Scan(&xid, &id); err != nil {
				return "", nil, err
			}
			ids = append(ids, id)
		}
		return xid, ids, rows.Err()
	},
	bytewise: func(expr string) string { return expr + ` COLLATE "C"` },
	indexMessage: func(ctx context.Context, db bun.IDB, id int64, topic, text string) error {
		_, err := db.NewRaw("UPDATE messages SET search_tsv = to_tsvector('english', ? || ' ' || ?) WHERE id = ?", topic, text, id).Exec(ctx)
		return err
	},
	typedValues: true,
	// The spans are a VALUES list joined laterally (PostgreSQL cannot
	// estimate a VALUES list, and left to itself joins it against the
	// whole index): a range scan of the channel's index per span, newest
	// first, which must start at the span's end and stop at its start.
	// PostgreSQL 15 starts a backward scan at a plain upper bound on the
	// ID (after the realm's and channel's equalities), not at a row
	// comparison, and stops at a plain lower bound, not at a row
	// comparison decided by its second column (with the lower bound
	// (stream_id, id) >= (sid, lo), as before, it read the rest of the
	// channel below each span: 145 pages a span, 65 ms for a reader with
	// 10 unread in 50 channels of a million messages). Spans without an
	// end (openSpan: the unread after a reader's last read range) have a
	// plain lower bound and the upper one as a row comparison, which only
	// the channel's index can use, so that the planner takes it with
	// statistics or without (with two plain bounds the realm's ID index
	// looks as good); the scan starts at the channel's end, which is the
	// span's. Spans with an end have both bounds plain.
	unreadAggregates: func(realmID int64, spans []unreadSpan, cond string, perSpan int) []unreadStatement {
		var out []unreadStatement
		for _, open := range []bool{true, false} {
			args := make([]any, 0, 5*len(spans)+2)
			n := 0
			for i, sp := range spans {
				if (sp.Last >= openSpan) == open {
					args = append(args, i, sp.StreamID, sp.First, sp.Last, sp.before)
					n++
				}
			}
			if n == 0 {
				continue
			}
			// A span's own end is plain where it has one; a second
			// round's end (before) is a filter on an open span, which is
			// read from the channel's end past what the first round read.
			upper := "m.id <= g.hi AND m.id < g.b"
			if open {
				upper = "(m.stream_id, m.id) <= (g.sid, g.hi) AND m.id + 0 < g.b"
			}
			out = append(out, unreadStatement{`SELECT g.i, x.v FROM (VALUES ` + valuesList(true, n, "bigint", "bigint", "bigint", "bigint", "bigint") + `) AS g (i, sid, lo, hi, b)
			CROSS JOIN LATERAL (SELECT string_agg((CASE WHEN s.stream_wildcard THEN -s.id ELSE s.id END)::text, ',') || chr(30) ||
				string_agg(s.topic, chr(31)) AS v FROM (SELECT m.id, m.topic, m.stream_wildcard FROM messages AS m
				WHERE m.realm_id = ? AND m.stream_id = g.sid AND m.id >= g.lo AND ` + upper + ` ` + cond + `
				ORDER BY m.id DESC LIMIT ?) AS s) AS x
			WHERE x.v IS NOT NULL`, append(args, realmID, perSpan)})
		}
		return out
	},
	indexOnInsert: func(q *bun.InsertQuery, topic, text string) *bun.InsertQuery {
		return q.Value("search_tsv", "to_tsvector('english', ? || ' ' || ?)", topic, text)
	},
	indexMessages: func(ctx context.Context, db bun.IDB, docs []searchDoc) error {
		values, args := indexDocs(true, docs)
		_, err := db.NewRaw("UPDATE messages AS m SET search_tsv = to_tsvector('english', v.topic || ' ' || v.body) FROM (VALUES "+
			values+") AS v(id, topic, body) WHERE m.id = v.id", args...).Exec(ctx)
		return err
	},
	unindexMessages: func(context.Context, bun.IDB, []int64) error { return nil },
	search: func(q *bun.SelectQuery, terms []string) (*bun.SelectQuery, string) {
		cond, args := tsMatch(terms)
		return q.Where(cond, args...), "m.id"
	},
	searchCond: tsMatch,
	// The rows are picked (and locked) once, by a MATERIALIZED CTE: as a
	// subquery of IN, PostgreSQL may run the pick again for each row the
	// update considers, and with SKIP LOCKED each run after the first
	// passes over the rows already claimed and takes more than asked.
	claimOnce: func(pick string, pickArgs []any, update string, updateArgs []any) (string, []any) {
		return "WITH picked AS MATERIALIZED (" + pick + ") " + strings.Replace(update, "IN (?)", "IN (SELECT * FROM picked)", 1),
			append(append([]any{}, pickArgs...), updateArgs...)
	},
}

// tsMatch is the text-search condition of the search terms: each a
// phrase query, all required.
func tsMatch(terms []string) (string, []any) {
	parts := make([]string, len(terms))
	args := make([]any, len(terms))
	for i, t := range terms {
		parts[i] = "phraseto_tsquery('english', ?)"
		args[i] = t
	}
	return "m.search_tsv @@ (" + strings.Join(parts, " && ") + ")", args
}
