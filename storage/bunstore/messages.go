package bunstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Messages are the messages table (one row per message), the direct
// conversations and their members, and the sparse per-user rows
// (user_messages); see migrations/0006_messages.up.sql.

// conversationRow maps a direct conversation.
type conversationRow struct {
	bun.BaseModel `bun:"table:direct_conversations"`

	ID        int64  `bun:"id,pk,autoincrement"`
	RealmID   int64  `bun:"realm_id"`
	MemberKey string `bun:"member_key"`
}

// conversationMember maps a participant of a direct conversation.
type conversationMember struct {
	bun.BaseModel `bun:"table:direct_conversation_members"`

	RealmID        int64 `bun:"realm_id"`
	ConversationID int64 `bun:"conversation_id,pk"`
	UserID         int64 `bun:"user_id,pk"`
}

// messageRow maps storage.Message to its table, with the topic's key.
type messageRow struct {
	bun.BaseModel `bun:"table:messages,alias:m"`
	storage.Message
}

// userMessageRow maps storage.UserMessage to its table.
type userMessageRow struct {
	bun.BaseModel `bun:"table:user_messages,alias:um"`
	storage.UserMessage
}

// memberKey is the sorted, de-duplicated IDs joined by commas.
func memberKey(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// DirectConversation returns the conversation among exactly userIDs,
// creating it (and its member rows) on first use; concurrent first uses
// agree on one row through the unique member key.
func (s *Store) DirectConversation(ctx context.Context, realmID int64, userIDs []int64) (int64, error) {
	ids := uniqueIDs(userIDs)
	op := fmt.Sprintf("direct conversation of %v in realm %d", ids, realmID)
	if len(ids) == 0 {
		return 0, fmt.Errorf("bunstore: %s: no participants", op)
	}
	key := memberKey(ids)
	row := new(conversationRow)
	err := s.r.NewSelect().Model(row).Where("realm_id = ?", realmID).Where("member_key = ?", key).Scan(ctx)
	if err == nil {
		return row.ID, nil
	}
	if err := wrapErr(op, err); !errors.Is(err, storage.ErrNotFound) {
		return 0, err
	}
	var id int64
	err = s.withTx(ctx, func(tx *Store) error {
		row := &conversationRow{RealmID: realmID, MemberKey: key}
		res, err := tx.w.NewInsert().Model(row).On("CONFLICT (realm_id, member_key) DO NOTHING").Returning("id").Exec(ctx)
		if err != nil {
			return wrapErr(op, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return wrapErr(op, err)
		} else if n == 0 {
			// Created meanwhile by another transaction: use that one.
			err := tx.w.NewSelect().Model(row).Where("realm_id = ?", realmID).Where("member_key = ?", key).Scan(ctx)
			id = row.ID
			return wrapErr(op, err)
		}
		members := make([]conversationMember, len(ids))
		for i, uid := range ids {
			members[i] = conversationMember{RealmID: realmID, ConversationID: row.ID, UserID: uid}
		}
		if _, err := tx.w.NewInsert().Model(&members).Exec(ctx); err != nil {
			return wrapErr(op, err)
		}
		id = row.ID
		return nil
	})
	return id, err
}

// FindDirectConversation looks the conversation up without creating it.
func (s *Store) FindDirectConversation(ctx context.Context, realmID int64, userIDs []int64) (int64, error) {
	row := new(conversationRow)
	err := s.r.NewSelect().Model(row).Where("realm_id = ?", realmID).Where("member_key = ?", memberKey(uniqueIDs(userIDs))).Scan(ctx)
	if err != nil {
		return 0, wrapErr(fmt.Sprintf("find direct conversation in realm %d", realmID), err)
	}
	return row.ID, nil
}

// ConversationMembers lists a conversation's participants, ascending.
func (s *Store) ConversationMembers(ctx context.Context, realmID, conversationID int64) ([]int64, error) {
	ids := []int64{}
	err := s.r.NewSelect().Model((*conversationMember)(nil)).Column("user_id").
		Where("realm_id = ?", realmID).Where("conversation_id = ?", conversationID).
		OrderExpr("user_id ASC").Scan(ctx, &ids)
	return ids, wrapErr(fmt.Sprintf("members of direct conversation %d in realm %d", conversationID, realmID), err)
}

// ConversationMembersOf reads the members of several conversations in
// one query per chunk of IDs.
func (s *Store) ConversationMembersOf(ctx context.Context, realmID int64, conversationIDs []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	err := chunked(conversationIDs, func(ids []int64) error {
		var rows []conversationMember
		err := s.r.NewSelect().Model(&rows).
			Where("realm_id = ?", realmID).Where("conversation_id IN (?)", bun.List(ids)).
			OrderExpr("conversation_id ASC, user_id ASC").Scan(ctx)
		for _, r := range rows {
			out[r.ConversationID] = append(out[r.ConversationID], r.UserID)
		}
		return wrapErr(fmt.Sprintf("members of direct conversations in realm %d", realmID), err)
	})
	return out, err
}

// CreateMessage inserts the message and its readers' rows in one
// transaction; the topic's key is written with it.
func (s *Store) CreateMessage(ctx context.Context, m *storage.Message, readers []storage.UserMessage) error {
	op := fmt.Sprintf("create message in realm %d", m.RealmID)
	row := &messageRow{Message: *m}
	// With its ID known, nothing of the insert is read back: on
	// PostgreSQL it goes out with the transaction's next statement.
	wctx := ctx
	if m.ID != 0 {
		wctx = deferrable(ctx)
	}
	err := s.withTx(ctx, func(tx *Store) error {
		q := insertKey(tx.w.NewInsert().Model(row), "topic_key", m.Topic)
		if tx.ops.indexOnInsert != nil {
			q = tx.ops.indexOnInsert(q, storage.Fold(m.Topic), storage.Fold(htmlText(m.RenderedContent)))
		}
		if m.ID == 0 {
			q = q.Returning("id")
		} else {
			q = q.Returning("NULL")
		}
		if _, err := q.Exec(wctx); err != nil {
			return wrapErr(op, err)
		}
		if tx.ops.indexOnInsert == nil {
			indexed := row.Message
			if err := tx.indexMessage(ctx, tx.w, &indexed); err != nil {
				return wrapErr(op, err)
			}
		}
		if len(readers) == 0 {
			return nil
		}
		rows := make([]userMessageRow, len(readers))
		for i, r := range readers {
			r.RealmID, r.MessageID = m.RealmID, row.ID
			rows[i] = userMessageRow{UserMessage: r}
		}
		_, err := tx.w.NewInsert().Model(&rows).Returning("NULL").Exec(wctx)
		return wrapErr(op, err)
	})
	if err != nil {
		return err
	}
	m.ID = row.ID
	for i := range readers {
		readers[i].RealmID, readers[i].MessageID = m.RealmID, m.ID
	}
	return nil
}

// ReserveMessageIDs draws n IDs from the messages' sequence on
// PostgreSQL, in one statement; SQLite gives IDs on insert.
func (s *Store) ReserveMessageIDs(ctx context.Context, n int) ([]int64, error) {
	if s.ops.name != DialectPostgres || n <= 0 {
		return nil, nil
	}
	var ids []int64
	err := s.w.NewRaw("SELECT nextval(pg_get_serial_sequence('messages', 'id')) FROM generate_series(1, ?) ORDER BY 1", n).
		Scan(ctx, &ids)
	return ids, wrapErr("reserve message ids", err)
}

// GetMessage returns the realm's message with that ID.
func (s *Store) GetMessage(ctx context.Context, realmID, messageID int64) (*storage.Message, error) {
	row := new(messageRow)
	err := s.r.NewSelect().Model(row).
		Where("m.realm_id = ?", realmID).Where("m.id = ?", messageID).Scan(ctx)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("get message %d in realm %d", messageID, realmID), err)
	}
	return &row.Message, nil
}

