package blobtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage/blob"
)

// errs collects the failures of goroutines, which may not call
// t.FailNow.
type errs struct {
	mu   sync.Mutex
	list []error
}

func (e *errs) add(err error) {
	if err != nil {
		e.mu.Lock()
		e.list = append(e.list, err)
		e.mu.Unlock()
	}
}

func (e *errs) check(t *testing.T) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	require.NoError(t, errors.Join(e.list...))
}

// readAll opens key and reads it whole.
func readAll(t *testing.T, s blob.Store, key string) ([]byte, blob.Info, error) {
	rc, info, err := s.Open(t.Context(), key)
	if err != nil {
		return nil, info, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return b, info, err
}

func testConcurrentKeys(t *testing.T, s blob.Store) {
	const workers, rounds = 8, 10
	var e errs
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			key := fmt.Sprintf("conc/%d/file", w)
			for r := range rounds {
				want := bytes.Repeat([]byte{byte(w), byte(r)}, 1000+w*100+r)
				ct := fmt.Sprintf("application/x-w%d-r%d", w, r)
				size := int64(len(want))
				if r%3 == 2 {
					size = -1
				}
				if err := s.Put(t.Context(), key, bytes.NewReader(want), size, ct); err != nil {
					e.add(err)
					return
				}
				got, info, err := readAll(t, s, key)
				switch {
				case err != nil:
					e.add(err)
				case !bytes.Equal(got, want) || info.ContentType != ct || info.Size != int64(len(want)):
					e.add(fmt.Errorf("%s round %d: got %d bytes of %s, want %d of %s", key, r, len(got), info.ContentType, len(want), ct))
				}
			}
			if err := s.Delete(t.Context(), key); err != nil {
				e.add(err)
			}
		})
	}
	wg.Wait()
	e.check(t)
	for w := range workers {
		requireNotFound(t, s, fmt.Sprintf("conc/%d/file", w))
	}
}

// version is one of the contents that testConcurrentSameKey alternates.
type version struct {
	fill        byte
	size        int
	contentType string
}

var versions = []version{
	{'a', 64 << 10, "text/a"},
	{'b', 96<<10 + 3, "text/b"},
	{'c', 1, "text/c"},
	{'d', 0, "text/d"},
}

// checkInfo reports an error unless info is that of one of the versions.
func checkInfo(info blob.Info) (version, error) {
	for _, v := range versions {
		if info.ContentType == v.contentType {
			if info.Size != int64(v.size) {
				return v, fmt.Errorf("Info.Size %d for %s, want %d", info.Size, v.contentType, v.size)
			}
			return v, nil
		}
	}
	return version{}, fmt.Errorf("unknown content type %q", info.ContentType)
}

// checkWhole reports an error unless got and info are exactly one of the
// versions.
func checkWhole(got []byte, info blob.Info) error {
	v, err := checkInfo(info)
	if err == nil && (len(got) != v.size || bytes.Count(got, []byte{v.fill}) != v.size) {
		err = fmt.Errorf("read %d bytes for %s, want %d bytes of %q", len(got), v.contentType, v.size, v.fill)
	}
	return err
}

// testConcurrentSameKey has writers replace and delete one key while
// readers read it: a reader sees one version whole, with its own content
// type, or no content.
func testConcurrentSameKey(t *testing.T, s blob.Store) {
	const key, writers, readers, rounds = "same/key", 3, 4, 12
	v0 := versions[0]
	put(t, s, key, bytes.Repeat([]byte{v0.fill}, v0.size), v0.contentType)

	var e errs
	done := make(chan struct{})
	var reads sync.WaitGroup
	for range readers {
		reads.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-done:
					if n > 0 {
						return
					}
				default:
				}
				got, info, err := readAll(t, s, key)
				if errors.Is(err, blob.ErrNotFound) {
					continue
				}
				if err == nil {
					err = checkWhole(got, info)
				}
				e.add(err)
				if info, err := s.Stat(t.Context(), key); err == nil {
					_, err = checkInfo(info)
					e.add(err)
				} else if !errors.Is(err, blob.ErrNotFound) {
					e.add(err)
				}
			}
		})
	}
	var writes sync.WaitGroup
	for w := range writers {
		writes.Go(func() {
			for r := range rounds {
				if w == 0 && r%4 == 3 {
					e.add(s.Delete(t.Context(), key))
					continue
				}
				v := versions[(w+r)%len(versions)]
				size := int64(v.size)
				if r%2 == 1 {
					size = -1
				}
				e.add(s.Put(t.Context(), key, bytes.NewReader(bytes.Repeat([]byte{v.fill}, v.size)), size, v.contentType))
			}
		})
	}
	writes.Wait()
	close(done)
	reads.Wait()
	e.check(t)
}
