// Package email sends the Service's missed-message emails
// (chat.EmailNotification) through an SMTP server, with
// github.com/wneessen/go-mail: one multipart/alternative message (plain
// text and HTML) per notification, its Message-ID made from the
// notification's Key so that a copy sent twice is recognizable.
//
//	mailer, err := email.New(email.Options{Addr: "smtp.example.com:587", From: "noreply@example.com",
//		Username: "noreply", Password: os.Getenv("SMTP_PASSWORD")})
//	svc := chat.New(store, chat.WithNotifier(notifier{mailer, pushService}))
//
// A Sender implements the email half of chat.Notifier (NotifyEmail); the
// host adds NotifyPush for its push service (examples/server logs them).
package email

import (
	"context"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"strconv"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"

	chat "github.com/teamchat/chat"
)

// TLS modes of Options.TLS.
const (
	// TLSOpportunistic uses STARTTLS when the server offers it (the
	// default).
	TLSOpportunistic = "opportunistic"
	// TLSMandatory requires STARTTLS.
	TLSMandatory = "mandatory"
	// TLSImplicit connects with TLS from the start (usually port 465).
	TLSImplicit = "implicit"
	// TLSNone never encrypts (a relay on the same machine).
	TLSNone = "none"
)

// Options configure a Sender.
type Options struct {
	// Addr is the SMTP server, host:port.
	Addr string
	// From is the sender address (a display name given with it is left
	// out: the notification's FromName is used).
	From string
	// Username and Password authenticate to the server when Username is
	// set: with the best mechanism the server offers, or PLAIN when TLS
	// is TLSNone.
	Username, Password string
	// TLS is one of the TLS* modes (default TLSOpportunistic).
	TLS string
	// Timeout bounds connecting and each command (default 30 s).
	Timeout time.Duration
	// HELO is the name the client gives itself (default "localhost").
	HELO string
}

// Sender delivers chat.EmailNotification values by SMTP.
type Sender struct {
	opts Options
	host string
	port int
	// domain is the sender address's, for Message-IDs.
	domain string
}

// New checks the options and returns a Sender; it connects only to send.
func New(o Options) (*Sender, error) {
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("email: SMTP address %q: want host:port", o.Addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65535 {
		return nil, fmt.Errorf("email: SMTP port %q", port)
	}
	if o.From == "" {
		return nil, errors.New("email: a sender address is needed")
	}
	from, err := netmail.ParseAddress(o.From)
	if err != nil {
		return nil, fmt.Errorf("email: sender address: %w", err)
	}
	o.From = from.Address
	domain := from.Address[strings.LastIndex(from.Address, "@")+1:]
	switch o.TLS {
	case "":
		o.TLS = TLSOpportunistic
	case TLSOpportunistic, TLSMandatory, TLSImplicit, TLSNone:
	default:
		return nil, fmt.Errorf("email: TLS mode %q (want %s, %s, %s or %s)", o.TLS, TLSOpportunistic, TLSMandatory, TLSImplicit, TLSNone)
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.HELO == "" {
		o.HELO = "localhost"
	}
	return &Sender{opts: o, host: host, port: p, domain: domain}, nil
}

// Message builds the email of a notification.
func (s *Sender) Message(n chat.EmailNotification) (*mail.Msg, error) {
	m := mail.NewMsg()
	if err := m.FromFormat(n.FromName, s.opts.From); err != nil {
		return nil, fmt.Errorf("email: from: %w", err)
	}
	if err := m.AddToFormat(n.ToName, n.To); err != nil {
		return nil, fmt.Errorf("email: to %q: %w", n.To, err)
	}
	if n.ReplyTo != "" {
		// A reply is posted into the conversation (the reference's
		// Reply-To, named after the organization).
		if err := m.ReplyToFormat(n.RealmName, n.ReplyTo); err != nil {
			return nil, fmt.Errorf("email: reply-to %q: %w", n.ReplyTo, err)
		}
	}
	m.Subject(n.Subject)
	m.SetDate()
	if n.Key != "" {
		m.SetMessageIDWithValue(n.Key + "@" + s.domain)
	} else {
		m.SetMessageID()
	}
	m.SetGenHeader(mail.Header("Auto-Submitted"), "auto-generated")
	m.SetBulk()
	m.SetBodyString(mail.TypeTextPlain, n.Text)
	m.AddAlternativeString(mail.TypeTextHTML, n.HTML)
	return m, nil
}

// NotifyEmail sends one notification: one connection, one message.
func (s *Sender) NotifyEmail(ctx context.Context, n chat.EmailNotification) error {
	m, err := s.Message(n)
	if err != nil {
		return err
	}
	opts := []mail.Option{mail.WithPort(s.port), mail.WithTimeout(s.opts.Timeout), mail.WithHELO(s.opts.HELO)}
	switch s.opts.TLS {
	case TLSOpportunistic:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	case TLSMandatory:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	case TLSImplicit:
		opts = append(opts, mail.WithSSL())
	case TLSNone:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	if s.opts.Username != "" {
		// The best mechanism the server offers; over a connection the
		// options say is never encrypted, PLAIN (go-mail sends no
		// password in the clear unless told).
		auth := mail.SMTPAuthAutoDiscover
		if s.opts.TLS == TLSNone {
			auth = mail.SMTPAuthPlainNoEnc
		}
		opts = append(opts, mail.WithSMTPAuth(auth), mail.WithUsername(s.opts.Username), mail.WithPassword(s.opts.Password))
	}
	c, err := mail.NewClient(s.host, opts...)
	if err != nil {
		return fmt.Errorf("email: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, m); err != nil {
		return fmt.Errorf("email: send to %s: %w", s.opts.Addr, err)
	}
	return nil
}
