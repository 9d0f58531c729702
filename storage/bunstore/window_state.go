package bunstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/teamchat/chat/storage"
)

// A window of history with its reader's state.
//
// Showing a window to its reader takes, besides the messages (which the
// Service caches), the reader's row of each message (its flags) and
// whether a read range covers each channel message. Read apart, those
// were two more statements after the window's, and on PostgreSQL two
// more round trips. There one statement now reads all three: the
// window's query (one query, or its arms) as a materialized CTE of IDs
// and channels, then, in the same answer, the reader's rows of those IDs
// (bounded by the window's span, as ListUserMessages reads them) and the
// reader's read ranges of the window's channels that meet its span, each
// row marked by its kind; the coverage is worked out here. (Each
// message's row and range by a correlated subquery cost 0.34 ms of
// PostgreSQL's time for a window of 101 on the seeded organization of a
// million messages, against 0.21 ms so: per-row subplans are dear.)
//
// SQLite has no round trip to save, and there the statements cost less
// apart than together: on the same organization a channel's newest 101
// with both correlated subqueries took 140 µs, the window alone 46 µs,
// the reader's rows of its IDs (a list, one seek each) 38 µs, and the
// read ranges of its channels 9 µs. So on SQLite the three run apart,
// each scanned by hand.

// ListMessageWindowState reads each side of the window with its
// reader's state: on PostgreSQL in one statement per side (the window's
// query as ListMessageWindow makes it, returning IDs and channels, with
// the rows and ranges of what it returns), on SQLite in three (the
// window, then the rows and the read ranges of both sides).
func (s *Store) ListMessageWindowState(ctx context.Context, w storage.MessageWindow) (older, newer []storage.WindowMessage, err error) {
	op := fmt.Sprintf("message window of user %d in realm %d", w.UserID, w.RealmID)
	w.IDsOnly = true
	side := s.windowStateSide
	if s.ops.name != DialectPostgres {
		side = s.windowIDsSide
	}
	if older, err = side(ctx, w, true); err != nil {
		return nil, nil, wrapErr(op, err)
	}
	if w.After > 0 {
		if newer, err = side(ctx, w, false); err != nil {
			return nil, nil, wrapErr(op, err)
		}
	}
	if s.ops.name != DialectPostgres {
		if err := s.readState(ctx, w.RealmID, w.UserID, older, newer); err != nil {
			return nil, nil, wrapErr(op, err)
		}
	}
	return nonNil(older), nonNil(newer), nil
}

