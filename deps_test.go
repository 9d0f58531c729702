package chat_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRootPackageDependencies enforces the layering of DESIGN.md: the
// Service knows nothing of HTTP, SQL drivers or bun.
func TestRootPackageDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/teamchat/chat/storage", "sanity: the listing includes our own imports")
	for _, d := range deps {
		for _, banned := range []string{"net/http", "database/sql", "github.com/uptrace/bun"} {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("package chat depends on %s", d)
			}
		}
	}
}

// The standalone server links neither the test framework nor, in a
// PostgreSQL-only build (-tags nosqlite), the cgo SQLite driver.
func TestServerDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./examples/server").CombinedOutput()
	require.NoError(t, err, string(out))
	require.NotContains(t, strings.Fields(string(out)), "testing")
	out, err = exec.Command("go", "list", "-deps", "-tags", "nosqlite", "./examples/server").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, d := range strings.Fields(string(out)) {
		require.NotContains(t, d, "go-sqlite3", "a PostgreSQL-only build needs no cgo")
	}
}
