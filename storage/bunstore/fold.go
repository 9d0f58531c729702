package bunstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// foldedColumn is a case-insensitive column and the key column that holds
// storage.Fold of it; unique indexes and lookups use the key.
type foldedColumn struct {
	table, column, key string
	unique             []string // the columns of the key's unique index, key included
}

var foldedColumns = []foldedColumn{
	{"users", "email", "email_key", []string{"realm_id", "email_key"}},
	{"streams", "name", "name_key", []string{"realm_id", "name_key"}},
	{"custom_profile_fields", "name", "name_key", []string{"realm_id", "name_key"}},
	{"user_topics", "topic_name", "topic_key", []string{"user_id", "stream_id", "topic_key"}},
}

// foldKeys fills every key column from its column (migration 0005), then
// checks that the unique indexes about to be built will hold, naming the
// rows that would break them.
func foldKeys(ctx context.Context, tx bun.Tx) error {
	for _, c := range foldedColumns {
		// One update per distinct value (user_topics has no id column).
		var values []string
		err := tx.NewSelect().TableExpr(c.table).
			ColumnExpr("DISTINCT ?", bun.Ident(c.column)).Scan(ctx, &values)
		if err != nil {
			return fmt.Errorf("read %s.%s: %w", c.table, c.column, err)
		}
		for _, v := range values {
			_, err := tx.NewUpdate().Table(c.table).
				Set("? = ?", bun.Ident(c.key), storage.Fold(v)).
				Where("? = ?", bun.Ident(c.column), v).Exec(ctx)
			if err != nil {
				return fmt.Errorf("fold %s.%s %q: %w", c.table, c.column, v, err)
			}
		}
		var dups []struct {
			First string `bun:"first"`
			Last  string `bun:"last"`
		}
		group := make([]bun.Ident, len(c.unique))
		for i, col := range c.unique {
			group[i] = bun.Ident(col)
		}
		err = tx.NewSelect().TableExpr(c.table).
			ColumnExpr("min(?) AS first", bun.Ident(c.column)).
			ColumnExpr("max(?) AS last", bun.Ident(c.column)).
			GroupExpr("?", bun.List(group)).
			Having("count(*) > 1").
			OrderExpr("1").Limit(20).Scan(ctx, &dups)
		if err != nil {
			return fmt.Errorf("check %s.%s: %w", c.table, c.key, err)
		}
		if len(dups) > 0 {
			var b strings.Builder
			for _, d := range dups {
				fmt.Fprintf(&b, "\n  %q and %q", d.First, d.Last)
			}
			return fmt.Errorf("%s: %s values that differ only in the case of non-ASCII letters (which lower() did not fold) would become one; rename one of each and start again:%s",
				c.table, c.column, b.String())
		}
	}
	return nil
}

// fullNameKeys fills users.full_name_key (migration 0010), one update
// per distinct name.
func fullNameKeys(ctx context.Context, tx bun.Tx) error {
	var names []string
	if err := tx.NewSelect().TableExpr("users").ColumnExpr("DISTINCT full_name").Scan(ctx, &names); err != nil {
		return fmt.Errorf("read users.full_name: %w", err)
	}
	for _, name := range names {
		_, err := tx.NewUpdate().Table("users").Set("full_name_key = ?", storage.Fold(name)).
			Where("full_name = ?", name).Exec(ctx)
		if err != nil {
			return fmt.Errorf("fold users.full_name %q: %w", name, err)
		}
	}
	return nil
}

// insertKey adds the key column of a folded column to an insert.
func insertKey(q *bun.InsertQuery, key, value string) *bun.InsertQuery {
	return q.Value(key, "?", storage.Fold(value))
}

// updateKey adds the key column to an update that writes column (every
// column when none are named).
func updateKey(q *bun.UpdateQuery, columns []string, column, key, value string) *bun.UpdateQuery {
	if len(columns) > 0 && !slices.Contains(columns, column) {
		return q
	}
	return q.Value(key, "?", storage.Fold(value))
}
