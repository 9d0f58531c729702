package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/internal/seed"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// seededOrg is what a seeded database holds for the scenarios, kept beside
// it (<db>.load.json) so that a second run reuses the database instead of
// seeding again.
type seededOrg struct {
	Messages   int    `json:"messages"`
	RealmID    int64  `json:"realm_id"`
	OwnerEmail string `json:"owner_email"`
	OwnerKey   string `json:"owner_key"`
	ChannelID  int64  `json:"channel_id"` // the largest channel; the owner is in every channel
}

// scenarios are the read loads over a seeded organization, with the
// issue's target for each.
var scenarios = map[string]struct {
	target string
	paths  func(o seededOrg) []string
}{
	"fetch": {">= 1500 requests/s with 4 clients, p99 <= 10 ms", func(o seededOrg) []string {
		return []string{messagesPath(fmt.Sprintf(`[{"operator":"channel","operand":%d}]`, o.ChannelID))}
	}},
	"search1": {"p99 <= 50 ms", func(seededOrg) []string {
		return searchPaths("lunch", "deploy", "review", "coffee", "budget")
	}},
	"search2": {"p99 <= 50 ms", func(seededOrg) []string {
		return searchPaths("deploy budget", "lunch meeting", "coffee plan", "release review", "server cache")
	}},
}

func messagesPath(narrow string) string {
	return "/api/v1/messages?" + url.Values{"anchor": {"newest"}, "num_before": {"100"}, "num_after": {"0"},
		"narrow": {narrow}}.Encode()
}

func searchPaths(queries ...string) []string {
	var out []string
	for _, q := range queries {
		narrow, _ := json.Marshal([]map[string]string{{"operator": "search", "operand": q}})
		out = append(out, messagesPath(string(narrow)))
	}
	return out
}

// runSeeded seeds (or reuses) an organization of n messages in the SQLite
// file db, serves the REST handler on a loopback port in this process,
// and loads it with the scenario.
func runSeeded(db string, n int, scenario, cpuprofile string, conc int, dur time.Duration, maxReq int64) error {
	sc, ok := scenarios[scenario]
	if !ok {
		return fmt.Errorf("unknown -scenario %q (fetch, search1 or search2)", scenario)
	}
	if strings.Contains(db, "://") {
		return errors.New("-seed-messages needs a SQLite file for -db")
	}
	ctx := context.Background()
	store, err := bunstore.Open(ctx, db)
	if err != nil {
		return err
	}
	defer store.Close()
	svc := chat.New(store)
	org, err := seededOrganization(ctx, svc, store, db, n)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rest.NewHandler(svc, rest.WithRealm(org.RealmID), rest.WithRateLimit(0, time.Minute)),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Printf("scenario %s over %d messages, served in this process at %s; target: %s\n", scenario, org.Messages, ln.Addr(), sc.target)
	t := target{base: "http://" + ln.Addr().String(), paths: sc.paths(org), email: org.OwnerEmail, key: org.OwnerKey}
	t.path = t.paths[0]
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	_, err = load(t, conc, dur, maxReq)
	return err
}

func seededOrganization(ctx context.Context, svc *chat.Service, store *bunstore.Store, db string, n int) (seededOrg, error) {
	var org seededOrg
	side := db + ".load.json"
	if b, err := os.ReadFile(side); err == nil {
		if err := json.Unmarshal(b, &org); err != nil {
			return org, fmt.Errorf("%s: %w", side, err)
		}
		if org.Messages != n {
			return org, fmt.Errorf("%s holds %d messages, not %d: use another -db", db, org.Messages, n)
		}
		return org, nil
	}
	start := time.Now()
	seeded, err := seed.Run(ctx, svc, store, seed.Config{Users: 1000,
		ChannelSizes: []int{1000, 100, 10, 500, 50, 20, 5, 200}, Messages: n,
		DirectShare: 0.1, MentionShare: 0.05, ReadShare: 0.9, Seed: 7, Batch: 5000})
	if err != nil {
		return org, err
	}
	if err := store.Analyze(ctx); err != nil {
		return org, err
	}
	fmt.Printf("seeded %d messages (%d direct) in %v\n", seeded.Messages, seeded.Direct, time.Since(start).Round(time.Second))
	org = seededOrg{Messages: n, RealmID: seeded.RealmID, OwnerEmail: "owner@seed.example.com", OwnerKey: seeded.OwnerKey,
		ChannelID: seeded.Channels[0].ID}
	b, _ := json.Marshal(org)
	return org, os.WriteFile(side, b, 0o600)
}
