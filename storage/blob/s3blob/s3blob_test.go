package s3blob_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage/blob"
	"github.com/teamchat/chat/storage/blob/blobtest"
	"github.com/teamchat/chat/storage/blob/s3blob"
)

const bucket = "uploads"

// fakeS3 starts an in-process S3 server (gofakes3, in memory) holding an
// empty bucket and returns its backend and URL.
func fakeS3(t *testing.T) (*s3mem.Backend, string) {
	t.Helper()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket(bucket))
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return backend, srv.URL
}

func newStore(t *testing.T, url, prefix string) *s3blob.Store {
	t.Helper()
	s, err := s3blob.New(s3blob.Config{
		Endpoint:        url,
		Bucket:          bucket,
		Region:          "us-east-1",
		AccessKeyID:     "test-access-key",
		SecretAccessKey: "test-secret-key",
		Prefix:          prefix,
		PathStyle:       true,
	})
	require.NoError(t, err)
	return s
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		_, url := fakeS3(t)
		return newStore(t, url, "")
	})
}

func TestConformanceWithPrefix(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		_, url := fakeS3(t)
		return newStore(t, url, "/chat/uploads/")
	})
}

// Keys are stored under the prefix, as the object's Content-Type.
func TestPrefixLayout(t *testing.T) {
	backend, url := fakeS3(t)
	s := newStore(t, url, "chat/uploads")
	ctx := t.Context()
	require.NoError(t, s.Check(ctx))
	require.NoError(t, s.Put(ctx, "2/ab/photo.png", strings.NewReader("png"), 3, "image/png"))

	list, err := backend.ListBucket(bucket, &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	require.NoError(t, err)
	require.Len(t, list.Contents, 1)
	require.Equal(t, "chat/uploads/2/ab/photo.png", list.Contents[0].Key)
	obj, err := backend.HeadObject(bucket, "chat/uploads/2/ab/photo.png")
	require.NoError(t, err)
	require.Equal(t, "image/png", obj.Metadata["Content-Type"])
	require.NoError(t, obj.Contents.Close())

	// Another prefix does not see the key.
	other := newStore(t, url, "other")
	_, err = other.Stat(ctx, "2/ab/photo.png")
	require.ErrorIs(t, err, blob.ErrNotFound)
	require.NoError(t, other.Delete(ctx, "2/ab/photo.png"))
	_, err = s.Stat(ctx, "2/ab/photo.png")
	require.NoError(t, err)
}

// A missing bucket is a configuration error, not a missing key.
func TestMissingBucket(t *testing.T) {
	_, url := fakeS3(t)
	s, err := s3blob.New(s3blob.Config{Endpoint: url, Bucket: "absent", Region: "us-east-1",
		AccessKeyID: "k", SecretAccessKey: "s", PathStyle: true})
	require.NoError(t, err)
	ctx := t.Context()
	require.Error(t, s.Check(ctx))
	// (A HEAD response has no body to tell a missing bucket from a missing
	// key, so Stat says ErrNotFound; Check is for that.)
	_, _, err = s.Open(ctx, "k")
	require.Error(t, err)
	require.NotErrorIs(t, err, blob.ErrNotFound)
	require.Error(t, s.Put(ctx, "k", strings.NewReader("x"), 1, ""))
}

func TestNewConfig(t *testing.T) {
	valid := s3blob.Config{Endpoint: "127.0.0.1:9000", Bucket: "uploads"}
	for name, tc := range map[string]struct {
		edit func(*s3blob.Config)
		ok   bool
	}{
		"host:port":        {func(*s3blob.Config) {}, true},
		"http URL":         {func(c *s3blob.Config) { c.Endpoint = "http://minio.local:9000" }, true},
		"https URL":        {func(c *s3blob.Config) { c.Endpoint = "https://s3.example.com/" }, true},
		"host with TLS":    {func(c *s3blob.Config) { c.Endpoint, c.UseSSL = "s3.amazonaws.com", true }, true},
		"credentials":      {func(c *s3blob.Config) { c.AccessKeyID, c.SecretAccessKey = "a", "b" }, true},
		"prefix":           {func(c *s3blob.Config) { c.Prefix = "a/b/" }, true},
		"empty endpoint":   {func(c *s3blob.Config) { c.Endpoint = "" }, false},
		"URL with path":    {func(c *s3blob.Config) { c.Endpoint = "http://host/bucket" }, false},
		"host with path":   {func(c *s3blob.Config) { c.Endpoint = "host/bucket" }, false},
		"ftp URL":          {func(c *s3blob.Config) { c.Endpoint = "ftp://host" }, false},
		"http with UseSSL": {func(c *s3blob.Config) { c.Endpoint, c.UseSSL = "http://host", true }, false},
		"empty bucket":     {func(c *s3blob.Config) { c.Bucket = "" }, false},
		"bad bucket":       {func(c *s3blob.Config) { c.Bucket = "Bad_Bucket!" }, false},
		"bad prefix":       {func(c *s3blob.Config) { c.Prefix = "a/../b" }, false},
		"half credentials": {func(c *s3blob.Config) { c.AccessKeyID = "a" }, false},
	} {
		cfg := valid
		tc.edit(&cfg)
		s, err := s3blob.New(cfg)
		if tc.ok {
			require.NoError(t, err, name)
			require.NotNil(t, s, name)
		} else {
			require.Error(t, err, name)
		}
	}
}

// Contents larger than a part (16 MiB) go in multipart uploads, with and
// without a known size.
func TestMultipart(t *testing.T) {
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket(bucket))
	fake := gofakes3.New(backend).Server()
	var parts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("partNumber") {
			parts.Add(1)
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s := newStore(t, srv.URL, "p")
	ctx := t.Context()
	big := bytes.Repeat([]byte("0123456789abcdef"), (17<<20)/16)
	big = append(big, "tail"...)
	for _, size := range []int64{int64(len(big)), -1} {
		// io.MultiReader hides bytes.Reader's Seek and ReadAt, as a
		// request body has none.
		require.NoError(t, s.Put(ctx, "big", io.MultiReader(bytes.NewReader(big)), size, "video/mp4"))
		rc, info, err := s.Open(ctx, "big")
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		require.Equal(t, int64(len(big)), info.Size)
		require.Equal(t, "video/mp4", info.ContentType)
		require.Equal(t, sha256.Sum256(big), sha256.Sum256(got), "size %d", size)
		require.Equal(t, int32(2), parts.Swap(0), "size %d: uploaded in two parts", size)
	}
}
