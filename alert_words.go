package chat

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/teamchat/chat/storage"
)

// Alert words: words or phrases a user wants to hear about. A message
// containing one of a recipient's words gets the has_alert_word flag for
// them (is:alerted). Matching follows the reference's
// AlertWordNotificationProcessor: the lower-cased Markdown source outside
// fenced code blocks, where the word starts at the beginning or after one
// of allowedBeforeAlert and ends at the end or before one of
// allowedAfterAlert. Finding the candidates costs what the message's own
// words find: alert words are looked up by their first token.

const maxAlertWordLength = 100

var (
	allowedBeforeAlert = " \n(\".,';[*`>"
	allowedAfterAlert  = " \n)?:.,';]!*`"
)

// alertKey is the form alert words are compared in: Python's lower().
func alertKey(word string) string { return strings.ToLower(word) }

// firstToken is the first run of letters and digits of a lower-cased word
// ("" when it has none).
func firstToken(key string) string {
	start := strings.IndexFunc(key, isTokenRune)
	if start < 0 {
		return ""
	}
	end := strings.IndexFunc(key[start:], func(r rune) bool { return !isTokenRune(r) })
	if end < 0 {
		return key[start:]
	}
	return key[start : start+end]
}

func isTokenRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// withoutFencedCode drops the lines of fenced code blocks (``` or ~~~),
// which the reference sets aside before looking for alert words.
func withoutFencedCode(content string) string {
	var b strings.Builder
	fence := ""
	for line := range strings.SplitSeq(content, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		case strings.HasPrefix(trimmed, "```"):
			fence = "```"
			continue
		case strings.HasPrefix(trimmed, "~~~"):
			fence = "~~~"
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// containsAlert reports whether the lower-cased content holds key at a
// word boundary.
func containsAlert(content, key string) bool {
	if key == "" {
		return false
	}
	for from := 0; from <= len(content); {
		i := strings.Index(content[from:], key)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(key)
		before, _ := utf8.DecodeLastRuneInString(content[:start])
		after, _ := utf8.DecodeRuneInString(content[end:])
		if (start == 0 || strings.ContainsRune(allowedBeforeAlert, before)) &&
			(end == len(content) || strings.ContainsRune(allowedAfterAlert, after)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(content[start:])
		from = start + size
	}
	return false
}

// alertedUsers lists the active users of the realm whose alert words the
// message's Markdown contains (the sender's own included, as the
// reference does); who of them receives the message is decided with the
// readers.
func (s *Service) alertedUsers(ctx context.Context, r reads, realmID int64, markdown string) (map[int64]bool, error) {
	content := alertKey(withoutFencedCode(markdown))
	tokens := map[string]bool{"": true}
	for _, f := range strings.FieldsFunc(content, func(r rune) bool { return !isTokenRune(r) }) {
		tokens[f] = true
	}
	list := make([]string, 0, len(tokens))
	for t := range tokens {
		list = append(list, t)
	}
	candidates, err := r.alertWordsByToken(ctx, realmID, list)
	if err != nil {
		return nil, err
	}
	var out map[int64]bool
	for _, w := range candidates {
		if containsAlert(content, w.Key) {
			if out == nil {
				out = map[int64]bool{}
			}
			out[w.UserID] = true
		}
	}
	return out, nil
}

// alertWordsByToken is FindAlertWords through the cache: one query for
// the tokens it does not hold. Inside a transaction it reads the
// transaction, which sees its own writes.
func (r reads) alertWordsByToken(ctx context.Context, realmID int64, tokens []string) ([]storage.AlertWord, error) {
	if r.tx {
		return r.st.FindAlertWords(ctx, realmID, tokens)
	}
	any, err := r.c.anyAlertWords.Load(realmID, realmID, func() (bool, error) {
		return r.st.AnyAlertWords(ctx, realmID)
	})
	if err != nil || !any {
		return nil, err
	}
	keys := make([]nameKey, len(tokens))
	for i, t := range tokens {
		keys[i] = nameKey{realmID, t}
	}
	var out []storage.AlertWord
	held := make(map[string]bool, len(tokens))
	r.c.alertTokens.GetMany(realmID, keys, func(k nameKey, words []storage.AlertWord) {
		held[k.name] = true
		out = append(out, words...)
	})
	if len(held) == len(tokens) {
		return out, nil
	}
	missing := make([]string, 0, len(tokens)-len(held))
	for _, t := range tokens {
		if !held[t] {
			missing = append(missing, t)
		}
	}
	gen := r.c.generation(realmID)
	found, err := r.st.FindAlertWords(ctx, realmID, missing)
	if err != nil {
		return nil, err
	}
	byToken := make(map[string][]storage.AlertWord, len(missing))
	for _, w := range found {
		byToken[w.FirstToken] = append(byToken[w.FirstToken], w)
	}
	for _, t := range missing {
		r.c.alertTokens.Put(realmID, gen, nameKey{realmID, t}, byToken[t])
	}
	return append(out, found...), nil
}

// AlertWordsResponse is the success body of the alert word endpoints: the
// caller's words, in the order added.
type AlertWordsResponse struct {
	AlertWords []string `json:"alert_words"`
}

// AlertWordsRequest is the input of AddAlertWords and RemoveAlertWords.
type AlertWordsRequest struct {
	AlertWords []string `json:"alert_words"`
}

// AlertWordsEvent carries the user's whole list after a change.
type AlertWordsEvent struct {
	AlertWords []string `json:"alert_words"`
}

func (AlertWordsEvent) EventType() string { return "alert_words" }

// GetAlertWords lists the caller's alert words.
func (s *Service) GetAlertWords(ctx context.Context, c Caller) (*AlertWordsResponse, error) {
	return s.reads().getAlertWords(ctx, c)
}

// getAlertWords is GetAlertWords reading through r.
func (r reads) getAlertWords(ctx context.Context, c Caller) (*AlertWordsResponse, error) {
	me, _, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	words, err := r.listAlertWords(ctx, me)
	if err != nil {
		return nil, r.s.internal(ctx, "get alert words", err)
	}
	return &AlertWordsResponse{AlertWords: words}, nil
}

func (r reads) listAlertWords(ctx context.Context, me *storage.User) ([]string, error) {
	rows, err := r.st.ListAlertWords(ctx, me.RealmID, me.ID)
	if err != nil {
		return nil, err
	}
	words := make([]string, len(rows))
	for i := range rows {
		words[i] = rows[i].Word
	}
	return words, nil
}

// cleanAlertWords trims the words and drops the empty ones, after checking
// their length.
func cleanAlertWords(words []string) ([]string, error) {
	out := []string{}
	for i, w := range words {
		if utf8.RuneCountInString(w) > maxAlertWordLength {
			return nil, BadRequest("alert_words[%d] is too long (limit: %d characters)", i, maxAlertWordLength)
		}
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out, nil
}

// AddAlertWords adds words (or phrases) to the caller's alert words;
// words they have (compared without case) are left as they are.
func (s *Service) AddAlertWords(ctx context.Context, c Caller, req AlertWordsRequest) (*AlertWordsResponse, error) {
	return s.changeAlertWords(ctx, c, req, true)
}

// RemoveAlertWords removes words from the caller's alert words (compared
// without case); words they do not have are ignored.
func (s *Service) RemoveAlertWords(ctx context.Context, c Caller, req AlertWordsRequest) (*AlertWordsResponse, error) {
	return s.changeAlertWords(ctx, c, req, false)
}

func (s *Service) changeAlertWords(ctx context.Context, c Caller, req AlertWordsRequest, add bool) (*AlertWordsResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if req.AlertWords == nil {
		return nil, MissingArgument("alert_words")
	}
	words, err := cleanAlertWords(req.AlertWords)
	if err != nil {
		return nil, err
	}
	var after []string
	// Not keepCallers: the new generation drops the cached alert words
	// (alertWordsByToken), here and, through the event bus, on other
	// servers.
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		if add {
			rows := make([]storage.AlertWord, 0, len(words))
			for _, word := range words {
				key := alertKey(word)
				rows = append(rows, storage.AlertWord{RealmID: realm.ID, UserID: me.ID, Word: word, Key: key, FirstToken: firstToken(key)})
			}
			if err := w.AddAlertWords(ctx, rows); err != nil {
				return err
			}
		} else {
			keys := make([]string, len(words))
			for i, word := range words {
				keys[i] = alertKey(word)
			}
			if err := w.RemoveAlertWords(ctx, realm.ID, me.ID, keys); err != nil {
				return err
			}
		}
		var err error
		if after, err = w.reads().listAlertWords(ctx, me); err != nil {
			return err
		}
		w.emit(toUsers(me.ID), AlertWordsEvent{AlertWords: after})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "change alert words", err)
	}
	return &AlertWordsResponse{AlertWords: after}, nil
}
