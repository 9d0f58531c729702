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

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/transport/rest"
)

// pythonBinding is the release of the reference's Python binding the
// suite runs, unmodified, from the project's shared folder.
const pythonBinding = "python-zulip-api-0.9.1"

// findPythonBinding returns the binding's folder that holds its zulip
// package: $TEAMCHAT_PYTHON_ZULIP_API, or shared/clients/<release> in the
// nearest folder above the repository that has it (../shared/clients
// beside a checkout at /work/<name>, ../../shared/clients beside a
// worktree at /work/wt/<name>).
func findPythonBinding() (string, error) {
	if dir := os.Getenv("TEAMCHAT_PYTHON_ZULIP_API"); dir != "" {
		return dir, nil
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		candidate := filepath.Join(dir, "shared", "clients", pythonBinding)
		if st, err := os.Stat(filepath.Join(candidate, "zulip", "zulip", "__init__.py")); err == nil && !st.IsDir() {
			return candidate, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no shared/clients/" + pythonBinding + " above " + mustAbs("."))
		}
		dir = parent
	}
}

func mustAbs(p string) string {
	abs, _ := filepath.Abs(p)
	return abs
}

// requirePython returns the interpreter and the binding's folder,
// skipping the test when either is missing or the binding's Debian
// dependencies are not installed (see unavailable).
func requirePython(t *testing.T) (python, binding string) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		unavailable(t, why+"; install python3-requests python3-distro python3-typing-extensions python3-click (Debian) and keep ../shared/clients, or set TEAMCHAT_PYTHON_ZULIP_API")
	}
	python = os.Getenv("TEAMCHAT_PYTHON")
	if python == "" {
		python = "/usr/bin/python3" // the system's, which sees the Debian packages
	}
	if _, err := exec.LookPath(python); err != nil {
		missing(python + " is not there")
	}
	binding, err := findPythonBinding()
	if err != nil {
		missing(err.Error())
	}
	check := exec.Command(python, "-c", "import zulip, requests, distro, typing_extensions")
	check.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(binding, "zulip"))
	if out, err := check.CombinedOutput(); err != nil {
		missing("the binding does not import: " + string(out))
	}
	return python, binding
}

// TestPythonZulip runs the reference's official Python binding through
// what its terminal client does (clients/python/compat.py) against the
// REST handler, with the default rate limits.
func TestPythonZulip(t *testing.T) {
	python, binding := requirePython(t)
	script, err := filepath.Abs(filepath.Join("python", "compat.py"))
	require.NoError(t, err)

	h := chattest.New(t)
	me, other := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	srv := httptest.NewServer(rest.NewHandler(h.Service, rest.WithRealm(h.RealmID)))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, script)
	cmd.Env = append(os.Environ(),
		"PYTHONPATH="+filepath.Join(binding, "zulip"),
		"HOME="+t.TempDir(), // no ~/.zuliprc of the machine's user
		"CHAT_SITE="+srv.URL,
		"CHAT_EMAIL="+me.Email,
		"CHAT_API_KEY="+me.APIKey,
		"CHAT_OTHER_EMAIL="+other.Email,
		"CHAT_OTHER_API_KEY="+other.APIKey,
	)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("python compat.py took %s", time.Since(start).Round(time.Millisecond))
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		require.FailNowf(t, "python compat script timed out", "after 60s; output:\n%s", out)
	}
	require.NoErrorf(t, err, "python compat script failed; output:\n%s", out)
	t.Logf("output:\n%s", out)
}
