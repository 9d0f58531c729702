package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/teamchat/chat/storage/blob/internal/exact"
)

// Store keeps files by key. Keys are slash-separated relative paths such as
// "2/ab/cdef123/photo.png" (no leading slash, no "..", no empty segments, no
// backslashes; see ValidKey); an invalid key gives ErrInvalidKey on every
// method.
//
// Implementations are safe for concurrent use. A reader never sees a
// partially written content: Open returns either the whole earlier content
// or the whole new one.
type Store interface {
	// Put stores the content under key, replacing any earlier content.
	// size is the exact length of r (-1, or any negative, if unknown);
	// when r yields more or fewer bytes than a known size, Put fails with
	// ErrSizeMismatch. A nil r is an empty content. An empty contentType
	// is recorded as DefaultContentType. When Put fails, the earlier
	// content, if any, stays.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Open returns the content and its Info; a missing key gives
	// ErrNotFound (use errors.Is). The caller closes the ReadCloser.
	Open(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// Stat returns the Info of key, ErrNotFound when missing.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// Info describes a stored content.
type Info struct {
	// Size is the length of the content in bytes.
	Size int64
	// ContentType is the content type given to Put (DefaultContentType
	// when Put was given none).
	ContentType string
	// ModTime is when the content was stored. Its precision depends on the
	// implementation (S3 reports whole seconds).
	ModTime time.Time
}

var (
	// ErrNotFound is returned by Open and Stat for a key with no content.
	ErrNotFound = errors.New("blob: not found")
	// ErrInvalidKey is returned (wrapped) for a key that ValidKey refuses.
	ErrInvalidKey = errors.New("blob: invalid key")
	// ErrInvalidContentType is returned (wrapped) by Put for a content type
	// that ValidContentType refuses.
	ErrInvalidContentType = errors.New("blob: invalid content type")
	// ErrSizeMismatch is returned (wrapped) by Put when the reader yields
	// more or fewer bytes than the size it was given.
	ErrSizeMismatch = exact.ErrSizeMismatch
)

// DefaultContentType is recorded for content stored with an empty content
// type.
const DefaultContentType = "application/octet-stream"

// Limits on keys and content types, chosen so that every implementation can
// honour them: S3 limits a whole key to 1024 bytes, and file systems limit a
// file name to 255 bytes.
const (
	// MaxKeyLen is the longest valid key in bytes.
	MaxKeyLen = 1024
	// MaxSegmentLen is the longest valid key segment in bytes.
	MaxSegmentLen = 255
	// MaxContentTypeLen is the longest valid content type in bytes.
	MaxContentTypeLen = 255
)

// ValidKey returns nil when key is a valid key, otherwise an error matching
// ErrInvalidKey that says why. A valid key:
//
//   - is non-empty valid UTF-8 of at most MaxKeyLen bytes;
//   - has no control character (U+0000 to U+001F, U+007F) and no backslash;
//   - splits on "/" into non-empty segments (no leading, trailing or
//     doubled slash) of at most MaxSegmentLen bytes;
//   - has no segment starting with "." (which excludes "." and "..", and
//     keeps names such as ".meta" free for implementations).
func ValidKey(key string) error {
	if reason := keyProblem(key); reason != "" {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, reason)
	}
	return nil
}

func keyProblem(key string) string {
	switch {
	case key == "":
		return "empty"
	case len(key) > MaxKeyLen:
		return fmt.Sprintf("longer than %d bytes", MaxKeyLen)
	case !utf8.ValidString(key):
		return "not valid UTF-8"
	}
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c < 0x20 || c == 0x7f:
			return "control character"
		case c == '\\':
			return "backslash"
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch {
		case seg == "":
			return "empty segment"
		case seg[0] == '.':
			return "segment starts with a dot"
		case len(seg) > MaxSegmentLen:
			return fmt.Sprintf("segment longer than %d bytes", MaxSegmentLen)
		}
	}
	return ""
}

// ValidContentType returns nil when contentType may be given to Put,
// otherwise an error matching ErrInvalidContentType: a content type is at
// most MaxContentTypeLen bytes of printable ASCII (space to "~"). The
// empty content type is valid and means DefaultContentType.
func ValidContentType(contentType string) error {
	if len(contentType) > MaxContentTypeLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidContentType, MaxContentTypeLen)
	}
	for i := 0; i < len(contentType); i++ {
		if c := contentType[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("%w %q: not printable ASCII", ErrInvalidContentType, contentType)
		}
	}
	return nil
}

// NormalizeContentType validates contentType with ValidContentType and
// returns the content type to record: DefaultContentType for "", otherwise
// contentType unchanged. Implementations call it in Put.
func NormalizeContentType(contentType string) (string, error) {
	if err := ValidContentType(contentType); err != nil {
		return "", err
	}
	if contentType == "" {
		return DefaultContentType, nil
	}
	return contentType, nil
}
