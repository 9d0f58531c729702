package bunstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// flagMasks are the masks of message flags the store's SQL writes as
// numbers (so that a query's predicate is its partial index's, word for
// word), each named by the storage.Flag* bits it stands for.
var flagMasks = map[int64]int64{
	1:    storage.FlagRead,
	2:    storage.FlagStarred,
	56:   storage.FlagMentioned | storage.FlagStreamWildcardMentioned | storage.FlagTopicWildcardMentioned,
	512:  storage.FlagHasAlertWord,
	1024: storage.FlagHistorical,
	1025: storage.FlagRead | storage.FlagHistorical,
	2048: storage.FlagPrivate,
	2049: storage.FlagRead | storage.FlagPrivate,
	3073: storage.FlagRead | storage.FlagHistorical | storage.FlagPrivate,
}

// TestFlagMasksAreNamed finds every "flags & N" of the store's Go and SQL
// files (and the value it is compared with) and checks that N is one of
// flagMasks, equal to the storage bits it names, and the value a part of N:
// the numbers in queries and indexes stay the one vocabulary's bits.
func TestFlagMasksAreNamed(t *testing.T) {
	for n, bits := range flagMasks {
		assert.Equal(t, n, bits, "mask %d", n)
	}
	re := regexp.MustCompile(`flags\s*&\s*(\d+)\s*\)(?:\s*(?:=|<>)\s*(\d+))?`)
	found := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") ||
			!strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".sql") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			found++
			mask, _ := strconv.ParseInt(m[1], 10, 64)
			_, named := flagMasks[mask]
			assert.True(t, named, "%s: %q: mask %d is not in flagMasks", path, m[0], mask)
			if m[2] != "" {
				v, _ := strconv.ParseInt(m[2], 10, 64)
				assert.Equal(t, v, v&mask, "%s: %q compares with bits outside the mask", path, m[0])
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, found, 20, "sanity: the queries and migrations were read")
}
