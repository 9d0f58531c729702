package bunstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// FirstUnreadMessage finds the oldest unread message of the window's
// spans and conversations matching its filter. Its cost follows the read
// ranges and the unread messages, not the history: in each span it seeks
// the first matching message, jumps over the read range that covers it,
// and seeks again; direct messages come from the index of unread ones.
func (s *Store) FirstUnreadMessage(ctx context.Context, w storage.MessageWindow) (int64, error) {
	op := fmt.Sprintf("first unread message of user %d in realm %d", w.UserID, w.RealmID)
	best := int64(0)
	if !w.Filter.DirectOnly {
		for _, sp := range w.Scope.Spans {
			hi := int64(1) << 62
			if sp.Through != nil {
				hi = *sp.Through
			}
			ranges, err := s.ListReadRanges(ctx, w.RealmID, w.UserID, sp.StreamID, sp.After+1, hi)
			if err != nil {
				return 0, err
			}
			one := w
			one.Scope = storage.MessageScope{Spans: []storage.ChannelSpan{sp}}
			candidate := sp.After
			for {
				rows, err := s.firstInSpan(ctx, one, candidate, best)
				if err != nil {
					return 0, wrapErr(op, err)
				}
				if len(rows) == 0 {
					break
				}
				id := rows[0].ID
				covered := false
				for _, r := range ranges {
					if r.FirstID <= id && id <= r.LastID {
						candidate, covered = r.LastID, true
						break
					}
				}
				if !covered {
					best = id
					break
				}
			}
		}
	}
	// Channel messages one never received but marked unread, and direct
	// messages: the oldest unread row of each kind (partial indexes).
	if w.Scope.Historical && !w.Filter.DirectOnly {
		id, err := s.firstUnreadRow(ctx, w, storage.MessageScope{Historical: true}, "(hu.flags & 3073) = 1024", best)
		if err != nil {
			return 0, wrapErr(op, err)
		}
		if id != 0 {
			best = id
		}
	}
	if w.Scope.Direct && !w.Filter.ChannelOnly && w.Filter.StreamID == nil && w.Filter.Topic == nil {
		id, err := s.firstUnreadRow(ctx, w, storage.MessageScope{Direct: true}, "(hu.flags & 2049) = 2048", best)
		if err != nil {
			return 0, wrapErr(op, err)
		}
		if id != 0 {
			best = id
		}
	}
	return best, nil
}

// firstInSpan reads the oldest message of one's one span after
// candidate (and before best, unless 0) whose sender the reader did not
// mute: arm by arm on PostgreSQL where the filter allows it.
func (s *Store) firstInSpan(ctx context.Context, one storage.MessageWindow, candidate, best int64) ([]messageRow, error) {
	if s.ops.name == DialectPostgres && armsWindow(one.Filter) {
		hi := noBound
		if best != 0 {
			hi = best - 1
		}
		return s.listArms(ctx, one, windowSide{lo: candidate, hi: hi, limit: 1,
			extra: []sqlCond{{notMutedSender, []any{one.UserID}}}})
	}
	var rows []messageRow
	q, idCol := s.windowQuery(one, &rows, &params{})
	q = q.Where("? > ?", bun.Safe(idCol), candidate).Where(notMutedSender, one.UserID)
	if best != 0 {
		q = q.Where("? < ?", bun.Safe(idCol), best)
	}
	err := q.OrderExpr("? ASC", bun.Safe(idCol)).Limit(1).Scan(ctx)
	return rows, err
}

// firstUnreadRow is the oldest message of the window's filter in scope
// whose reader's row meets cond (a partial index's predicate on hu.flags),
// older than best when best is not 0; 0 when there is none.
func (s *Store) firstUnreadRow(ctx context.Context, w storage.MessageWindow, scope storage.MessageScope, cond string, best int64) (int64, error) {
	one := w
	one.Scope = scope
	var rows []messageRow
	q, idCol := s.windowQuery(one, &rows, &params{})
	if s.ops.name == DialectPostgres {
		// The unread rows drive the query, in their index's order (see
		// rowDriven): PostgreSQL might otherwise walk the messages.
		q = q.ModelTableExpr(rowDriven).Where("hu.realm_id = ?", w.RealmID).Where("hu.user_id = ?", w.UserID).
			Where(cond).Where(notMutedSender, w.UserID)
		idCol = "hu.message_id"
	} else {
		q = q.Where(`m.id IN (SELECT hu.message_id FROM user_messages AS hu
		WHERE hu.realm_id = ? AND hu.user_id = ? AND `+cond+`)`, w.RealmID, w.UserID).Where(notMutedSender, w.UserID)
	}
	if best != 0 {
		q = q.Where("? < ?", bun.Safe(idCol), best)
	}
	if err := q.OrderExpr("? ASC", bun.Safe(idCol)).Limit(1).Scan(ctx); err != nil || len(rows) == 0 {
		return 0, err
	}
	return rows[0].ID, nil
}
