package archive_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/internal/archive"
	"github.com/teamchat/chat/storage"
)

// Records of every kind come back as they went, keyed by their columns,
// across chunks; files keep their bytes.
func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	m := archive.Manifest{Format: archive.Format, FormatVersion: archive.Version, Schema: "0028_notifications", SchemaVersion: 28}
	w, err := archive.NewWriter(&buf, m)
	require.NoError(t, err)
	users := storage.KindByName("users")
	owner := int64(7)
	big := strings.Repeat("x", archive.ChunkSize/3)
	var want []*storage.User
	for i := range 5 {
		u := &storage.User{ID: int64(i + 1), Email: "u@example.com", FullName: big, IsActive: i%2 == 0, BotOwnerID: &owner, Settings: `{"a":1}`}
		want = append(want, u)
		require.NoError(t, w.Record(users, u))
	}
	msg := &storage.Message{ID: 9, Topic: "t", RenderedContent: "<p>é &amp; ✓</p>"}
	require.NoError(t, w.Record(storage.KindByName("messages"), msg))
	require.NoError(t, w.File(archive.Uploads, "ab/cd/notes.txt", 5, strings.NewReader("hello")))
	require.NoError(t, w.Close())

	line, err := archive.MarshalRecord(msg)
	require.NoError(t, err)
	assert.Contains(t, string(line), `"rendered_content":"\u003cp\u003eé \u0026amp; ✓\u003c/p\u003e"`)
	assert.Contains(t, string(line), `"message_type":0`, "keys are the columns' names")

	r, err := archive.NewReader(&buf)
	require.NoError(t, err)
	assert.Equal(t, 28, r.Manifest.SchemaVersion)
	var got []*storage.User
	var names []string
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		names = append(names, e.Name)
		switch {
		case e.Kind == users:
			require.NoError(t, r.Records(func(rec any, _ int) error { got = append(got, rec.(*storage.User)); return nil }))
		case e.Kind != nil:
			require.NoError(t, r.Records(func(rec any, _ int) error { assert.Equal(t, msg, rec); return nil }))
		default:
			body, err := io.ReadAll(r.Body())
			require.NoError(t, err)
			assert.Equal(t, "hello", string(body))
		}
	}
	assert.Equal(t, want, got)
	assert.Equal(t, []string{"records/users/000001.jsonl", "records/users/000002.jsonl", "records/messages/000001.jsonl", "uploads/ab/cd/notes.txt"}, names,
		"users spill into a second chunk")
}

func TestWriterRefusesBadFileNames(t *testing.T) {
	for _, name := range []string{"../x", "a/../../x", "/etc/passwd", `a\b`, "a//b", "./a"} {
		w, err := archive.NewWriter(io.Discard, archive.Manifest{Format: archive.Format, FormatVersion: 1})
		require.NoError(t, err)
		assert.Error(t, w.File(archive.Uploads, name, 1, strings.NewReader("x")), name)
	}
}
