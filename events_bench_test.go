package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

// The event system's performance targets, each reported beside its
// ceiling in the same run:
//
//	go test -run XXX -bench 'Events' -benchtime 200x .
//
// BenchmarkEventsSendToPoll: 1,000 queues long-poll; p99 from the start
// of a send to a waiting poll returning the message ≤ 10 ms (SQLite).
// BenchmarkEventsFanout: a send to a 10,000-subscriber channel with 10,000
// queues: every queue has the event within 1 s, and the send costs about
// what it costs with no queues. BenchmarkEventsIdleQueues: 10,000 idle
// queues use ≤ 200 MB (RSS and heap before and after).
// BenchmarkEventsTwoServers (PostgreSQL, TEAMCHAT_POSTGRES_DSN): a send on
// one Service reaches a poll on another, p99 ≤ 20 ms.

// poller long-polls one queue forever, handing each message event's ID
// and arrival time to got.
type poller struct {
	svc   *chat.Service
	as    chat.Caller
	queue string
	got   func(msgID int64, at time.Time)
}

func (p *poller) run(ctx context.Context) {
	last := int64(-1)
	for ctx.Err() == nil {
		resp, err := p.svc.GetEvents(ctx, p.as, chat.GetEventsRequest{QueueID: &p.queue, LastEventID: &last})
		if err != nil {
			return
		}
		now := time.Now()
		if p.got == nil && len(resp.Events) > 0 {
			// An unwatched queue only acknowledges: events start {"id":N,
			raw := resp.Events[len(resp.Events)-1]
			end := bytes.IndexByte(raw, ',')
			if n, err := strconv.ParseInt(string(raw[len(`{"id":`):end]), 10, 64); err == nil {
				last = n
			}
			continue
		}
		for _, raw := range resp.Events {
			var ev struct {
				ID      int64  `json:"id"`
				Type    string `json:"type"`
				Message struct {
					ID int64 `json:"id"`
				} `json:"message"`
			}
			if json.Unmarshal(raw, &ev) != nil {
				continue
			}
			last = ev.ID
			if ev.Type == "message" && p.got != nil {
				p.got(ev.Message.ID, now)
			}
		}
	}
}

// openQueue makes a queue for the user the way GET /events with
// dont_block does (no initial state), receiving only message events.
func openQueue(b *testing.B, svc *chat.Service, as chat.Caller) string {
	resp, err := svc.GetEvents(context.Background(), as, chat.GetEventsRequest{DontBlock: new(true),
		QueueParams: chat.QueueParams{EventTypes: &[]string{"message"}}})
	check(b, err)
	return *resp.QueueID
}

// orgUsers lists the callers of a seeded organization's members.
func orgUsers(b *testing.B, o *seededOrg, n int) []chat.Caller {
	users, err := o.h.Store.ListUsers(context.Background(), o.h.RealmID)
	check(b, err)
	var out []chat.Caller
	for _, u := range users {
		if u.Role == chat.RoleMember && len(out) < n {
			out = append(out, chat.Caller{RealmID: o.h.RealmID, UserID: u.ID})
		}
	}
	if len(out) < n {
		b.Fatalf("the organization has %d members, not %d", len(out), n)
	}
	return out
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pollLatencies collects, per message, when it was sent and when the watched
// poll returned it.
type pollLatencies struct {
	mu      sync.Mutex
	started map[int64]time.Time
	arrived map[int64]time.Time
	wait    map[int64]chan struct{}
}

func newPollLatencies() *pollLatencies {
	return &pollLatencies{started: map[int64]time.Time{}, arrived: map[int64]time.Time{}, wait: map[int64]chan struct{}{}}
}

func (l *pollLatencies) got(id int64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.arrived[id]; ok {
		return
	}
	l.arrived[id] = at
	if ch := l.wait[id]; ch != nil {
		close(ch)
	}
}

// sendAndWait sends through send and waits for the watched poll to return
// the message; it returns send-start-to-arrival.
func (l *pollLatencies) sendAndWait(b *testing.B, send func() int64) time.Duration {
	start := time.Now()
	id := send()
	l.mu.Lock()
	at, ok := l.arrived[id]
	ch := make(chan struct{})
	if !ok {
		l.wait[id] = ch
	}
	l.mu.Unlock()
	if !ok {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			b.Fatalf("message %d never reached the watched poll", id)
		}
		l.mu.Lock()
		at = l.arrived[id]
		l.mu.Unlock()
	}
	return at.Sub(start)
}

