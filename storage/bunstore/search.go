package bunstore

import (
	"context"
	"fmt"
	"html"
	"strings"
	"unicode"

	"github.com/uptrace/bun"

	"github.com/teamchat/chat/storage"
)

// Full-text search: the index holds each message's topic and the text of
// its rendered content, folded (storage.Fold); each dialect keeps it in
// its own way (dialectOps.indexMessage, search; migration 0007).

// htmlText is the text of rendered HTML: tags dropped (a space where a
// tag was, so words on both sides stay apart), entities decoded.
func htmlText(s string) string {
	var b strings.Builder
	inTag := false
	for _, r := range s {
		switch {
		case r == '<':
			inTag = true
			b.WriteByte(' ')
		case r == '>' && inTag:
			inTag = false
		case !inTag:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(html.UnescapeString(b.String())), " ")
}

// searchTerms splits a search operand into folded terms: words, and
// phrases in double quotes. Characters that are neither letters nor
// digits separate words (so no query syntax of either database gets
// through).
func searchTerms(query string) []string {
	var terms []string
	parts := strings.Split(query, `"`)
	for i, part := range parts {
		words := strings.FieldsFunc(storage.Fold(part), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})
		if len(words) == 0 {
			continue
		}
		if i%2 == 1 && i < len(parts)-1 {
			terms = append(terms, strings.Join(words, " ")) // a quoted phrase
		} else {
			terms = append(terms, words...)
		}
	}
	return terms
}

// searchDoc is one message's full-text index entry.
type searchDoc struct {
	id          int64
	topic, text string
}

// searchBatch bounds the messages one index statement writes.
const searchBatch = 500

// indexMessagesOf writes the full-text index of the messages (with ID,
// Topic and RenderedContent) in batches.
func (s *Store) indexMessagesOf(ctx context.Context, db bun.IDB, ms []storage.Message) error {
	return inChunks(ms, func(all []storage.Message) error {
		for len(all) > 0 {
			part := all[:min(len(all), searchBatch)]
			all = all[len(part):]
			docs := make([]searchDoc, len(part))
			for i, m := range part {
				docs[i] = searchDoc{id: m.ID, topic: storage.Fold(m.Topic), text: storage.Fold(htmlText(m.RenderedContent))}
			}
			if err := s.ops.indexMessages(ctx, db, docs); err != nil {
				return err
			}
		}
		return nil
	})
}

// indexMessage writes m's full-text index with db (the message's
// transaction).
func (s *Store) indexMessage(ctx context.Context, db bun.IDB, m *storage.Message) error {
	return s.ops.indexMessage(ctx, db, m.ID, storage.Fold(m.Topic), storage.Fold(htmlText(m.RenderedContent)))
}

// indexExistingMessages is the index_messages step of migration 0007.
func indexExistingMessages(ctx context.Context, tx bun.Tx) error {
	ops, ok := dialects[tx.Dialect().Name()]
	if !ok {
		return fmt.Errorf("unsupported dialect %s", tx.Dialect().Name())
	}
	var rows []struct {
		ID       int64  `bun:"id"`
		Topic    string `bun:"topic"`
		Rendered string `bun:"rendered_content"`
	}
	if err := tx.NewSelect().TableExpr("messages").Column("id", "topic", "rendered_content").OrderExpr("id").Scan(ctx, &rows); err != nil {
		return err
	}
	for _, r := range rows {
		if err := ops.indexMessage(ctx, tx, r.ID, storage.Fold(r.Topic), storage.Fold(htmlText(r.Rendered))); err != nil {
			return fmt.Errorf("index message %d: %w", r.ID, err)
		}
	}
	return nil
}
