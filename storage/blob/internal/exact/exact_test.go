package exact_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage/blob/internal/exact"
)

func TestReader(t *testing.T) {
	wrap := map[string]func(io.Reader) io.Reader{
		"plain":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"data+EOF": iotest.DataErrReader,
		"half":     iotest.HalfReader,
	}
	for name, w := range wrap {
		for _, tc := range []struct {
			content string
			size    int64
			ok      bool
		}{
			{"", 0, true}, {"abc", 3, true}, {"abc", -1, true},
			{"abc", 2, false}, {"abc", 0, false}, {"abc", 4, false}, {"", 1, false},
		} {
			got, err := io.ReadAll(exact.Reader(w(strings.NewReader(tc.content)), tc.size))
			if tc.ok {
				require.NoError(t, err, "%s %q/%d", name, tc.content, tc.size)
				require.Equal(t, tc.content, string(got))
				continue
			}
			require.ErrorIs(t, err, exact.ErrSizeMismatch, "%s %q/%d", name, tc.content, tc.size)
			if tc.size > 0 && tc.size < int64(len(tc.content)) {
				require.Less(t, len(got), int(tc.size)+1, "too long: never all announced bytes")
				require.NotEqual(t, tc.content[:tc.size], string(got), "%s %q/%d", name, tc.content, tc.size)
			}
		}
	}
}

// A copy that stops after the announced size, as an HTTP request with a
// Content-Length does, gets fewer bytes and the error.
func TestReaderLimitedConsumer(t *testing.T) {
	var dst bytes.Buffer
	n, err := io.Copy(&dst, io.LimitReader(exact.Reader(strings.NewReader("abcdef"), 4), 4))
	require.ErrorIs(t, err, exact.ErrSizeMismatch)
	require.Less(t, n, int64(4))
}

func TestReaderPassesErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := io.ReadAll(exact.Reader(iotest.ErrReader(boom), 3))
	require.ErrorIs(t, err, boom)
	_, err = io.ReadAll(exact.Reader(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 3))
	require.ErrorIs(t, err, boom, "the probe's error")
}
