package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/internal/seed"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// The seeded organization: the shape of BenchmarkHistory's (1,000 users,
// eight channels, 10% direct messages), so that the two measure the same
// history. The owner is in every channel; channel 0 is the largest.
const (
	seedNumber   = 7
	seedHost     = "seed7.example.com"
	seedOwner    = "owner@seed.example.com"
	seedChannel0 = "channel 0 (1000)"
	// seededName is the organization's name once seeding finished: the
	// database's own record that it holds a complete organization of N
	// messages (an interrupted seed leaves seed.Run's name).
	seededName = "Load test: %d messages"
)

var seedConfig = seed.Config{Users: 1000, ChannelSizes: []int{1000, 100, 10, 500, 50, 20, 5, 200},
	DirectShare: 0.1, MentionShare: 0.05, ReadShare: 0.9, Seed: seedNumber, Batch: 5000}

// seededOrg is what the scenarios need of a seeded organization.
type seededOrg struct {
	Messages   int
	RealmID    int64
	OwnerEmail string
	OwnerKey   string
	ChannelID  int64 // the largest channel
}

// scenario is a read load over a seeded organization, with the issue's
// target for it.
type scenario struct {
	minRPS float64       // 0: no throughput target
	maxP99 time.Duration // the latency target
	// exact is the number of messages every answer must hold (0: at
	// least one).
	exact int
	paths func(o seededOrg) []string
}

func (s scenario) target() string {
	t := fmt.Sprintf("p99 <= %v", s.maxP99)
	if s.minRPS > 0 {
		t = fmt.Sprintf(">= %.0f req/s, ", s.minRPS) + t
	}
	return t
}

