//go:build nosqlite

package bunstore

import (
	"context"
	"errors"
)

// OpenSQLite is not available in a PostgreSQL-only build (-tags nosqlite,
// which needs no cgo).
func OpenSQLite(ctx context.Context, path string) (*Store, error) {
	return nil, errors.New("bunstore: this build has no SQLite (built with -tags nosqlite): use a postgres:// DSN")
}