func sendTo(b *testing.B, svc *chat.Service, as chat.Caller, channel int64, content string) int64 {
	resp, err := svc.SendMessage(context.Background(), as, chat.SendMessageRequest{Type: "stream",
		To: chat.ToChannelID(channel), Topic: new("bench"), Content: content})
	check(b, err)
	return resp.ID
}

func BenchmarkEventsSendToPoll(b *testing.B) {
	const queues = 1000
	o := seedOrg(b, 1000)
	users := orgUsers(b, o, queues)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lat := newPollLatencies()
	var wg sync.WaitGroup
	for i, u := range users {
		p := &poller{svc: o.h.Service, as: u, queue: openQueue(b, o.h.Service, u)}
		if i == queues-1 {
			p.got = lat.got // the watched queue: the last to be woken in no particular order
		}
		wg.Add(1)
		go func() { defer wg.Done(); p.run(ctx) }()
	}
	time.Sleep(200 * time.Millisecond) // every poll is waiting
	sender := o.me
	var ds, sends []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ds = append(ds, lat.sendAndWait(b, func() int64 {
			start := time.Now()
			defer func() { sends = append(sends, time.Since(start)) }()
			return sendTo(b, o.h.Service, sender, o.channels[0], "m"+strconv.Itoa(i))
		}))
		// Every client is back to waiting before the next send.
		for o.h.Service.EventQueueStats().Waiting < queues {
			time.Sleep(100 * time.Microsecond)
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(sends, 0.5)), "send-p50-ms")
	b.ReportMetric(ms(percentile(sends, 0.99)), "send-p99-ms")
	b.ReportMetric(ms(percentile(ds, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(ds, 0.99)), "p99-ms")
	b.ReportMetric(10, "ceiling-p99-ms")
	b.ReportMetric(queues, "queues")
	b.ReportMetric(float64(runtime.NumCPU()), "cores")
	cancel()
	wg.Wait()
	closeQueues(o.h.Service, users)
}

// closeQueues drops every queue (seeded organizations are shared by the
// benchmarks of a run): none is polled when this runs.
func closeQueues(svc *chat.Service, _ []chat.Caller) {
	svc.CollectIdleQueues(time.Now().Add(365 * 24 * time.Hour))
}