// The search scenarios rotate over words of the seed's vocabulary (every
// message is 4 to 15 of its 30 words, every topic one of them), so that
// each query matches many messages and the newest 100 are a full page.
var scenarios = map[string]scenario{
	"fetch": {minRPS: 1500, maxP99: 10 * time.Millisecond, exact: 100, paths: func(o seededOrg) []string {
		return []string{messagesPath(fmt.Sprintf(`[{"operator":"channel","operand":%d}]`, o.ChannelID))}
	}},
	"search1": {maxP99: 50 * time.Millisecond, paths: func(seededOrg) []string {
		return searchPaths("lunch", "deploy", "review", "coffee", "budget", "incident", "latency")
	}},
	"search2": {maxP99: 50 * time.Millisecond, paths: func(seededOrg) []string {
		return searchPaths("deploy budget", "lunch meeting", "coffee plan", "release review", "server cache", "sprint metrics", "database index")
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

// defaultDB is the SQLite file for n messages when -db is not given.
func defaultDB(n int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("teamchat-load-%d.db", n))
}

// runSeeded seeds (or reuses) an organization of n messages in db (a
// SQLite file, or a postgres:// DSN), serves the REST handler on a
// loopback port in this process without the per-user rate limit, checks
// one answer of each request, loads it with the scenario and prints the
// measurement beside the target.
func runSeeded(db string, n int, name, cpuprofile string, conc int, dur time.Duration, maxReq int64) error {
	sc, ok := scenarios[name]
	if !ok {
		return fmt.Errorf("unknown -scenario %q (fetch, search1 or search2)", name)
	}
	ownDB := db == ""
	if ownDB {
		db = defaultDB(n)
	}
	if name == "fetch" && strings.HasPrefix(db, "postgres") {
		// The reads issue's target on PostgreSQL.
		sc.minRPS, sc.maxP99 = 1000, 15*time.Millisecond
	}
	ctx := context.Background()
	store, err := bunstore.Open(ctx, db)
	if err != nil {
		return err
	}
	defer func() { _ = store.Close() }()
	org, err := findSeeded(ctx, store, n)
	if errors.Is(err, errUnfinished) && ownDB {
		// An interrupted seed of our own file: start it again.
		fmt.Printf("%s: %v; seeding it again\n", db, err)
		_ = store.Close()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(db + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		if store, err = bunstore.Open(ctx, db); err != nil {
			return err
		}
		org, err = findSeeded(ctx, store, n)
	}
	svc := chat.New(store)
	switch {
	case errors.Is(err, errNotSeeded):
		if org, err = seedOrg(ctx, svc, store, n); err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("%s: %w; give another -db", redact(db), err)
	default:
		fmt.Printf("reusing the organization of %d messages in %s\n", org.Messages, redact(db))
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rest.NewHandler(svc, rest.WithRealm(org.RealmID), rest.WithRateLimit(0, time.Minute)),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	t := target{bases: []string{"http://" + ln.Addr().String()}, paths: sc.paths(org), email: org.OwnerEmail, key: org.OwnerKey}
	t.path = t.paths[0]
	fmt.Printf("scenario %s over %d messages (%s), served in this process at %s\n", name, org.Messages, dialect(db), ln.Addr())
	if err := checkAnswers(t, sc); err != nil {
		return err
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			fmt.Printf("CPU profile in %s; the server side alone: go tool pprof -top -tagignore side=client %s\n", cpuprofile, cpuprofile)
		}()
	}
	st, err := loadStats(t, conc, dur, maxReq)
	if err != nil {
		return err
	}
	verdict := "met"
	var short []string
	if sc.minRPS > 0 && st.rps < sc.minRPS {
		short = append(short, fmt.Sprintf("%.0f req/s is %.0f%% below", st.rps, 100*(1-st.rps/sc.minRPS)))
	}
	if st.p99 > sc.maxP99 {
		short = append(short, fmt.Sprintf("p99 %v is %.0f%% above", st.p99.Round(10*time.Microsecond), 100*(float64(st.p99)/float64(sc.maxP99)-1)))
	}
	if len(short) > 0 {
		verdict = "MISSED: " + strings.Join(short, ", ")
	}
	fmt.Printf("target: %s; measured with %d clients: %.0f req/s, p50 %v, p99 %v: %s\n", sc.target(), conc, st.rps,
		st.p50.Round(10*time.Microsecond), st.p99.Round(10*time.Microsecond), verdict)
	// The same requests made in this process (Service.GetMessages, no
	// HTTP or JSON), with the same concurrency, for comparison.
	caller, err := svc.Authenticate(ctx, org.RealmID, org.OwnerEmail, org.OwnerKey)
	if err != nil {
		return err
	}
	in, err := inProcessStats(ctx, svc, caller, t.paths, conc, dur)
	if err != nil {
		return err
	}
	fmt.Printf("in process (Service.GetMessages, the same requests, %d goroutines): %.0f req/s, p50 %v, p99 %v; over REST: %.0f%% of it\n",
		conc, in.rps, in.p50.Round(10*time.Microsecond), in.p99.Round(10*time.Microsecond), 100*st.rps/in.rps)
	return nil
}

// inProcessStats calls GetMessages with the parameters of paths, in turn,
// from conc goroutines for dur.
func inProcessStats(ctx context.Context, svc *chat.Service, c chat.Caller, paths []string, conc int, dur time.Duration) (stats, error) {
	reqs := make([]chat.GetMessagesRequest, len(paths))
	for i, p := range paths {
		u, err := url.Parse(p)
		if err != nil {
			return stats{}, err
		}
		q := u.Query()
		before, _ := strconv.Atoi(q.Get("num_before"))
		after, _ := strconv.Atoi(q.Get("num_after"))
		anchor, narrow := q.Get("anchor"), q.Get("narrow")
		reqs[i] = chat.GetMessagesRequest{Anchor: &anchor, NumBefore: &before, NumAfter: &after, Narrow: &narrow}
	}
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	lat := make([][]time.Duration, conc)
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			for i := w; ctx.Err() == nil; i++ {
				t0 := time.Now()
				if _, err := svc.GetMessages(ctx, c, reqs[i%len(reqs)]); err != nil {
					// A call cut by the phase's end is not an error (the
					// database connection's deadline, which is the
					// context's, may fire a moment before the context
					// says so).
					if deadline, _ := ctx.Deadline(); ctx.Err() == nil && time.Until(deadline) > 10*time.Millisecond {
						mu.Lock()
						firstErr = err
						mu.Unlock()
					}
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return stats{}, firstErr
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return stats{}, errors.New("no call completed")
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration { return all[int(p*float64(len(all)-1))] }
	return stats{rps: float64(len(all)) / time.Since(start).Seconds(), p50: pct(0.5), p99: pct(0.99)}, nil
}

// checkAnswers GETs each of the scenario's paths once and checks that the
// answer is a success holding the messages it should, so that the load
// does not measure errors or empty results.
func checkAnswers(t target, sc scenario) error {
	client := &http.Client{Timeout: 30 * time.Second}
	var counts []string
	for i := range t.paths {
		req := t.request(context.Background(), int64(i))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var answer struct {
			Result   string            `json:"result"`
			Msg      string            `json:"msg"`
			Messages []json.RawMessage `json:"messages"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &answer) != nil || answer.Result != "success" {
			return fmt.Errorf("GET %s: %s: %.300s", req.URL.RequestURI(), resp.Status, body)
		}
		got := len(answer.Messages)
		if (sc.exact > 0 && got != sc.exact) || got == 0 {
			return fmt.Errorf("GET %s: %d messages", req.URL.RequestURI(), got)
		}
		counts = append(counts, fmt.Sprint(got))
	}
	fmt.Printf("checked one answer per request (%d distinct): %s messages\n", len(t.paths), strings.Join(counts, ", "))
	return nil
}

var (
	errNotSeeded  = errors.New("no seeded organization")
	errUnfinished = errors.New("its seeded organization is unfinished or of another size")
)

// findSeeded finds the complete organization of n messages that an
// earlier run seeded into store. An empty database gives errNotSeeded;
// one with other organizations, or an unfinished one, an error.
func findSeeded(ctx context.Context, store *bunstore.Store, n int) (seededOrg, error) {
	org := seededOrg{Messages: n, OwnerEmail: seedOwner}
	realms, err := store.ListRealms(ctx)
	if err != nil {
		return org, err
	}
	var realm *storage.Realm
	for i := range realms {
		if realms[i].Host == seedHost {
			realm = &realms[i]
		}
	}
	switch {
	case realm == nil && len(realms) == 0:
		return org, errNotSeeded
	case realm == nil:
		return org, errors.New("holds other organizations than a seeded one")
	case realm.Name != fmt.Sprintf(seededName, n):
		return org, fmt.Errorf("%w (%q, not %q)", errUnfinished, realm.Name, fmt.Sprintf(seededName, n))
	}
	org.RealmID = realm.ID
	owner, err := store.GetUserByEmail(ctx, realm.ID, seedOwner)
	if err != nil {
		return org, err
	}
	org.OwnerKey = owner.APIKey
	ch, err := store.GetStreamByName(ctx, realm.ID, seedChannel0)
	if err != nil {
		return org, err
	}
	org.ChannelID = ch.ID
	return org, nil
}

// seedOrg seeds the organization, refreshes the planner's statistics and
// marks the organization complete.
func seedOrg(ctx context.Context, svc *chat.Service, store *bunstore.Store, n int) (seededOrg, error) {
	start := time.Now()
	cfg := seedConfig
	cfg.Messages = n
	seeded, err := seed.Run(ctx, svc, store, cfg)
	if err != nil {
		return seededOrg{}, err
	}
	if seeded.Channels[0].Name != seedChannel0 {
		return seededOrg{}, fmt.Errorf("the seeded largest channel is %q, not %q", seeded.Channels[0].Name, seedChannel0)
	}
	seedTime := time.Since(start)
	if err := store.Analyze(ctx); err != nil {
		return seededOrg{}, err
	}
	realm, err := store.GetRealm(ctx, seeded.RealmID)
	if err != nil {
		return seededOrg{}, err
	}
	realm.Name = fmt.Sprintf(seededName, n)
	if err := store.UpdateRealm(ctx, realm, "name"); err != nil {
		return seededOrg{}, err
	}
	fmt.Printf("seeded %d messages (%d direct) in %v, then ANALYZE in %v\n", seeded.Messages, seeded.Direct,
		seedTime.Round(time.Second), (time.Since(start) - seedTime).Round(time.Second))
	return seededOrg{Messages: n, RealmID: seeded.RealmID, OwnerEmail: seedOwner, OwnerKey: seeded.OwnerKey,
		ChannelID: seeded.Channels[0].ID}, nil
}

func dialect(db string) string {
	if strings.Contains(db, "://") {
		return "PostgreSQL"
	}
	return "SQLite " + db
}

// redact hides a DSN's password.
func redact(db string) string {
	if u, err := url.Parse(db); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxx")
			return u.String()
		}
	}
	return db
}
