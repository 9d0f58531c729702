package bunstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// alertWordRow maps storage.AlertWord to its table.
type alertWordRow struct {
	bun.BaseModel `bun:"table:alert_words,alias:aw"`
	storage.AlertWord
}

// AddAlertWords inserts the words, skipping the keys the user has.
func (s *Store) AddAlertWords(ctx context.Context, words []storage.AlertWord) error {
	for _, w := range words {
		row := &alertWordRow{AlertWord: w}
		row.ID = 0
		_, err := s.w.NewInsert().Model(row).On("CONFLICT (user_id, word_key) DO NOTHING").Exec(ctx)
		if err != nil {
			return wrapErr(fmt.Sprintf("add alert word of user %d", w.UserID), err)
		}
	}
	return nil
}

// RemoveAlertWords deletes the user's words by key.
func (s *Store) RemoveAlertWords(ctx context.Context, realmID, userID int64, keys []string) error {
	return inChunks(keys, func(part []string) error {
		_, err := s.w.NewDelete().TableExpr("alert_words").
			Where("realm_id = ?", realmID).Where("user_id = ?", userID).Where("word_key IN (?)", bun.List(part)).Exec(ctx)
		return wrapErr(fmt.Sprintf("remove alert words of user %d", userID), err)
	})
}

// ListAlertWords reads the user's words by ID.
func (s *Store) ListAlertWords(ctx context.Context, realmID, userID int64) ([]storage.AlertWord, error) {
	var rows []alertWordRow
	err := s.r.NewSelect().Model(&rows).Where("realm_id = ?", realmID).Where("user_id = ?", userID).
		OrderExpr("id ASC").Scan(ctx)
	return alertWords(rows), wrapErr(fmt.Sprintf("list alert words of user %d", userID), err)
}

// FindAlertWords reads the words of active users by first token.
func (s *Store) FindAlertWords(ctx context.Context, realmID int64, tokens []string) ([]storage.AlertWord, error) {
	var all []alertWordRow
	err := inChunks(tokens, func(part []string) error {
		var rows []alertWordRow
		err := s.r.NewSelect().Model(&rows).
			Join("JOIN users AS u ON u.realm_id = aw.realm_id AND u.id = aw.user_id").
			Where("aw.realm_id = ?", realmID).Where("aw.first_token IN (?)", bun.List(part)).Where("u.is_active").
			OrderExpr("aw.id ASC").Scan(ctx)
		all = append(all, rows...)
		return err
	})
	return alertWords(all), wrapErr(fmt.Sprintf("find alert words in realm %d", realmID), err)
}

// AnyAlertWords is one EXISTS over the realm's words (by the realm's
// index) and their users.
func (s *Store) AnyAlertWords(ctx context.Context, realmID int64) (bool, error) {
	exists, err := s.r.NewSelect().Model((*alertWordRow)(nil)).
		Join("JOIN users AS u ON u.realm_id = aw.realm_id AND u.id = aw.user_id").
		Where("aw.realm_id = ?", realmID).Where("u.is_active").Exists(ctx)
	return exists, wrapErr(fmt.Sprintf("any alert words in realm %d", realmID), err)
}

func alertWords(rows []alertWordRow) []storage.AlertWord {
	out := make([]storage.AlertWord, len(rows))
	for i := range rows {
		out[i] = rows[i].AlertWord
	}
	return out
}
