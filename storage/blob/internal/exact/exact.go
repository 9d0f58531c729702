// Package exact checks that a reader yields exactly the number of bytes it
// was announced with, for the Put implementations of package blob.
package exact

import (
	"errors"
	"fmt"
	"io"
)

// ErrSizeMismatch is the error, re-exported as blob.ErrSizeMismatch, that
// the reader's failures match.
var ErrSizeMismatch = errors.New("blob: content length differs from the given size")

// Reader returns r when size is negative (unknown), otherwise a reader
// that yields the bytes of r and fails with an error matching
// ErrSizeMismatch when r ends before size bytes or holds more than
// size bytes. The excess is detected by reading one byte ahead before the
// Read that would return the last announced byte, which then returns the
// error instead, so a consumer that stops after size bytes never gets all
// of them.
func Reader(r io.Reader, size int64) io.Reader {
	if size < 0 {
		return r
	}
	return &reader{r: r, size: size, left: size}
}

type reader struct {
	r          io.Reader
	size, left int64
	err        error // sticky: io.EOF once complete, or the failure
}

func (e *reader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.left == 0 {
		// Nothing (more) announced: only the probe remains.
		e.err = e.probe()
		return 0, e.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case e.left > 0 && errors.Is(err, io.EOF):
		e.err = fmt.Errorf("%w: got %d of %d bytes", ErrSizeMismatch, e.size-e.left, e.size)
		return n, e.err
	case err != nil:
		e.err = err
		return n, err
	case e.left == 0:
		// Probe before handing out the last bytes: a consumer that stops
		// after size bytes (an HTTP request with that Content-Length) must
		// not complete its work with them before seeing the error.
		if e.err = e.probe(); e.err != io.EOF {
			return 0, e.err
		}
		// Hand out the data now and io.EOF on the next call.
	}
	return n, nil
}

// probe reads one byte past the announced size: io.EOF means r was exactly
// as long as announced.
func (e *reader) probe() error {
	var b [1]byte
	n, err := io.ReadAtLeast(e.r, b[:], 1)
	switch {
	case n > 0:
		return fmt.Errorf("%w: more than %d bytes", ErrSizeMismatch, e.size)
	case errors.Is(err, io.EOF):
		return io.EOF
	default:
		return err
	}
}
