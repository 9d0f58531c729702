package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/internal/wire"
)

// HTTPStatus is the HTTP status the REST API answers err with: the
// reference's for that error, which the error carries (a permission
// refusal is chat.KindForbidden and may answer 400 or 403).
func HTTPStatus(err error) int { return wire.Of(err).Status }

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// jsonAppender is a response that writes its own JSON (as encoding/json
// would, without HTML escaping), faster than reflection: the window of
// messages of GET /messages.
type jsonAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// EncodeSuccess returns the success envelope of a Service response as the
// handler writes it: {"result":"success","msg":"", ...resp}, with
// ignored_parameters_unsupported when ignored is not empty. resp must encode
// to a JSON object (nil encodes as an empty one).
func EncodeSuccess(resp any, ignored []string) ([]byte, error) {
	return appendSuccess(nil, resp, ignored)
}

// appendSuccess is EncodeSuccess appending to b.
func appendSuccess(b []byte, resp any, ignored []string) ([]byte, error) {
	isNil := resp == nil || reflect.ValueOf(resp).Kind() == reflect.Pointer && reflect.ValueOf(resp).IsNil()
	if a, ok := resp.(jsonAppender); ok && !isNil && len(ignored) == 0 {
		// Written in place after the envelope's first members: the
		// object's "{" becomes their ",", its "}" closes the envelope.
		b = append(b, `{"result":"success","msg":""`...)
		at := len(b)
		b, err := a.AppendJSON(b)
		if err != nil {
			return nil, err
		}
		if len(b) < at+2 || b[at] != '{' || b[len(b)-1] != '}' {
			return nil, fmt.Errorf("rest: response %T does not encode to a JSON object", resp)
		}
		if len(b) == at+2 {
			return append(b[:at], '}'), nil // empty
		}
		b[at] = ','
		return b, nil
	}
	body := []byte("{}")
	if !isNil {
		var err error
		if body, err = marshal(resp); err != nil {
			return nil, err
		}
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("rest: response %T does not encode to a JSON object", resp)
	}
	out := bytes.NewBuffer(b)
	out.Grow(len(body) + 64)
	out.WriteString(`{"result":"success","msg":""`)
	if len(ignored) > 0 {
		names, err := marshal(ignored)
		if err != nil {
			return nil, err
		}
		out.WriteString(`,"ignored_parameters_unsupported":`)
		out.Write(names)
	}
	if inner := bytes.TrimSpace(body[1 : len(body)-1]); len(inner) > 0 {
		out.WriteByte(',')
		out.Write(inner)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

func writeSuccess(w http.ResponseWriter, log *slog.Logger, r *http.Request, resp any, ignored []string) {
	buf := bodyBuffers.Get().(*[]byte)
	body, err := appendSuccess((*buf)[:0], resp, ignored)
	if err != nil {
		bodyBuffers.Put(buf)
		writeError(w, log, r, chat.Internal(err))
		return
	}
	writeJSON(w, http.StatusOK, body)
	if cap(body) <= maxPooledBody {
		*buf = body
		bodyBuffers.Put(buf)
	}
}

// bodyBuffers keep the answers' buffers for the next answers, so that a
// large body (a window of messages) is not grown from nothing each time.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledBody is the largest buffer kept for reuse.
const maxPooledBody = 1 << 20

// writeError writes the error envelope with the status the error carries
// (the reference's for it; its Kind says what it means, not how it is
// answered). Internal errors are logged with their detail and answered
// generically.
func writeError(w http.ResponseWriter, log *slog.Logger, r *http.Request, err error) {
	e := chat.AsError(err)
	answer := wire.Of(e)
	status := answer.Status
	if rec, ok := w.(*statusRecorder); ok {
		rec.failure, rec.op = e, answer.Op
	}
	if e.Kind == chat.KindInternal {
		// The Service logs its internal errors with their operation; only
		// the others (the transport's own) are logged here.
		if r.Context().Err() == nil && !e.Logged() {
			log.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "op", answer.Op, "err", err)
		}
		e = chat.Internal(nil)
	}
	// Every rate-limit or unavailable answer says when to retry in the
	// header too, not only in the body.
	if e.Code == chat.CodeRateLimitHit || e.Kind == chat.KindUnavailable {
		if secs, ok := e.Fields["retry-after"].(float64); ok && w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", fmt.Sprint(int64(math.Ceil(secs))))
		}
	}
	obj := make(map[string]any, 3+len(e.Fields))
	for k, v := range e.Fields {
		obj[k] = v
	}
	obj["result"], obj["msg"], obj["code"] = "error", e.Msg, e.Code
	body, mErr := marshal(obj)
	if mErr != nil {
		body = []byte(`{"result":"error","msg":"Internal server error","code":"BAD_REQUEST"}`)
		status = http.StatusInternalServerError
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="chat"`)
	}
	writeJSON(w, status, body)
}

// writeMethodNotAllowed answers a known path with an unsupported method the
// way the reference does: 405, an Allow header, and allowed_methods.
func writeMethodNotAllowed(w http.ResponseWriter, allowed []string) {
	body, _ := marshal(map[string]any{"result": "error", "msg": "Method Not Allowed", "allowed_methods": allowed})
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	writeJSON(w, http.StatusMethodNotAllowed, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func retryHeader(d time.Duration) string {
	return fmt.Sprint(int64(math.Ceil(d.Seconds())))
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	// failure is the error answered, and op its operation (for the
	// request's log line).
	failure *chat.Error
	op      string
	// route is the pattern of the route served (with /api/v1), empty
	// when none matched.
	route string
}

// Unwrap gives http.ResponseController the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
