package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three servers on one PostgreSQL behind a round-robin nginx: every client
// keeps its live updates whichever server a request lands on, real
// clients of the reference work through the balancer, a rolling restart
// is invisible to clients, and a killed server costs only its own
// clients a new registration.
func TestFleetBehindNginx(t *testing.T) {
	d := deploy(t)
	t.Run("polls", d.testPolls)
	t.Run("python", d.testPython)
	t.Run("zulipjs", d.testZulipJS)
	t.Run("rolling restart under load", d.testRollingRestart)
	t.Run("kill -9 under load", d.testKill)
}

// testPolls: 30 sends and long polls through the balancer, none answered
// BAD_EVENT_QUEUE_ID; a poll waiting through the balancer on a queue
// registered on one server, woken by a send made directly on another; a
// DELETE /events through the balancer.
func (d *deployment) testPolls(t *testing.T) {
	ctx := context.Background()
	alice, bob := d.newUser("alice"), d.newUser("bob")
	reg, status, err := d.call(ctx, d.lb, "POST", "/api/v1/register", bob.email, bob.key, url.Values{"event_types": {`["message"]`}})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", reg)
	queue, last := reg["queue_id"].(string), "-1"
	for i := range 30 {
		sent, status, err := d.call(ctx, d.lb, "POST", "/api/v1/messages", alice.email, alice.key,
			url.Values{"type": {"private"}, "to": {fmt.Sprint("[", bob.id, "]")}, "content": {fmt.Sprint("hop ", i)}})
		require.NoError(t, err)
		require.Equal(t, 200, status, "%v", sent)
		body, status, err := d.call(ctx, d.lb, "GET", "/api/v1/events", bob.email, bob.key, url.Values{"queue_id": {queue}, "last_event_id": {last}})
		require.NoError(t, err)
		require.Equal(t, 200, status, "poll %d: %v", i, body)
		evs := body["events"].([]any)
		require.Len(t, evs, 1, "poll %d", i)
		ev := evs[0].(map[string]any)
		assert.Equal(t, sent["id"], ev["message"].(map[string]any)["id"])
		last = fmt.Sprint(ev["id"])
	}

	// Registered on server 0, polled through the balancer, woken by a send
	// on server 2.
	reg, status, err = d.call(ctx, "http://"+d.servers[0].addr, "POST", "/api/v1/register", bob.email, bob.key, url.Values{"event_types": {`["message"]`}})
	require.NoError(t, err)
	require.Equal(t, 200, status)
	q2 := reg["queue_id"].(string)
	for i := range 3 {
		polled := make(chan map[string]any, 1)
		go func() {
			body, _, err := d.call(ctx, d.lb, "GET", "/api/v1/events", bob.email, bob.key, url.Values{"queue_id": {q2}, "last_event_id": {fmt.Sprint(i - 1)}})
			assert.NoError(t, err)
			polled <- body
		}()
		time.Sleep(100 * time.Millisecond) // the poll is waiting (nothing outside shows it)
		_, status, err := d.call(ctx, "http://"+d.servers[2].addr, "POST", "/api/v1/messages", alice.email, alice.key,
			url.Values{"type": {"private"}, "to": {fmt.Sprint("[", bob.id, "]")}, "content": {"woken"}})
		require.NoError(t, err)
		require.Equal(t, 200, status)
		select {
		case body := <-polled:
			require.Equal(t, "success", body["result"], "%v", body)
			require.Len(t, body["events"], 1)
		case <-time.After(10 * time.Second):
			t.Fatal("the long poll was not woken")
		}
	}
	for _, q := range []string{queue, q2} {
		body, status, err := d.call(ctx, d.lb, "DELETE", "/api/v1/events", bob.email, bob.key, url.Values{"queue_id": {q}})
		require.NoError(t, err)
		require.Equal(t, 200, status, "%v", body)
	}
	for range 3 {
		body, status, err := d.call(ctx, d.lb, "GET", "/api/v1/events", bob.email, bob.key, url.Values{"queue_id": {queue}, "last_event_id": {last}})
		require.NoError(t, err)
		assert.Equal(t, 400, status)
		assert.Equal(t, "BAD_EVENT_QUEUE_ID", body["code"])
	}
}

// findAbove returns dir/<name> in the nearest folder above the working
// directory that has it.
func findAbove(name string) (string, error) {
	dir, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no " + name + " above the working directory")
		}
		dir = parent
	}
}

// testPython runs the reference's Python binding suite (clients/python)
// through the balancer.
func (d *deployment) testPython(t *testing.T) {
	binding := os.Getenv("TEAMCHAT_PYTHON_ZULIP_API")
	if binding == "" {
		var err error
		if binding, err = findAbove("shared/clients/python-zulip-api-0.9.1"); err != nil {
			unavailable(t, err.Error())
		}
	}
	check := exec.Command("/usr/bin/python3", "-c", "import requests, distro, typing_extensions")
	if out, err := check.CombinedOutput(); err != nil {
		unavailable(t, "python3 with requests, distro and typing_extensions is needed: "+string(out))
	}
	me, other := d.newUser("terminal"), d.newUser("friend")
	d.runClient(t, exec.Command("/usr/bin/python3", "../../clients/python/compat.py"),
		"PYTHONPATH="+filepath.Join(binding, "zulip"), "HOME="+t.TempDir(), "CHAT_SITE="+d.lb,
		"CHAT_EMAIL="+me.email, "CHAT_API_KEY="+me.key, "CHAT_OTHER_EMAIL="+other.email, "CHAT_OTHER_API_KEY="+other.key)
}

