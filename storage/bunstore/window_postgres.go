package bunstore

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Windows of history on PostgreSQL, read arm by arm.
//
// One query whose scope is an OR of channels, spans, historical rows and
// conversations leaves PostgreSQL's planner a choice it can only make
// with statistics: walk the organization's ID index from the anchor and
// filter, or gather every message in scope and sort. Without statistics
// (a database created or filled minutes ago) it guesses the scope small
// and sorts the whole history of every channel in it. So on PostgreSQL a
// window whose filter most messages pass is read per arm of its scope,
// each arm a scan that only one index can give in ID order and that
// stops at the window's size:
//
//   - channels (spans, whole channels, the public ones): a LATERAL
//     subquery per channel on messages_stream_cover_idx, or, when the
//     window is of one topic, on messages_stream_topic_idx;
//   - historical rows: the reader's user_messages_historical_idx, joined
//     to their messages by key;
//   - direct messages: a LATERAL subquery per conversation of the reader
//     on messages_conversation_idx;
//
// merged by ID (DISTINCT ON, as an arm may repeat another's message),
// after a first pass that bounds the scans of readers with many channels
// or conversations (lateralArm).
// Each arm's equality columns are those of its index's prefix, and its
// ID bounds are written so that no other index can take them: the bound
// where the scan starts is a plain comparison on the ID, the far one a
// row comparison led by the last equality column ((m.stream_id, m.id) >
// (sid, lo)), which only an index with that column just before the ID can
// use. PostgreSQL takes a pair of plain comparisons on one column for a
// narrow range (0.5% of the rows without statistics), and the
// organization's (realm_id, id) index would then look as good as the
// channel's. The cost of a window is then at most its size per arm: a
// reader's channels and conversations, not the organization's history.
// Windows with a search, a condition few messages meet (a sender,
// starred, unread, ...), or a negation that may fail every message of an
// arm (in:home's muted channels and topics, a sender), keep the single
// query (windowQuery): read arm by arm, such an arm would be read whole;
// those are planned with statistics (see analyze_postgres.go).

// armsWindow reports whether the window's filter keeps most messages of
// each arm, so that reading arm by arm stops early. A negation qualifies
// only where it leaves out a whole channel (which then has no arm) or
// one topic of one: excluding muted topics and channels (in:home), a
// sender, or what few messages are (not starred, ...) may leave an arm
// whose every message fails, read whole.
func armsWindow(f storage.MessageFilter) bool {
	if f.Search != "" || f.IDs != nil || f.SenderID != nil || f.Starred || f.Mentioned || f.Unread || f.Alerted ||
		f.Resolved || f.Followed || f.MutedTopic || f.Muted || f.HasLink || f.HasImage || f.HasAttachment ||
		f.HasReaction || len(f.IncludingUserIDs) > 0 || f.GroupDMOnly || len(f.NotSenderIDs) > 0 {
		return false
	}
	for _, n := range f.Not {
		if _, ok := excludedChannel(n); ok {
			continue
		}
		if n.StreamID == nil || n.Topic == nil || !reflect.DeepEqual(n, storage.MessageFilter{StreamID: n.StreamID, Topic: n.Topic}) {
			return false
		}
	}
	return true
}

// excludedChannel is the channel a negated filter leaves out whole, if
// it names only that.
func excludedChannel(n storage.MessageFilter) (int64, bool) {
	if n.StreamID == nil || !reflect.DeepEqual(n, storage.MessageFilter{StreamID: n.StreamID}) {
		return 0, false
	}
	return *n.StreamID, true
}

// listWindowArms is ListMessageWindow read arm by arm.
func (s *Store) listWindowArms(ctx context.Context, w storage.MessageWindow) (older, newer []storage.Message, err error) {
	op := fmt.Sprintf("message window of user %d in realm %d", w.UserID, w.RealmID)
	rows, err := s.listArms(ctx, w, windowSide{lo: 0, hi: w.Anchor, desc: true, limit: max(w.Before, 0) + 1})
	if err != nil {
		return nil, nil, wrapErr(op, err)
	}
	for i := len(rows) - 1; i >= 0; i-- {
		older = append(older, rows[i].Message)
	}
	if w.After > 0 {
		rows, err := s.listArms(ctx, w, windowSide{lo: w.Anchor, hi: noBound, limit: w.After + 1})
		if err != nil {
			return nil, nil, wrapErr(op, err)
		}
		for _, r := range rows {
			newer = append(newer, r.Message)
		}
	}
	return nonNil(older), nonNil(newer), nil
}

// noBound is above every message ID.
const noBound = int64(1) << 62

