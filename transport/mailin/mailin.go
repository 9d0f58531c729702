package mailin

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"

	chat "github.com/teamchat/chat"
)

// Gateway is what the listener needs of the Service.
type Gateway interface {
	CheckEmailRecipient(ctx context.Context, address string) (*chat.EmailRecipient, error)
	ReceiveEmail(ctx context.Context, m chat.InboundEmail) (*chat.ReceiveEmailResponse, error)
}

// Options configure a Server.
type Options struct {
	// Domain is the name the server gives itself (its HELO greeting).
	Domain string
	// MaxMessageBytes bounds a mail (default 25 MiB, advertised as SIZE).
	MaxMessageBytes int64
	// MaxRecipients bounds the recipients of a mail (default 50).
	MaxRecipients int
	// RatePerMinute bounds the mails a channel address takes a minute
	// (default 50, the reference's RATE_LIMITING_MIRROR_REALM_RULES;
	// negative: no limit).
	RatePerMinute int
	// Timeout bounds reading and writing each command, and the Service's
	// work on a mail (default 2 minutes).
	Timeout time.Duration
	// Logger logs refusals and failures (default: none).
	Logger *slog.Logger
	// Now is the clock of the rate limit (tests move it).
	Now func() time.Time
}

// Server is the SMTP listener.
type Server struct {
	gw      Gateway
	opts    Options
	smtp    *smtp.Server
	limiter *rateLimiter
}

// New returns a Server of the gateway; it listens once Serve or
// ListenAndServe is called.
func New(gw Gateway, o Options) *Server {
	if o.Domain == "" {
		o.Domain = "localhost"
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 25 << 20
	}
	if o.MaxRecipients <= 0 {
		o.MaxRecipients = 50
	}
	if o.RatePerMinute == 0 {
		o.RatePerMinute = 50
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{gw: gw, opts: o}
	if o.RatePerMinute > 0 {
		s.limiter = &rateLimiter{n: o.RatePerMinute, window: time.Minute, now: o.Now, hits: map[string][]time.Time{}}
	}
	s.smtp = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	s.smtp.Domain = o.Domain
	s.smtp.MaxMessageBytes = o.MaxMessageBytes
	s.smtp.MaxRecipients = o.MaxRecipients
	s.smtp.ReadTimeout = o.Timeout
	s.smtp.WriteTimeout = o.Timeout
	s.smtp.ErrorLog = errorLog{o.Logger}
	return s
}

// Serve takes connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error { return s.smtp.Serve(ln) }

// ListenAndServe listens on addr (host:port) and serves until Close.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Close stops listening and closes the connections.
func (s *Server) Close() error { return s.smtp.Close() }

// Shutdown stops listening and waits for the connections to end, or ctx.
func (s *Server) Shutdown(ctx context.Context) error { return s.smtp.Shutdown(ctx) }

type errorLog struct{ log *slog.Logger }

func (l errorLog) Printf(format string, v ...any) {
	l.log.Warn("email gateway: " + fmt.Sprintf(format, v...))
}
func (l errorLog) Println(v ...any) { l.log.Warn("email gateway: " + fmt.Sprint(v...)) }

// session is one SMTP conversation.
type session struct {
	s    *Server
	from string
	to   []string
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ctx, cancel := context.WithTimeout(context.Background(), ss.s.opts.Timeout)
	defer cancel()
	r, err := ss.s.gw.CheckEmailRecipient(ctx, to)
	if err != nil {
		ss.s.opts.Logger.Info("email gateway: recipient refused", "to", redact(to), "from", ss.from, "reason", chat.AsError(err).Msg)
		return smtpError(err)
	}
	if !r.Reply && ss.s.limiter != nil {
		if wait, ok := ss.s.limiter.allow(r.Token); !ok {
			ss.s.opts.Logger.Info("email gateway: rate limited", "realm_id", r.RealmID, "from", ss.from)
			return &smtp.SMTPError{Code: 450, EnhancedCode: smtp.EnhancedCode{4, 7, 0},
				Message: fmt.Sprintf("Too many mails to this address; try again in %d seconds", int(wait.Seconds())+1)}
		}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err // go-smtp answers 552 for a mail over the limit
	}
	m, err := Parse(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: ascii("Malformed mail: " + err.Error())}
	}
	ctx, cancel := context.WithTimeout(context.Background(), ss.s.opts.Timeout)
	defer cancel()
	// Each recipient's copy: a temporary failure wins (the sender tries
	// again, and what was posted is not posted twice), then a refusal.
	var refusal error
	for _, to := range ss.to {
		m.To = to
		if _, err := ss.s.gw.ReceiveEmail(ctx, m); err != nil {
			e := smtpError(err)
			if e.Temporary() {
				return e
			}
			if refusal == nil {
				refusal = e
			}
		}
	}
	return refusal
}

// smtpError is the SMTP reply of a Service error.
func smtpError(err error) *smtp.SMTPError {
	e := chat.AsError(err)
	msg := ascii(e.Msg)
	switch e.Kind {
	case chat.KindNotFound:
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: msg}
	case chat.KindInvalid:
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: msg}
	case chat.KindTooLarge:
		return &smtp.SMTPError{Code: 552, EnhancedCode: smtp.EnhancedCode{5, 3, 4}, Message: msg}
	case chat.KindRateLimited:
		return &smtp.SMTPError{Code: 450, EnhancedCode: smtp.EnhancedCode{4, 7, 0}, Message: msg}
	case chat.KindInternal, chat.KindUnavailable:
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Temporary failure; try again later"}
	default: // forbidden, conflict, deactivated
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: msg}
	}
}

// redact keeps an address's domain, not its secret part.
func redact(address string) string {
	if at := strings.LastIndex(address, "@"); at >= 0 {
		return "XXXXX" + address[at:]
	}
	return "XXXXX"
}

// rateLimiter counts hits per key in a sliding window.
type rateLimiter struct {
	n      int
	window time.Duration
	now    func() time.Time
	mu     sync.Mutex
	hits   map[string][]time.Time
	swept  time.Time
}

// allow counts a hit of key, or says how long until one is allowed.
func (l *rateLimiter) allow(key string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	cutoff := now.Add(-l.window)
	if now.Sub(l.swept) > l.window { // forget idle keys
		for k, h := range l.hits {
			if len(h) == 0 || !h[len(h)-1].After(cutoff) {
				delete(l.hits, k)
			}
		}
		l.swept = now
	}
	h := l.hits[key]
	i := 0
	for i < len(h) && !h[i].After(cutoff) {
		i++
	}
	h = h[i:]
	if len(h) >= l.n {
		l.hits[key] = h
		return h[0].Sub(cutoff), false
	}
	l.hits[key] = append(h, now)
	return 0, true
}
