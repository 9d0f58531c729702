// Package s3blob is a blob.Store in a bucket of an S3-compatible object
// store (Amazon S3, MinIO, Ceph, Garage, R2, ...), through the
// github.com/minio/minio-go/v7 client.
//
// A key is stored as the object Config.Prefix + "/" + key, its content
// type as the object's Content-Type. Objects are written whole by a single
// PUT (or a multipart upload for large or unknown-size contents, completed
// at once), so readers see either the earlier or the new object, never a
// mix; Open reads the body and the Info from one GET response.
//
// Uploads are signed with an unsigned payload (x-amz-content-sha256:
// UNSIGNED-PAYLOAD), as minio-go does over TLS anyway. Over plain HTTP
// minio-go would otherwise use aws-chunked streaming signatures, which it
// gets wrong for empty objects (no Content-Length) and which some
// S3-compatible servers do not decode in multipart parts; the price is
// that over plain HTTP the signature does not cover the content, as
// nothing covers a download's.
package s3blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/teamchat/chat/storage/blob"
	"github.com/teamchat/chat/storage/blob/internal/exact"
)

// Sizes of the upload of a content of unknown size: up to smallPut bytes
// go in one PUT; longer ones in a multipart upload of partSize parts (so
// up to 10,000 × partSize bytes), each part buffered in memory.
const (
	smallPut = 1 << 20
	partSize = 16 << 20
)

// Config locates a bucket.
type Config struct {
	// Endpoint is the server's host[:port] ("s3.eu-west-1.amazonaws.com",
	// "127.0.0.1:9000") or a URL with no path ("https://minio.example").
	// A URL's scheme decides TLS.
	Endpoint string
	// Bucket is the bucket's name; the bucket must exist.
	Bucket string
	// Region is the bucket's region; empty lets the client look it up.
	Region string
	// AccessKeyID and SecretAccessKey are the credentials; both empty
	// means anonymous requests.
	AccessKeyID     string
	SecretAccessKey string
	// Prefix, when not empty, is the folder under which keys are stored
	// ("uploads" stores "a/b" as "uploads/a/b"). Surrounding slashes are
	// ignored; the rest must satisfy blob.ValidKey. S3 limits a whole
	// object name to 1024 bytes, which the longest keys then exceed.
	Prefix string
	// UseSSL requests https for a host[:port] Endpoint.
	UseSSL bool
	// PathStyle addresses the bucket in the path
	// (http://host/bucket/key) rather than in the host name
	// (http://bucket.host/key), as most servers other than Amazon S3 need.
	// When false, the client chooses by the endpoint.
	PathStyle bool
}

// Store is a blob.Store in an S3 bucket. It is safe for concurrent use.
type Store struct {
	client *minio.Client
	bucket string
	prefix string // "" or ending in "/"
}

var _ blob.Store = (*Store)(nil)

// New returns a Store for the bucket cfg describes. It makes no request;
// Check verifies that the bucket is reachable.
func New(cfg Config) (*Store, error) {
	endpoint, secure, err := parseEndpoint(cfg.Endpoint, cfg.UseSSL)
	if err != nil {
		return nil, err
	}
	if err := s3utils.CheckValidBucketName(cfg.Bucket); err != nil {
		return nil, fmt.Errorf("s3blob: bucket %q: %w", cfg.Bucket, err)
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		if err := blob.ValidKey(prefix); err != nil {
			return nil, fmt.Errorf("s3blob: prefix: %w", err)
		}
		prefix += "/"
	}
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return nil, errors.New("s3blob: AccessKeyID and SecretAccessKey go together")
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		Secure:       secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("s3blob: %w", err)
	}
	return &Store{client: client, bucket: cfg.Bucket, prefix: prefix}, nil
}

