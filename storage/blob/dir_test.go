package blob_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage/blob"
	"github.com/teamchat/chat/storage/blob/blobtest"
)

func newDir(t *testing.T) (*blob.Dir, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "blobs")
	d, err := blob.NewDir(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d, root
}

func TestDirConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		d, _ := newDir(t)
		return d
	})
}

func TestNewDir(t *testing.T) {
	_, err := blob.NewDir("")
	require.Error(t, err)

	d, root := newDir(t)
	fi, err := os.Stat(root)
	require.NoError(t, err)
	require.True(t, fi.IsDir())
	require.Equal(t, fs.FileMode(0o750), fi.Mode().Perm()&^umaskBits(t))
	require.NoError(t, d.Put(t.Context(), "k", strings.NewReader("kept"), 4, "text/plain"))
	require.NoError(t, d.Close())

	// Reopening finds the content.
	d2, err := blob.NewDir(root)
	require.NoError(t, err)
	defer d2.Close()
	info, err := d2.Stat(t.Context(), "k")
	require.NoError(t, err)
	require.Equal(t, blob.Info{Size: 4, ContentType: "text/plain", ModTime: info.ModTime}, info)

	// A file where the directory should be is an error.
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = blob.NewDir(file)
	require.Error(t, err)
}

// umaskBits returns the permission bits the process umask clears, found
// by creating a directory.
func umaskBits(t *testing.T) fs.FileMode {
	dir := filepath.Join(t.TempDir(), "probe")
	require.NoError(t, os.Mkdir(dir, 0o777))
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	return 0o777 &^ fi.Mode().Perm()
}

// files lists the regular files under root, relative and slash-separated.
func files(t *testing.T, root string) []string {
	t.Helper()
	var list []string
	require.NoError(t, filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		list = append(list, filepath.ToSlash(rel))
		return err
	}))
	return list
}