// windowSide is one side of a window read arm by arm: the messages in
// scope matching the filter with lo < ID <= hi, the limit newest (desc)
// or oldest, newest first when desc. extra are more conditions on m,
// each with its arguments.
type windowSide struct {
	lo, hi int64
	desc   bool
	limit  int
	extra  []sqlCond
	// floor, when set, is an SQL expression that bounds the IDs further
	// on the far side (from below when desc, else from above): see
	// lateralArm.
	floor string
	// stream, when set, is the expression of the channel's ID that a
	// query of IDs returns beside them (m.stream_id, or NULL for the
	// arm of direct messages, which no index of theirs holds).
	stream string
}

// sqlCond is a condition with its arguments.
type sqlCond struct {
	expr string
	args []any
}

// listArms reads one side of w.
func (s *Store) listArms(ctx context.Context, w storage.MessageWindow, side windowSide) ([]messageRow, error) {
	p := s.windowParams(w)
	var rows []messageRow
	text := s.armsQuery(w, side, p)
	if text == "" {
		return rows, nil
	}
	err := s.scan(ctx, s.r.NewRaw("?", bun.Safe(text)), p, &rows)
	return rows, err
}

// armsQuery is the query of one side of w read arm by arm ("" when no
// arm can hold a message).
func (s *Store) armsQuery(w storage.MessageWindow, side windowSide, p *params) string {
	w.Scope, _ = scopeOf(w.Scope, w.Filter)
	var arms []string
	if a := s.channelArm(w, side, p); a != "" {
		arms = append(arms, a)
	}
	if a := s.historicalArm(w, side, p); a != "" {
		arms = append(arms, a)
	}
	if a := s.directArm(w, side, p); a != "" {
		arms = append(arms, a)
	}
	if len(arms) == 0 || side.limit <= 0 {
		return ""
	}
	order := " ASC"
	if side.desc {
		order = " DESC"
	}
	return "SELECT DISTINCT ON (x.id) x.* FROM (" + strings.Join(arms, " UNION ALL ") + ") AS x ORDER BY x.id" + order +
		" LIMIT " + strconv.Itoa(side.limit)
}

// armQuery is a query of w's messages (or their IDs) with side's
// filter, order and limit and the conditions of its arm; from replaces
// its FROM (messages AS m) when not empty, order names its order's
// column (m.id unless another index orders the arm).
func (s *Store) armQuery(w storage.MessageWindow, f storage.MessageFilter, side windowSide, p *params, from, order string, conds []sqlCond) string {
	q := s.r.NewSelect().Model((*messageRow)(nil))
	if from != "" {
		q = q.ModelTableExpr(from)
	}
	if w.IDsOnly {
		q = q.ColumnExpr("m.id")
		if side.stream != "" {
			q = q.ColumnExpr(side.stream)
		}
	}
	for _, c := range append(conds, side.extra...) {
		q = q.Where(c.expr, c.args...)
	}
	q, _ = s.applyFilter(q, w, f, false, p)
	if side.desc {
		order += " DESC"
	} else {
		order += " ASC"
	}
	return q.OrderExpr(order).Limit(side.limit).String()
}

// bounds are the ID conditions of an arm whose last equality column is
// key (equal to keyVal) and whose span is lo < ID <= hi: the near bound
// plain, the far one a row comparison led by key (with the side's floor,
// if any), left out when it bounds nothing (lo 0, hi noBound, no floor).
// keyVal, lo and hi give the values when they are used (a placeholder,
// or a column of the arm's driver).
func (side windowSide) bounds(idCol, key string, keyVal, lo, hi func() any, loIsZero, hiIsNone bool) []sqlCond {
	row := "(" + key + ", " + idCol + ")"
	if side.desc {
		out := []sqlCond{{idCol + " <= ?", []any{hi()}}}
		switch {
		case side.floor != "":
			out = append(out, sqlCond{row + " >= (?, greatest(?::bigint + 1, ?))", []any{keyVal(), lo(), bun.Safe(side.floor)}})
		case !loIsZero:
			out = append(out, sqlCond{row + " > (?, ?)", []any{keyVal(), lo()}})
		}
		return out
	}
	out := []sqlCond{{idCol + " > ?", []any{lo()}}}
	switch {
	case side.floor != "":
		out = append(out, sqlCond{row + " <= (?, least(?::bigint, ?))", []any{keyVal(), hi(), bun.Safe(side.floor)}})
	case !hiIsNone:
		out = append(out, sqlCond{row + " <= (?, ?)", []any{keyVal(), hi()}})
	}
	return out
}

