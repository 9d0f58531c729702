package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/transport/email"
)

// smtpConfig is how the server sends missed-message emails (-smtp ...).
type smtpConfig struct {
	addr, from, user, password, tls string
}

// notifier delivers the Service's missed-message notifications: emails
// through the SMTP server of -smtp, pushes to the log (no push service is
// wired here; see the README for how a host wires one).
type notifier struct {
	mail *email.Sender
	log  *slog.Logger
}

// newNotifier is the notifier of -smtp, or nil without it (then nothing
// is queued for anyone).
func newNotifier(c smtpConfig, log *slog.Logger) (*notifier, error) {
	if c.addr == "" {
		return nil, nil
	}
	password := c.password
	if password == "" {
		password = os.Getenv("TEAMCHAT_SMTP_PASSWORD")
	}
	sender, err := email.New(email.Options{Addr: c.addr, From: c.from, Username: c.user, Password: password, TLS: c.tls})
	if err != nil {
		return nil, fmt.Errorf("-smtp: %w", err)
	}
	return &notifier{mail: sender, log: log}, nil
}

func (n *notifier) NotifyEmail(ctx context.Context, e chat.EmailNotification) error {
	if err := n.mail.NotifyEmail(ctx, e); err != nil {
		return err
	}
	n.log.InfoContext(ctx, "notification email sent", "user_id", e.UserID, "subject", e.Subject, "messages", len(e.Messages))
	return nil
}

func (n *notifier) NotifyPush(ctx context.Context, p chat.PushNotification) error {
	n.log.InfoContext(ctx, "push notification (no push service: logged only)", "user_id", p.UserID, "message_id", p.MessageID,
		"trigger", p.Trigger, "title", p.Title, "subtitle", p.Subtitle, "body", p.Body, "link", p.Link)
	return nil
}
