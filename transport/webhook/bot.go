package webhook

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
)

// DefaultMaxPayloadBytes bounds the request body DecodePayload reads: a
// message is at most 10,000 characters, its rendering and the rest of
// the payload stay well under this.
const DefaultMaxPayloadBytes = 1 << 20

// PayloadError is an error of DecodePayload, with the HTTP status that
// answers it.
type PayloadError struct {
	Status int    // 405, 413, 415 or 400
	Msg    string // what was wrong
}

func (e *PayloadError) Error() string { return "webhook: " + e.Msg }

// DecodePayload reads the generic (interface 1) payload of an outgoing
// webhook request: a POST with a JSON object body of at most maxBytes
// bytes (DefaultMaxPayloadBytes when maxBytes <= 0). Its errors are
// *PayloadError. It does not check the token: see VerifyToken.
func DecodePayload(r *http.Request, maxBytes int64) (*Payload, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxPayloadBytes
	}
	if r.Method != http.MethodPost {
		return nil, &PayloadError{http.StatusMethodNotAllowed, "method " + r.Method + " not allowed: use POST"}
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, &PayloadError{http.StatusUnsupportedMediaType, "content type " + ct + " is not JSON (is the bot's interface Slack-compatible?)"}
		}
	}
	if r.Body == nil {
		return nil, &PayloadError{http.StatusBadRequest, "empty body"}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
	if err != nil {
		return nil, &PayloadError{http.StatusBadRequest, "reading the body: " + err.Error()}
	}
	if int64(len(body)) > maxBytes {
		return nil, &PayloadError{http.StatusRequestEntityTooLarge, fmt.Sprintf("body exceeds %d bytes", maxBytes)}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &PayloadError{http.StatusBadRequest, "empty body"}
	}
	var p Payload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, &PayloadError{http.StatusBadRequest, "invalid JSON payload: " + err.Error()}
	}
	return &p, nil
}

// VerifyToken reports whether the payload carries token, comparing in
// constant time. An empty token never matches.
func VerifyToken(p *Payload, token string) bool {
	if p == nil || token == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(p.Token), []byte(token)) == 1
}

// WriteReply answers an outgoing webhook request with content, Markdown
// the bot posts in the conversation: {"content": "..."}. An empty or
// white-space content posts nothing.
func WriteReply(w http.ResponseWriter, content string) error {
	return writeJSON(w, http.StatusOK, struct {
		Content string `json:"content"`
	}{content})
}

// WriteNoReply answers an outgoing webhook request without a reply:
// {"response_not_required": true}.
func WriteNoReply(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, struct {
		ResponseNotRequired bool `json:"response_not_required"`
	}{true})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// HandlerFunc answers one trigger: a non-empty reply is posted by the bot
// in the conversation, an empty one posts nothing. An error answers 500:
// the conversation then reads "Failure! Third party responded with 500"
// and the bot's owner is told.
type HandlerFunc func(ctx context.Context, p *Payload) (reply string, err error)

// Handler serves a bot's outgoing webhook endpoint (generic interface): it
// decodes the payload, checks the token and calls Func.
type Handler struct {
	// Token is the bot service's token, shown when the bot was created.
	Token string
	// Func answers the triggers whose token matches.
	Func HandlerFunc
	// MaxPayloadBytes bounds the body (DefaultMaxPayloadBytes when 0).
	MaxPayloadBytes int64
	// Logger receives Func's errors. Default slog.Default().
	Logger *slog.Logger
}

// NewHandler returns a Handler for token and fn. It panics when token is
// empty or fn nil: such a bot would answer nobody.
func NewHandler(token string, fn HandlerFunc) *Handler {
	if token == "" || fn == nil {
		panic("webhook: NewHandler needs a token and a function")
	}
	return &Handler{Token: token, Func: fn}
}

// ServeHTTP answers 405, 415, 413 or 400 to a request that is not a
// payload, 401 to a wrong token, 500 when Func fails, and otherwise the
// reply (or no reply). Error answers are {"msg": "..."}.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, err := DecodePayload(r, h.MaxPayloadBytes)
	if err != nil {
		var pe *PayloadError
		if !errors.As(err, &pe) {
			pe = &PayloadError{http.StatusBadRequest, err.Error()}
		}
		if pe.Status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
		_ = writeJSON(w, pe.Status, map[string]string{"msg": pe.Msg})
		return
	}
	if !VerifyToken(p, h.Token) {
		_ = writeJSON(w, http.StatusUnauthorized, map[string]string{"msg": "invalid token"})
		return
	}
	reply, err := h.Func(r.Context(), p)
	if err != nil {
		log := h.Logger
		if log == nil {
			log = slog.Default()
		}
		log.ErrorContext(r.Context(), "webhook bot: handler failed", "bot", p.BotEmail, "err", err)
		_ = writeJSON(w, http.StatusInternalServerError, map[string]string{"msg": "internal error"})
		return
	}
	if strings.TrimSpace(reply) == "" {
		_ = WriteNoReply(w)
		return
	}
	_ = WriteReply(w, reply)
}