// windowStateSide reads the older side of w (ascending), or the newer
// one, with the reader's state, in one statement (PostgreSQL).
func (s *Store) windowStateSide(ctx context.Context, w storage.MessageWindow, older bool) ([]storage.WindowMessage, error) {
	p := s.windowParams(w)
	var inner string
	if armsWindow(w.Filter) {
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
	// The user's rows as row comparisons led by the user, bounded by the
	// window's span (the index of messages may serve the list instead);
	// the ranges of the window's channels that meet its span.
	text := "WITH w AS MATERIALIZED (" + inner + ")\n" + s.r.NewRaw(`SELECT 0 AS kind, w.id, w.stream_id, 0::bigint, 0::bigint FROM w
UNION ALL
SELECT 1, um.message_id, NULL::bigint, um.flags, 0 FROM user_messages AS um
	WHERE um.realm_id = ? AND (um.user_id, um.message_id) >= (?, (SELECT min(id) FROM w))
		AND (um.user_id, um.message_id) <= (?, (SELECT max(id) FROM w)) AND um.message_id = ANY(ARRAY(SELECT id FROM w))
UNION ALL
SELECT 2, rr.first_id, rr.stream_id, 0, rr.last_id FROM read_ranges AS rr
	WHERE rr.realm_id = ? AND rr.user_id = ? AND rr.stream_id = ANY(ARRAY(SELECT DISTINCT stream_id FROM w WHERE stream_id IS NOT NULL))
		AND rr.first_id <= (SELECT max(id) FROM w) AND rr.last_id >= (SELECT min(id) FROM w)`,
		p.v(w.RealmID), p.v(w.UserID), p.v(w.UserID), p.v(w.RealmID), p.v(w.UserID)).String()
	var out []storage.WindowMessage
	flags := map[int64]int64{}
	var ranges []storage.ReadRange
	err := s.scanRows(ctx, text, p, func(rows *sql.Rows) error {
		var kind int
		var id, f, last int64
		var sid sql.NullInt64
		if err := rows.Scan(&kind, &id, &sid, &f, &last); err != nil {
			return err
		}
		switch kind {
		case 0:
			m := storage.WindowMessage{ID: id}
			if sid.Valid {
				m.StreamID = &sid.Int64
			}
			out = append(out, m)
		case 1:
			flags[id] = f
		default:
			ranges = append(ranges, storage.ReadRange{StreamID: sid.Int64, FirstID: id, LastID: last})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		m := &out[i]
		m.Flags, m.HasRow = flags[m.ID]
		m.InReadRange = m.StreamID != nil && covered(ranges, *m.StreamID, m.ID)
	}
	slices.SortFunc(out, func(a, b storage.WindowMessage) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// covered reports whether one of the ranges of the channel covers id.
func covered(ranges []storage.ReadRange, streamID, id int64) bool {
	for _, r := range ranges {
		if r.StreamID == streamID && r.FirstID <= id && id <= r.LastID {
			return true
		}
	}
	return false
}

// windowIDsSide reads the IDs and channels of the older side of w
// (ascending), or of the newer one.
func (s *Store) windowIDsSide(ctx context.Context, w storage.MessageWindow, older bool) ([]storage.WindowMessage, error) {
	p := s.windowParams(w)
	text := s.windowSideQuery(w, older, p, &[]messageRow{}, "m.id, m.stream_id").String()
	var out []storage.WindowMessage
	err := s.scanRows(ctx, text, p, func(rows *sql.Rows) error {
		var r storage.WindowMessage
		var sid sql.NullInt64
		if err := rows.Scan(&r.ID, &sid); err != nil {
			return err
		}
		if sid.Valid {
			r.StreamID = &sid.Int64
		}
		out = append(out, r)
		return nil
	})
	if older {
		slices.Reverse(out)
	}
	return out, err
}

// readState fills in the reader's state of the messages of both sides:
// their rows, by ID, and their channels' read ranges over the messages'
// span.
func (s *Store) readState(ctx context.Context, realmID, userID int64, sides ...[]storage.WindowMessage) error {
	byID := map[int64]*storage.WindowMessage{}
	var ids, channels []int64
	lo, hi := int64(0), int64(0)
	for _, side := range sides {
		for i := range side {
			m := &side[i]
			byID[m.ID] = m
			ids = append(ids, m.ID)
			if m.StreamID == nil {
				continue
			}
			if !slices.Contains(channels, *m.StreamID) {
				channels = append(channels, *m.StreamID)
			}
			if lo == 0 || m.ID < lo {
				lo = m.ID
			}
			hi = max(hi, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	// Each value is added to p in the order of the text (SQLite's
	// placeholders are positional).
	p := s.params()
	realm, user := p.v(realmID), p.v(userID)
	cond, list := p.in("message_id", ids)
	text := s.r.NewRaw("SELECT message_id, flags FROM user_messages WHERE realm_id = ? AND user_id = ? AND "+cond,
		realm, user, list).String()
	err := s.scanRows(ctx, text, p, func(rows *sql.Rows) error {
		var id, flags int64
		if err := rows.Scan(&id, &flags); err != nil {
			return err
		}
		if m := byID[id]; m != nil {
			m.Flags, m.HasRow = flags, true
		}
		return nil
	})
	if err != nil || len(channels) == 0 {
		return err
	}
	p = s.params()
	realm, user = p.v(realmID), p.v(userID)
	cond, list = p.in("stream_id", channels)
	text = s.r.NewRaw("SELECT stream_id, first_id, last_id FROM read_ranges WHERE realm_id = ? AND user_id = ? AND "+cond+
		" AND first_id <= ? AND last_id >= ?", realm, user, list, p.v(hi), p.v(lo)).String()
	var ranges []storage.ReadRange
	if err := s.scanRows(ctx, text, p, func(rows *sql.Rows) error {
		var r storage.ReadRange
		if err := rows.Scan(&r.StreamID, &r.FirstID, &r.LastID); err != nil {
			return err
		}
		ranges = append(ranges, r)
		return nil
	}); err != nil {
		return err
	}
	for _, m := range byID {
		m.InReadRange = m.StreamID != nil && covered(ranges, *m.StreamID, m.ID)
	}
	return nil
}
