// Package blobtest is the conformance suite of blob.Store: every
// implementation's tests call Run with a function opening a fresh, empty
// store.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage/blob"
)

// Run runs the conformance suite, each subtest on a store returned by open,
// which must be empty and is used by that subtest alone (open registers
// its own cleanup with t).
func Run(t *testing.T, open func(t *testing.T) blob.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s blob.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"DefaultContentType", testDefaultContentType},
		{"Replace", testReplace},
		{"Missing", testMissing},
		{"Delete", testDelete},
		{"ValidKeys", testValidKeys},
		{"InvalidKeys", testInvalidKeys},
		{"InvalidContentType", testInvalidContentType},
		{"BinaryAndEmpty", testBinaryAndEmpty},
		{"Large", testLarge},
		{"UnknownSize", testUnknownSize},
		{"SizeMismatch", testSizeMismatch},
		{"ReaderError", testReaderError},
		{"CanceledContext", testCanceledContext},
		{"ConcurrentKeys", testConcurrentKeys},
		{"ConcurrentSameKey", testConcurrentSameKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// put stores content under key, with its exact size.
func put(t *testing.T, s blob.Store, key string, content []byte, contentType string) {
	t.Helper()
	require.NoError(t, s.Put(t.Context(), key, bytes.NewReader(content), int64(len(content)), contentType))
}

// read opens key and returns its whole content and Info, checking that the
// Info's size is the content's.
func read(t *testing.T, s blob.Store, key string) ([]byte, blob.Info) {
	t.Helper()
	rc, info, err := s.Open(t.Context(), key)
	require.NoError(t, err)
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, int64(len(b)), info.Size, "Info.Size of %q", key)
	return b, info
}

// requireContent checks key's content (by digest, as it may be large),
// content type and Stat.
func requireContent(t *testing.T, s blob.Store, key string, want []byte, contentType string) {
	t.Helper()
	got, info := read(t, s, key)
	require.Equal(t, len(want), len(got), "length of %q", key)
	require.Equal(t, sha256.Sum256(want), sha256.Sum256(got), "content of %q", key)
	require.Equal(t, contentType, info.ContentType, "content type of %q", key)
	st, err := s.Stat(t.Context(), key)
	require.NoError(t, err)
	require.Equal(t, info.Size, st.Size)
	require.Equal(t, info.ContentType, st.ContentType)
	require.WithinDuration(t, info.ModTime, st.ModTime, time.Second)
}

func requireNotFound(t *testing.T, s blob.Store, key string) {
	t.Helper()
	rc, _, err := s.Open(t.Context(), key)
	if rc != nil {
		_ = rc.Close()
	}
	require.ErrorIs(t, err, blob.ErrNotFound, "Open(%q)", key)
	_, err = s.Stat(t.Context(), key)
	require.ErrorIs(t, err, blob.ErrNotFound, "Stat(%q)", key)
}

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func testRoundTrip(t *testing.T, s blob.Store) {
	before := time.Now()
	put(t, s, "2/ab/cdef123/photo.png", []byte("not really a png"), "image/png")
	after := time.Now()
	requireContent(t, s, "2/ab/cdef123/photo.png", []byte("not really a png"), "image/png")
	info, err := s.Stat(t.Context(), "2/ab/cdef123/photo.png")
	require.NoError(t, err)
	require.Equal(t, int64(16), info.Size)
	// S3 reports whole seconds.
	require.False(t, info.ModTime.Before(before.Add(-2*time.Second)), "ModTime %v before %v", info.ModTime, before)
	require.False(t, info.ModTime.After(after.Add(2*time.Second)), "ModTime %v after %v", info.ModTime, after)

	// Parameters are kept; neighbouring names are distinct keys.
	put(t, s, "2/ab/cdef123/photo", []byte("x"), "text/plain; charset=utf-8")
	put(t, s, "2/ab/cdef123/photo.png.bak", []byte("yy"), "application/x-bak")
	requireContent(t, s, "2/ab/cdef123/photo", []byte("x"), "text/plain; charset=utf-8")
	requireContent(t, s, "2/ab/cdef123/photo.png.bak", []byte("yy"), "application/x-bak")
	requireContent(t, s, "2/ab/cdef123/photo.png", []byte("not really a png"), "image/png")
	requireNotFound(t, s, "2/ab/cdef123")
	requireNotFound(t, s, "2/ab/cdef123/photo.pn")
}

func testDefaultContentType(t *testing.T, s blob.Store) {
	put(t, s, "k", []byte("data"), "")
	requireContent(t, s, "k", []byte("data"), blob.DefaultContentType)
}

func testReplace(t *testing.T, s blob.Store) {
	put(t, s, "r/file", []byte("first version"), "text/plain")
	put(t, s, "r/file", []byte(`{"second": "version, longer"}`), "application/json")
	requireContent(t, s, "r/file", []byte(`{"second": "version, longer"}`), "application/json")
	put(t, s, "r/file", []byte("3rd"), "")
	requireContent(t, s, "r/file", []byte("3rd"), blob.DefaultContentType)
	put(t, s, "r/file", nil, "text/plain")
	requireContent(t, s, "r/file", nil, "text/plain")
}

