package bunstore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Bulk reads and writes of whole organizations (storage.BulkStore), for
// export and import. Records are read with plain SQL built from the
// record types' columns (storage.Columns), a page at a time in key order
// (keyset pagination on the kind's key, which an index serves), and
// written as multi-row INSERTs with the columns the store derives from
// them (name keys, the full-text index), exactly as the one-row writes
// derive them.

var _ storage.BulkStore = (*Store)(nil)

// insertBatch bounds the rows of one INSERT (and its SQL text).
const insertBatch = 400

// SchemaVersion reads the newest applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (string, int, error) {
	var name string
	err := s.r.NewSelect().TableExpr("bun_migrations").Column("name").Where("migrated_at IS NOT NULL").
		OrderExpr("name DESC").Limit(1).Scan(ctx, &name)
	if err != nil {
		return "", 0, wrapErr("schema version", err)
	}
	n, err := migrationNumber(name)
	return name, n, err
}

// migrationNumber is the number a migration's name starts with.
func migrationNumber(name string) (int, error) {
	prefix, _, _ := strings.Cut(name, "_")
	n, err := strconv.Atoi(prefix)
	if err != nil {
		return 0, fmt.Errorf("bunstore: migration %q has no number", name)
	}
	return n, nil
}

// LatestSchemaVersion is the newest migration this build knows, which
// every database it opens has.
func LatestSchemaVersion() (name string, number int) {
	name = schemaMigrations[len(schemaMigrations)-1].name
	n, _ := migrationNumber(name)
	return name, n
}

// realmColumn is the column that says which realm a record is of.
func realmColumn(k *storage.Kind) string {
	if k.Name == "realms" {
		return "id"
	}
	return "realm_id"
}

func quoteIdent(name string) string { return `"` + name + `"` }

func keyList(k *storage.Kind) string {
	parts := make([]string, len(k.Key))
	for i, c := range k.Key {
		parts[i] = quoteIdent(c)
	}
	return strings.Join(parts, ", ")
}

// KindStats counts the realm's records of the kind.
func (s *Store) KindStats(ctx context.Context, realmID int64, k *storage.Kind) (storage.KindStats, error) {
	var st storage.KindStats
	maxExpr := "0"
	if k.HasID() {
		maxExpr = "COALESCE(MAX(id), 0)"
	}
	err := s.r.QueryRowContext(ctx, "SELECT count(*), "+maxExpr+" FROM "+quoteIdent(k.Name)+" WHERE "+realmColumn(k)+" = ?", realmID).
		Scan(&st.Records, &st.MaxID)
	return st, wrapErr(fmt.Sprintf("count %s of realm %d", k.Name, realmID), err)
}

// ScanRecords reads the realm's records of the kind, page by page.
func (s *Store) ScanRecords(ctx context.Context, realmID int64, k *storage.Kind, page int, fn func([]any) error) error {
	typ := reflect.TypeOf(k.New()).Elem()
	cols := storage.Columns(typ)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.Name)
	}
	keys := keyList(k)
	base := "SELECT " + strings.Join(names, ", ") + " FROM " + quoteIdent(k.Name) + " WHERE " + realmColumn(k) + " = ?"
	var after []any
	op := fmt.Sprintf("scan %s of realm %d", k.Name, realmID)
	for {
		query, args := base, []any{realmID}
		if after != nil {
			marks := strings.TrimSuffix(strings.Repeat("?, ", len(after)), ", ")
			query += " AND (" + keys + ") > (" + marks + ")"
			args = append(args, after...)
		}
		query += " ORDER BY " + keys + " LIMIT " + strconv.Itoa(page)
		recs, err := s.scanPage(ctx, query, args, typ, cols)
		if err != nil {
			return wrapErr(op, err)
		}
		if len(recs) == 0 {
			return nil
		}
		if err := fn(recs); err != nil {
			return err
		}
		if len(recs) < page {
			return nil
		}
		last := recs[len(recs)-1]
		after = after[:0]
		for _, c := range k.Key {
			after = append(after, storage.ColumnValue(last, c).Interface())
		}
	}
}

