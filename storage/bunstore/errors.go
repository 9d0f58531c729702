package bunstore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/teamchat/chat/storage"
)

// This file is the one place where driver errors are translated.
//
//	no rows                        -> storage.ErrNotFound
//	unique / primary key violation -> storage.ErrConflict
//	foreign key violation          -> storage.ErrNotFound (a referenced row,
//	                                  of this realm, does not exist)
//	anything else                  -> wrapped with the operation's name
//
// The translated errors wrap the storage sentinel, not the driver error, so
// callers can match them with errors.Is and never see driver types.

// PostgreSQL SQLSTATE codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
)

type errKind int

const (
	kindOther errKind = iota
	kindNotFound
	kindConflict
)

// dialectClassifiers recognise one driver's errors each (ok false: not
// that driver's). The SQLite one is registered by sqlite.go, which a
// PostgreSQL-only build (-tags nosqlite) leaves out with its cgo driver.
var dialectClassifiers []func(error) (kind errKind, ok bool)

func classify(err error) errKind {
	if errors.Is(err, sql.ErrNoRows) {
		return kindNotFound
	}
	for _, c := range dialectClassifiers {
		if kind, ok := c(err); ok {
			return kind
		}
	}
	var pe pgdriver.Error
	if errors.As(err, &pe) {
		switch pe.Field('C') {
		case pgUniqueViolation:
			return kindConflict
		case pgForeignKeyViolation:
			return kindNotFound
		}
	}
	return kindOther
}

// wrapErr translates err from the operation op (nil stays nil).
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	switch classify(err) {
	case kindNotFound:
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("bunstore: %s: %w", op, storage.ErrNotFound)
		}
		return fmt.Errorf("bunstore: %s: %w (%v)", op, storage.ErrNotFound, err)
	case kindConflict:
		return fmt.Errorf("bunstore: %s: %w (%v)", op, storage.ErrConflict, err)
	}
	return fmt.Errorf("bunstore: %s: %w", op, err)
}

// notFound is the error for a lookup that matched no row of the realm.
func notFound(op string) error {
	return fmt.Errorf("bunstore: %s: %w", op, storage.ErrNotFound)
}
