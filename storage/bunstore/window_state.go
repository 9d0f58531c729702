package bunstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/teamchat/chat/storage"
)

// A window of history with its reader's state, in one statement.
//
// Showing a window to its reader takes, besides the messages (which the
// Service caches), the reader's row of each message (its flags) and
// whether a read range covers each channel message. Read apart, those
// were two more statements after the window's: on PostgreSQL two more
// round trips, on SQLite two more statements to step and scan. Here the
// window's query (one query, or its arms on PostgreSQL) is a subquery of
// IDs and channels, and each of its rows gets its state from two
// correlated subqueries, one index seek each: the row by the reader's
// primary key (realm, user, message), and the read range that could
// cover the message, the reader's range of its channel with the greatest
// first ID at most the message's (the ranges of a channel never overlap,
// so no other can), read backwards on the ranges' primary key.

// stateColumns are the columns of a window's rows (the subquery w, of
// id and stream_id) with the reader's state. Their text comes before the
// window's, so their values must be the first of p (SQLite's
// placeholders are positional).
func (s *Store) stateColumns(w storage.MessageWindow, p *params) string {
	realm, user := p.v(w.RealmID), p.v(w.UserID)
	row, rowArgs := "um.realm_id = ? AND um.user_id = ? AND um.message_id = w.id", []any{realm, user}
	if s.ops.name == DialectPostgres {
		// The user and the message as row comparisons led by the user,
		// which only the primary key can take: without statistics
		// PostgreSQL took the message's index and read every user's row
		// of the message. ($n may stand twice.)
		row = "um.realm_id = ? AND (um.user_id, um.message_id) >= (?, w.id) AND (um.user_id, um.message_id) <= (?, w.id)"
		rowArgs = append(rowArgs, user)
	}
	args := append(rowArgs, p.v(w.RealmID), p.v(w.UserID))
	return s.r.NewRaw(`w.id, w.stream_id,
	(SELECT um.flags FROM user_messages AS um WHERE `+row+`) AS reader_flags,
	(SELECT rr.last_id FROM read_ranges AS rr
		WHERE rr.realm_id = ? AND rr.user_id = ? AND rr.stream_id = w.stream_id AND rr.first_id <= w.id
		ORDER BY rr.first_id DESC LIMIT 1) AS read_last`, args...).String()
}

// ListMessageWindowState reads each side of the window in one statement:
// the window's query as ListMessageWindow makes it, returning IDs and
// channels, inside the query of their reader's state.
func (s *Store) ListMessageWindowState(ctx context.Context, w storage.MessageWindow) (older, newer []storage.WindowMessage, err error) {
	op := fmt.Sprintf("message window of user %d in realm %d", w.UserID, w.RealmID)
	w.IDsOnly = true
	if older, err = s.windowStateSide(ctx, w, true); err != nil {
		return nil, nil, wrapErr(op, err)
	}
	if w.After > 0 {
		if newer, err = s.windowStateSide(ctx, w, false); err != nil {
			return nil, nil, wrapErr(op, err)
		}
	}
	return nonNil(older), nonNil(newer), nil
}

// windowStateSide reads the older side of w (ascending), or the newer one.
func (s *Store) windowStateSide(ctx context.Context, w storage.MessageWindow, older bool) ([]storage.WindowMessage, error) {
	p := s.windowParams(w)
	cols := s.stateColumns(w, p)
	var inner string
	if s.ops.name == DialectPostgres && armsWindow(w.Filter) {
		side := windowSide{lo: 0, hi: w.Anchor, desc: true, limit: max(w.Before, 0) + 1, stream: "m.stream_id"}
		if !older {
			side = windowSide{lo: w.Anchor, hi: noBound, limit: w.After + 1, stream: "m.stream_id"}
		}
		if inner = s.armsQuery(w, side, p); inner == "" {
			return nil, nil
		}
	} else {
		inner = s.windowSideQuery(w, older, p, &[]messageRow{}, "m.id, m.stream_id").String()
	}
	// The subquery's order is not the statement's: the rows are sorted
	// here (by ID: ascending, as both sides are returned).
	text := "SELECT " + cols + " FROM (" + inner + ") AS w"
	var out []storage.WindowMessage
	err := s.scanRows(ctx, text, p, func(rows *sql.Rows) error {
		var r storage.WindowMessage
		var sid, flags, readLast sql.NullInt64
		if err := rows.Scan(&r.ID, &sid, &flags, &readLast); err != nil {
			return err
		}
		if sid.Valid {
			r.StreamID = &sid.Int64
			r.InReadRange = readLast.Valid && readLast.Int64 >= r.ID
		}
		r.Flags, r.HasRow = flags.Int64, flags.Valid
		out = append(out, r)
		return nil
	})
	slices.SortFunc(out, func(a, b storage.WindowMessage) int { return cmp.Compare(a.ID, b.ID) })
	return out, err
}
