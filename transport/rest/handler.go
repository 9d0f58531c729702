package rest

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"time"

	chat "github.com/teamchat/chat"
)

// Authenticator identifies the caller of a request. The default reads HTTP
// Basic credentials (email, API key) and checks them with the Service; a
// host application can pass its own through WithAuthenticator. Errors should
// be *chat.Error values (for example chat.Unauthorized(msg)).
type Authenticator func(r *http.Request, realmID int64) (chat.Caller, error)

// Option configures the Handler.
type Option func(*Handler)

// WithRealm serves one organization whatever the Host header says.
// Without it the organization is chosen by Host (see chat.Service.RealmForHost).
func WithRealm(realmID int64) Option { return func(h *Handler) { h.realmID = realmID } }

// WithAuthenticator replaces HTTP Basic API-key authentication by the host
// application's own function (its session cookie, its SSO, ...).
func WithAuthenticator(a Authenticator) Option { return func(h *Handler) { h.auth = a } }

// WithRateLimit sets the per-user request limit: n requests per window
// (default 200 per minute, as the reference). n <= 0 turns limiting off.
func WithRateLimit(n int, window time.Duration) Option {
	return func(h *Handler) {
		h.limiter = nil
		if n > 0 {
			h.limiter = newRateLimiter[chat.Caller](n, window, time.Now)
		}
	}
}

// WithAddressRateLimit sets the limit of requests that are not
// authenticated (logging in, accepting an invitation, the server
// settings, temporary file URLs and custom emoji images, and requests
// whose credentials fail): n per window from each client address (default
// 100 per minute, the reference's api_by_ip rule). An authenticated
// request never counts against its address: each user keeps their own
// budget (WithRateLimit). n <= 0 turns this limit off.
func WithAddressRateLimit(n int, window time.Duration) Option {
	return func(h *Handler) {
		h.addrLimiter = nil
		if n > 0 {
			h.addrLimiter = newRateLimiter[netip.Prefix](n, window, time.Now)
		}
	}
}

// WithTrustedProxies names the reverse proxies in front of the handler
// (see ParseTrustedProxies): for a request from one of them the client
// address is read from X-Forwarded-For, which they append to; from any
// other peer the header is ignored and the connection's address counts.
// Without this option X-Forwarded-For is never read.
func WithTrustedProxies(prefixes ...netip.Prefix) Option {
	return func(h *Handler) { h.trustedProxies = append(h.trustedProxies, prefixes...) }
}

// WithMaxBodyBytes limits request bodies (default 25 MiB).
func WithMaxBodyBytes(n int64) Option { return func(h *Handler) { h.maxBody = n } }

// WithBodyReadTimeout bounds how long a request may take to send its
// body (default 30 s; 0 leaves it to the http.Server): a client
// that sends part of a body and stops gets an error and its connection
// back, instead of holding it. The bound ends once the body is read, so a
// long-running answer (a long poll) is not cut by it.
func WithBodyReadTimeout(d time.Duration) Option { return func(h *Handler) { h.bodyTimeout = d } }

// WithClock sets the clock used by the rate limiters (tests move it).
func WithClock(now func() time.Time) Option {
	return func(h *Handler) { h.now = now }
}

// Handler serves the REST API under /api/v1. Mount it at the root of a mux,
// or under a prefix with http.StripPrefix.
type Handler struct {
	svc     *chat.Service
	router  *router
	realmID int64
	// auth is the host's Authenticator (WithAuthenticator); nil: HTTP
	// Basic (basicAuth).
	auth    Authenticator
	limiter *rateLimiter[chat.Caller]
	// addrLimiter limits unauthenticated requests per client address;
	// trustedProxies may say who the client is (X-Forwarded-For).
	addrLimiter    *rateLimiter[netip.Prefix]
	trustedProxies []netip.Prefix
	maxBody        int64
	// bodyTimeout bounds reading a request's body (see WithBodyReadTimeout).
	bodyTimeout time.Duration
	now         func() time.Time
	log         *slog.Logger
	tel         handlerTelemetry
}

// NewHandler returns the REST API of svc as an http.Handler.
func NewHandler(svc *chat.Service, opts ...Option) *Handler {
	h := &Handler{
		svc:         svc,
		router:      newRouter(routes()),
		maxBody:     25 << 20,
		bodyTimeout: 30 * time.Second,
		now:         time.Now,
		log:         svc.Logger(),
	}
	h.limiter = newRateLimiter[chat.Caller](200, time.Minute, time.Now)
	h.addrLimiter = newRateLimiter[netip.Prefix](100, time.Minute, time.Now)
	for _, o := range opts {
		o(h)
	}
	h.tel.start()
	if h.limiter != nil {
		h.limiter.now = h.now
	}
	if h.addrLimiter != nil {
		h.addrLimiter.now = h.now
	}
	return h
}