// parseEndpoint splits an Endpoint into the host[:port] the client takes
// and whether to use TLS.
func parseEndpoint(endpoint string, useSSL bool) (string, bool, error) {
	if endpoint == "" {
		return "", false, errors.New("s3blob: empty endpoint")
	}
	if !strings.Contains(endpoint, "://") {
		if strings.ContainsAny(endpoint, "/?#@") {
			return "", false, fmt.Errorf("s3blob: endpoint %q: want host[:port] or a URL", endpoint)
		}
		return endpoint, useSSL, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false, fmt.Errorf("s3blob: endpoint: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", false, fmt.Errorf("s3blob: endpoint %q: scheme must be http or https", endpoint)
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return "", false, fmt.Errorf("s3blob: endpoint %q: want a URL with a host and no path", endpoint)
	case useSSL && u.Scheme == "http":
		return "", false, fmt.Errorf("s3blob: endpoint %q: UseSSL with an http URL", endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

// Check returns nil when the bucket exists and the credentials may see it.
func (s *Store) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("s3blob: bucket %q: %w", s.bucket, err)
	}
	if !ok {
		return fmt.Errorf("s3blob: bucket %q does not exist", s.bucket)
	}
	return nil
}

// object returns the object name of key, or an error matching
// blob.ErrInvalidKey.
func (s *Store) object(key string) (string, error) {
	if err := blob.ValidKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

// Put implements blob.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	contentType, err = blob.NormalizeContentType(contentType)
	if err != nil {
		return err
	}
	if r == nil {
		r = bytes.NewReader(nil)
	}
	opts := minio.PutObjectOptions{ContentType: contentType, DisableContentSha256: true}
	body := exact.Reader(r, size)
	switch {
	case size == 0:
		// The client sends no body, so check here that r is empty.
		if _, err := io.Copy(io.Discard, body); err != nil {
			return fmt.Errorf("s3blob: put %q: %w", key, err)
		}
		body = bytes.NewReader(nil)
	case size < 0:
		// Small contents, the usual case, go in one PUT rather than a
		// multipart upload.
		buf, err := io.ReadAll(io.LimitReader(r, smallPut+1))
		if err != nil {
			return fmt.Errorf("s3blob: put %q: %w", key, err)
		}
		if len(buf) <= smallPut {
			body, size = bytes.NewReader(buf), int64(len(buf))
		} else {
			body = io.MultiReader(bytes.NewReader(buf), r)
			opts.PartSize = partSize
		}
	}
	if _, err := s.client.PutObject(ctx, s.bucket, name, body, size, opts); err != nil {
		return fmt.Errorf("s3blob: put %q: %w", key, err)
	}
	return nil
}

// Open implements blob.Store. The content is read under ctx: reading it
// fails once ctx is done.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	name, err := s.object(key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	// One GET, whose headers give the Info of the body it carries.
	body, oi, _, err := minio.Core{Client: s.client}.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, blob.Info{}, mapErr(key, err)
	}
	return body, info(oi), nil
}

// Stat implements blob.Store. S3 answers it with a bodiless 404 for a
// missing bucket as for a missing key, so Stat reports ErrNotFound for
// both; Check tells them apart.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	name, err := s.object(key)
	if err != nil {
		return blob.Info{}, err
	}
	oi, err := s.client.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{})
	if err != nil {
		return blob.Info{}, mapErr(key, err)
	}
	return info(oi), nil
}

// Delete implements blob.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	err = s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{})
	if err != nil && !errors.Is(mapErr(key, err), blob.ErrNotFound) {
		return fmt.Errorf("s3blob: delete %q: %w", key, err)
	}
	return nil
}

func info(oi minio.ObjectInfo) blob.Info {
	ct := oi.ContentType
	if ct == "" {
		ct = blob.DefaultContentType
	}
	return blob.Info{Size: oi.Size, ContentType: ct, ModTime: oi.LastModified}
}

// mapErr turns the server's "no such key" into blob.ErrNotFound. A 404
// for a missing bucket stays an error of its own: it is a configuration
// problem, not a missing file.
func mapErr(key string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.Code == "NoSuchKey" ||
		resp.StatusCode == http.StatusNotFound && resp.Code != "NoSuchBucket") {
		return fmt.Errorf("%w: %q", blob.ErrNotFound, key)
	}
	return fmt.Errorf("s3blob: %q: %w", key, err)
}
