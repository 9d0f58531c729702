// Package peer carries the calls between the servers of a fleet (several
// servers on one database; see chat.FleetConfig) over HTTP: NewServer
// serves a Service's ServePeer, and Transport is the chat.PeerTransport
// that calls it.
//
// A call is POST /peer/{op} with a JSON body and the fleet's secret as a
// bearer token; the answer is the JSON ServePeer returns, or an error
// status with {"code","msg"}. A call may wait for events as long as a long
// poll does (a minute); the caller's deadline travels in the
// Peer-Timeout-Ms header, and a caller that goes away cancels the call.
// Both ends speak HTTP/2 without TLS (prior knowledge), so that every
// call between two servers shares one connection however many long polls
// are waiting: the peer address belongs on a private network, like the
// database's.
package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/internal/wire"
)

// maxBody bounds a call's body (a handover of many queues is the
// largest).
const maxBody = 256 << 20

const timeoutHeader = "Peer-Timeout-Ms"

// NewHandler returns the handler of the calls to svc.
func NewHandler(svc *chat.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := strings.CutPrefix(r.URL.Path, "/peer/")
		if r.Method != http.MethodPost || !ok || op == "" {
			writeError(w, http.StatusNotFound, "BAD_REQUEST", "Not found")
			return
		}
		secret, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", "Unreadable body")
			return
		}
		ctx := r.Context()
		if ms, err := strconv.ParseInt(r.Header.Get(timeoutHeader), 10, 64); err == nil && ms > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
			defer cancel()
		}
		out, err := svc.ServePeer(ctx, secret, op, body)
		if err != nil {
			e := chat.AsError(err)
			writeError(w, wire.Of(err).Status, e.Code, e.Msg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "msg": msg})
}

// NewServer returns an HTTP server of NewHandler(svc) that speaks HTTP/1
// and HTTP/2 without TLS; the host calls its Serve with a listener on the
// address it gives chat.FleetConfig, and Shutdown after the Service's
// HandOverEvents.
func NewServer(svc *chat.Service) *http.Server {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           NewHandler(svc),
		Protocols:         p,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: 100_000},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       5 * time.Minute,
	}
}

// Transport is the chat.PeerTransport over HTTP/2 without TLS.
type Transport struct {
	client *http.Client
}

// NewTransport returns a Transport. A peer that cannot be connected to
// within a second is taken as gone.
func NewTransport() *Transport {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &Transport{client: &http.Client{Transport: &http.Transport{
		Protocols:   p,
		DialContext: (&net.Dialer{Timeout: time.Second, KeepAlive: 15 * time.Second}).DialContext,
		// A connection that stops answering pings is dropped (and the
		// calls on it fail) instead of hanging.
		HTTP2:           &http.HTTP2Config{SendPingTimeout: 10 * time.Second, PingTimeout: 5 * time.Second},
		IdleConnTimeout: 5 * time.Minute,
	}}}
}

// Close releases the Transport's idle connections.
func (t *Transport) Close() { t.client.CloseIdleConnections() }

// Call implements chat.PeerTransport.
func (t *Transport) Call(ctx context.Context, addr, secret, op string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/peer/"+op, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	if d, ok := ctx.Deadline(); ok {
		// The peer answers a little before the caller gives up.
		ms := time.Until(d).Milliseconds() - 50
		if ms <= 0 {
			return nil, context.DeadlineExceeded
		}
		req.Header.Set(timeoutHeader, strconv.FormatInt(ms, 10))
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Code, Msg string }
		_ = json.Unmarshal(out, &e)
		return nil, fmt.Errorf("peer %s: %s: %d %s: %s", addr, op, resp.StatusCode, e.Code, e.Msg)
	}
	return out, nil
}

var _ chat.PeerTransport = (*Transport)(nil)
