package bunstore

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
)

// sqliteOps: SQLite compares and sorts text by its bytes, and has one
// writer (every transaction of the writer connection begins IMMEDIATE),
// so a realm needs no lock of its own. The driver itself (cgo) is in
// sqlite.go, behind the nosqlite build tag; these operations are not, so
// a PostgreSQL-only build still reads the same migrations.
var sqliteOps = &dialectOps{
	name:      DialectSQLite,
	claimOnce: claimInline, // one writer: the update is the claim
	ddl: strings.NewReplacer(
		"{{ID}}", "INTEGER PRIMARY KEY AUTOINCREMENT",
		"{{SEARCH_SETUP}}", "CREATE VIRTUAL TABLE messages_fts USING fts4(topic, content, tokenize=porter)",
		"{{SEARCH_SETUP_INDEX}}", "",
		"{{SEARCH_TEARDOWN_INDEX}}", "",
		"{{SEARCH_TEARDOWN}}", "DROP TABLE messages_fts",
	),
	lockRealm: func(context.Context, bun.IDB, int64) (string, error) { return "", nil },
	lockLane: func(context.Context, bun.IDB, int64, uint64, int) (string, []int64, error) {
		return "", nil, nil
	},
	bytewise: func(expr string) string { return expr },
	indexMessage: func(ctx context.Context, db bun.IDB, id int64, topic, text string) error {
		_, err := db.NewRaw("INSERT INTO messages_fts (docid, topic, content) VALUES (?, ?, ?)", id, topic, text).Exec(ctx)
		return err
	},
	// SQLite has no LATERAL: a correlated scalar subquery per span of the
	// VALUES list, a range scan of the channel's index, compiled once
	// whatever the number of spans (a compound SELECT of one arm per span
	// took longer to compile than a reader with 10 unread took to read).
	unreadAggregates: func(realmID int64, spans []unreadSpan, cond string, perSpan int) []unreadStatement {
		args := make([]any, 0, 5*len(spans)+2)
		for i, sp := range spans {
			args = append(args, i, sp.StreamID, sp.First, min(sp.Last, sp.before-1))
		}
		return []unreadStatement{{`WITH g (i, sid, lo, hi) AS (VALUES ` + valuesList(false, len(spans), "", "", "", "") + `)
			SELECT g.i, (SELECT group_concat(CASE WHEN m.stream_wildcard THEN -m.id ELSE m.id END) || char(30) || group_concat(m.topic, char(31))
				FROM (SELECT m.id, m.topic, m.stream_wildcard FROM messages AS m
					WHERE m.realm_id = ? AND m.stream_id = g.sid AND m.id >= g.lo AND m.id <= g.hi ` + cond + `
					ORDER BY m.id DESC LIMIT ?) AS m)
			FROM g`, append(args, realmID, perSpan)}}
	},
	indexMessages: func(ctx context.Context, db bun.IDB, docs []searchDoc) error {
		values, args := indexDocs(false, docs)
		_, err := db.NewRaw("INSERT INTO messages_fts (docid, topic, content) VALUES "+values, args...).Exec(ctx)
		return err
	},
	unindexMessages: func(ctx context.Context, db bun.IDB, ids []int64) error {
		_, err := db.NewRaw("DELETE FROM messages_fts WHERE docid IN (?)", bun.List(ids)).Exec(ctx)
		return err
	},
	search: func(q *bun.SelectQuery, terms []string) (*bun.SelectQuery, string) {
		return q.Join("JOIN messages_fts ON messages_fts.docid = m.id").
			Where("messages_fts MATCH ?", ftsQuery(terms)), "messages_fts.docid"
	},
	searchCond: func(terms []string) (string, []any) {
		return "m.id IN (SELECT docid FROM messages_fts WHERE messages_fts MATCH ?)", []any{ftsQuery(terms)}
	},
}

// ftsQuery is the FTS4 MATCH expression of the search terms: each a quoted
// word or phrase, all required.
func ftsQuery(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + t + `"`
	}
	return strings.Join(quoted, " ")
}
