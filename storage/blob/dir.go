package blob

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"syscall"
	"time"

	"github.com/teamchat/chat/storage/blob/internal/exact"
)

// Names of the hidden trees under a Dir's root. Keys never start with a
// "." segment, so no key reaches them.
const (
	metaDir = ".meta" // <root>/.meta/<key>: the JSON metadata of <root>/<key>
	tmpDir  = ".tmp"  // <root>/.tmp/<random>: Put's files being written
)

// staleTemp is the age after which NewDir removes a leftover temporary file
// (from a crash, as Put removes its own on failure).
const staleTemp = 24 * time.Hour

// Dir is a Store in a directory on the local disk. The content of a key is
// the file <root>/<key>; its content type is kept in a sidecar file under
// the hidden tree <root>/.meta, and files being written live in <root>/.tmp
// until they are complete.
//
// Put writes to a temporary file, syncs it and renames it into place, so a
// reader never sees a half-written file and a crash never leaves one under
// a key. All file access goes through an os.Root, so no key (nor a symbolic
// link planted in the tree) reaches outside the root.
//
// A Dir is safe for concurrent use. Within one process Open always pairs a
// content with its own content type; other processes sharing the root see
// the same atomic contents but may briefly see the content type of a
// concurrent Put. As on a file system, a key cannot be both a content and
// the parent of other keys: while "a/b" is stored, Put of "a" fails (and
// the other way round); S3 has no such restriction.
type Dir struct {
	root  *os.Root
	locks [64]sync.RWMutex // striped by key: orders a key's two files
}

var _ Store = (*Dir)(nil)

// dirMeta is the JSON content of a sidecar file.
type dirMeta struct {
	ContentType string `json:"content_type"`
}

// NewDir returns a Dir keeping its files under root, creating the
// directory (mode 0o750) when it does not exist. Temporary files older
// than a day, left behind by a crash, are removed. Close releases the
// directory handle.
func NewDir(root string) (*Dir, error) {
	if root == "" {
		return nil, errors.New("blob: empty directory name")
	}
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	for _, name := range []string{metaDir, tmpDir} {
		if err := r.Mkdir(name, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
			_ = r.Close()
			return nil, fmt.Errorf("blob: %w", err)
		}
	}
	d := &Dir{root: r}
	d.removeStaleTemps()
	return d, nil
}

// Close releases the handle on the root directory; the Dir is unusable
// afterwards.
func (d *Dir) Close() error { return d.root.Close() }

func (d *Dir) removeStaleTemps() {
	f, err := d.root.Open(tmpDir)
	if err != nil {
		return
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			_ = d.root.Remove(path.Join(tmpDir, e.Name()))
		}
	}
}

func (d *Dir) lock(key string) *sync.RWMutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return &d.locks[h.Sum32()%uint32(len(d.locks))]
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	contentType, err := NormalizeContentType(contentType)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if r == nil {
		r = bytes.NewReader(nil)
	}
	data, err := d.writeTemp(ctx, exact.Reader(r, size))
	if err != nil {
		return fmt.Errorf("blob: put %q: %w", key, err)
	}
	defer func() { _ = d.root.Remove(data) }() // no-op once renamed
	metaJSON, err := json.Marshal(dirMeta{ContentType: contentType})
	if err != nil {
		return fmt.Errorf("blob: put %q: %w", key, err)
	}
	meta, err := d.writeTemp(ctx, bytes.NewReader(metaJSON))
	if err != nil {
		return fmt.Errorf("blob: put %q: %w", key, err)
	}
	defer func() { _ = d.root.Remove(meta) }()
	if err := ctx.Err(); err != nil {
		return err
	}

	// The content first, and Delete removes the sidecar first, so that
	// every sidecar has its content even after a crash (an orphan sidecar
	// could block its name as a directory of other keys). A crash between
	// the renames leaves the new content with the earlier (or, for a new
	// key, the default) content type.
	l := d.lock(key)
	l.Lock()
	err = d.rename(data, key)
	if err == nil {
		err = d.rename(meta, path.Join(metaDir, key))
	}
	l.Unlock()
	if err != nil {
		return fmt.Errorf("blob: put %q: %w", key, err)
	}
	d.syncDir(path.Dir(path.Join(metaDir, key)))
	d.syncDir(path.Dir(key))
	return nil
}