func TestDirLayout(t *testing.T) {
	d, root := newDir(t)
	ctx := t.Context()
	require.NoError(t, d.Put(ctx, "2/ab/photo.png", strings.NewReader("png"), 3, "image/png"))
	require.NoError(t, d.Put(ctx, "2/ab/photo.png", strings.NewReader("png2"), -1, "image/png"))
	require.NoError(t, d.Put(ctx, "top", strings.NewReader(""), 0, ""))
	// A failed Put leaves nothing behind either.
	require.ErrorIs(t, d.Put(ctx, "bad", strings.NewReader("abc"), 5, ""), blob.ErrSizeMismatch)

	require.ElementsMatch(t, []string{"2/ab/photo.png", ".meta/2/ab/photo.png", "top", ".meta/top"}, files(t, root),
		"only contents and their sidecars: no temporary file")
	b, err := os.ReadFile(filepath.Join(root, "2", "ab", "photo.png"))
	require.NoError(t, err)
	require.Equal(t, "png2", string(b), "the content is the plain file")

	// Deleting removes the sidecar and the emptied folders.
	require.NoError(t, d.Delete(ctx, "2/ab/photo.png"))
	require.ElementsMatch(t, []string{"top", ".meta/top"}, files(t, root))
	_, err = os.Stat(filepath.Join(root, "2"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = os.Stat(filepath.Join(root, ".meta", "2"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	for _, dir := range []string{".meta", ".tmp"} {
		fi, err := os.Stat(filepath.Join(root, dir))
		require.NoError(t, err, "the hidden trees stay")
		require.True(t, fi.IsDir())
	}
}

// The hidden trees are no keys, whatever they hold.
func TestDirHiddenTreesUnreachable(t *testing.T) {
	d, root := newDir(t)
	ctx := t.Context()
	require.NoError(t, d.Put(ctx, "k", strings.NewReader("v"), 1, "text/plain"))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".tmp", "leftover"), []byte("x"), 0o600))
	for _, key := range []string{".meta/k", ".meta", ".tmp/leftover", ".tmp", "k/../.meta/k", "./k"} {
		_, err := d.Stat(ctx, key)
		require.ErrorIs(t, err, blob.ErrInvalidKey, key)
		_, _, err = d.Open(ctx, key)
		require.ErrorIs(t, err, blob.ErrInvalidKey, key)
		require.ErrorIs(t, d.Put(ctx, key, strings.NewReader("x"), 1, ""), blob.ErrInvalidKey, key)
		require.ErrorIs(t, d.Delete(ctx, key), blob.ErrInvalidKey, key)
	}
	// A key named like a sidecar's folder is an ordinary key.
	require.NoError(t, d.Put(ctx, "meta/k", strings.NewReader("m"), 1, "text/x"))
	info, err := d.Stat(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "text/plain", info.ContentType)
	b, err := os.ReadFile(filepath.Join(root, ".tmp", "leftover"))
	require.NoError(t, err, "a fresh temporary file is not removed")
	require.Equal(t, "x", string(b))
}

// No key reaches outside the root, and neither does a symbolic link
// planted inside it.
func TestDirRootEscape(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	d, root := newDir(t)
	ctx := t.Context()
	rel, err := filepath.Rel(root, secret)
	require.NoError(t, err)
	for _, key := range []string{"../x", "../../" + filepath.ToSlash(rel), filepath.ToSlash(rel), secret, "/etc/passwd",
		"a//b", "a/./b", "a\\b", "..\\x", "", "a\x00b", "\x00/etc/passwd"} {
		_, err := d.Stat(ctx, key)
		require.ErrorIs(t, err, blob.ErrInvalidKey, "%q", key)
		require.ErrorIs(t, d.Put(ctx, key, strings.NewReader("x"), 1, ""), blob.ErrInvalidKey, "%q", key)
		require.ErrorIs(t, d.Delete(ctx, key), blob.ErrInvalidKey, "%q", key)
	}

	require.NoError(t, os.Symlink(outside, filepath.Join(root, "link")))
	_, _, err = d.Open(ctx, "link/secret")
	require.Error(t, err, "a link out of the root is not followed")
	require.Error(t, d.Put(ctx, "link/new", strings.NewReader("x"), 1, ""))
	require.Error(t, d.Delete(ctx, "link/secret"))
	b, err := os.ReadFile(secret)
	require.NoError(t, err)
	require.Equal(t, "secret", string(b))
	_, err = os.Stat(filepath.Join(outside, "new"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// As on any file system, a key cannot be both a content and a folder of
// other keys; the failure changes nothing.
func TestDirKeyAndFolderConflict(t *testing.T) {
	d, _ := newDir(t)
	ctx := t.Context()
	require.NoError(t, d.Put(ctx, "a/b", strings.NewReader("b"), 1, "text/b"))
	require.Error(t, d.Put(ctx, "a", strings.NewReader("a"), 1, "text/a"))
	_, err := d.Stat(ctx, "a")
	require.ErrorIs(t, err, blob.ErrNotFound, "a folder is no content")
	require.NoError(t, d.Delete(ctx, "a"), "deleting a folder's name is deleting a missing key")
	require.Error(t, d.Put(ctx, "a/b/c", strings.NewReader("c"), 1, "text/c"))
	rc, info, err := d.Open(ctx, "a/b")
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = buf.ReadFrom(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, "b", buf.String())
	require.Equal(t, "text/b", info.ContentType)

	// Once "a/b" is deleted, "a" is free.
	require.NoError(t, d.Delete(ctx, "a/b"))
	require.NoError(t, d.Put(ctx, "a", strings.NewReader("a"), 1, "text/a"))
	info, err = d.Stat(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "text/a", info.ContentType)
}

// A content without its sidecar (placed by hand, or after a crash between
// Put's two renames) has the default content type.
func TestDirMissingSidecar(t *testing.T) {
	d, root := newDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "hand"), 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(root, "hand", "made.txt"), []byte("hello"), 0o600))
	info, err := d.Stat(t.Context(), "hand/made.txt")
	require.NoError(t, err)
	require.Equal(t, int64(5), info.Size)
	require.Equal(t, blob.DefaultContentType, info.ContentType)
	require.NoError(t, os.WriteFile(filepath.Join(root, ".meta", "hand"), []byte("not json"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".meta", "hand2"), 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".meta", "hand2", "x"), []byte(`{"content_type":"bad\n"}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "hand2x"), nil, 0o600))
	info, err = d.Stat(t.Context(), "hand/made.txt")
	require.NoError(t, err)
	require.Equal(t, blob.DefaultContentType, info.ContentType)
}