// lateralArm reads an arm one LATERAL subquery per row of its driver
// (from, with where: "" or a WHERE clause), each subquery built by arm
// for a side (IDs only when idsOnly). A window of n messages could read
// n per driver row (per channel, per conversation); when there may be
// several rows and n > 1, a first pass takes each row's first message in
// the side's order, and the n-th of those, counted once each (the floor:
// n messages lie on its near side, so the window's n all do, whatever
// the filter; two rows, a channel's span and the channel as public, may
// give the same first message) bounds the scans of the second: a reader with
// many channels or conversations reads about two seeks per row and the
// window, not n per row. With fewer than n rows the floor is NULL, which
// greatest() and least() pass over.
func (s *Store) lateralArm(side windowSide, from, where string, many bool, arm func(side windowSide, idsOnly bool) string) string {
	if !many || side.limit <= 1 {
		return "(SELECT y.* FROM " + from + " CROSS JOIN LATERAL (" + arm(side, false) + ") AS y" + where + ")"
	}
	first := side
	first.limit, first.stream = 1, ""
	order := "ASC"
	if side.desc {
		order = "DESC"
	}
	floor := "(SELECT DISTINCT t.id FROM " + from + " CROSS JOIN LATERAL (" + arm(first, true) + ") AS t" + where +
		" ORDER BY t.id " + order + " OFFSET " + strconv.Itoa(side.limit-1) + " LIMIT 1)"
	// The floor is a one-row table joined first, not a subquery of the
	// LATERAL one: there PostgreSQL computes it once but costs it once
	// per driver row, and a reader with 200 conversations made the
	// estimate large enough to compile the statement (JIT), for seconds.
	side.floor = "fl.floor"
	return "(SELECT y.* FROM (SELECT " + floor + " AS floor) AS fl CROSS JOIN " + from + " CROSS JOIN LATERAL (" +
		arm(side, false) + ") AS y" + where + ")"
}

// channelArm reads the scope's channels, one LATERAL subquery each: the
// spans and whole channels as arrays of (channel, lo, hi), the public
// channels from streams.
func (s *Store) channelArm(w storage.MessageWindow, side windowSide, p *params) string {
	f := w.Filter
	if f.DirectOnly || f.ConversationID != nil {
		return ""
	}
	sc := w.Scope
	// Channels the filter leaves out have no arm.
	excluded := slices.Clone(f.NotStreamIDs)
	for _, n := range f.Not {
		if id, ok := excludedChannel(n); ok {
			excluded = append(excluded, id)
		}
	}
	var sids, los, his []int64
	add := func(sid, after int64, through *int64) {
		if f.StreamID != nil && *f.StreamID != sid || slices.Contains(excluded, sid) {
			return
		}
		lo, hi := max(after, side.lo), side.hi
		if through != nil {
			hi = min(hi, *through)
		}
		if lo < hi {
			sids, los, his = append(sids, sid), append(los, lo), append(his, hi)
		}
	}
	full := uniqueIDs(sc.FullChannels)
	for _, id := range full {
		add(id, 0, nil)
	}
	for _, sp := range sc.Spans {
		if !slices.Contains(full, sp.StreamID) { // within the whole channel
			add(sp.StreamID, sp.After, sp.Through)
		}
	}
	var driver []string
	if len(sids) > 0 {
		// A VALUES list, not arrays: PostgreSQL counts its rows the same
		// in the statement's generic plan as in the plan for the values
		// at hand, so after five runs it keeps the generic one; with
		// arrays, the generic plan guessed ten spans, cost more than any
		// custom plan, and the statement was planned again on every run.
		args := make([]any, 0, 3*len(sids))
		for i := range sids {
			args = append(args, p.v(sids[i]), p.v(los[i]), p.v(his[i]))
		}
		driver = append(driver, s.r.NewRaw("VALUES "+s.ops.values(len(sids), "bigint", "bigint", "bigint"), args...).String())
	}
	if sc.PublicChannels && side.lo < side.hi {
		public := "SELECT st.id, ?::bigint, ?::bigint FROM streams AS st WHERE st.realm_id = ? AND NOT st.invite_only AND st.history_public_to_subscribers"
		args := []any{p.v(side.lo), p.v(side.hi), p.v(w.RealmID)}
		if f.StreamID != nil {
			public += " AND st.id = ?"
			args = append(args, p.v(*f.StreamID))
		}
		if len(excluded) > 0 {
			cond, ids := p.notIn("st.id", uniqueIDs(excluded))
			public += " AND " + cond
			args = append(args, ids)
		}
		driver = append(driver, s.r.NewRaw(public, args...).String())
	}
	if len(driver) == 0 {
		return ""
	}
	// The channel (and the topic) are the arm's keys, not filters: as
	// equality conditions of their own they would let the
	// organization's ID index serve the arm's order too.
	inner := f
	inner.StreamID, inner.Topic = nil, nil
	col := func(name string) func() any { return func() any { return bun.Safe(name) } }
	arm := func(side windowSide, idsOnly bool) string {
		conds := []sqlCond{{"m.realm_id = ?", []any{p.v(w.RealmID)}}, {"m.stream_id = g.sid", nil}}
		key, keyVal := "m.stream_id", col("g.sid")
		if f.Topic != nil {
			topic := p.v(storage.Fold(*f.Topic))
			conds = append(conds, sqlCond{"m.topic_key = ?", []any{topic}})
			key, keyVal = "m.topic_key", func() any { return topic }
		}
		conds = append(conds, side.bounds("m.id", key, keyVal, col("g.lo"), col("g.hi"), false, false)...)
		one := w
		one.IDsOnly = one.IDsOnly || idsOnly
		return s.armQuery(one, inner, side, p, "", "m.id", conds)
	}
	from := "(" + strings.Join(driver, " UNION ALL ") + ") AS g (sid, lo, hi)"
	return s.lateralArm(side, from, "", len(sids) > 1 || len(driver) > 1, arm)
}