// GetMessagesByID reads the messages by primary key.
func (s *Store) GetMessagesByID(ctx context.Context, realmID int64, ids []int64) ([]storage.Message, error) {
	out := []storage.Message{}
	err := chunked(ids, func(ids []int64) error {
		var rows []messageRow
		p := s.params()
		q := s.r.NewSelect().Model(&rows).Where(p.in("m.id", ids))
		if s.ops.name == DialectPostgres {
			// The realm checked on each row, not looked up: as an index
			// condition, PostgreSQL without statistics read the realm's
			// whole (realm_id, id) index and intersected it with the IDs.
			q = q.Where("m.realm_id + 0 = ?", p.v(realmID))
		} else {
			q = q.Where("m.realm_id = ?", p.v(realmID))
		}
		err := s.scan(ctx, q.OrderExpr("m.id ASC"), p, &rows)
		for _, r := range rows {
			out = append(out, r.Message)
		}
		return wrapErr(fmt.Sprintf("get messages in realm %d", realmID), err)
	})
	return out, err
}

// ListUserMessages returns the user's rows for these messages.
func (s *Store) ListUserMessages(ctx context.Context, realmID, userID int64, messageIDs []int64) ([]storage.UserMessage, error) {
	out := []storage.UserMessage{}
	err := chunked(uniqueIDs(messageIDs), func(ids []int64) error {
		var rows []userMessageRow
		p := s.params()
		q := s.r.NewSelect().Model(&rows).
			Where("um.realm_id = ?", p.v(realmID)).Where("um.user_id = ?", p.v(userID)).Where(p.in("um.message_id", ids))
		if s.ops.name == DialectPostgres {
			q = idSpan(q, p, "um.user_id", userID, "um.message_id", ids)
		}
		err := s.scan(ctx, q.OrderExpr("um.message_id ASC"), p, &rows)
		for _, r := range rows {
			out = append(out, r.UserMessage)
		}
		return wrapErr(fmt.Sprintf("list message rows of user %d in realm %d", userID, realmID), err)
	})
	return out, err
}

