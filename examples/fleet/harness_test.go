package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage/bunstore"
)

// unavailable skips a test that lacks what it needs, or fails it when
// TEAMCHAT_REQUIRE_FLEET=1 (CI).
func unavailable(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("TEAMCHAT_REQUIRE_FLEET") == "1" {
		tb.Fatal(msg + " [TEAMCHAT_REQUIRE_FLEET=1]")
	}
	tb.Skip(msg)
}

const ownerEmail, ownerPassword = "owner@teamchat.localhost", "fleet-owner-password"

// deployment is three servers on one PostgreSQL database behind nginx.
type deployment struct {
	tb      testing.TB
	bin     string // the server binary
	db      string // its DSN
	dir     string
	lb      string // the balancer's base URL
	servers []*server
	key     string // the owner's API key
	http    *http.Client
}

// server is one examples/server process.
type server struct {
	addr string
	id   int64 // its ID in the fleet
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freePort(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	defer ln.Close()
	return ln.Addr().String()
}

// deploy builds the server, starts three on a fresh schema and nginx with
// examples/fleet/nginx.conf in front of them.
func deploy(tb testing.TB) *deployment {
	tb.Helper()
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		nginx = "/usr/sbin/nginx"
		if _, err := os.Stat(nginx); err != nil {
			unavailable(tb, "nginx is not installed (Debian: apt-get install nginx-light)")
		}
	}
	if os.Getenv("TEAMCHAT_POSTGRES_DSN") == "" {
		unavailable(tb, "TEAMCHAT_POSTGRES_DSN is not set")
	}
	d := &deployment{tb: tb, dir: tb.TempDir(), http: &http.Client{Timeout: 2 * time.Minute}}
	d.bin = filepath.Join(d.dir, "teamchat-server")
	build := exec.Command("go", "build", "-o", d.bin, "github.com/teamchat/chat/examples/server")
	out, err := build.CombinedOutput()
	require.NoError(tb, err, "build the server: %s", out)

	dsn, schema := bunstore.NewTestPostgresSchema(tb)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	d.db = dsn + sep + "search_path=" + schema

	lbAddr := freePort(tb)
	d.lb = "http://" + lbAddr
	for range 3 {
		d.servers = append(d.servers, &server{addr: freePort(tb)})
	}
	// The first creates the organization.
	d.start(d.servers[0])
	m := regexp.MustCompile(`owner API key:  ([A-Za-z0-9]{32})`).FindStringSubmatch(d.servers[0].out.String())
	require.Len(tb, m, 2, "the first server prints the owner's key: %s", d.servers[0].out)
	d.key = m[1]
	d.start(d.servers[1])
	d.start(d.servers[2])
	d.startNginx(nginx, lbAddr)
	return d
}

var joinedRE = regexp.MustCompile(`joined the fleet" server=(\d+)`)

// start starts s (again, on its address) and waits until it is ready.
func (d *deployment) start(s *server) {
	tb := d.tb
	tb.Helper()
	s.out = &lockedBuffer{}
	s.cmd = exec.Command(d.bin, "-addr", s.addr, "-db", d.db, "-url", d.lb, "-owner-password", ownerPassword,
		"-rate-limit", "0", "-address-rate-limit", "0", "-trusted-proxies", "127.0.0.1", "-log-level", "info",
		"-uploads", filepath.Join(d.dir, "uploads"))
	s.cmd.Env = append(os.Environ(), "TEAMCHAT_URL_SIGNING_KEY=fleet-test-signing-key")
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	require.NoError(tb, s.cmd.Start())
	s.done = make(chan struct{})
	cmd, done := s.cmd, s.done
	go func() { _ = cmd.Wait(); close(done) }()
	out := s.out
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if tb.Failed() {
			tb.Logf("server %s:\n%s", s.addr, out)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + s.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case <-done:
			tb.Fatalf("server %s exited: %s", s.addr, s.out)
		default:
		}
		require.True(tb, time.Now().Before(deadline), "server %s did not become ready: %s", s.addr, s.out)
		time.Sleep(20 * time.Millisecond)
	}
	// The server joined before it answered ready; its log line reaches
	// s.out through exec's copying goroutine, which may not have run yet.
	awaitLine(tb, s, joinedRE)
	m := joinedRE.FindStringSubmatch(s.out.String())
	require.Len(tb, m, 2, "the server joins the fleet: %s", s.out)
	s.id, _ = strconv.ParseInt(m[1], 10, 64)
}