// historicalArm reads the channel messages the reader has a historical
// row for, from their newest row in the side's direction: the rows'
// index orders the arm.
func (s *Store) historicalArm(w storage.MessageWindow, side windowSide, p *params) string {
	f := w.Filter
	if !w.Scope.Historical || f.DirectOnly || f.ConversationID != nil || side.lo >= side.hi {
		return ""
	}
	conds := []sqlCond{
		{"hu.realm_id = ?", []any{p.v(w.RealmID)}}, {"hu.user_id = ?", []any{p.v(w.UserID)}},
		{"(hu.flags & 1024) <> 0", nil}, {"m.stream_id IS NOT NULL", nil},
	}
	val := func(v int64) func() any { return func() any { return p.v(v) } }
	conds = append(conds, side.bounds("hu.message_id", "hu.user_id", val(w.UserID), val(side.lo), val(side.hi),
		side.lo <= 0, side.hi >= noBound)...)
	return "(" + s.armQuery(w, f, side, p, rowDriven, "hu.message_id", conds) + ")"
}

// rowDriven is the FROM of a query driven by a user's rows (hu), each
// row's message looked up by key in a LATERAL subquery that LIMIT keeps
// apart: joined plainly, the message's ID and the row's would be one to
// the planner, and a channel's index, ordering its messages by that ID,
// could drive the query instead, reading the channel for the few rows.
const rowDriven = `user_messages AS hu CROSS JOIN LATERAL (SELECT * FROM messages AS m0
	WHERE m0.realm_id = hu.realm_id AND m0.id = hu.message_id LIMIT 1) AS m`

// directArm reads the reader's conversations, one LATERAL subquery each.
func (s *Store) directArm(w storage.MessageWindow, side windowSide, p *params) string {
	f := w.Filter
	if !w.Scope.Direct || f.StreamID != nil || f.Topic != nil || f.ChannelOnly || f.PublicChannelsOnly ||
		f.WebPublicChannelsOnly || side.lo >= side.hi {
		return ""
	}
	inner := f
	inner.ConversationID, inner.DirectOnly = nil, false
	if side.stream != "" {
		side.stream = "NULL::bigint AS stream_id"
	}
	val := func(v int64) func() any { return func() any { return p.v(v) } }
	dcmConv := func() any { return bun.Safe("dcm.conversation_id") }
	arm := func(side windowSide, idsOnly bool) string {
		conds := []sqlCond{{"m.realm_id = dcm.realm_id", nil}, {"m.conversation_id = dcm.conversation_id", nil}}
		conds = append(conds, side.bounds("m.id", "m.conversation_id", dcmConv, val(side.lo), val(side.hi),
			side.lo <= 0, side.hi >= noBound)...)
		one := w
		one.IDsOnly = one.IDsOnly || idsOnly
		return s.armQuery(one, inner, side, p, "", "m.id", conds)
	}
	where := " WHERE dcm.realm_id = ? AND dcm.user_id = ?"
	args := []any{p.v(w.RealmID), p.v(w.UserID)}
	if f.ConversationID != nil {
		where += " AND dcm.conversation_id = ?"
		args = append(args, p.v(*f.ConversationID))
	}
	where = s.r.NewRaw(where, args...).String()
	return s.lateralArm(side, "direct_conversation_members AS dcm", where, f.ConversationID == nil, arm)
}

// idSpan bounds a PostgreSQL query of rows by a list of IDs (idCol IN
// ids, key = keyVal) to the IDs' span, with row comparisons led by key,
// which only an index of (..., key, idCol) can use. Without statistics
// PostgreSQL takes the key's rows for one and checks the list on each:
// bounded, it reads the key's rows in the span, not all of them.
func idSpan(q *bun.SelectQuery, p *params, key string, keyVal int64, idCol string, ids []int64) *bun.SelectQuery {
	return q.Where("("+key+", "+idCol+") >= (?, ?)", p.v(keyVal), p.v(slices.Min(ids))).
		Where("("+key+", "+idCol+") <= (?, ?)", p.v(keyVal), p.v(slices.Max(ids)))
}