// ListFlaggedMessageIDs reads the user's rows with the flag (the starred
// ones through their partial index).
func (s *Store) ListFlaggedMessageIDs(ctx context.Context, realmID, userID, flag int64) ([]int64, error) {
	ids := []int64{}
	err := s.r.NewSelect().TableExpr("user_messages").Column("message_id").
		Where("realm_id = ?", realmID).Where("user_id = ?", userID).Where("(flags & ?) <> 0", flag).
		OrderExpr("message_id ASC").Scan(ctx, &ids)
	return ids, wrapErr(fmt.Sprintf("flagged messages of user %d", userID), err)
}

// ListRecentDirectMessages reads the user's newest direct-message rows
// through the private-flag partial index.
func (s *Store) ListRecentDirectMessages(ctx context.Context, realmID, userID int64, limit int) ([]storage.DirectMessageRef, error) {
	out := []storage.DirectMessageRef{}
	err := s.r.NewSelect().TableExpr("user_messages AS um").
		Join("JOIN messages AS m ON m.realm_id = um.realm_id AND m.id = um.message_id").
		ColumnExpr("um.message_id, m.conversation_id").
		Where("um.realm_id = ?", realmID).Where("um.user_id = ?", userID).
		Where("(um.flags & ?) <> 0", storage.FlagPrivate).Where("m.conversation_id IS NOT NULL").
		OrderExpr("um.message_id DESC").Limit(limit).Scan(ctx, &out)
	return out, wrapErr(fmt.Sprintf("recent direct messages of user %d", userID), err)
}

// MaxMessageID reads the greatest message ID through the primary key.
func (s *Store) MaxMessageID(ctx context.Context) (int64, error) {
	var id int64
	err := s.r.NewSelect().TableExpr("messages").ColumnExpr("COALESCE(MAX(id), 0)").Scan(ctx, &id)
	return id, wrapErr("max message id", err)
}

// readRangeRow maps storage.ReadRange to its table.
type readRangeRow struct {
	bun.BaseModel `bun:"table:read_ranges,alias:rr"`
	storage.ReadRange
}

// ChannelNeighbours returns the IDs of the channel's messages just before
// first and just after last (0 where there is none), in one query.
func (s *Store) ChannelNeighbours(ctx context.Context, realmID, streamID, first, last int64) (prev, next int64, err error) {
	// One seek each, written as one (see NewestReceivedMessage).
	err = s.r.NewRaw(`SELECT
	COALESCE((SELECT id FROM messages WHERE realm_id = ? AND stream_id = ? AND id < ? ORDER BY id DESC LIMIT 1), 0),
	COALESCE((SELECT id FROM messages WHERE realm_id = ? AND stream_id = ? AND id > ? ORDER BY id ASC LIMIT 1), 0)`,
		realmID, streamID, first, realmID, streamID, last).Scan(ctx, &prev, &next)
	return prev, next, wrapErr(fmt.Sprintf("neighbours of [%d, %d] in channel %d in realm %d", first, last, streamID, realmID), err)
}

