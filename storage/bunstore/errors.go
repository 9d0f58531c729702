package bunstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/teamchat/chat/storage"
)

// This file is the one place where driver errors are translated.
//
//	no rows                        -> storage.ErrNotFound
//	unique / primary key violation -> storage.ErrConflict
//	foreign key violation          -> storage.ErrNotFound (a referenced row,
//	                                  of this realm, does not exist)
//	no connection to the database  -> storage.ErrUnavailable (refused, reset
//	                                  or timed out, the server shutting down)
//	anything else                  -> wrapped with the operation's name
//
// The translated errors wrap the storage sentinel, not the driver error, so
// callers can match them with errors.Is and never see driver types.

// PostgreSQL SQLSTATE codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
	pgDeadlockDetected    = "40P01"
)

// isDeadlock reports whether PostgreSQL aborted the statement to break a
// deadlock (nothing of it was done).
func isDeadlock(err error) bool {
	var pe pgdriver.Error
	return errors.As(err, &pe) && pe.Field('C') == pgDeadlockDetected
}

type errKind int

const (
	kindOther errKind = iota
	kindNotFound
	kindConflict
	kindUnavailable
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
		switch code := pe.Field('C'); {
		case code == pgUniqueViolation:
			return kindConflict
		case code == pgForeignKeyViolation:
			return kindNotFound
		case strings.HasPrefix(code, "08"), // connection exception
			code == "57P01", code == "57P02", code == "57P03": // shutting down, starting up
			return kindUnavailable
		}
		return kindOther
	}
	if unreachable(err) {
		return kindUnavailable
	}
	return kindOther
}

// unreachable reports a failure to talk to the database server (not the
// caller's own cancellation or deadline).
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
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
	case kindUnavailable:
		return fmt.Errorf("bunstore: %s: %w (%v)", op, storage.ErrUnavailable, err)
	}
	return fmt.Errorf("bunstore: %s: %w", op, err)
}

// notFound is the error for a lookup that matched no row of the realm.
func notFound(op string) error {
	return fmt.Errorf("bunstore: %s: %w", op, storage.ErrNotFound)
}
