package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/transport/mailin"
)

// gatewayConfig is the email gateway's (-email-gateway ...): where its
// SMTP listener listens and the domain of its addresses, whose MX points
// there.
type gatewayConfig struct {
	addr, domain string
	// ready, if not nil, receives the listener's address.
	ready chan<- string
}

// options are the Service's options of the gateway.
func (c gatewayConfig) options() ([]chat.Option, error) {
	if c.addr == "" {
		if c.domain != "" {
			return nil, errors.New("-email-gateway-domain needs -email-gateway")
		}
		return nil, nil
	}
	if c.domain == "" {
		return nil, errors.New("-email-gateway needs -email-gateway-domain (the domain whose MX points at it)")
	}
	return []chat.Option{chat.WithEmailGateway(c.domain)}, nil
}

// startGateway listens for mail and hands it to svc; stop ends it.
func startGateway(c gatewayConfig, svc *chat.Service, log *slog.Logger) (stop func(), err error) {
	if c.addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return nil, fmt.Errorf("-email-gateway: %w", err)
	}
	srv := mailin.New(svc, mailin.Options{Domain: c.domain, Logger: log})
	go func() { _ = srv.Serve(ln) }()
	log.Info("email gateway listening", "smtp", ln.Addr().String(), "domain", c.domain)
	if c.ready != nil {
		c.ready <- ln.Addr().String()
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
	}, nil
}