func testMissing(t *testing.T, s blob.Store) {
	requireNotFound(t, s, "missing")
	requireNotFound(t, s, "missing/deeper/key.txt")
	put(t, s, "present/a", []byte("a"), "text/plain")
	requireNotFound(t, s, "present")
	requireNotFound(t, s, "present/b")
	requireNotFound(t, s, "present/a/b")
	require.NoError(t, s.Delete(t.Context(), "missing"))
	require.NoError(t, s.Delete(t.Context(), "missing/deeper/key.txt"))
	require.NoError(t, s.Delete(t.Context(), "present/a/b"))
	requireContent(t, s, "present/a", []byte("a"), "text/plain")
}

func testDelete(t *testing.T, s blob.Store) {
	put(t, s, "d/x/1", []byte("one"), "text/plain")
	put(t, s, "d/x/2", []byte("two"), "text/plain")
	require.NoError(t, s.Delete(t.Context(), "d/x/1"))
	requireNotFound(t, s, "d/x/1")
	requireContent(t, s, "d/x/2", []byte("two"), "text/plain")
	require.NoError(t, s.Delete(t.Context(), "d/x/1"), "second Delete")
	require.NoError(t, s.Delete(t.Context(), "d/x/2"))
	requireNotFound(t, s, "d/x/2")
	// The emptied folder takes new keys.
	put(t, s, "d/x/3", []byte("three"), "text/plain")
	requireContent(t, s, "d/x/3", []byte("three"), "text/plain")
	// A deleted key can be stored again.
	put(t, s, "d/x/1", []byte("one again"), "text/plain")
	requireContent(t, s, "d/x/1", []byte("one again"), "text/plain")
}

// validKeys are unusual but valid keys that every store must keep
// apart and round-trip.
var validKeys = []string{
	"a",
	"with space/ünïcödé file (1).txt",
	"a..b/c./d~e",
	"x+y=z&q?/#hash%20/semi;colon:,'quote'",
	"UPPER/lower",
	"emoji/\U0001F600.png",
	strings.Repeat("s", blob.MaxSegmentLen),
	strings.Repeat(strings.Repeat("k", 200)+"/", 4) + "end",
}

func testValidKeys(t *testing.T, s blob.Store) {
	for i, key := range validKeys {
		require.NoError(t, blob.ValidKey(key), "ValidKey(%q)", key)
		put(t, s, key, []byte{byte(i)}, "text/plain")
	}
	for i, key := range validKeys {
		requireContent(t, s, key, []byte{byte(i)}, "text/plain")
	}
	require.NoError(t, blob.ValidKey(strings.Repeat("k/", blob.MaxKeyLen/2-1)+"kk"), "a key of MaxKeyLen bytes")
	for _, key := range validKeys {
		require.NoError(t, s.Delete(t.Context(), key))
		requireNotFound(t, s, key)
	}
}

// invalidKeys are keys every store refuses with blob.ErrInvalidKey.
var invalidKeys = []string{
	"", "/", "/a", "a/", "a//b", "//a",
	".", "..", "../x", "a/../b", "a/..", "./a", "a/./b", "a/.",
	"/etc/passwd", "../../etc/passwd",
	".meta", ".meta/a", ".tmp/x", "a/.hidden", ".git/config",
	"a\\b", "\\a", "..\\x",
	"a\x00b", "\x00", "a/\x00",
	"a\nb", "tab\there", "del\x7f",
	string([]byte{0xff, 0xfe}), "a/\xc3",
	strings.Repeat("s", blob.MaxSegmentLen+1),
	strings.Repeat("k/", blob.MaxKeyLen/2) + "k",
}

func testInvalidKeys(t *testing.T, s blob.Store) {
	ctx := t.Context()
	for _, key := range invalidKeys {
		require.ErrorIs(t, blob.ValidKey(key), blob.ErrInvalidKey, "ValidKey(%q)", key)
		require.ErrorIs(t, s.Put(ctx, key, strings.NewReader("x"), 1, "text/plain"), blob.ErrInvalidKey, "Put(%q)", key)
		rc, _, err := s.Open(ctx, key)
		require.Nil(t, rc)
		require.ErrorIs(t, err, blob.ErrInvalidKey, "Open(%q)", key)
		_, err = s.Stat(ctx, key)
		require.ErrorIs(t, err, blob.ErrInvalidKey, "Stat(%q)", key)
		require.ErrorIs(t, s.Delete(ctx, key), blob.ErrInvalidKey, "Delete(%q)", key)
	}
	// What an invalid key would have named is untouched.
	put(t, s, "a/b", []byte("b"), "text/plain")
	require.ErrorIs(t, s.Delete(ctx, "a/./b"), blob.ErrInvalidKey)
	require.ErrorIs(t, s.Delete(ctx, "x/../a/b"), blob.ErrInvalidKey)
	requireContent(t, s, "a/b", []byte("b"), "text/plain")
}

