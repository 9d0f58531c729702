package fleet_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"
)

// BenchmarkSendToPoll measures a send reaching a waiting long poll, in
// one run: on one server with no balancer (the queue, the poll and the
// send on it), and through the balancer of three servers with the queue
// registered on one server, the poll made through the balancer (forwarded
// when it lands elsewhere, two times in three) and the send made on
// another server. It reports the latency percentiles of each and their
// ratio (the target: p99 through the balancer ≤ 2× one server's):
//
//	TEAMCHAT_POSTGRES_DSN=... go test -run XXX -bench SendToPoll -benchtime 300x ./examples/fleet
func BenchmarkSendToPoll(b *testing.B) {
	d := deploy(b)
	alice, bob := d.newUser("alice"), d.newUser("bob")
	one := "http://" + d.servers[0].addr
	b.ResetTimer()
	single := d.sendToPoll(b, b.N, one, one, func(int) string { return one }, alice, bob)
	fleet := d.sendToPoll(b, b.N, one, d.lb, func(i int) string { return "http://" + d.servers[1+i%2].addr }, alice, bob)
	b.StopTimer()
	pct := func(v []time.Duration, p float64) float64 {
		return float64(v[min(len(v)-1, int(float64(len(v))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(single, 0.5), "one-p50-ms")
	b.ReportMetric(pct(single, 0.99), "one-p99-ms")
	b.ReportMetric(pct(fleet, 0.5), "fleet-p50-ms")
	b.ReportMetric(pct(fleet, 0.99), "fleet-p99-ms")
	b.ReportMetric(pct(fleet, 0.99)/pct(single, 0.99), "p99-ratio")
}

// sendToPoll registers bob's queue at reg, and n times: polls it through
// poll (waiting), sends alice's message through send(i), and times the
// send's start to the poll's answer. It returns the sorted latencies.
func (d *deployment) sendToPoll(b *testing.B, n int, reg, poll string, send func(int) string, alice, bob user) []time.Duration {
	ctx := context.Background()
	body, status, err := d.call(ctx, reg, "POST", "/api/v1/register", bob.email, bob.key, url.Values{"event_types": {`["message"]`}})
	if err != nil || status != 200 {
		b.Fatalf("register: %d %v %v", status, err, body)
	}
	queue, last := body["queue_id"].(string), "-1"
	var out []time.Duration
	for i := range n {
		polled := make(chan map[string]any, 1)
		go func() {
			body, _, err := d.call(ctx, poll, "GET", "/api/v1/events", bob.email, bob.key, url.Values{"queue_id": {queue}, "last_event_id": {last}})
			if err != nil {
				b.Error(err)
			}
			polled <- body
		}()
		time.Sleep(5 * time.Millisecond) // let the poll reach its queue (not measured)
		start := time.Now()
		_, status, err := d.call(ctx, send(i), "POST", "/api/v1/messages", alice.email, alice.key,
			url.Values{"type": {"private"}, "to": {fmt.Sprint("[", bob.id, "]")}, "content": {"ping"}})
		if err != nil || status != 200 {
			b.Fatalf("send: %d %v", status, err)
		}
		body := <-polled
		out = append(out, time.Since(start))
		evs, _ := body["events"].([]any)
		if len(evs) != 1 {
			b.Fatalf("poll: %v", body)
		}
		last = fmt.Sprint(evs[0].(map[string]any)["id"])
	}
	slices.Sort(out)
	return out
}