func (s *Store) scanPage(ctx context.Context, query string, args []any, typ reflect.Type, cols []storage.Column) ([]any, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var recs []any
	dest := make([]any, len(cols))
	for rows.Next() {
		rec := reflect.New(typ)
		v := rec.Elem()
		for i, c := range cols {
			dest[i] = v.FieldByIndex(c.Index).Addr().Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		recs = append(recs, rec.Interface())
	}
	return recs, rows.Err()
}

// ReserveIDs finds the greatest ID given in the kind's table and, on
// PostgreSQL, moves its sequence past base+n first, so that IDs others
// draw meanwhile never meet the imported ones (setval is not undone by a
// rollback: a failed import leaves a gap). SQLite's one writer is inside
// the import's transaction, and AUTOINCREMENT follows inserted IDs.
func (s *Store) ReserveIDs(ctx context.Context, k *storage.Kind, n int64) (int64, error) {
	op := "reserve IDs of " + k.Name
	var maxID int64
	if err := s.w.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM "+quoteIdent(k.Name)).Scan(&maxID); err != nil {
		return 0, wrapErr(op, err)
	}
	if s.ops.name != DialectPostgres {
		var seq int64
		err := s.w.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = ?", k.Name).Scan(&seq)
		return max(maxID, seq), wrapErr(op, err)
	}
	var seqName string
	if err := s.w.QueryRowContext(ctx, "SELECT pg_get_serial_sequence(?, 'id')", k.Name).Scan(&seqName); err != nil {
		return 0, wrapErr(op, err)
	}
	var last int64
	var called bool
	if err := s.w.QueryRowContext(ctx, "SELECT last_value, is_called FROM "+seqName).Scan(&last, &called); err != nil {
		return 0, wrapErr(op, err)
	}
	if !called {
		last--
	}
	base := max(maxID, last)
	if n > 0 {
		if _, err := s.w.ExecContext(ctx, "SELECT setval(?, ?)", seqName, base+n); err != nil {
			return 0, wrapErr(op, err)
		}
	}
	return base, nil
}

// MissingIDs checks references against the kind's table.
func (s *Store) MissingIDs(ctx context.Context, realmID int64, k *storage.Kind, ids []int64) ([]int64, error) {
	var missing []int64
	err := chunked(ids, func(part []int64) error {
		var found []int64
		err := s.w.NewSelect().TableExpr(quoteIdent(k.Name)).Column("id").Where("realm_id = ?", realmID).
			Where("id IN (?)", bun.List(part)).Scan(ctx, &found)
		if err != nil {
			return wrapErr("check references to "+k.Name, err)
		}
		for _, id := range part {
			if !slices.Contains(found, id) {
				missing = append(missing, id)
			}
		}
		return nil
	})
	slices.Sort(missing)
	return missing, err
}

// derivedColumn is a column the store writes from a record: expr (with
// one ? per value) and the values.
type derivedColumn struct {
	name   string
	expr   string
	values func(rec any) []any
}

func foldOf(column string) func(rec any) []any {
	return func(rec any) []any { return []any{storage.Fold(storage.ColumnValue(rec, column).String())} }
}

// derived lists, per table, the columns written from the record.
func (s *Store) derived(table string) []derivedColumn {
	switch table {
	case "users":
		return []derivedColumn{{"email_key", "?", foldOf("email")}, {"full_name_key", "?", foldOf("full_name")},
			{"stream_notifications", "?", func(rec any) []any { return []any{settingsStreamNotifications(rec.(*storage.User).Settings)} }}}
	case "streams", "custom_profile_fields":
		return []derivedColumn{{"name_key", "?", foldOf("name")}}
	case "user_topics":
		return []derivedColumn{{"topic_key", "?", foldOf("topic_name")}}
	case "invites":
		return []derivedColumn{{"email_key", "?", foldOf("email")}}
	case "messages":
		cols := []derivedColumn{{"topic_key", "?", foldOf("topic")}}
		if s.ops.name == DialectPostgres {
			cols = append(cols, derivedColumn{"search_tsv", "to_tsvector('english', ? || ' ' || ?)", func(rec any) []any {
				m := rec.(*storage.Message)
				return []any{storage.Fold(m.Topic), storage.Fold(htmlText(m.RenderedContent))}
			}})
		}
		return cols
	}
	return nil
}

