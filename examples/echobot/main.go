// Command echobot is an outgoing-webhook bot: it answers every message that
// mentions it (or every direct message to it) with what was said, its own
// mention taken out.
//
//	go run ./examples/echobot -listen :8081 -token <token>
//
// The token (also read from the ECHOBOT_TOKEN environment variable) is the
// one the server showed when the bot's service was created, with the
// generic interface and the URL of this server (http://host:8081/). The
// bot answers a request with a wrong token 401 and never calls anything
// itself: it only uses package transport/webhook's bot side.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/teamchat/chat/transport/webhook"
)

func main() {
	listen := flag.String("listen", ":8081", "address to listen on")
	token := flag.String("token", os.Getenv("ECHOBOT_TOKEN"), "the bot service's token (default $ECHOBOT_TOKEN)")
	flag.Parse()
	if *token == "" {
		fmt.Fprintln(os.Stderr, "echobot: -token or ECHOBOT_TOKEN is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *token); err != nil {
		fmt.Fprintln(os.Stderr, "echobot:", err)
		os.Exit(1)
	}
}

// run serves the bot on addr until ctx ends.
func run(ctx context.Context, addr, token string) error {
	srv := &http.Server{
		Addr:              addr,
		Handler:           newHandler(token),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	slog.Info("echobot: listening", "addr", addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHandler returns the bot's endpoint: it echoes what was said to the
// bot. A mention with nothing else gets no reply.
func newHandler(token string) http.Handler {
	return webhook.NewHandler(token, func(ctx context.Context, p *webhook.Payload) (string, error) {
		return webhook.StripMention(p.Data, p.BotFullName), nil
	})
}