// stop stops s gracefully (SIGTERM) and waits for it to exit.
func (d *deployment) stop(s *server) {
	require.NoError(d.tb, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		d.tb.Fatalf("server %s did not stop: %s", s.addr, s.out)
	}
}

// kill kills s (SIGKILL).
func (d *deployment) kill(s *server) {
	require.NoError(d.tb, s.cmd.Process.Kill())
	<-s.done
}

// startNginx runs nginx with the committed configuration, its ports and
// paths moved to this test's.
func (d *deployment) startNginx(nginx, lbAddr string) {
	tb := d.tb
	conf, err := os.ReadFile("nginx.conf")
	require.NoError(tb, err)
	text := string(conf)
	for i, s := range d.servers {
		old := fmt.Sprintf("server 127.0.0.1:%d ", 9991+i)
		require.Contains(tb, text, old)
		text = strings.Replace(text, old, "server "+s.addr+" ", 1)
	}
	require.Contains(tb, text, "listen 127.0.0.1:8080;")
	text = strings.Replace(text, "listen 127.0.0.1:8080;", "listen "+lbAddr+";", 1)
	text = strings.Replace(text, "pid /run/teamchat-nginx.pid;", "pid "+filepath.Join(d.dir, "nginx.pid")+";", 1)
	temps := ""
	for _, k := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		temps += fmt.Sprintf("    %s_temp_path %s;\n", k, filepath.Join(d.dir, k))
	}
	text = strings.Replace(text, "http {\n", "http {\n"+temps, 1)
	path := filepath.Join(d.dir, "nginx.conf")
	require.NoError(tb, os.WriteFile(path, []byte(text), 0o644))
	cmd := exec.Command(nginx, "-p", d.dir, "-c", path, "-g", "daemon off;")
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(tb, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		<-done
		if tb.Failed() {
			tb.Logf("nginx:\n%s", &out)
		}
	})
	require.Eventually(tb, func() bool {
		resp, err := http.Get(d.lb + "/api/v1/server_settings")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 10*time.Second, 20*time.Millisecond, "nginx: %s", &out)
}

// call makes an API request through base as email/key; it returns the
// decoded body and the status.
func (d *deployment) call(ctx context.Context, base, method, path, email, key string, form url.Values) (map[string]any, int, error) {
	var body io.Reader
	target := base + path
	if method == http.MethodGet || method == http.MethodDelete {
		if len(form) > 0 {
			target += "?" + form.Encode()
		}
	} else {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.SetBasicAuth(email, key)
	resp, err := d.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, resp.StatusCode, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, resp.StatusCode, fmt.Errorf("status %d, not JSON: %q", resp.StatusCode, raw)
	}
	return out, resp.StatusCode, nil
}

// user is an account made through the balancer.
type user struct {
	email, key string
	id         int64
}

// newUser makes a member (the owner creates it) and fetches its key.
func (d *deployment) newUser(name string) user {
	tb := d.tb
	tb.Helper()
	ctx := context.Background()
	email := name + "@teamchat.localhost"
	body, status, err := d.call(ctx, d.lb, "POST", "/api/v1/users", ownerEmail, d.key,
		url.Values{"email": {email}, "password": {"password-" + name}, "full_name": {name}})
	require.NoError(tb, err)
	require.Equal(tb, 200, status, "%v", body)
	id := int64(body["user_id"].(float64))
	body, status, err = d.call(ctx, d.lb, "POST", "/api/v1/fetch_api_key", "", "",
		url.Values{"username": {email}, "password": {"password-" + name}})
	require.NoError(tb, err)
	require.Equal(tb, 200, status, "%v", body)
	return user{email: email, key: body["api_key"].(string), id: id}
}

// awaitLine waits until s's output matches re.
func awaitLine(tb testing.TB, s *server, re *regexp.Regexp) {
	tb.Helper()
	require.Eventually(tb, func() bool { return re.MatchString(s.out.String()) }, 30*time.Second, 10*time.Millisecond, "%s", s.out)
}
