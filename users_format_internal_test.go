package chat

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// isoTime and gravatarURL, written by hand for speed, answer what the
// formatting functions they replace answer.
func TestHandWrittenFormatsMatchTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	times := []int64{0, -1, 1, 86399, 86400, 951782400 /* 2000-02-29 */, 253402300799 /* 9999-12-31T23:59:59 */, 253402300800, -62135596800, -62135596801}
	for range 10000 {
		times = append(times, rng.Int64N(1<<36)-1<<35)
	}
	for _, unix := range times {
		require.Equal(t, time.Unix(unix, 0).UTC().Format("2006-01-02T15:04:05+00:00"), isoTime(unix), "unix %d", unix)
	}
	for _, u := range []storage.User{{Email: "Alice@Example.com"}, {Email: "", AvatarVersion: 17}, {Email: "ß@x.de", AvatarVersion: 1 << 30}} {
		sum := md5.Sum([]byte(strings.ToLower(u.Email)))
		want := fmt.Sprintf("https://secure.gravatar.com/avatar/%s?d=identicon&version=%d", hex.EncodeToString(sum[:]), u.AvatarVersion)
		require.Equal(t, want, gravatarURL(&u))
	}
}