const apiPrefix = "/api/v1"

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := h.now()
	if h.bodyTimeout > 0 {
		// Not every ResponseWriter supports deadlines (test recorders):
		// then the http.Server's own timeouts apply.
		// It stays set when the body is not read to its end, so that the
		// server's discarding of the rest is bounded too.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.bodyTimeout))
	}
	if h.tel.on {
		h.serveObserved(w, r, start)
		return
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	h.serve(rec, r, r.Context())
	h.logRequest(r, rec, start)
}

// logRequest logs a request's answer at debug level.
func (h *Handler) logRequest(r *http.Request, rec *statusRecorder, start time.Time) {
	if !h.log.Enabled(r.Context(), slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", rec.status), slog.Duration("took", h.now().Sub(start))}
	if e := rec.failure; e != nil {
		attrs = append(attrs, slog.String("kind", e.Kind.String()), slog.String("code", e.Code), slog.String("op", rec.op))
	}
	h.log.LogAttrs(r.Context(), slog.LevelDebug, "request", attrs...)
}

// serve answers r in ctx: r's context, or the one of the request's
// server span when the span is not recorded (serveObserved), which
// r does not carry.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, ctx context.Context) {
	// Clients configured with a trailing slash request //api/v1/...: collapse
	// repeated slashes instead of redirecting (a redirect breaks POSTs).
	path := collapseSlashes(r.URL.EscapedPath())
	if strings.HasPrefix(path, uploadsPrefix) || strings.HasPrefix(path, emojiPrefix) {
		if rec, ok := w.(*statusRecorder); ok {
			rec.route = path[:len(uploadsPrefix)] + "{path...}" // both prefixes are as long
		}
		h.serveFile(w, withContext(r, ctx), path)
		return
	}
	if path != apiPrefix && !strings.HasPrefix(path, apiPrefix+"/") {
		writeError(w, h.log, r, &chat.Error{Kind: chat.KindNotFound, Code: chat.CodeBadRequest, Msg: "Not found"})
		return
	}
	res, params := h.router.find(strings.TrimPrefix(path, apiPrefix))
	if rec, ok := w.(*statusRecorder); ok && res != nil {
		rec.route = res.route
	}
	if res == nil {
		writeError(w, h.log, r, &chat.Error{Kind: chat.KindNotFound, Code: chat.CodeBadRequest, Msg: "Not found"})
		return
	}
	method := r.Method
	if method == http.MethodOptions {
		w.Header().Set("Allow", strings.Join(res.allowed, ", "))
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// Method tunnelling (the reference's rest.py): a POST whose form body
	// has a "method" field is served as that method (case-sensitive),
	// keeping its parameters; "method" itself is then an unknown
	// parameter. A "method" in the query string does nothing.
	var values url.Values
	if post := res.methods[http.MethodPost]; method == http.MethodPost && post != nil && post.upload {
		values = url.Values{} // the endpoint reads its own body
	} else if method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
		merged, body, err := readParamsAndBody(r)
		if err != nil {
			writeError(w, h.log, r, err)
			return
		}
		values = merged
		if m := body["method"]; len(m) > 0 {
			method = m[len(m)-1]
		}
	}
	if method == http.MethodHead {
		method = http.MethodGet
	}
	ep := res.methods[method]
	if ep == nil {
		writeMethodNotAllowed(w, res.allowed)
		return
	}
	if ep.auth != userRequired && h.limitedAddress(w, r) {
		return
	}
	c := &call{h: h, r: r, path: params}
	realmID, err := h.realm(ctx, r)
	switch {
	case err == nil:
		c.realmID = realmID
	case ep.auth == realmOptional && chat.AsError(err).Code == chat.CodeNonexistentSubdomain:
		// The root domain of a multi-organization server: no realm fields.
	default:
		writeError(w, h.log, r, err)
		return
	}
	if ep.auth == userRequired {
		c.caller, err = h.authenticate(ctx, r, c.realmID)
		if err != nil {
			// A request whose credentials fail is not authenticated: it
			// counts against its address (guessing keys costs budget).
			if !h.limitedAddress(w, r) {
				writeError(w, h.log, r, err)
			}
			return
		}
		if limited(h, h.limiter, c.caller, w, r) {
			return
		}
	}
	if values == nil {
		r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
		values, err = readParams(r)
		if err != nil {
			writeError(w, h.log, r, err)
			return
		}
	}
	c.values = values
	if h.bodyTimeout > 0 {
		// The body is read: what follows may take long (a long poll).
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
	resp, ignored, err := ep.serve(ctx, c)
	if err != nil {
		writeError(w, h.log, r, err)
		return
	}
	writeSuccess(w, h.log, r, resp, ignored)
}

func (h *Handler) realm(ctx context.Context, r *http.Request) (int64, error) {
	if h.realmID != 0 {
		return h.realmID, nil
	}
	return h.svc.RealmForHost(ctx, r.Host)
}

// withContext is r with ctx as its context (r itself when it has it).
func withContext(r *http.Request, ctx context.Context) *http.Request {
	if r.Context() == ctx {
		return r
	}
	return r.WithContext(ctx)
}

// authenticate identifies the caller of r, served in ctx: by the host's
// Authenticator (given r with ctx), or by basicAuth.
func (h *Handler) authenticate(ctx context.Context, r *http.Request, realmID int64) (chat.Caller, error) {
	if h.auth != nil {
		return h.auth(withContext(r, ctx), realmID)
	}
	return h.basicAuth(ctx, r, realmID)
}

// basicAuth is the default Authenticator: HTTP Basic with the user's email
// and API key (facts §6.2).
func (h *Handler) basicAuth(ctx context.Context, r *http.Request, realmID int64) (chat.Caller, error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return chat.Caller{}, chat.Unauthorized("Not logged in: API authentication or user session required")
	}
	scheme, payload, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return chat.Caller{}, chat.BadRequest("This endpoint requires HTTP basic authentication.")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(payload))
	if err != nil {
		return chat.Caller{}, chat.Unauthorized("Invalid authorization header for basic auth")
	}
	email, key, ok := strings.Cut(string(raw), ":")
	if !ok {
		return chat.Caller{}, chat.Unauthorized("Invalid authorization header for basic auth")
	}
	return h.svc.Authenticate(ctx, realmID, email, key)
}

