package clients_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/transport/rest"
)

// unavailable skips a client suite that misses what it needs, or fails it
// when TEAMCHAT_REQUIRE_CLIENTS=1 (CI).
func unavailable(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("TEAMCHAT_REQUIRE_CLIENTS") == "1" {
		t.Fatal(msg + " [TEAMCHAT_REQUIRE_CLIENTS=1]")
	}
	t.Skip(msg)
}

// requireNode returns the path of node and checks that dir has its
// node_modules, skipping the test when either is missing (see
// unavailable).
func requireNode(t *testing.T, dir string) string {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		unavailable(t, why+"; run `npm ci` in clients/"+filepath.Base(dir)+" (needs Node.js and npm)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	if st, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil || !st.IsDir() {
		missing(filepath.Join(dir, "node_modules") + " does not exist")
	}
	return node
}

// TestZulipJS runs the real zulip-js library (clients/zulipjs/compat.mjs)
// against the REST handler.
func TestZulipJS(t *testing.T) {
	dir, err := filepath.Abs("zulipjs")
	require.NoError(t, err)
	node := requireNode(t, dir)

	h := chattest.New(t)
	srv := httptest.NewServer(rest.NewHandler(h.Service, rest.WithRealm(h.RealmID), rest.WithRateLimit(0, 0)))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "compat.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"CHAT_SITE="+srv.URL,
		"CHAT_EMAIL="+h.Owner.Email,
		"CHAT_PASSWORD="+h.Owner.Password,
		"CHAT_REALM_URL="+h.RealmURL,
		"NO_COLOR=1",
	)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("node compat.mjs took %s", time.Since(start).Round(time.Millisecond))
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		require.FailNowf(t, "zulip-js compat script timed out", "after 60s; output:\n%s", out)
	}
	require.NoErrorf(t, err, "zulip-js compat script failed; output:\n%s", out)
	t.Logf("output:\n%s", out)
}
