package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage/bunstore"
)

// The crash test runs the server as a child process: this test binary
// with TEAMCHAT_SERVER_CHILD=1 runs main instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("TEAMCHAT_SERVER_CHILD") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// child is a server process started from this test binary.
type child struct {
	cmd  *exec.Cmd
	base string // http://host:port
	out  []string
}

var (
	baseRE = regexp.MustCompile(`at (http://\S+)/api/v1`)
	keyRE  = regexp.MustCompile(`owner API key:\s+(\S+)`)
)

// startChild runs the server on db and waits until it prints where it
// serves; key is the owner's API key when the organization was created.
func startChild(t *testing.T, db string) (c *child, key string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-db", db, "-addr", "127.0.0.1:0", "-rate-limit", "0", "-log-level", "error")
	cmd.Env = append(os.Environ(), "TEAMCHAT_SERVER_CHILD=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c = &child{cmd: cmd}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	deadline := time.After(60 * time.Second)
	found := make(chan struct{})
	go func() {
		for lines.Scan() {
			line := lines.Text()
			c.out = append(c.out, line)
			if m := keyRE.FindStringSubmatch(line); m != nil {
				key = m[1]
			}
			if strings.HasPrefix(line, "Try it:") || strings.HasPrefix(line, "Get an API key") {
				close(found)
				break
			}
			if m := baseRE.FindStringSubmatch(line); m != nil {
				c.base = m[1]
			}
		}
		// Keep draining so the child never blocks on a full pipe.
		for lines.Scan() {
		}
	}()
	select {
	case <-found:
	case <-deadline:
		t.Fatalf("the server did not start: %q", c.out)
	}
	require.NotEmpty(t, c.base, "%q", c.out)
	return c, key
}

func post(base, key, path string, form url.Values) (map[string]any, int, error) {
	return call("POST", base, key, path, form)
}

func get(base, key, path string, params url.Values) (map[string]any, int, error) {
	return call("GET", base, key, path, params)
}

// call sends one request as the owner (params in the query string for GET,
// in the form body otherwise) and decodes the JSON answer.
func call(method, base, key, path string, params url.Values) (map[string]any, int, error) {
	return callAs(method, base, "owner@teamchat.localhost", key, path, params)
}

// callAs is call as the user of that email.
func callAs(method, base, email, key, path string, params url.Values) (map[string]any, int, error) {
	var req *http.Request
	var err error
	if method == "GET" {
		req, err = http.NewRequest(method, base+path+"?"+params.Encode(), nil)
	} else {
		req, err = http.NewRequest(method, base+path, strings.NewReader(params.Encode()))
		if req != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if err != nil {
		return nil, 0, err
	}
	req.SetBasicAuth(email, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	var body map[string]any
	err = json.NewDecoder(resp.Body).Decode(&body)
	return body, resp.StatusCode, err
}

// A kill -9 during a send load loses no acknowledged message: every ID a
// client got back is there after a restart, on SQLite and on PostgreSQL
// (where sends share transactions, and the commit travels with the
// transaction's writes).
func TestKill9KeepsAcknowledgedMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes; skipped with -short")
	}
	t.Run("sqlite", func(t *testing.T) { kill9(t, filepath.Join(t.TempDir(), "crash.db")) })
	t.Run("pg", func(t *testing.T) { kill9(t, postgresTestDB(t)) })
}

// postgresTestDB is a DSN of a fresh schema of the test database.
func postgresTestDB(t *testing.T) string {
	dsn, schema := bunstore.NewTestPostgresSchema(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}

func kill9(t *testing.T, db string) {
	first, key := startChild(t, db)
	require.NotEmpty(t, key, "%q", first.out)
	_, status, err := post(first.base, key, "/api/v1/users/me/subscriptions", url.Values{"subscriptions": {`[{"name": "crash"}]`}})
	require.NoError(t, err)
	require.Equal(t, 200, status)

	var mu sync.Mutex
	var acked []int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body, status, err := post(first.base, key, "/api/v1/messages", url.Values{
					"type": {"channel"}, "to": {"crash"}, "topic": {"t"}, "content": {fmt.Sprintf("%d-%d", w, i)}})
				if err != nil {
					return // the server is gone
				}
				if status == 200 {
					mu.Lock()
					acked = append(acked, int64(body["id"].(float64)))
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	require.NoError(t, first.cmd.Process.Kill(), "kill -9")
	_ = first.cmd.Wait()
	close(stop)
	wg.Wait()
	require.NotEmpty(t, acked, "no send was acknowledged before the kill")

	second, _ := startChild(t, db)
	missing := 0
	for _, id := range acked {
		req, err := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/messages/%d", second.base, id), nil)
		require.NoError(t, err)
		req.SetBasicAuth("owner@teamchat.localhost", key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			missing++
		}
	}
	assert.Zero(t, missing, "acknowledged messages lost after kill -9 (of %d)", len(acked))
	t.Logf("%d messages acknowledged before kill -9, all there after the restart", len(acked))
}