// writeTemp copies r into a new synced file under tmpDir and returns its
// name; on failure the file is removed.
func (d *Dir) writeTemp(ctx context.Context, r io.Reader) (string, error) {
	var (
		name string
		f    *os.File
		err  error
	)
	for range 10 {
		name = path.Join(tmpDir, rand.Text())
		f, err = d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = d.root.Remove(name)
		return "", err
	}
	return name, nil
}

// rename moves the temporary file tmp to target, creating target's parent
// directories. A concurrent Delete may remove a parent it found empty
// between the two steps, hence the retries.
func (d *Dir) rename(tmp, target string) error {
	var err error
	for range 10 {
		if err = d.root.MkdirAll(path.Dir(target), 0o750); err != nil {
			return conflict(err)
		}
		if err = d.root.Rename(tmp, target); !errors.Is(err, fs.ErrNotExist) {
			return conflict(err)
		}
	}
	return err
}

// conflict explains the errors of a key colliding with a directory of
// other keys, or of a key's parent being a content.
func conflict(err error) error {
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) ||
		errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
		return fmt.Errorf("a key cannot be both a content and the parent of other keys: %w", err)
	}
	return err
}

// syncDir makes a rename in dir durable; failures are ignored as the
// rename itself succeeded.
func (d *Dir) syncDir(dir string) {
	if f, err := d.root.Open(dir); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
}

// Open implements Store.
func (d *Dir) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if err := ValidKey(key); err != nil {
		return nil, Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, Info{}, err
	}
	l := d.lock(key)
	l.RLock()
	defer l.RUnlock()
	f, err := d.root.Open(key)
	if err != nil {
		return nil, Info{}, notFound(key, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist // a directory of other keys
	}
	if err != nil {
		_ = f.Close()
		return nil, Info{}, notFound(key, err)
	}
	return f, d.info(key, fi), nil
}

// Stat implements Store.
func (d *Dir) Stat(ctx context.Context, key string) (Info, error) {
	if err := ValidKey(key); err != nil {
		return Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	l := d.lock(key)
	l.RLock()
	defer l.RUnlock()
	fi, err := d.root.Stat(key)
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		return Info{}, notFound(key, err)
	}
	return d.info(key, fi), nil
}

// info builds the Info of key from its file's fi and its sidecar. A
// missing or unreadable sidecar gives DefaultContentType.
func (d *Dir) info(key string, fi fs.FileInfo) Info {
	info := Info{Size: fi.Size(), ContentType: DefaultContentType, ModTime: fi.ModTime()}
	b, err := d.root.ReadFile(path.Join(metaDir, key))
	var m dirMeta
	if err == nil && json.Unmarshal(b, &m) == nil && ValidContentType(m.ContentType) == nil && m.ContentType != "" {
		info.ContentType = m.ContentType
	}
	return info
}

// notFound maps "no such file" and "a parent is a file" to ErrNotFound.
func notFound(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	return fmt.Errorf("blob: %q: %w", key, err)
}

// Delete implements Store. It also removes the parent directories the
// deletion left empty.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	l := d.lock(key)
	l.Lock()
	_, err := d.removeFile(path.Join(metaDir, key))
	removed := false
	if err == nil {
		removed, err = d.removeFile(key)
	}
	l.Unlock()
	if err != nil {
		return fmt.Errorf("blob: delete %q: %w", key, err)
	}
	if removed {
		d.pruneDirs(path.Dir(key))
	}
	return nil
}

// removeFile removes name if it is a file (not a directory of other keys)
// and reports whether it did; a missing name is not an error.
func (d *Dir) removeFile(name string) (bool, error) {
	fi, err := d.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && fi.IsDir()) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := d.root.Remove(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// pruneDirs removes the folder dir, and its parents, from the content and
// the .meta trees while they are empty. A folder's name is also a key,
// whose lock orders the removal with a Put of that key: Put may replace
// the folder by a file only once it is gone.
func (d *Dir) pruneDirs(dir string) {
	for ; dir != "."; dir = path.Dir(dir) {
		l := d.lock(dir)
		l.Lock()
		meta := path.Join(metaDir, dir)
		if fi, err := d.root.Lstat(meta); err == nil && fi.IsDir() {
			_ = d.root.Remove(meta) // fails unless empty
		}
		fi, err := d.root.Lstat(dir)
		empty := err == nil && fi.IsDir() && d.root.Remove(dir) == nil
		l.Unlock()
		if !empty {
			return
		}
	}
}

// ctxReader stops a copy once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