// ExtendReadRange marks the channel's newest message read: the ranges
// that no message of the channel separates from it (those reaching its
// predecessor or beyond, as it has no successor) give way to their union
// with it. On PostgreSQL that is one statement, whose answer nobody reads.
func (s *Store) ExtendReadRange(ctx context.Context, realmID, userID, streamID, messageID int64) error {
	if s.ops.name != DialectPostgres {
		return s.AddReadRange(ctx, realmID, userID, streamID, messageID, messageID)
	}
	_, err := s.w.NewRaw(`WITH prev AS (
			SELECT coalesce((SELECT id FROM messages WHERE realm_id = ?0 AND stream_id = ?2 AND id < ?3 ORDER BY id DESC LIMIT 1), 0) AS id),
		gone AS (
			DELETE FROM read_ranges WHERE realm_id = ?0 AND user_id = ?1 AND stream_id = ?2
				AND last_id >= (SELECT id FROM prev)
			RETURNING first_id, last_id)
		INSERT INTO read_ranges (realm_id, user_id, stream_id, first_id, last_id)
		SELECT ?0, ?1, ?2, least(min(first_id), ?3), greatest(max(last_id), ?3) FROM gone`,
		realmID, userID, streamID, messageID).Exec(deferrable(ctx))
	return wrapErr(fmt.Sprintf("mark message %d read for user %d in realm %d", messageID, userID, realmID), err)
}

// AddReadRange merges [first, last] into the user's ranges of the
// channel, in one transaction: every range that overlaps the new one, or
// that no message of the channel separates from it, is replaced by their
// union. The cost follows the few ranges it touches.
func (s *Store) AddReadRange(ctx context.Context, realmID, userID, streamID, first, last int64) error {
	op := fmt.Sprintf("mark channel %d read for user %d in realm %d", streamID, userID, realmID)
	if first > last {
		return fmt.Errorf("bunstore: %s: empty range [%d, %d]", op, first, last)
	}
	return s.withTx(ctx, func(tx *Store) error {
		// Ranges reaching from the channel's previous message to its
		// next one touch the new range: nothing unread lies between.
		prev, next, err := tx.ChannelNeighbours(ctx, realmID, streamID, first, last)
		if err != nil {
			return wrapErr(op, err)
		}
		q := tx.w.NewSelect().Model((*readRangeRow)(nil)).
			Where("realm_id = ?", realmID).Where("user_id = ?", userID).Where("stream_id = ?", streamID).
			Where("last_id >= ?", prev)
		if next != 0 {
			q = q.Where("first_id <= ?", next)
		}
		var touching []readRangeRow
		if err := q.Scan(ctx, &touching); err != nil {
			return wrapErr(op, err)
		}
		lo, hi := first, last
		for _, r := range touching {
			lo, hi = min(lo, r.FirstID), max(hi, r.LastID)
		}
		if len(touching) == 1 {
			// The usual case (a new message next to what was read): grow
			// the one range in place.
			_, err := tx.w.NewUpdate().Model((*readRangeRow)(nil)).Set("first_id = ?", lo).Set("last_id = ?", hi).
				Where("realm_id = ?", realmID).Where("user_id = ?", userID).Where("stream_id = ?", streamID).
				Where("first_id = ?", touching[0].FirstID).Exec(ctx)
			return wrapErr(op, err)
		}
		if len(touching) > 0 {
			_, err := tx.w.NewDelete().Model((*readRangeRow)(nil)).
				Where("realm_id = ?", realmID).Where("user_id = ?", userID).Where("stream_id = ?", streamID).
				Where("first_id >= ?", lo).Where("first_id <= ?", hi).Exec(ctx)
			if err != nil {
				return wrapErr(op, err)
			}
		}
		row := &readRangeRow{ReadRange: storage.ReadRange{RealmID: realmID, UserID: userID, StreamID: streamID, FirstID: lo, LastID: hi}}
		_, err = tx.w.NewInsert().Model(row).Exec(ctx)
		return wrapErr(op, err)
	})
}

// ListReadRanges returns the user's ranges of the channel that intersect
// [lo, hi], by first ID.
func (s *Store) ListReadRanges(ctx context.Context, realmID, userID, streamID, lo, hi int64) ([]storage.ReadRange, error) {
	var rows []readRangeRow
	err := s.r.NewSelect().Model(&rows).
		Where("realm_id = ?", realmID).Where("user_id = ?", userID).Where("stream_id = ?", streamID).
		Where("first_id <= ?", hi).Where("last_id >= ?", lo).
		OrderExpr("first_id ASC").Scan(ctx)
	out := make([]storage.ReadRange, len(rows))
	for i, r := range rows {
		out[i] = r.ReadRange
	}
	return out, wrapErr(fmt.Sprintf("read ranges of user %d in channel %d in realm %d", userID, streamID, realmID), err)
}