func BenchmarkEventsFanout(b *testing.B) {
	const n = 10000
	o := seedOrg(b, n)
	users := orgUsers(b, o, n-1) // the owner aside: every member is in channel-0
	svc := o.h.Service
	sender := o.me
	i := 0
	// timedSend lets the machine settle, then times one send.
	timedSend := func() (start time.Time, took time.Duration) {
		time.Sleep(20 * time.Millisecond) // a quiet machine before each send
		start = time.Now()
		sendTo(b, svc, sender, o.channels[0], "f"+strconv.Itoa(i))
		i++
		return start, time.Since(start)
	}
	timeSends := func(k int) []time.Duration {
		var ds []time.Duration
		for range k {
			_, took := timedSend()
			ds = append(ds, took)
		}
		return ds
	}
	// The same send with no queues (but the event bus listening: one
	// queue of a user outside the channel), in the same run.
	openQueue(b, svc, chat.Caller{RealmID: o.h.RealmID, UserID: o.h.Owner.ID})
	timeSends(5)
	noQueues := timeSends(b.N)

	for _, u := range users {
		openQueue(b, svc, u)
	}
	var withQueues, spread []time.Duration
	b.ResetTimer()
	for range b.N {
		before := svc.EventQueueStats().Events
		// "Every queue has it" counts from the send's start (after the
		// quiet pause, which is no part of it).
		start, took := timedSend()
		withQueues = append(withQueues, took)
		for svc.EventQueueStats().Events < before+len(users) {
			if time.Since(start) > 10*time.Second {
				b.Fatalf("only %d of %d queues got the message", svc.EventQueueStats().Events-before, len(users))
			}
			time.Sleep(100 * time.Microsecond)
		}
		spread = append(spread, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(noQueues, 0.5)), "send-no-queues-p50-ms")
	b.ReportMetric(ms(percentile(withQueues, 0.5)), "send-10k-queues-p50-ms")
	b.ReportMetric(ms(percentile(noQueues, 0.9)), "send-no-queues-p90-ms")
	b.ReportMetric(ms(percentile(withQueues, 0.9)), "send-10k-queues-p90-ms")
	b.ReportMetric(ms(percentile(noQueues, 0.99)), "send-no-queues-p99-ms")
	b.ReportMetric(ms(percentile(withQueues, 0.99)), "send-10k-queues-p99-ms")
	b.ReportMetric(ms(percentile(spread, 0.5)), "all-queues-have-it-p50-ms")
	b.ReportMetric(ms(percentile(spread, 0.99)), "all-queues-have-it-p99-ms")
	b.ReportMetric(1000, "ceiling-all-queues-ms")
	b.ReportMetric(float64(runtime.NumCPU()), "cores")
	closeQueues(svc, users)
}

func BenchmarkEventsIdleQueues(b *testing.B) {
	const n = 10000
	o := seedOrg(b, n)
	users := orgUsers(b, o, n-1)
	for range b.N {
		runtime.GC()
		rssBefore, heapBefore := rss(), heapInuse()
		for _, u := range users {
			openQueue(b, o.h.Service, u)
		}
		openQueue(b, o.h.Service, o.me)
		runtime.GC()
		rssAfter, heapAfter := rss(), heapInuse()
		b.ReportMetric(float64(rssBefore)/1e6, "rss-before-MB")
		b.ReportMetric(float64(rssAfter)/1e6, "rss-after-MB")
		b.ReportMetric(float64(heapAfter-heapBefore)/1e6, "heap-growth-MB")
		b.ReportMetric(float64(rssAfter-rssBefore)/1e6, "rss-growth-MB")
		b.ReportMetric(200, "ceiling-MB")
		closeQueues(o.h.Service, users)
	}
}

func heapInuse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// rss reads the process's resident set size from /proc (0 elsewhere).
func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func BenchmarkEventsTwoServers(b *testing.B) {
	dsn, schema := bunstore.NewTestPostgresSchema(b)
	open := func() *bunstore.Store {
		st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
		check(b, err)
		b.Cleanup(func() { _ = st.Close() })
		return st
	}
	st1, st2 := open(), open()
	h := chattest.New(b, chattest.WithStore(func(testing.TB) storage.Store { return st1 }))
	other := chat.New(st2)
	b.Cleanup(func() { _ = other.Close() })
	alice := h.NewUser(b, chat.RoleMember)
	bob := h.NewUser(b, chat.RoleMember)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "shared"}},
		Principals: &[]chat.Principal{{ID: alice.ID}, {ID: bob.ID}}})
	check(b, err)
	id, err := h.Service.GetChannelID(ctx, alice.Caller, chat.GetChannelIDRequest{Stream: "shared"})
	check(b, err)
	lat := newPollLatencies()
	p := &poller{svc: other, as: bob.Caller, queue: openQueue(b, other, bob.Caller), got: lat.got}
	go p.run(ctx)
	time.Sleep(100 * time.Millisecond)
	var ds []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ds = append(ds, lat.sendAndWait(b, func() int64 { return sendTo(b, h.Service, alice.Caller, id.StreamID, fmt.Sprint("x", i)) }))
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(ds, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(ds, 0.99)), "p99-ms")
	b.ReportMetric(20, "ceiling-p99-ms")
	b.ReportMetric(float64(runtime.NumCPU()), "cores")
}