// testZulipJS runs the zulip-js suite (clients/zulipjs) through the
// balancer.
func (d *deployment) testZulipJS(t *testing.T) {
	dir, err := filepath.Abs("../../clients/zulipjs")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		unavailable(t, "run npm ci in clients/zulipjs")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not on PATH")
	}
	cmd := exec.Command(node, "compat.mjs")
	cmd.Dir = dir
	d.runClient(t, cmd, "CHAT_SITE="+d.lb, "CHAT_EMAIL="+ownerEmail, "CHAT_PASSWORD="+ownerPassword, "CHAT_REALM_URL="+d.lb, "NO_COLOR=1")
}

func (d *deployment) runClient(t *testing.T, cmd *exec.Cmd, env ...string) {
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("timed out; output:\n%s", out)
	}
	require.NoError(t, err, "output:\n%s", out)
}

// loadClient sends direct messages to itself through the balancer and
// long-polls its queue through it, as a client of the reference does:
// it registers again on BAD_EVENT_QUEUE_ID and retries 503s.
type loadClient struct {
	d *deployment
	u user

	mu           sync.Mutex
	queue        string
	acked        []int64 // messages whose send answered 200, in order
	received     []int64 // message IDs its queues delivered
	reRegistered int
	unavailable  int      // 503 answers (retried)
	errs         []string // anything else
}

func (c *loadClient) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errs) < 20 {
		c.errs = append(c.errs, fmt.Sprintf(format, args...))
	}
}

// retryLater counts a retryable 503 answer and waits before the retry
// (the reference's clients wait Retry-After; shorter here).
func (c *loadClient) retryLater() {
	c.mu.Lock()
	c.unavailable++
	c.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
}

// register gets a queue (retrying 503s until ctx ends).
func (c *loadClient) register(ctx context.Context) (string, bool) {
	for ctx.Err() == nil {
		body, status, err := c.d.call(ctx, c.d.lb, "POST", "/api/v1/register", c.u.email, c.u.key, url.Values{"event_types": {`["message"]`}})
		switch {
		case err != nil && ctx.Err() != nil:
			return "", false
		case status == 503:
			c.retryLater()
		case err != nil || status != 200:
			c.fail("register: %d %v %v", status, err, body)
			time.Sleep(100 * time.Millisecond)
		default:
			q := body["queue_id"].(string)
			c.mu.Lock()
			c.queue = q
			c.mu.Unlock()
			return q, true
		}
	}
	return "", false
}

// poll long-polls until ctx ends.
func (c *loadClient) poll(ctx context.Context) {
	queue, ok := c.register(ctx)
	last := "-1"
	for ok && ctx.Err() == nil {
		body, status, err := c.d.call(ctx, c.d.lb, "GET", "/api/v1/events", c.u.email, c.u.key, url.Values{"queue_id": {queue}, "last_event_id": {last}})
		switch {
		case ctx.Err() != nil:
			return
		case status == 503:
			c.retryLater()
		case status == 400 && body["code"] == "BAD_EVENT_QUEUE_ID":
			c.mu.Lock()
			c.reRegistered++
			c.mu.Unlock()
			queue, ok = c.register(ctx)
			last = "-1"
		case err != nil || status != 200:
			c.fail("poll: %d %v %v", status, err, body)
			time.Sleep(100 * time.Millisecond)
		default:
			for _, e := range body["events"].([]any) {
				ev := e.(map[string]any)
				last = fmt.Sprint(ev["id"])
				if m, ok := ev["message"].(map[string]any); ok {
					c.mu.Lock()
					c.received = append(c.received, int64(m["id"].(float64)))
					c.mu.Unlock()
				}
			}
		}
	}
}

// send sends until stop is closed (a send under way finishes).
func (c *loadClient) send(stop <-chan struct{}) {
	ctx := context.Background()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		body, status, err := c.d.call(ctx, c.d.lb, "POST", "/api/v1/messages", c.u.email, c.u.key,
			url.Values{"type": {"private"}, "to": {fmt.Sprint("[", c.u.id, "]")}, "content": {fmt.Sprint("load ", i)}})
		switch {
		case status == 503:
			c.retryLater()
		case err != nil || status != 200:
			c.fail("send: %d %v %v", status, err, body)
		default:
			c.mu.Lock()
			c.acked = append(c.acked, int64(body["id"].(float64)))
			c.mu.Unlock()
		}
	}
}

