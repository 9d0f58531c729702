// Command server runs teamchat on its own: the web client at "/" and the
// REST API at /api/v1, on an embedded SQLite file by default, or on
// PostgreSQL with -db postgres://...
//
//	go run ./examples/server
//
// On its first start it creates the organization and prints the owner's
// email, password and API key: log in with them in a browser at
// http://127.0.0.1:9991/, or use the ready-to-paste curl command. Later
// starts reuse the database.
//
// With -invite it prints a reusable invitation link for a second person
// (and the curl command that accepts it) and exits:
//
//	go run ./examples/server -invite
//
// With -smtp it mails missed-message notifications through that SMTP
// server (and logs push notifications, which it has no service for):
//
//	go run ./examples/server -smtp 127.0.0.1:2525 -smtp-tls none
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage/blob"
	"github.com/teamchat/chat/storage/blob/s3blob"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
	"github.com/teamchat/chat/transport/web"
	"github.com/teamchat/chat/transport/webhook"
)

type config struct {
	addr, db, url, realmName, ownerEmail, ownerPassword, logLevel string
	// rateLimit is per user a minute; addressRateLimit per client address
	// a minute for unauthenticated requests; trustedProxies may name the
	// client (X-Forwarded-For).
	rateLimit, addressRateLimit int
	trustedProxies              string
	// uploads is the directory of uploaded files; s3 (an endpoint) keeps
	// them in an S3-compatible bucket instead.
	uploads, s3, s3Bucket, s3Region, s3Prefix string
	s3Insecure                                bool
	// invite: print a reusable invitation link and exit (printInvite).
	invite        bool
	inviteMinutes int
	// allowPrivateWebhooks lets outgoing webhooks reach loopback and
	// private addresses (a bot on this machine, for development).
	allowPrivateWebhooks bool
	// debugAddr serves Go's profiles (net/http/pprof) apart from the API.
	debugAddr string
	// metricsAddr serves /metrics, /healthz and /readyz apart from the
	// API (operate.go); metricsReady, if not nil, receives its address.
	metricsAddr  string
	metricsReady chan<- string
	// smtp sends missed-message emails (smtp.go).
	smtp smtpConfig
	// peerAddr is where the other servers on the database reach this one
	// (fleet.go): "" picks a free port on -addr's host (PostgreSQL only);
	// peerAdvertise is the address they dial, when not peerAddr's.
	peerAddr, peerAdvertise string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:9991", "address to listen on")
	flag.StringVar(&cfg.db, "db", "./teamchat.db", "SQLite file path, or a postgres:// DSN")
	flag.StringVar(&cfg.url, "url", "", "the organization's public URL (default http://<addr>); used when creating it")
	flag.StringVar(&cfg.realmName, "realm-name", "Teamchat", "organization name; used when creating it")
	flag.StringVar(&cfg.ownerEmail, "owner-email", "owner@teamchat.localhost", "owner's email; used when creating the organization")
	flag.StringVar(&cfg.ownerPassword, "owner-password", "", "owner's password; generated when empty; used when creating the organization")
	flag.StringVar(&cfg.logLevel, "log-level", "info", "debug (logs every request), info, warn or error")
	flag.IntVar(&cfg.rateLimit, "rate-limit", 200, "requests per minute per user; 0 turns the limit off")
	flag.IntVar(&cfg.addressRateLimit, "address-rate-limit", 100, "unauthenticated requests per minute per client address; 0 turns the limit off")
	flag.StringVar(&cfg.trustedProxies, "trusted-proxies", "", "comma-separated addresses or prefixes of reverse proxies whose X-Forwarded-For names the client")
	flag.StringVar(&cfg.uploads, "uploads", "", "directory of uploaded files (default: next to the SQLite file, <db>.uploads)")
	flag.StringVar(&cfg.s3, "s3", "", "S3-compatible endpoint (host:port) for uploaded files instead of a directory; credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	flag.StringVar(&cfg.s3Bucket, "s3-bucket", "teamchat-uploads", "S3 bucket of uploaded files")
	flag.StringVar(&cfg.s3Region, "s3-region", "", "S3 region")
	flag.StringVar(&cfg.s3Prefix, "s3-prefix", "", "S3 key prefix of uploaded files")
	flag.BoolVar(&cfg.s3Insecure, "s3-insecure", false, "talk to the S3 endpoint over plain HTTP")
	flag.BoolVar(&cfg.invite, "invite", false, "print a reusable invitation link (made by the owner) and how to accept it, then exit")
	flag.IntVar(&cfg.inviteMinutes, "invite-minutes", 0, "with -invite: how long the link works (default 10 days)")
	flag.StringVar(&cfg.debugAddr, "debug-addr", "", "serve Go's profiles (/debug/pprof/) on this address, apart from the API (off by default)")
	flag.StringVar(&cfg.metricsAddr, "metrics-addr", "", "serve /metrics (Prometheus text format), /healthz and /readyz on this address, apart from the API (off by default)")
	flag.BoolVar(&cfg.allowPrivateWebhooks, "allow-private-webhooks", false, "let outgoing webhooks reach loopback and private addresses (development: a bot on this machine)")
	flag.StringVar(&cfg.smtp.addr, "smtp", "", "SMTP server (host:port) for missed-message emails; without it no notifications are sent (pushes are logged)")
	flag.StringVar(&cfg.smtp.from, "smtp-from", "noreply@teamchat.localhost", "with -smtp: the sender address of notification emails")
	flag.StringVar(&cfg.smtp.user, "smtp-user", "", "with -smtp: the user to authenticate as (the password from -smtp-password or TEAMCHAT_SMTP_PASSWORD)")
	flag.StringVar(&cfg.smtp.password, "smtp-password", "", "with -smtp-user: the password (TEAMCHAT_SMTP_PASSWORD keeps it out of the process list)")
	flag.StringVar(&cfg.peerAddr, "peer-addr", "", "with PostgreSQL: where the other servers on the database reach this one (host:port, on a private network); default: a free port on -addr's host; \"off\": serve only this server's own event queues")
	flag.StringVar(&cfg.peerAdvertise, "peer-advertise", "", "with -peer-addr on 0.0.0.0 or [::]: the host:port the other servers dial (default: this machine's name and the port)")
	flag.StringVar(&cfg.smtp.tls, "smtp-tls", "opportunistic", "with -smtp: opportunistic (STARTTLS when offered), mandatory, implicit (TLS from the start) or none")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runServer := func() error { return run(ctx, cfg, os.Stdout, os.Stderr, nil) }
	if cfg.invite {
		runServer = func() error { return printInvite(ctx, cfg, os.Stdout) }
	}
	if err := runServer(); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run starts the server and blocks until ctx ends, then shuts down
// gracefully. ready, if not nil, receives the listening address.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer, ready chan<- string) error {
	start := time.Now()
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	log := slog.New(requestIDHandler{slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})})

	proxies, err := rest.ParseTrustedProxies(cfg.trustedProxies)
	if err != nil {
		return fmt.Errorf("-trusted-proxies: %w", err)
	}

	tel, err := setupTelemetry(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tel.stop(stopCtx)
	}()
	store, err := bunstore.Open(ctx, cfg.db)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	if err := store.Instrument(tel.tracers, tel.meters); err != nil {
		return fmt.Errorf("instrument the database: %w", err)
	}
	blobs, where, err := openBlobs(cfg)
	if err != nil {
		return err
	}
	hooks := webhook.New(webhook.Options{Version: "teamchat", AllowPrivate: cfg.allowPrivateWebhooks, Logger: log})
	opts := []chat.Option{chat.WithLogger(log), chat.WithBlobStore(blobs), chat.WithWebhookDeliverer(webhook.NewDeliverer(hooks))}
	opts = append(opts, tel.chatOptions()...)
	if n, err := newNotifier(cfg.smtp, log); err != nil {
		return err
	} else if n != nil {
		opts = append(opts, chat.WithNotifier(n))
	}
	if key := os.Getenv("TEAMCHAT_URL_SIGNING_KEY"); key != "" {
		// Servers sharing a database sign temporary file URLs alike.
		opts = append(opts, chat.WithURLSigningKey([]byte(key)))
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	peers, err := listenPeers(cfg, store.Dialect(), ln.Addr().String())
	if err != nil {
		return err
	}
	if peers != nil {
		defer peers.close()
		opts = append(opts, peers.option())
	}
	svc := chat.New(store, opts...)
	base := "http://" + displayAddr(ln.Addr().String())
	if cfg.url == "" {
		cfg.url = base
	}
	if err := ensureOrganization(ctx, svc, store, cfg, stdout, base); err != nil {
		return err
	}

	srv := &http.Server{
		// The handler bounds body reads itself (rest.WithBodyReadTimeout,
		// 30 s): a client that stalls mid-body loses its connection.
		// The web client at "/", the REST API at /api/v1 (and the files
		// it serves): one handler hands the other what is not its own.
		// Every request gets its ID first; /healthz and /readyz
		// answer beside the rest (operate.go).
		Handler: withRequestID(health(svc, web.NewHandler(web.WithNext(rest.NewHandler(svc, rest.WithRateLimit(cfg.rateLimit, time.Minute),
			rest.WithAddressRateLimit(cfg.addressRateLimit, time.Minute), rest.WithTrustedProxies(proxies...),
			rest.WithMeterProvider(tel.meters), rest.WithTracerProvider(tel.tracers)))))),
		ReadHeaderTimeout: 10 * time.Second,
		// Long enough for the event long-poll (90 s client timeout).
		WriteTimeout: 120 * time.Second,
		IdleTimeout:  120 * time.Second,
	}
	if peers != nil {
		peers.serve(svc)
		log.Info("serving the fleet's calls", "peer", peers.advertised)
	}
	if cfg.debugAddr != "" {
		stopDebug, err := serveDebug(cfg.debugAddr)
		if err != nil {
			return err
		}
		defer stopDebug()
	}
	if cfg.metricsAddr != "" {
		bound, stopMetrics, err := serveMetrics(cfg.metricsAddr, svc, tel.metrics)
		if err != nil {
			return err
		}
		defer stopMetrics()
		log.Info("serving metrics", "metrics", "http://"+displayAddr(bound)+"/metrics")
		if cfg.metricsReady != nil {
			cfg.metricsReady <- bound
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// The Service's background work (full-member promotion, hourly;
	// scheduled messages, as they fall due). It stops with the server,
	// which waits for it before the store closes.
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	background := make(chan struct{})
	go func() { defer close(background); _ = svc.Run(runCtx) }()
	defer func() { stopRun(); <-background }()
	log.Info("listening", "web", base+"/", "api", base+"/api/v1", "db", redactDSN(cfg.db), "uploads", where, "startup", time.Since(start).Round(time.Millisecond))
	if ready != nil {
		ready <- ln.Addr().String()
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	return shutdown(srv, errc, svc, peers, func() { stopRun(); <-background }, log)
}

// shutdown stops the server without its clients noticing: the event
// queues drain (waiting polls end; with peers, the queues move to them),
// requests in flight finish, the background work stops, and what queues
// are left move to the peers or, with none, are saved for the next start
// (chat.Service.HandOverEvents).
func shutdown(srv *http.Server, errc <-chan error, svc *chat.Service, peers *peerListener, stopRun func(), log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := svc.DrainEvents(ctx); err != nil {
		log.Warn("draining the event queues failed", "err", err)
	}
	err := srv.Shutdown(ctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	stopRun()
	if herr := svc.HandOverEvents(ctx); herr != nil {
		log.Warn("handing the event queues over failed; their clients register again", "err", herr)
	}
	if peers != nil {
		peers.shutdown(ctx)
	}
	return err
}

// ensureOrganization creates the organization on the first start and prints
// how to log in; on later starts it prints how to fetch an API key.
func ensureOrganization(ctx context.Context, svc *chat.Service, store *bunstore.Store, cfg config, out io.Writer, base string) error {
	realms, err := store.ListRealms(ctx)
	if err != nil {
		return err
	}
	if len(realms) > 0 {
		fmt.Fprintf(out, "teamchat: serving %q at %s/api/v1\n", realms[0].Name, base)
		fmt.Fprintf(out, "Web client: open %s/ and log in with your email and password.\n", base)
		fmt.Fprintf(out, "Get an API key with your email and password:\n  curl -sS %s/api/v1/fetch_api_key -d username=EMAIL -d password=PASSWORD\n", base)
		return nil
	}
	password := cfg.ownerPassword
	if password == "" {
		password = randomPassword()
	}
	resp, err := svc.CreateRealm(ctx, chat.CreateRealmRequest{
		Name: cfg.realmName, URL: cfg.url,
		OwnerEmail: cfg.ownerEmail, OwnerFullName: "Owner", OwnerPassword: password,
	})
	if err != nil {
		return fmt.Errorf("create organization: %w", err)
	}
	fmt.Fprintf(out, "teamchat: created organization %q at %s/api/v1\n", cfg.realmName, base)
	fmt.Fprintf(out, "  owner email:    %s\n  owner password: %s\n  owner API key:  %s\n", cfg.ownerEmail, password, resp.OwnerAPIKey)
	fmt.Fprintf(out, "Web client: open %s/ and log in with the email and password above.\n", base)
	fmt.Fprintf(out, "Try it:\n  curl -sS -u %s:%s %s/api/v1/users/me\n", cfg.ownerEmail, resp.OwnerAPIKey, base)
	return nil
}

func randomPassword() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// displayAddr turns a listening address into one a client can dial.
func displayAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "@"); i >= 0 && strings.Contains(dsn, "://") {
		return dsn[:strings.Index(dsn, "://")+3] + "***" + dsn[i:]
	}
	return dsn
}

// openBlobs opens where uploaded files live: an S3-compatible bucket with
// -s3, else a directory (-uploads, by default next to the SQLite file).
func openBlobs(cfg config) (blob.Store, string, error) {
	if cfg.s3 != "" {
		st, err := s3blob.New(s3blob.Config{Endpoint: cfg.s3, Bucket: cfg.s3Bucket, Region: cfg.s3Region, Prefix: cfg.s3Prefix,
			AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
			UseSSL: !cfg.s3Insecure, PathStyle: true})
		if err != nil {
			return nil, "", fmt.Errorf("-s3: %w", err)
		}
		return st, "s3://" + cfg.s3Bucket + "/" + cfg.s3Prefix, nil
	}
	dir := cfg.uploads
	if dir == "" {
		dir = "./teamchat-uploads"
		if !strings.Contains(cfg.db, "://") {
			dir = cfg.db + ".uploads"
		}
	}
	st, err := blob.NewDir(dir)
	if err != nil {
		return nil, "", fmt.Errorf("-uploads: %w", err)
	}
	return st, dir, nil
}

// serveDebug serves net/http/pprof's handlers on addr.
func serveDebug(addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}
