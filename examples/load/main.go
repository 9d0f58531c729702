// Command load sends a bounded load of authenticated requests to a running
// teamchat server on this machine and reports requests per second and
// latency percentiles. Start the server without its per-user rate limit:
//
//	go run ./examples/server -rate-limit 0 &
//	go run ./examples/load -email owner@teamchat.localhost -key API_KEY -c 16 -d 10s
//
// By default it GETs -path. -send CHANNEL posts messages to that channel
// instead (POST /messages); -members N first makes the channel if needed
// and subscribes the owner and N-1 other users (made if needed). With
// -ceiling it first measures, in the same run, the raw ceiling the
// issues compare sends with: one message row and ten small rows inserted
// in one transaction, by raw go-sqlite3 with the server's pragmas, or,
// with -ceiling-db postgres://..., by pgdriver (the server's driver) with
// the server's pool size through that DSN (so through the same latency
// proxy, if any): BEGIN, the message with RETURNING, the ten rows in one
// statement, COMMIT. -readers N loads the sends alone, then again beside
// N clients GETting -path, and reports both (the sends' share of their
// rate alone). -baseline first loads a trivial net/http handler.
//
// -url takes several servers, comma-separated: the clients take turns
// among them (for app servers sharing one database). -host sends every
// request with that Host header, as a load balancer in front of them
// would pass the organization's public name: without it each server is
// asked by its own address, and a server whose address is not the
// organization's URL looks the organization up in the database on every
// request.
//
// -seed-messages N measures reads over a large history in one command,
// for the messages issue's targets: it seeds an organization of N messages
// (1,000 users, eight channels of 5 to 1,000 subscribers, 10% direct
// messages: BenchmarkHistory's shape) into -db, serves the REST handler in
// this process on a loopback port without the per-user rate limit, checks
// one answer of each request (a success, with 100 messages for fetch and
// at least one for the searches), loads it with -scenario and prints the
// issue's target beside the measurement:
//
//	fetch    a channel's newest 100 messages (the largest channel, by ID,
//	         as the owner, who is in every channel): >= 1500 req/s with 4
//	         clients, p99 <= 10 ms (on PostgreSQL >= 1000 req/s, p99 <= 15 ms)
//	search1  the newest 100 results of one-word searches, in turn over
//	         seven words of the seed's vocabulary: p99 <= 50 ms
//	search2  the same with seven two-word searches: p99 <= 50 ms
//
//	go run ./examples/load -seed-messages 1000000 -scenario fetch -c 4 -d 15s
//	go run ./examples/load -seed-messages 1000000 -scenario search1 -c 4 -d 15s
//	go run ./examples/load -seed-messages 1000000 -scenario search2 -c 4 -d 15s
//
// -db is a SQLite file (default $TMPDIR/teamchat-load-N.db) or a
// postgres:// DSN of an empty database. The first run seeds it (1,000,000
// messages take a few minutes on SQLite) and names the organization after
// its size once complete; later runs with the same N find it there and
// reuse it. An unfinished seed of the default file is started again; of a
// -db given, it is an error. -cpuprofile writes a CPU profile of the
// process while loading; the load generator runs under the pprof label
// side=client, so the server's share alone is
//
//	go tool pprof -top -tagignore side=client FILE
//
// Client and server share this machine's cores, as in any loopback
// measurement: the client's share is in the profile.
//
// It only talks to loopback addresses, and stops after -d or -n requests.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:9991", "server base URL (loopback only)")
	path := flag.String("path", "/api/v1/users/me", "path to GET")
	email := flag.String("email", "", "user email (HTTP Basic username)")
	key := flag.String("key", "", "API key")
	conc := flag.Int("c", 16, "concurrent connections")
	dur := flag.Duration("d", 10*time.Second, "duration (at most 5m)")
	maxReq := flag.Int64("n", 5_000_000, "stop after this many requests")
	baseline := flag.Bool("baseline", false, "first load a trivial net/http JSON handler (started here, on loopback) with the same settings, and report the target's rate as a share of it")
	host := flag.String("host", "", "the Host header of every request (as a load balancer in front of -url's servers passes the public name); default: each server's own address")
	send := flag.String("send", "", "post messages to this channel (POST /messages) instead of GETting -path")
	ceiling := flag.Bool("ceiling", false, "with -send: first measure the raw database ceiling (1 message + 10 small rows per transaction) with the same concurrency, and report the sends as a share of it")
	ceilingDB := flag.String("ceiling-db", "", "with -ceiling: a postgres:// DSN of a database to measure the PostgreSQL ceiling on (a table of its own, dropped after); default: go-sqlite3 on a temporary file")
	members := flag.Int("members", 0, "with -send: make the channel if needed, with the owner and this many users in all (made if needed)")
	readers := flag.Int("readers", 0, "with -send: load the sends alone, then beside this many clients GETting -path, and compare")
	seedMessages := flag.Int("seed-messages", 0, "instead of loading -url: seed an organization of this many messages into -db (or reuse it), serve it in this process and load it with -scenario")
	db := flag.String("db", "", "with -seed-messages: a SQLite file (default $TMPDIR/teamchat-load-N.db) or a postgres:// DSN, seeded on the first run and reused after")
	cpuprofile := flag.String("cpuprofile", "", "with -seed-messages: write a CPU profile of this process while loading (the load generator is labeled side=client)")
	scenario := flag.String("scenario", "fetch", "with -seed-messages: fetch (a channel's newest 100), search1 or search2 (one- and two-word searches, newest 100)")
	flag.Parse()
	t := target{bases: strings.Split(*base, ","), host: *host, path: *path, email: *email, key: *key, channel: *send}
	var err error
	if *members > 0 && *send != "" {
		if err := ensureChannel(t, *members); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
	}
	switch {
	case *seedMessages > 0:
		err = runSeeded(*db, *seedMessages, *scenario, *cpuprofile, *conc, *dur, *maxReq)
	case *ceiling:
		err = compareCeiling(t, *ceilingDB, *conc, *dur, *maxReq)
	case *readers > 0 && *send != "":
		err = sendsBesideReads(t, *conc, *readers, *dur, *maxReq)
	case *baseline:
		err = compare(t, *conc, *dur, *maxReq)
	default:
		_, err = load(t, *conc, *dur, *maxReq)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// target is what to load: GET base+path, or, with a channel, POST
// messages to it.
type target struct {
	// bases are the servers' base URLs; the n-th request goes to
	// bases[n % len(bases)].
	bases []string
	// host, when set, is every request's Host header.
	host             string
	path, email, key string
	channel          string
	// paths, when set, are GET in turn instead of path.
	paths []string
}

// request builds the n-th request.
func (t target) request(ctx context.Context, n int64) *http.Request {
	var req *http.Request
	base := t.bases[n%int64(len(t.bases))]
	if t.channel == "" {
		path := t.path
		if len(t.paths) > 0 {
			path = t.paths[n%int64(len(t.paths))]
		}
		req, _ = http.NewRequestWithContext(ctx, "GET", base+path, nil)
	} else {
		form := url.Values{"type": {"channel"}, "to": {t.channel}, "topic": {fmt.Sprintf("load %d", n%10)},
			"content": {fmt.Sprintf("Load message **%d**, sent by examples/load.", n)}}
		req, _ = http.NewRequestWithContext(ctx, "POST", base+"/api/v1/messages", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.SetBasicAuth(t.email, t.key)
	if t.host != "" {
		req.Host = t.host
	}
	return req
}

// forWorker is the target of worker w: one of the servers.
func (t target) forWorker(w int) target {
	t.bases = []string{t.bases[w%len(t.bases)]}
	return t
}

func (t target) label() string {
	if len(t.paths) > 1 {
		return fmt.Sprintf("GET %s (and %d more in turn)", t.path, len(t.paths)-1)
	}
	if t.channel == "" {
		return "GET " + t.path
	}
	return fmt.Sprintf("POST /messages to %q", t.channel)
}

// compare loads a trivial JSON handler, then the target, in one run with
// the same client settings, and prints the ratio of their rates.
func compare(t target, conc int, dur time.Duration, maxReq int64) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	trivial := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"result":"success","msg":""}`))
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = trivial.Serve(ln) }()
	defer trivial.Close()
	fmt.Println("baseline: a trivial net/http JSON handler in this process")
	trivialTarget := t
	trivialTarget.bases, trivialTarget.channel = []string{"http://" + ln.Addr().String()}, ""
	floor, err := load(trivialTarget, conc, dur, maxReq)
	if err != nil {
		return err
	}
	fmt.Println("target:")
	got, err := load(t, conc, dur, maxReq)
	if err != nil {
		return err
	}
	fmt.Printf("target / baseline: %.0f / %.0f requests/s = %.1f%%\n", got, floor, 100*got/floor)
	return nil
}

// checkLoopback refuses a server that is not on this machine.
func checkLoopback(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	ips, err := net.LookupIP(u.Hostname())
	if err != nil || len(ips) == 0 || !ips[0].IsLoopback() {
		return errors.New("refusing a non-loopback target: this tool loads servers on this machine only")
	}
	return nil
}

// stats is what load measured.
type stats struct {
	rps      float64
	p50, p99 time.Duration
}

// load sends the load and prints its report; it returns requests/s (and,
// through loadStats, the latencies). The workers run under the pprof label
// side=client, so that a CPU profile of a run against a handler in this
// process can leave the load generator out (-tagignore side=client).
func load(t target, conc int, dur time.Duration, maxReq int64) (float64, error) {
	st, err := loadStats(t, conc, dur, maxReq)
	return st.rps, err
}

func loadStats(t target, conc int, dur time.Duration, maxReq int64) (stats, error) {
	for _, base := range t.bases {
		if err := checkLoopback(base); err != nil {
			return stats{}, err
		}
	}
	if dur > 5*time.Minute {
		dur = 5 * time.Minute
	}
	if conc < 1 {
		conc = 1
	}
	transport := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}
	// Each worker keeps to one server, so that -url's servers share the
	// clients evenly.
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()

	var sent, failed atomic.Int64
	lat := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go pprof.Do(ctx, pprof.Labels("side", "client"), func(ctx context.Context) {
			defer wg.Done()
			for ctx.Err() == nil {
				n := sent.Add(1)
				if n > maxReq {
					break
				}
				req := t.forWorker(w).request(ctx, n)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return stats{}, errors.New("no request completed")
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration { return all[int(p*float64(len(all)-1))] }
	fmt.Printf("%s: %d requests in %v with %d connections: %.0f requests/s, %d not 200\n",
		t.label(), len(all), elapsed.Round(time.Millisecond), conc, float64(len(all))/elapsed.Seconds(), failed.Load())
	fmt.Printf("latency p50 %v  p90 %v  p99 %v  max %v\n", pct(0.5), pct(0.9), pct(0.99), all[len(all)-1])
	st := stats{rps: float64(len(all)) / elapsed.Seconds(), p50: pct(0.5), p99: pct(0.99)}
	if failed.Load() > 0 {
		return st, fmt.Errorf("%d requests did not answer 200", failed.Load())
	}
	return st, nil
}
