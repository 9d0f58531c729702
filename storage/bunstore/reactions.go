package bunstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// reactionRow maps storage.Reaction to its table (migration 0011).
type reactionRow struct {
	bun.BaseModel `bun:"table:reactions,alias:re"`
	storage.Reaction
}

// AddReaction inserts the reaction; the unique key turns a duplicate
// into ErrConflict.
func (s *Store) AddReaction(ctx context.Context, r *storage.Reaction) error {
	row := &reactionRow{Reaction: *r}
	row.ID = 0
	_, err := s.w.NewInsert().Model(row).Returning("id").Exec(ctx)
	if err != nil {
		return wrapErr(fmt.Sprintf("add reaction to message %d in realm %d", r.MessageID, r.RealmID), err)
	}
	r.ID = row.ID
	return nil
}

// DeleteReaction deletes by the unique key.
func (s *Store) DeleteReaction(ctx context.Context, realmID, messageID, userID int64, reactionType, emojiCode string) error {
	op := fmt.Sprintf("delete reaction to message %d in realm %d", messageID, realmID)
	res, err := s.w.NewDelete().Model((*reactionRow)(nil)).
		Where("realm_id = ?", realmID).Where("message_id = ?", messageID).Where("user_id = ?", userID).
		Where("reaction_type = ?", reactionType).Where("emoji_code = ?", emojiCode).Exec(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	return checkAffected(op, res)
}

// ListReactions reads the unique key's prefix (realm, message).
func (s *Store) ListReactions(ctx context.Context, realmID int64, messageIDs []int64) ([]storage.Reaction, error) {
	out := []storage.Reaction{}
	err := chunked(messageIDs, func(ids []int64) error {
		var rows []reactionRow
		p := s.params()
		q := s.r.NewSelect().Model(&rows).Where("re.realm_id = ?", p.v(realmID)).Where(p.in("re.message_id", ids))
		if s.ops.name == DialectPostgres {
			// The IDs' span as well: without statistics PostgreSQL reads
			// the realm's reactions and checks the list on each; bounded,
			// it reads those of the span. (reactions_one_key is the one
			// index of the realm and the message.)
			q = q.Where("re.message_id >= ?", p.v(slices.Min(ids))).Where("re.message_id <= ?", p.v(slices.Max(ids)))
		}
		q = q.OrderExpr("re.message_id ASC, re.id ASC")
		err := s.scan(ctx, q, p, &rows)
		for _, r := range rows {
			out = append(out, r.Reaction)
		}
		return wrapErr(fmt.Sprintf("list reactions in realm %d", realmID), err)
	})
	return out, err
}
