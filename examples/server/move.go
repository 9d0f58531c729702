package main

import (
	"archive/zip"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/importer/slack"
	"github.com/teamchat/chat/storage/bunstore"
)

// Commands that do one piece of administrative work on the database and
// exit: -export FILE, -import FILE, -import-slack FILE.zip and
// -set-password EMAIL. They open the store and a Service as the server
// does, without listening.

// moveConfig holds the commands' flags.
type moveConfig struct {
	exportFile, importFile, importSlack, setPassword string
}

func (m moveConfig) any() bool {
	return m.exportFile != "" || m.importFile != "" || m.importSlack != "" || m.setPassword != ""
}

// runMove does the command the flags name.
func runMove(ctx context.Context, cfg config, stdin io.Reader, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := bunstore.Open(ctx, cfg.db)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	blobs, _, err := openBlobs(cfg)
	if err != nil {
		return err
	}
	svc := chat.New(store, chat.WithLogger(log), chat.WithBlobStore(blobs))
	defer svc.Close()
	m := cfg.move
	switch {
	case m.exportFile != "":
		return exportTo(ctx, svc, store, cfg, stdout, stderr)
	case m.importFile != "":
		f, err := os.Open(m.importFile)
		if err != nil {
			return err
		}
		defer f.Close()
		return importFrom(ctx, svc, cfg, f, stdout, stderr)
	case m.importSlack != "":
		return importSlackFile(ctx, svc, cfg, stdout, stderr)
	default:
		return setPassword(ctx, svc, store, cfg, stdin, stdout)
	}
}

// realmOf finds the organization served at -url, or the only one.
func realmOf(ctx context.Context, svc *chat.Service, store *bunstore.Store, cfg config) (int64, error) {
	if cfg.url != "" {
		_, host, ok := strings.Cut(cfg.url, "://")
		if !ok {
			return 0, fmt.Errorf("-url %q: want http(s)://host[:port]", cfg.url)
		}
		return svc.RealmForHost(ctx, strings.TrimSuffix(host, "/"))
	}
	realms, err := store.FirstRealms(ctx, 2)
	if err != nil {
		return 0, err
	}
	switch len(realms) {
	case 0:
		return 0, errors.New("the database holds no organization")
	case 1:
		return realms[0].ID, nil
	}
	return 0, errors.New("the database holds several organizations: name one with -url")
}

// progress shows a bar on a terminal and a log line every few seconds
// otherwise.
func progress(stderr io.Writer, what string) (report func(chat.Progress), done func()) {
	if f, ok := stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			var bar *progressbar.ProgressBar
			return func(p chat.Progress) {
					if bar == nil {
						bar = progressbar.NewOptions64(p.TotalRecords+p.TotalFiles, progressbar.OptionSetWriter(stderr),
							progressbar.OptionSetDescription(what), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
							progressbar.OptionSetItsString("records"), progressbar.OptionSetPredictTime(true),
							progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionFullWidth())
					}
					bar.Describe(fmt.Sprintf("%s %s", what, p.Kind))
					_ = bar.Set64(p.Records + p.Files)
				}, func() {
					if bar != nil {
						_ = bar.Finish()
						fmt.Fprintln(stderr)
					}
				}
		}
	}
	start, last := time.Now(), time.Now()
	return func(p chat.Progress) {
		if time.Since(last) < 5*time.Second {
			return
		}
		last = time.Now()
		rate := float64(p.Records) / time.Since(start).Seconds()
		fmt.Fprintf(stderr, "%s: %s, %d of %d records, %d of %d files, %.0f records/s\n", what, p.Kind, p.Records, p.TotalRecords, p.Files, p.TotalFiles, rate)
	}, func() {}
}