// ListReadRangesOf reads the ranges of several channels in one query.
func (s *Store) ListReadRangesOf(ctx context.Context, realmID, userID int64, streamIDs []int64, lo, hi int64) ([]storage.ReadRange, error) {
	out := []storage.ReadRange{}
	err := chunked(streamIDs, func(ids []int64) error {
		var rows []readRangeRow
		p := s.params()
		q := s.r.NewSelect().Model(&rows).
			Where("realm_id = ?", p.v(realmID)).Where("user_id = ?", p.v(userID)).Where(p.in("stream_id", ids)).
			Where("first_id <= ?", p.v(hi)).Where("last_id >= ?", p.v(lo)).
			OrderExpr("stream_id ASC, first_id ASC")
		err := s.scan(ctx, q, p, &rows)
		for _, r := range rows {
			out = append(out, r.ReadRange)
		}
		return wrapErr(fmt.Sprintf("read ranges of user %d in realm %d", userID, realmID), err)
	})
	return out, err
}

// ListUserPeriods returns the user's periods in every channel.
func (s *Store) ListUserPeriods(ctx context.Context, realmID, userID int64) ([]storage.SubscriptionPeriod, error) {
	periods := []storage.SubscriptionPeriod{}
	err := s.r.NewSelect().Model(&periods).
		Where("realm_id = ?", realmID).Where("user_id = ?", userID).
		OrderExpr("stream_id ASC, id ASC").Scan(ctx)
	return periods, wrapErr(fmt.Sprintf("list subscription periods of user %d in realm %d", userID, realmID), err)
}

// windowQuery is the shared part of both sides of a window: the realm,
// the scope (an OR of whole channels, spans and the reader's
// conversations) and the filter. idCol is the column to order and bound
// by: the message ID, or the search index's copy of it when a search
// drives the query.
func (s *Store) windowQuery(w storage.MessageWindow, rows *[]messageRow, p *params) (q *bun.SelectQuery, idCol string) {
	q = s.r.NewSelect().Model(rows).Where("m.realm_id = ?", p.v(w.RealmID))
	idCol = "m.id"
	sc, whole := scopeOf(w.Scope, w.Filter)
	q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		if whole {
			return q.Where("1 = 1") // the filter's channel is in scope whole
		}
		// An empty scope matches nothing.
		q = q.WhereOr("1 = 0")
		if len(sc.FullChannels) > 0 {
			q = q.WhereOr(p.in("m.stream_id", uniqueIDs(sc.FullChannels)))
		}
		if sc.PublicChannels {
			q = q.WhereOr(`m.stream_id IN (SELECT st.id FROM streams AS st
				WHERE st.realm_id = ? AND NOT st.invite_only AND st.history_public_to_subscribers)`, p.v(w.RealmID))
		}
		for _, sp := range sc.Spans {
			if sp.Through == nil {
				q = q.WhereOr("(m.stream_id = ? AND m.id > ?)", p.v(sp.StreamID), p.v(sp.After))
			} else {
				q = q.WhereOr("(m.stream_id = ? AND m.id > ? AND m.id <= ?)", p.v(sp.StreamID), p.v(sp.After), p.v(*sp.Through))
			}
		}
		if sc.Historical {
			q = q.WhereOr(`(m.stream_id IS NOT NULL AND m.id IN (SELECT hu.message_id FROM user_messages AS hu
				WHERE hu.realm_id = ? AND hu.user_id = ? AND (hu.flags & 1024) <> 0))`, p.v(w.RealmID), p.v(w.UserID))
		}
		if sc.Direct {
			q = q.WhereOr("m.conversation_id IN (SELECT dcm.conversation_id FROM direct_conversation_members AS dcm WHERE dcm.realm_id = ? AND dcm.user_id = ?)",
				p.v(w.RealmID), p.v(w.UserID))
		}
		return q
	})
	q, idCol = s.applyFilter(q, w, w.Filter, true, p)
	return q, idCol
}