// settingsStreamNotifications is users.stream_notifications of a
// settings document (as migration 0028's step computes it).
func settingsStreamNotifications(settings string) int {
	if !strings.Contains(settings, "enable_stream_") {
		return 0
	}
	var set map[string]any
	if json.Unmarshal([]byte(settings), &set) != nil {
		return 0
	}
	bits := 0
	if set["enable_stream_email_notifications"] == true {
		bits |= streamNotifyEmail
	}
	if set["enable_stream_push_notifications"] == true {
		bits |= streamNotifyPush
	}
	return bits
}

// columnArg is a field's value as a query argument (NULL for a nil
// pointer).
func columnArg(v reflect.Value) any {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	return v.Interface()
}

// InsertRecords writes the records in multi-row INSERTs.
func (s *Store) InsertRecords(ctx context.Context, k *storage.Kind, recs []any) error {
	if len(recs) == 0 {
		return nil
	}
	cols := storage.Columns(reflect.TypeOf(recs[0]))
	der := s.derived(k.Name)
	names := make([]string, 0, len(cols)+len(der))
	tuple := make([]string, 0, len(cols)+len(der))
	for _, c := range cols {
		names = append(names, quoteIdent(c.Name))
		tuple = append(tuple, "?")
	}
	for _, d := range der {
		names = append(names, quoteIdent(d.name))
		tuple = append(tuple, d.expr)
	}
	row := "(" + strings.Join(tuple, ", ") + ")"
	head := "INSERT INTO " + quoteIdent(k.Name) + " (" + strings.Join(names, ", ") + ") VALUES "
	op := fmt.Sprintf("import %d %s", len(recs), k.Name)
	for part := range slices.Chunk(recs, insertBatch) {
		var sb strings.Builder
		sb.WriteString(head)
		args := make([]any, 0, len(part)*len(tuple))
		for i, rec := range part {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(row)
			v := reflect.ValueOf(rec).Elem()
			for _, c := range cols {
				if slices.Contains(k.Late, c.Name) {
					args = append(args, nil)
					continue
				}
				args = append(args, columnArg(v.FieldByIndex(c.Index)))
			}
			for _, d := range der {
				args = append(args, d.values(rec)...)
			}
		}
		if _, err := s.w.ExecContext(ctx, sb.String(), args...); err != nil {
			return wrapErr(op, err)
		}
		if k.Name == "messages" && s.ops.name != DialectPostgres {
			ms := make([]storage.Message, len(part))
			for i, rec := range part {
				ms[i] = *rec.(*storage.Message)
			}
			if err := s.indexMessagesOf(ctx, s.w, ms); err != nil {
				return wrapErr(op+": full-text index", err)
			}
		}
	}
	return nil
}

// SetLate writes the Late columns, one UPDATE per record that has one.
func (s *Store) SetLate(ctx context.Context, k *storage.Kind, recs []any) error {
	for _, rec := range recs {
		for _, c := range k.Late {
			v := columnArg(storage.ColumnValue(rec, c))
			if v == nil {
				continue
			}
			id := storage.ColumnValue(rec, "id").Int()
			if _, err := s.w.ExecContext(ctx, "UPDATE "+quoteIdent(k.Name)+" SET "+quoteIdent(c)+" = ? WHERE id = ?", v, id); err != nil {
				return wrapErr(fmt.Sprintf("import %s %d: set %s", k.Name, id, c), err)
			}
		}
	}
	return nil
}

// FinishImport recomputes the realm's upload total and, on PostgreSQL,
// the planner's statistics of the tables it wrote: after a large import
// into a new database they would otherwise describe empty tables until
// autovacuum's first ANALYZE, and every query would be planned as if
// they were (an export right after an import took 2 minutes instead of
// 21 s for 1,000,000 messages). ANALYZE runs inside the transaction and
// blocks neither reads nor writes.
func (s *Store) FinishImport(ctx context.Context, realmID int64) error {
	op := fmt.Sprintf("finish import of realm %d", realmID)
	_, err := s.w.ExecContext(ctx, "UPDATE realms SET upload_bytes = COALESCE((SELECT SUM(a.size) FROM attachments a WHERE a.realm_id = realms.id), 0) WHERE id = ?", realmID)
	if err != nil || s.ops.name != DialectPostgres {
		return wrapErr(op, err)
	}
	tables := make([]string, len(storage.Kinds))
	for i, k := range storage.Kinds {
		tables[i] = quoteIdent(k.Name)
	}
	_, err = s.w.ExecContext(ctx, "ANALYZE "+strings.Join(tables, ", "))
	return wrapErr(op, err)
}