func exportTo(ctx context.Context, svc *chat.Service, store *bunstore.Store, cfg config, stdout, stderr io.Writer) error {
	realmID, err := realmOf(ctx, svc, store, cfg)
	if err != nil {
		return err
	}
	f, err := os.Create(cfg.move.exportFile)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	report, done := progress(stderr, "export")
	start := time.Now()
	res, err := svc.ExportRealm(ctx, w, chat.ExportRequest{RealmID: realmID, Progress: report})
	done()
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Close()
	} else {
		_ = f.Close()
	}
	if err != nil {
		_ = os.Remove(cfg.move.exportFile)
		return fmt.Errorf("export: %w", err)
	}
	var records int64
	for _, k := range res.Manifest.Kinds {
		records += k.Records
	}
	info, _ := os.Stat(cfg.move.exportFile)
	took := time.Since(start)
	msgs := res.Manifest.Kind("messages").Records
	fmt.Fprintf(stdout, "exported %q (%d records, %d messages) to %s: %d bytes in %v, %.0f messages/s\n", res.Manifest.Realm.Name, records,
		msgs, cfg.move.exportFile, info.Size(), took.Round(time.Millisecond), float64(msgs)/took.Seconds())
	for _, m := range res.MissingFiles {
		fmt.Fprintf(stderr, "warning: file %s is missing from the file store; its record is exported without it\n", m)
	}
	return nil
}

func importFrom(ctx context.Context, svc *chat.Service, cfg config, r io.Reader, stdout, stderr io.Writer) error {
	report, done := progress(stderr, "import")
	start := time.Now()
	res, err := svc.ImportRealm(ctx, bufio.NewReaderSize(r, 1<<20), chat.ImportRequest{URL: cfg.url, Progress: report})
	done()
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	kept := "kept"
	if !res.IDsKept {
		kept = "renumbered"
	}
	took := time.Since(start)
	fmt.Fprintf(stdout, "imported organization %d: %d records (%d messages), %d files in %v, %.0f messages/s (IDs %s)\n", res.RealmID, res.Records,
		res.Counts["messages"], res.Files, took.Round(time.Millisecond), float64(res.Counts["messages"])/took.Seconds(), kept)
	return nil
}

func importSlackFile(ctx context.Context, svc *chat.Service, cfg config, stdout, stderr io.Writer) error {
	zr, err := zip.OpenReader(cfg.move.importSlack)
	if err != nil {
		return fmt.Errorf("-import-slack: %w", err)
	}
	defer zr.Close()
	pr, pw := io.Pipe()
	var rep *slack.Report
	var convErr error
	converted := make(chan struct{})
	go func() {
		defer close(converted)
		rep, convErr = slack.Convert(ctx, &zr.Reader, pw, slack.Options{URL: cfg.url, Name: cfg.realmName})
		pw.CloseWithError(convErr)
	}()
	err = importFrom(ctx, svc, cfg, pr, stdout, stderr)
	_ = pr.CloseWithError(errors.New("import ended"))
	<-converted
	if convErr != nil {
		return fmt.Errorf("-import-slack: %w", convErr)
	}
	if err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	fmt.Fprintf(stdout, "Imported users have no password: set one with -set-password EMAIL (the password from TEAMCHAT_NEW_PASSWORD or standard input).\n")
	return nil
}

func setPassword(ctx context.Context, svc *chat.Service, store *bunstore.Store, cfg config, stdin io.Reader, stdout io.Writer) error {
	realmID, err := realmOf(ctx, svc, store, cfg)
	if err != nil {
		return err
	}
	password, ok := os.LookupEnv("TEAMCHAT_NEW_PASSWORD")
	if !ok {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read the password from standard input: %w", err)
		}
		password = strings.TrimRight(line, "\r\n")
	}
	if err := svc.SetUserPassword(ctx, realmID, chat.SetUserPasswordRequest{Email: cfg.move.setPassword, Password: password}); err != nil {
		return fmt.Errorf("-set-password: %w", err)
	}
	fmt.Fprintf(stdout, "password of %s set\n", cfg.move.setPassword)
	return nil
}
