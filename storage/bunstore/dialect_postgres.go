package bunstore

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
)

// realmLockSpace is the first key of the realms' advisory locks (the
// second is the realm ID), so that they cannot collide with the host
// program's own advisory locks unless it picks the same number.
const realmLockSpace = 7412

// postgresOps: PostgreSQL runs write transactions concurrently at READ
// COMMITTED, so a realm's checks and the writes they protect are
// serialized by a transaction-scoped advisory lock on the realm; text
// sorts by the database's collation unless told COLLATE "C".
var postgresOps = &dialectOps{
	name: DialectPostgres,
	ddl: strings.NewReplacer(
		"{{ID}}", "BIGSERIAL PRIMARY KEY",
	),
	lockRealm: func(ctx context.Context, tx bun.IDB, realmID int64) error {
		_, err := tx.NewRaw("SELECT pg_advisory_xact_lock(?, ?)", realmLockSpace, int32(realmID)).Exec(ctx)
		return err
	},
	bytewise: func(expr string) string { return expr + ` COLLATE "C"` },
}