func collapseSlashes(p string) string {
	if !strings.Contains(p, "//") {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

type authMode int

const (
	userRequired  authMode = iota // HTTP Basic (or the host's authenticator)
	realmRequired                 // no credentials, but an organization
	realmOptional                 // no credentials; organization if the Host names one
)

// call is one request on its way to the Service.
type call struct {
	h       *Handler
	r       *http.Request
	values  url.Values
	path    map[string]string
	realmID int64
	caller  chat.Caller
}

// endpoint is one route: method, pattern below /api/v1, and the adapter
// that decodes the request and calls the Service.
type endpoint struct {
	method  string
	pattern string
	auth    authMode
	// upload: the endpoint reads its multipart body itself (files).
	upload bool
	// req is the request struct the parameters are decoded into (nil for
	// endpoints without parameters).
	req   reflect.Type
	serve func(ctx context.Context, c *call) (any, []string, error)
}

// authed adapts a Service method of the standard shape
// (ctx, Caller, Request) -> (*Response, error).
func authed[Req, Resp any](method, pattern string, fn func(*chat.Service, context.Context, chat.Caller, Req) (*Resp, error)) endpoint {
	return endpoint{method: method, pattern: pattern, auth: userRequired, req: reflect.TypeFor[Req](),
		serve: func(ctx context.Context, c *call) (any, []string, error) {
			var req Req
			ignored, err := decode(c.values, c.path, &req)
			if err != nil {
				return nil, nil, err
			}
			fillHeaders(c.r, &req)
			resp, err := fn(c.h.svc, ctx, c.caller, req)
			return resp, ignored, err
		}}
}

// authedNoArgs adapts a Service method that takes no request.
func authedNoArgs[Resp any](method, pattern string, fn func(*chat.Service, context.Context, chat.Caller) (*Resp, error)) endpoint {
	return endpoint{method: method, pattern: pattern, auth: userRequired,
		serve: func(ctx context.Context, c *call) (any, []string, error) {
			ignored, err := decode(c.values, c.path, &struct{}{})
			if err != nil {
				return nil, nil, err
			}
			resp, err := fn(c.h.svc, ctx, c.caller)
			return resp, ignored, err
		}}
}

// public adapts an unauthenticated Service method scoped to an organization.
func public[Req, Resp any](method, pattern string, fn func(*chat.Service, context.Context, int64, Req) (*Resp, error)) endpoint {
	return endpoint{method: method, pattern: pattern, auth: realmRequired, req: reflect.TypeFor[Req](),
		serve: func(ctx context.Context, c *call) (any, []string, error) {
			var req Req
			ignored, err := decode(c.values, c.path, &req)
			if err != nil {
				return nil, nil, err
			}
			resp, err := fn(c.h.svc, ctx, c.realmID, req)
			return resp, ignored, err
		}}
}

// publicNoArgs adapts an unauthenticated method for which the organization
// is optional (realmID 0 when the Host names none).
func publicNoArgs[Resp any](method, pattern string, fn func(*chat.Service, context.Context, int64) (*Resp, error)) endpoint {
	return endpoint{method: method, pattern: pattern, auth: realmOptional,
		serve: func(ctx context.Context, c *call) (any, []string, error) {
			ignored, err := decode(c.values, c.path, &struct{}{})
			if err != nil {
				return nil, nil, err
			}
			resp, err := fn(c.h.svc, ctx, c.realmID)
			return resp, ignored, err
		}}
}
