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
	name: DialectSQLite,
	ddl: strings.NewReplacer(
		"{{ID}}", "INTEGER PRIMARY KEY AUTOINCREMENT",
	),
	lockRealm: func(context.Context, bun.IDB, int64) error { return nil },
	bytewise:  func(expr string) string { return expr },
}
