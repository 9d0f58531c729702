package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/peer"
)

// Several servers on one PostgreSQL database (the README's "Several
// servers"): each listens for its peers' calls (transport/peer) on
// -peer-addr and records that address in the database, so that any of
// them answers a request for any event queue behind an ordinary
// round-robin balancer.

// peerListener is the listener of the fleet's calls and what serves them.
type peerListener struct {
	ln         net.Listener
	advertised string
	transport  *peer.Transport
	srv        *http.Server
}

// listenPeers opens the fleet's listener (nil on SQLite, whose one
// process has every queue, or with -peer-addr off). apiAddr is the API's
// bound address, whose host the default shares.
func listenPeers(cfg config, dialect, apiAddr string) (*peerListener, error) {
	if cfg.peerAddr == "off" || dialect != bunstore.DialectPostgres && cfg.peerAddr == "" {
		return nil, nil
	}
	if dialect != bunstore.DialectPostgres {
		return nil, errors.New("-peer-addr: several servers need a shared PostgreSQL database (-db postgres://...)")
	}
	addr := cfg.peerAddr
	if addr == "" {
		host, _, err := net.SplitHostPort(apiAddr)
		if err != nil {
			return nil, err
		}
		addr = net.JoinHostPort(host, "0")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-peer-addr: %w", err)
	}
	adv := cfg.peerAdvertise
	if adv == "" {
		host, port, _ := net.SplitHostPort(ln.Addr().String())
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			if host, err = os.Hostname(); err != nil {
				_ = ln.Close()
				return nil, fmt.Errorf("-peer-advertise: %w", err)
			}
		}
		adv = net.JoinHostPort(host, port)
	}
	if strings.TrimSpace(adv) == "" {
		_ = ln.Close()
		return nil, errors.New("-peer-advertise is empty")
	}
	return &peerListener{ln: ln, advertised: adv, transport: peer.NewTransport()}, nil
}

// option makes the Service a server of the fleet.
func (p *peerListener) option() chat.Option {
	return chat.WithFleet(chat.FleetConfig{Address: p.advertised, Transport: p.transport})
}

// serve answers the peers' calls to svc until shutdown.
func (p *peerListener) serve(svc *chat.Service) {
	p.srv = peer.NewServer(svc)
	go func() { _ = p.srv.Serve(p.ln) }()
}

// shutdown stops serving the peers (after the queues were handed over).
func (p *peerListener) shutdown(ctx context.Context) {
	if p.srv != nil {
		_ = p.srv.Shutdown(ctx)
	}
	p.transport.Close()
}

// close releases what shutdown did not (an early return).
func (p *peerListener) close() {
	if p.srv != nil {
		_ = p.srv.Close()
	}
	_ = p.ln.Close()
}