// scopeOf is the part of sc that messages matching f can be in: for a
// filter of one channel, that channel's arms (the channel alone, when it
// is in sc whole: whole then says the scope adds no condition to the
// filter's), and no direct messages; for a filter of direct messages, no channel's arms. Every
// arm left out would be a condition to test on each row (SQLite) and a
// list to build (the reader's conversations, their historical rows) on
// every run, for nothing.
func scopeOf(sc storage.MessageScope, f storage.MessageFilter) (_ storage.MessageScope, whole bool) {
	switch {
	case f.StreamID != nil:
		sid := *f.StreamID
		if slices.Contains(sc.FullChannels, sid) {
			return storage.MessageScope{FullChannels: []int64{sid}}, true
		}
		out := storage.MessageScope{PublicChannels: sc.PublicChannels, Historical: sc.Historical}
		for _, sp := range sc.Spans {
			if sp.StreamID == sid {
				out.Spans = append(out.Spans, sp)
			}
		}
		return out, false
	case f.DirectOnly || f.ConversationID != nil:
		return storage.MessageScope{Direct: sc.Direct}, false
	case f.ChannelOnly || f.PublicChannelsOnly || f.WebPublicChannelsOnly:
		sc.Direct = false
	}
	return sc, false
}

// applyFilter adds f's conditions to q. top says q is the window's own
// query, where a search may drive the query through its index (changing
// idCol); inside a negation each condition stands alone. Conditions on
// nullable columns test them first, so that a negation keeps the rows of
// the other kind (a channel's condition is false, not NULL, for a direct
// message, and NOT of it true).
func (s *Store) applyFilter(q *bun.SelectQuery, w storage.MessageWindow, f storage.MessageFilter, top bool, p *params) (_ *bun.SelectQuery, idCol string) {
	idCol = "m.id"
	if f.StreamID != nil {
		q = q.Where("(m.stream_id IS NOT NULL AND m.stream_id = ?)", p.v(*f.StreamID))
	}
	if f.Topic != nil {
		q = q.Where("(m.stream_id IS NOT NULL AND m.topic_key = ?)", p.v(storage.Fold(*f.Topic)))
	}
	if f.SenderID != nil {
		q = q.Where("m.sender_id = ?", p.v(*f.SenderID))
	}
	if f.ConversationID != nil {
		q = q.Where("(m.conversation_id IS NOT NULL AND m.conversation_id = ?)", p.v(*f.ConversationID))
	}
	if f.DirectOnly {
		q = q.Where("m.conversation_id IS NOT NULL")
	}
	if f.ChannelOnly {
		q = q.Where("m.stream_id IS NOT NULL")
	}
	if f.PublicChannelsOnly {
		q = q.Where(`(m.stream_id IS NOT NULL AND m.stream_id IN (SELECT st.id FROM streams AS st
			WHERE st.realm_id = ? AND NOT st.invite_only AND st.history_public_to_subscribers))`, p.v(w.RealmID))
	}
	if f.WebPublicChannelsOnly {
		q = q.Where("(m.stream_id IS NOT NULL AND m.stream_id IN (SELECT st.id FROM streams AS st WHERE st.realm_id = ? AND st.is_web_public))", p.v(w.RealmID))
	}
	if len(f.NotStreamIDs) > 0 {
		cond, ids := p.notIn("m.stream_id", uniqueIDs(f.NotStreamIDs))
		q = q.Where("(m.stream_id IS NULL OR "+cond+")", ids)
	}
	if len(f.NotSenderIDs) > 0 {
		q = q.Where(p.notIn("m.sender_id", uniqueIDs(f.NotSenderIDs)))
	}
	if f.Alerted {
		q = q.Where("m.id IN (SELECT um.message_id FROM user_messages AS um WHERE um.realm_id = ? AND um.user_id = ? AND (um.flags & 512) <> 0)",
			p.v(w.RealmID), p.v(w.UserID))
	}
	for _, including := range f.IncludingUserIDs {
		q = q.Where("(m.conversation_id IS NOT NULL AND m.conversation_id IN (SELECT i.conversation_id FROM direct_conversation_members AS i WHERE i.realm_id = ? AND i.user_id = ?))",
			p.v(w.RealmID), p.v(including))
	}
	if f.GroupDMOnly {
		// Counted among the reader's own conversations only.
		q = q.Where(`(m.conversation_id IS NOT NULL AND m.conversation_id IN (SELECT g.conversation_id FROM direct_conversation_members AS g
			WHERE g.realm_id = ? AND g.conversation_id IN (SELECT r.conversation_id FROM direct_conversation_members AS r
				WHERE r.realm_id = ? AND r.user_id = ?)
			GROUP BY g.conversation_id HAVING count(*) >= 3))`, p.v(w.RealmID), p.v(w.RealmID), p.v(w.UserID))
	}
	if f.Starred {
		q = q.Where("m.id IN (SELECT um.message_id FROM user_messages AS um WHERE um.realm_id = ? AND um.user_id = ? AND (um.flags & 2) <> 0)",
			p.v(w.RealmID), p.v(w.UserID))
	}
	if f.Mentioned {
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.WhereOr("m.id IN (SELECT um.message_id FROM user_messages AS um WHERE um.realm_id = ? AND um.user_id = ? AND (um.flags & 56) <> 0)",
				p.v(w.RealmID), p.v(w.UserID)).WhereOr("m.stream_wildcard")
		})
	}
	if f.Unread {
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			// A channel message is unread when no range covers it, unless
			// the reader has a historical row for it, whose read flag says.
			return q.WhereOr(`(m.stream_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM read_ranges AS rr
				WHERE rr.realm_id = m.realm_id AND rr.user_id = ? AND rr.stream_id = m.stream_id
				AND rr.first_id <= m.id AND rr.last_id >= m.id) AND NOT EXISTS (SELECT 1 FROM user_messages AS hr
				WHERE hr.realm_id = m.realm_id AND hr.user_id = ? AND hr.message_id = m.id AND (hr.flags & 1024) <> 0))`, p.v(w.UserID), p.v(w.UserID)).
				WhereOr(`(m.stream_id IS NOT NULL AND EXISTS (SELECT 1 FROM user_messages AS hu
				WHERE hu.realm_id = m.realm_id AND hu.user_id = ? AND hu.message_id = m.id AND (hu.flags & 3073) = 1024))`, p.v(w.UserID)).
				WhereOr(`(m.conversation_id IS NOT NULL AND EXISTS (SELECT 1 FROM user_messages AS um
				WHERE um.realm_id = m.realm_id AND um.user_id = ? AND um.message_id = m.id AND (um.flags & 1) = 0))`, p.v(w.UserID))
		}).Where(notMutedSender, p.v(w.UserID))
	}
	if f.Resolved {
		q = q.Where("(m.stream_id IS NOT NULL AND substr(m.topic, 1, 2) = ?)", p.v("✔ "))
	}
	if f.Followed {
		q = q.Where(`(m.stream_id IS NOT NULL AND EXISTS (SELECT 1 FROM user_topics AS ut
			WHERE ut.user_id = ? AND ut.stream_id = m.stream_id AND ut.topic_key = m.topic_key AND ut.visibility_policy = 3))`, p.v(w.UserID))
	}
	if f.MutedTopic {
		q = q.Where(`(m.stream_id IS NOT NULL AND EXISTS (SELECT 1 FROM user_topics AS ut
			WHERE ut.user_id = ? AND ut.stream_id = m.stream_id AND ut.topic_key = m.topic_key AND ut.visibility_policy = 1))`, p.v(w.UserID))
	}
	if f.Muted {
		// A muted topic, or a muted channel's topic the reader has not
		// unmuted or followed (the reference's muting conditions).
		q = q.Where(`(m.stream_id IS NOT NULL AND (EXISTS (SELECT 1 FROM user_topics AS ut
			WHERE ut.user_id = ? AND ut.stream_id = m.stream_id AND ut.topic_key = m.topic_key AND ut.visibility_policy = 1)
			OR m.stream_id IN (SELECT sm.stream_id FROM subscriptions AS sm
				WHERE sm.realm_id = ? AND sm.user_id = ? AND sm.active AND sm.is_muted)
			AND NOT EXISTS (SELECT 1 FROM user_topics AS uv
				WHERE uv.user_id = ? AND uv.stream_id = m.stream_id AND uv.topic_key = m.topic_key AND uv.visibility_policy IN (2, 3))))`,
			p.v(w.UserID), p.v(w.RealmID), p.v(w.UserID), p.v(w.UserID))
	}
	if f.HasLink {
		q = q.Where("m.has_link")
	}
	if f.HasImage {
		q = q.Where("m.has_image")
	}
	if f.HasAttachment {
		q = q.Where("m.has_attachment")
	}
	if f.HasReaction {
		q = q.Where("EXISTS (SELECT 1 FROM reactions AS rx WHERE rx.realm_id = m.realm_id AND rx.message_id = m.id)")
	}
	if f.Search != "" {
		switch terms := searchTerms(f.Search); {
		case len(terms) == 0:
			q = q.Where("1 = 0") // nothing searchable matches nothing
		case top:
			q, idCol = s.ops.search(q, terms)
		default:
			cond, args := s.ops.searchCond(terms)
			q = q.Where(cond, args...)
		}
	}
	if f.IDs != nil {
		if len(f.IDs) == 0 {
			q = q.Where("1 = 0")
		} else {
			q = q.Where(p.in("m.id", uniqueIDs(f.IDs)))
		}
	}
	for _, neg := range f.Not {
		q = q.WhereGroup(" AND NOT ", func(q *bun.SelectQuery) *bun.SelectQuery {
			q, _ = s.applyFilter(q.Where("1 = 1"), w, neg, false, p)
			return q
		})
	}
	return q, idCol
}

