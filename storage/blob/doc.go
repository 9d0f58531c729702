// Package blob is the contract for keeping uploaded files: a small Store
// interface addressed by slash-separated keys, its errors, and the key rules
// every implementation enforces.
//
// Two implementations ship with it: Dir (this package), a directory on the
// local disk, and s3blob.Store, any S3-compatible object store. The
// blobtest package holds the conformance suite both pass.
//
// The package imports neither net/http, database/sql nor any S3 client, so
// the root chat package may depend on it.
//
// # Keys
//
// A key is a relative path of one or more segments joined by "/", such as
// "2/ab/cdef123/photo.png". ValidKey states the rules; in short a key is
// valid UTF-8 of at most MaxKeyLen bytes, has no empty segment (so no
// leading, trailing or doubled slash), no segment starting with "." (so no
// "." or ".." and no hidden names), no segment longer than MaxSegmentLen
// bytes, and no backslash or control character. Every method of a Store
// refuses an invalid key with an error matching ErrInvalidKey.
//
// # Content types
//
// Put records the content type given with the content and Open and Stat
// return it. An empty content type is recorded as DefaultContentType. A
// content type is at most MaxContentTypeLen bytes of printable ASCII;
// anything else is refused with ErrInvalidContentType.
package blob
