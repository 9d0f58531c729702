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