// windowParams are the values of a window's query: placeholders, unless
// it searches (the search's words are written inline, which would make
// every search a new statement to keep).
func (s *Store) windowParams(w storage.MessageWindow) *params {
	if hasSearch(w.Filter) {
		return &params{}
	}
	return s.params()
}

func hasSearch(f storage.MessageFilter) bool {
	if f.Search != "" {
		return true
	}
	for _, n := range f.Not {
		if hasSearch(n) {
			return true
		}
	}
	return false
}

// ListMessageWindow reads both sides of the window with two queries that
// walk the primary key (or a channel's index) from the anchor outwards,
// so the cost follows the window, not the history. On PostgreSQL a
// window whose filter keeps most messages is read arm by arm instead
// (listWindowArms), which needs no planner statistics.
func (s *Store) ListMessageWindow(ctx context.Context, w storage.MessageWindow) (older, newer []storage.Message, err error) {
	if s.ops.name == DialectPostgres && armsWindow(w.Filter) {
		return s.listWindowArms(ctx, w)
	}
	return s.listWindowOne(ctx, w)
}

// listWindowOne is ListMessageWindow with one query per side.
func (s *Store) listWindowOne(ctx context.Context, w storage.MessageWindow) (older, newer []storage.Message, err error) {
	op := fmt.Sprintf("message window of user %d in realm %d", w.UserID, w.RealmID)
	cols := ""
	if w.IDsOnly {
		cols = "m.id" // from the index alone where one covers the query
	}
	var rows []messageRow
	p := s.windowParams(w)
	if err := s.scan(ctx, s.windowSideQuery(w, true, p, &rows, cols), p, &rows); err != nil {
		return nil, nil, wrapErr(op, err)
	}
	for i := len(rows) - 1; i >= 0; i-- {
		older = append(older, rows[i].Message)
	}
	if w.After > 0 {
		var rows []messageRow
		p := s.windowParams(w)
		if err := s.scan(ctx, s.windowSideQuery(w, false, p, &rows, cols), p, &rows); err != nil {
			return nil, nil, wrapErr(op, err)
		}
		for _, r := range rows {
			newer = append(newer, r.Message)
		}
	}
	return nonNil(older), nonNil(newer), nil
}