// runLoad runs 8 clients (sending and polling) around during, then
// waits until each client's queue delivered what it acknowledged, and
// checks that the database has every acknowledged message.
func (d *deployment) runLoad(t *testing.T, name string, during func(clients []*loadClient)) []*loadClient {
	var clients []*loadClient
	for i := range 8 {
		clients = append(clients, &loadClient{d: d, u: d.newUser(fmt.Sprintf("%s%d", name, i))})
	}
	pollCtx, stopPolls := context.WithCancel(context.Background())
	stopSends := make(chan struct{})
	var polls, sends sync.WaitGroup
	for _, c := range clients {
		polls.Go(func() { c.poll(pollCtx) })
	}
	require.Eventually(t, func() bool {
		for _, c := range clients {
			c.mu.Lock()
			q := c.queue
			c.mu.Unlock()
			if q == "" {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond, "every client registered")
	for _, c := range clients {
		sends.Go(func() { c.send(stopSends) })
	}
	time.Sleep(500 * time.Millisecond) // load before the event
	during(clients)
	time.Sleep(time.Second) // and after it
	close(stopSends)
	sends.Wait()
	// Every acknowledged message reaches its client's queue (or, after a
	// new registration, its state: checked in the database below).
	assert.Eventually(t, func() bool {
		for _, c := range clients {
			c.mu.Lock()
			ok := c.reRegistered > 0 || len(c.acked) == 0 || slices.Contains(c.received, c.acked[len(c.acked)-1])
			c.mu.Unlock()
			if !ok {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond, "every queue caught up")
	stopPolls()
	polls.Wait()
	ctx := context.Background()
	total := 0
	for _, c := range clients {
		total += len(c.acked)
		body, status, err := d.call(ctx, d.lb, "GET", "/api/v1/messages", c.u.email, c.u.key, url.Values{"anchor": {"newest"},
			"num_before": {"5000"}, "num_after": {"0"}, "narrow": {fmt.Sprintf(`[{"operator":"dm","operand":[%d]}]`, c.u.id)}})
		require.NoError(t, err)
		require.Equal(t, 200, status, "%v", body)
		stored := map[int64]bool{}
		for _, m := range body["messages"].([]any) {
			stored[int64(m.(map[string]any)["id"].(float64))] = true
		}
		for _, id := range c.acked {
			assert.True(t, stored[id], "%s: acknowledged message %d is stored", c.u.email, id)
		}
	}
	t.Logf("%s: %d messages acknowledged by 8 clients", name, total)
	return clients
}

// checkDelivered: a client that never registered again received every
// message it acknowledged, once, in order, and nothing else but retried
// sends.
func checkDelivered(t *testing.T, c *loadClient) {
	var got []int64
	for _, id := range c.received {
		if slices.Contains(c.acked, id) {
			got = append(got, id)
		}
	}
	assert.Equal(t, c.acked, got, "%s: every acknowledged message once, in order", c.u.email)
	// A send answered 503 and sent again may have been stored the first
	// time too (a server died after its commit): those are the only
	// others.
	assert.LessOrEqual(t, len(c.received)-len(got), c.unavailable, "%s: no other message", c.u.email)
}

// testRollingRestart restarts the three servers one at a time under load:
// no client is told to register again, and no send fails.
func (d *deployment) testRollingRestart(t *testing.T) {
	clients := d.runLoad(t, "rolling", func([]*loadClient) {
		for _, s := range d.servers {
			d.stop(s)
			d.start(s)
		}
	})
	unavailable := 0
	for _, c := range clients {
		assert.Zero(t, c.reRegistered, "%s was not told to register again", c.u.email)
		assert.Empty(t, c.errs, c.u.email)
		checkDelivered(t, c)
		unavailable += c.unavailable
	}
	t.Logf("rolling restart: %d retryable 503 answers", unavailable)
}

// testKill kills one server under load: the clients whose queue it held
// register again and carry on; the others carry on without an error.
func (d *deployment) testKill(t *testing.T) {
	victim := d.servers[1]
	var onVictim map[string]bool
	clients := d.runLoad(t, "kill", func(clients []*loadClient) {
		onVictim = map[string]bool{}
		for _, c := range clients {
			c.mu.Lock()
			onVictim[c.u.email] = holderOf(c.queue) == victim.id
			c.mu.Unlock()
		}
		d.kill(victim)
	})
	unavailable, victims := 0, 0
	for _, c := range clients {
		if onVictim[c.u.email] {
			victims++
			assert.Positive(t, c.reRegistered, "%s's queue was on the killed server", c.u.email)
		} else {
			assert.Zero(t, c.reRegistered, "%s's queue was elsewhere", c.u.email)
			checkDelivered(t, c)
		}
		assert.Empty(t, c.errs, c.u.email)
		unavailable += c.unavailable
	}
	t.Logf("kill -9: %d of 8 queues on the killed server; %d retryable 503 answers", victims, unavailable)
	d.start(victim)
}

// holderOf reads the server a queue ID names (its first eight hex digits).
func holderOf(queue string) int64 {
	var id int64
	if _, err := fmt.Sscanf(queue[:8], "%x", &id); err != nil {
		return 0
	}
	return id
}