func testInvalidContentType(t *testing.T, s blob.Store) {
	for _, ct := range []string{"text/plain\r\nX-Evil: 1", "text/pl\x00ain", "tëxt/plain", strings.Repeat("a", blob.MaxContentTypeLen+1)} {
		err := s.Put(t.Context(), "ct", strings.NewReader("x"), 1, ct)
		require.ErrorIs(t, err, blob.ErrInvalidContentType, "content type %q", ct)
	}
	requireNotFound(t, s, "ct")
}

func testBinaryAndEmpty(t *testing.T, s blob.Store) {
	all := make([]byte, 512) // every byte value, twice
	for i := range all {
		all[i] = byte(i)
	}
	put(t, s, "bin/all-bytes", all, "application/octet-stream")
	requireContent(t, s, "bin/all-bytes", all, "application/octet-stream")

	put(t, s, "bin/empty", nil, "text/plain")
	requireContent(t, s, "bin/empty", nil, "text/plain")
	require.NoError(t, s.Put(t.Context(), "bin/empty-unknown", bytes.NewReader(nil), -1, "text/plain"))
	requireContent(t, s, "bin/empty-unknown", nil, "text/plain")
	for _, size := range []int64{0, -1} {
		require.NoError(t, s.Put(t.Context(), "bin/nil-reader", nil, size, "text/plain"), "a nil reader is empty")
		requireContent(t, s, "bin/nil-reader", nil, "text/plain")
	}
	require.ErrorIs(t, s.Put(t.Context(), "bin/nil-reader", nil, 1, "text/plain"), blob.ErrSizeMismatch)
}

func testLarge(t *testing.T, s blob.Store) {
	big := randomBytes(5<<20, 1)
	put(t, s, "large/5MiB.bin", big, "application/zip")
	requireContent(t, s, "large/5MiB.bin", big, "application/zip")
	// A reader with no extra methods (no Seek, ReadAt, Len), as a request
	// body is.
	require.NoError(t, s.Put(t.Context(), "large/plain", io.MultiReader(bytes.NewReader(big)), int64(len(big)), "application/zip"))
	requireContent(t, s, "large/plain", big, "application/zip")
}

func testUnknownSize(t *testing.T, s blob.Store) {
	small := []byte("size not told")
	require.NoError(t, s.Put(t.Context(), "u/small", io.MultiReader(bytes.NewReader(small)), -1, "text/plain"))
	requireContent(t, s, "u/small", small, "text/plain")
	big := randomBytes(5<<20+17, 2)
	require.NoError(t, s.Put(t.Context(), "u/big", io.MultiReader(bytes.NewReader(big)), -1, "video/mp4"))
	requireContent(t, s, "u/big", big, "video/mp4")
}

func testSizeMismatch(t *testing.T, s blob.Store) {
	put(t, s, "m", []byte("original"), "text/plain")
	ctx := t.Context()
	for _, tc := range []struct {
		content string
		size    int64
	}{{"short", 10}, {"too long", 3}, {"x", 0}, {"", 1}} {
		err := s.Put(ctx, "m", io.MultiReader(strings.NewReader(tc.content)), tc.size, "text/html")
		require.ErrorIs(t, err, blob.ErrSizeMismatch, "%d bytes announced as %d", len(tc.content), tc.size)
		requireContent(t, s, "m", []byte("original"), "text/plain")
		err = s.Put(ctx, "m-new", io.MultiReader(strings.NewReader(tc.content)), tc.size, "text/html")
		require.ErrorIs(t, err, blob.ErrSizeMismatch)
		requireNotFound(t, s, "m-new")
	}
}

// failingReader yields some bytes and then an error.
type failingReader struct{ n int }

var errReader = errors.New("blobtest: reader failed")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errReader
	}
	n := min(len(p), f.n)
	for i := range n {
		p[i] = 'f'
	}
	f.n -= n
	return n, nil
}

func testReaderError(t *testing.T, s blob.Store) {
	put(t, s, "e", []byte("original"), "text/plain")
	for _, size := range []int64{100 << 10, -1} {
		err := s.Put(t.Context(), "e", &failingReader{n: 50 << 10}, size, "text/html")
		require.Error(t, err, "size %d", size)
		requireContent(t, s, "e", []byte("original"), "text/plain")
		require.Error(t, s.Put(t.Context(), "e-new", &failingReader{n: 50 << 10}, size, "text/html"))
		requireNotFound(t, s, "e-new")
	}
}

func testCanceledContext(t *testing.T, s blob.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.Error(t, s.Put(ctx, "c", strings.NewReader("x"), 1, "text/plain"))
	requireNotFound(t, s, "c")
	put(t, s, "c", []byte("x"), "text/plain")
	_, err := s.Stat(ctx, "c")
	require.Error(t, err)
	require.NotErrorIs(t, err, blob.ErrNotFound)
}