// windowSideQuery is the query of one side of w: the older side (up to
// w.Before+1 messages with IDs at most the anchor, newest first) or the
// newer one (up to w.After+1 above it, oldest first), with the columns
// cols ("": the model's).
func (s *Store) windowSideQuery(w storage.MessageWindow, older bool, p *params, rows *[]messageRow, cols string) *bun.SelectQuery {
	q, idCol := s.windowQuery(w, rows, p)
	if cols != "" {
		q = q.ColumnExpr(cols)
	}
	if older {
		return q.Where("? <= ?", bun.Safe(idCol), p.v(w.Anchor)).OrderExpr("? DESC", bun.Safe(idCol)).Limit(max(w.Before, 0) + 1)
	}
	return q.Where("? > ?", bun.Safe(idCol), p.v(w.Anchor)).OrderExpr("? ASC", bun.Safe(idCol)).Limit(w.After + 1)
}

// TopicSenders reads the topic through messages_stream_topic_idx.
func (s *Store) TopicSenders(ctx context.Context, realmID, streamID int64, topic string) ([]int64, error) {
	ids := []int64{}
	err := s.r.NewSelect().TableExpr("messages AS m").ColumnExpr("DISTINCT m.sender_id").
		Where("m.realm_id = ?", realmID).Where("m.stream_id = ?", streamID).
		Where("m.topic_key = ?", storage.Fold(topic)).
		OrderExpr("m.sender_id ASC").Scan(ctx, &ids)
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("senders of a topic of channel %d in realm %d", streamID, realmID), err)
	}
	return nonNil(ids), nil
}
