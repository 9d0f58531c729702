package bunstore

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// dialectOps is everything the store does differently per database, so
// that the rest of the package is written once. Each dialect fills one in
// its own file (dialect_sqlite.go, dialect_postgres.go); full-text search
// and notifications will join them. Case-insensitive comparison is not
// here on purpose: keys are folded in Go (storage.Fold, fold.go), the
// same for both.
type dialectOps struct {
	name string // DialectSQLite or DialectPostgres

	// ddl replaces the {{NAME}} tokens of the migration files.
	ddl *strings.Replacer

	// lockRealm serializes the realm's write transactions: called inside
	// one, it returns when no other transaction holds the realm.
	// It returns the transaction's ID where notifications need it ("" on
	// SQLite).
	lockRealm func(ctx context.Context, tx bun.IDB, realmID int64) (string, error)
	// lockLane holds the realm shared and one of its lanes exclusively,
	// and returns what lockRealm does and n reserved message IDs (none on
	// SQLite).
	lockLane func(ctx context.Context, tx bun.IDB, realmID int64, lane uint64, n int) (string, []int64, error)

	// bytewise is an ORDER BY expression that sorts the text expression
	// expr by its bytes (UTF-8 code point order), whatever the collation.
	bytewise func(expr string) string

	// indexMessage writes the full-text index of message id (its topic and
	// the folded text of its content).
	indexMessage func(ctx context.Context, db bun.IDB, id int64, topic, text string) error
	// indexOnInsert, where the index is a column of messages, writes it
	// in the message's own INSERT (one round trip fewer while the
	// organization's lock is held); nil: indexMessage after the insert.
	indexOnInsert func(q *bun.InsertQuery, topic, text string) *bun.InsertQuery
	// indexMessages is indexMessage for many messages in one statement
	// (at most searchBatch).
	indexMessages func(ctx context.Context, db bun.IDB, docs []searchDoc) error
	// typedValues: the parameters of a VALUES list need their types
	// (PostgreSQL cannot infer them); see valuesList.
	typedValues bool
	// unreadAggregates are the statements of ListUnreadChannelMessages
	// (see unread_lists.go) for spans (at most unreadSpansPerQuery), with
	// cond ("", or AND and a condition on m without arguments) after the
	// messages' conditions. Together they give a row per span, (its index,
	// its newest messages up to perSpan): their IDs with a channel
	// wildcard's negated, joined by commas, then unreadListSep, then their
	// topics in the same order, joined by unreadTopicSep (NULL for a span
	// without messages, whose row may be left out).
	unreadAggregates func(realmID int64, spans []unreadSpan, cond string, perSpan int) []unreadStatement
	// unindexMessages removes the messages from a full-text index kept
	// apart from their rows (nothing where it lives in the row).
	unindexMessages func(ctx context.Context, db bun.IDB, ids []int64) error
	// search restricts a query on messages (alias m) to those where
	// every term (a word or a phrase, folded) occurs in the topic or
	// content, and names the ID column to order by: SQLite's FTS table
	// returns its matches in docid order, so a search driven by it orders
	// by messages_fts.docid and stops after the window instead of sorting every
	// match.
	search func(q *bun.SelectQuery, terms []string) (*bun.SelectQuery, string)
	// searchCond is the same restriction as one condition on m.id, for use
	// inside a negation.
	searchCond func(terms []string) (string, []any)
	// claimOnce is the statement of a claim: update (whose "IN (?)" is
	// the rows picked) over the rows pick selects (and locks), with the
	// arguments of both, in the statement's order.
	claimOnce func(pick string, pickArgs []any, update string, updateArgs []any) (string, []any)
}

// claimInline is claimOnce with pick as update's subquery.
func claimInline(pick string, pickArgs []any, update string, updateArgs []any) (string, []any) {
	before, after, _ := strings.Cut(update, "IN (?)")
	n := strings.Count(before, "?")
	args := append(append(append([]any{}, updateArgs[:n]...), pickArgs...), updateArgs[n:]...)
	return before + "IN (" + pick + ")" + after, args
}

// dialects maps bun's dialect names to their operations.
var dialects = map[dialect.Name]*dialectOps{
	dialect.SQLite: sqliteOps,
	dialect.PG:     postgresOps,
}

// values is valuesList for the dialect.
func (o *dialectOps) values(n int, types ...string) string {
	return valuesList(o.typedValues, n, types...)
}

// valuesList is the one builder of VALUES lists: n rows of one parameter
// per column type, cast to the type where typed ("(?, ?)" on SQLite,
// "(?::bigint, ?::text)" on PostgreSQL).
func valuesList(typed bool, n int, types ...string) string {
	var row strings.Builder
	row.WriteByte('(')
	for i, t := range types {
		if i > 0 {
			row.WriteString(", ")
		}
		row.WriteByte('?')
		if typed {
			row.WriteString("::" + t)
		}
	}
	row.WriteByte(')')
	one := row.String()
	var sb strings.Builder
	sb.Grow(n * (len(one) + 2))
	for i := range n {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(one)
	}
	return sb.String()
}

// indexDocs is the VALUES list of full-text documents (id, topic, text)
// and its arguments.
func indexDocs(typed bool, docs []searchDoc) (string, []any) {
	args := make([]any, 0, 3*len(docs))
	for _, d := range docs {
		args = append(args, d.id, d.topic, d.text)
	}
	return valuesList(typed, len(docs), "bigint", "text", "text"), args
}
