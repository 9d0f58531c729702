package chat_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/archive"
	"github.com/teamchat/chat/storage/bunstore"
)

// rawEntry is one tar entry of an archive, to rewrite in tests.
type rawEntry struct {
	hdr  tar.Header
	body []byte
}

func readEntries(t *testing.T, data []byte) []rawEntry {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var out []rawEntry
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		out = append(out, rawEntry{hdr: *hdr, body: body})
	}
}

// writeEntries writes entries; an entry with a nil body is written as a
// header alone, and the archive ends there (cut after the header).
func writeEntries(t *testing.T, entries []rawEntry) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := e.hdr
		if e.body == nil {
			require.NoError(t, tw.WriteHeader(&hdr))
			require.NoError(t, gz.Close())
			return buf.Bytes()
		}
		if hdr.Typeflag == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		require.NoError(t, tw.WriteHeader(&hdr))
		_, err := tw.Write(e.body)
		require.NoError(t, err)
	}
	_ = tw.Close()
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// exportedOrg is the archive of populate's organization.
func exportedOrg(t *testing.T) ([]byte, *movedOrg) {
	src := newMoveNode(t, bunstore.OpenTestSQLite(t))
	o := populate(t, src)
	realms, err := src.store.ListRealms(context.Background())
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = src.svc.ExportRealm(context.Background(), &buf, chat.ExportRequest{RealmID: realms[0].ID})
	require.NoError(t, err)
	return buf.Bytes(), o
}

func entryIndex(t *testing.T, entries []rawEntry, prefix string) int {
	for i, e := range entries {
		if strings.HasPrefix(e.hdr.Name, prefix) {
			return i
		}
	}
	t.Fatalf("no entry %s", prefix)
	return -1
}

func replaceLine(body []byte, n int, line string) []byte {
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	lines[n-1] = line
	return []byte(strings.Join(lines, "\n") + "\n")
}

func mapLine(t *testing.T, body []byte, n int, fn func(map[string]any)) []byte {
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[n-1]), &rec))
	fn(rec)
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	return replaceLine(body, n, string(b))
}

func lineCount(body []byte) int { return strings.Count(string(body), "\n") }

func TestImportRefusesBadArchives(t *testing.T) {
	chattest.SkipStoreRerun(t)
	data, _ := exportedOrg(t)
	good := readEntries(t, data)
	edit := func(fn func(es []rawEntry) []rawEntry) []byte {
		es := make([]rawEntry, len(good))
		for i, e := range good {
			es[i] = rawEntry{hdr: e.hdr, body: append([]byte(nil), e.body...)}
		}
		return writeEntries(t, fn(es))
	}
	withManifest := func(fn func(m map[string]any)) []byte {
		return edit(func(es []rawEntry) []rawEntry {
			var m map[string]any
			require.NoError(t, json.Unmarshal(es[0].body, &m))
			fn(m)
			es[0].body, _ = json.Marshal(m)
			return es
		})
	}
	messages := entryIndex(t, good, "records/messages/")
	users := entryIndex(t, good, "records/users/")
	upload := entryIndex(t, good, "uploads/")
	scheduled := entryIndex(t, good, "records/scheduled_messages/")
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"not an archive", "not a teamchat export", []byte("hello, this is not gzip")},
		{"cut short in the middle of the stream", "broken or cut short", data[:len(data)*2/3]},
		{"unknown format version", "format version 99", withManifest(func(m map[string]any) { m["format_version"] = 99 })},
		{"another format", `format "zip-export"`, withManifest(func(m map[string]any) { m["format"] = "zip-export" })},
		{"newer schema", "newer schema", withManifest(func(m map[string]any) { m["schema_version"] = 9999; m["schema"] = "9999_future" })},
		{"path leaving the folder", "leaves the archive's folder", edit(func(es []rawEntry) []rawEntry {
			es[upload].hdr.Name = "uploads/../../etc/passwd"
			return es
		})},
		{"absolute path", "not a relative path", edit(func(es []rawEntry) []rawEntry {
			es[upload].hdr.Name = "/etc/passwd"
			return es
		})},
		{"symbolic link", "links are not allowed", edit(func(es []rawEntry) []rawEntry {
			es[upload].hdr = tar.Header{Typeflag: tar.TypeSymlink, Name: "uploads/link", Linkname: "/etc/passwd", Mode: 0o777}
			es[upload].body = []byte{}
			return es
		})},
		{"hard link", "links are not allowed", edit(func(es []rawEntry) []rawEntry {
			es[upload].hdr = tar.Header{Typeflag: tar.TypeLink, Name: "uploads/link", Linkname: "manifest.json", Mode: 0o644}
			es[upload].body = []byte{}
			return es
		})},
		{"records entry far larger than any", "larger than any records entry", edit(func(es []rawEntry) []rawEntry {
			es[messages].hdr.Size, es[messages].hdr.Format = 10<<30, tar.FormatPAX
			es[messages].body = nil // the header alone: refused before any byte is read
			return es[:messages+1]
		})},
		{"file larger than its record says (bomb)", "its attachment record says", edit(func(es []rawEntry) []rawEntry {
			es[upload].body = bytes.Repeat([]byte{0}, 50<<20)
			return es
		})},
		{"a line longer than any record", "longer than any record", edit(func(es []rawEntry) []rawEntry {
			es[users].body = append([]byte(`{"email": "`+strings.Repeat("a", archive.MaxLine+1)+`"}`+"\n"), es[users].body...)
			return es
		})},
		{"broken JSON names file and line", good[messages].hdr.Name + " line 3: broken JSON", edit(func(es []rawEntry) []rawEntry {
			es[messages].body = replaceLine(es[messages].body, 3, `{"id": 3, "content": "unterminated`)
			return es
		})},
		{"unknown field", `line 2: unknown field "favourite_colour"`, edit(func(es []rawEntry) []rawEntry {
			es[users].body = mapLine(t, es[users].body, 2, func(m map[string]any) { m["favourite_colour"] = "blue" })
			return es
		})},
		{"wrong type", `field "full_name"`, edit(func(es []rawEntry) []rawEntry {
			es[users].body = mapLine(t, es[users].body, 2, func(m map[string]any) { m["full_name"] = 12 })
			return es
		})},
		{"missing user", "refers to users 4242", edit(func(es []rawEntry) []rawEntry {
			es[messages].body = mapLine(t, es[messages].body, 5, func(m map[string]any) { m["sender_id"] = 4242 })
			return es
		})},
		{"missing conversation", "refers to direct_conversations 777", edit(func(es []rawEntry) []rawEntry {
			n := lineCount(es[messages].body)
			es[messages].body = mapLine(t, es[messages].body, n, func(m map[string]any) {
				delete(m, "stream_id")
				m["topic"] = ""
				m["conversation_id"] = 777
			})
			return es
		})},
		{"missing group in a setting", "refers to user_groups 999", edit(func(es []rawEntry) []rawEntry {
			es[users-1].body = mapLine(t, es[users-1].body, 1, func(m map[string]any) { m["can_invite_users_group_id"] = 999 })
			return es
		})},
		{"ID beyond the manifest's", "outside the manifest's range", edit(func(es []rawEntry) []rawEntry {
			es[users].body = mapLine(t, es[users].body, 2, func(m map[string]any) { m["id"] = 100000 })
			return es
		})},
		{"kinds out of order", "kinds come in their order", edit(func(es []rawEntry) []rawEntry {
			again := es[users]
			again.hdr.Name = "records/users/000002.jsonl"
			return append(es[:messages+1:messages+1], append([]rawEntry{again}, es[messages+1:]...)...)
		})},
		{"records after files", "records after the files", edit(func(es []rawEntry) []rawEntry {
			return append(es, es[messages])
		})},
		{"records dropped", "holds 0 scheduled_messages records, its manifest says 1", edit(func(es []rawEntry) []rawEntry {
			return append(es[:scheduled:scheduled], es[scheduled+1:]...)
		})},
		{"an unknown entry", "unknown entry", edit(func(es []rawEntry) []rawEntry {
			return append(es, rawEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: "scripts/run.sh", Mode: 0o755}, body: []byte("rm -rf /")})
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := newMoveNode(t, bunstore.OpenTestSQLite(t))
			_, err := dst.svc.ImportRealm(context.Background(), bytes.NewReader(c.data), chat.ImportRequest{})
			require.Error(t, err)
			assert.Equal(t, chat.KindInvalid, chat.ErrorKind(err), "%v", err)
			assert.Contains(t, err.Error(), c.want)
			realms, err := dst.store.ListRealms(context.Background())
			require.NoError(t, err)
			assert.Empty(t, realms, "nothing of a refused archive stays")
			assert.Empty(t, dst.files(t), "no file of a refused archive stays")
		})
	}
}

// A broken record late in the archive, after thousands of rows were
// written, leaves the target as it was: its organization, its IDs to come
// and its files.
func TestImportAllOrNothing(t *testing.T) {
	chattest.SkipStoreRerun(t)
	data, _ := exportedOrg(t)
	es := readEntries(t, data)
	i := entryIndex(t, es, "records/scheduled_messages/")
	es[i].body = mapLine(t, es[i].body, 1, func(m map[string]any) { m["sender_id"] = 4242 })
	broken := writeEntries(t, es)

	for _, open := range []struct {
		name string
		fn   func(t bunstore.TB) *bunstore.Store
	}{{"sqlite", bunstore.OpenTestSQLite}, {"postgres", bunstore.OpenTestPostgres}} {
		t.Run(open.name, func(t *testing.T) {
			dst := newMoveNode(t, open.fn(t))
			ctx := context.Background()
			first, err := dst.svc.CreateRealm(ctx, chat.CreateRealmRequest{Name: "Already here", URL: "http://first.example.com",
				OwnerEmail: "first@example.com", OwnerFullName: "First", OwnerPassword: "a long first password"})
			require.NoError(t, err)
			var before bytes.Buffer
			_, err = dst.svc.ExportRealm(ctx, &before, chat.ExportRequest{RealmID: first.RealmID})
			require.NoError(t, err)

			_, err = dst.svc.ImportRealm(ctx, bytes.NewReader(broken), chat.ImportRequest{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "records/scheduled_messages/000001.jsonl line 1: refers to users 4242")
			realms, err := dst.store.ListRealms(ctx)
			require.NoError(t, err)
			require.Len(t, realms, 1)
			var after bytes.Buffer
			_, err = dst.svc.ExportRealm(ctx, &after, chat.ExportRequest{RealmID: first.RealmID})
			require.NoError(t, err)
			assert.Equal(t, readEntries(t, before.Bytes()), readEntries(t, after.Bytes()), "the organization already there is unchanged")
			_, err = dst.svc.FetchAPIKey(ctx, realms[0].ID, chat.FetchAPIKeyRequest{Username: "owner@example.com", Password: "x"})
			assert.Error(t, err, "no imported user")

			// The same archive, whole, goes in afterwards.
			res, err := dst.svc.ImportRealm(ctx, bytes.NewReader(data), chat.ImportRequest{})
			require.NoError(t, err)
			assert.False(t, res.IDsKept)
		})
	}
}

// Imported into a database that has an organization, records get new
// IDs and every reference follows them: mentions and links in messages,
// reactions with custom emoji, drafts, uploads' paths.
func TestImportShiftsIDs(t *testing.T) {
	chattest.SkipStoreRerun(t)
	data, o := exportedOrg(t)
	dst := newMoveNode(t, bunstore.OpenTestSQLite(t))
	ctx := context.Background()
	_, err := dst.svc.CreateRealm(ctx, chat.CreateRealmRequest{Name: "Already here", URL: "http://first.example.com",
		OwnerEmail: "first@example.com", OwnerFullName: "First", OwnerPassword: "a long first password"})
	require.NoError(t, err)
	for i := range 3 { // more users, so that the shift differs per kind
		_, err := dst.svc.ProvisionUser(ctx, 1, chat.ProvisionUserRequest{Email: fmt.Sprintf("x%d@example.com", i), FullName: fmt.Sprintf("X %d", i)})
		require.NoError(t, err)
	}
	res, err := dst.svc.ImportRealm(ctx, bytes.NewReader(data), chat.ImportRequest{})
	require.NoError(t, err)
	require.False(t, res.IDsKept)
	assert.NotEqual(t, int64(1), res.RealmID)

	ada, bob := o.accounts[3], o.accounts[4]
	me := dst.ok(t, ada, "GET", "/api/v1/users/me", nil)
	adaID := idOf(me, "user_id")
	assert.NotEqual(t, ada.id, adaID, "a new ID")
	bobUser := dst.ok(t, ada, "GET", "/api/v1/users/"+bob.email, nil)["user"].(map[string]any)
	bobID := idOf(bobUser, "user_id")
	r := dst.ok(t, ada, "GET", "/api/v1/messages?"+vals("anchor", "newest", "num_before", "100", "num_after", "0",
		"narrow", `[{"operator":"topic","operand":"mentions"}]`).Encode(), nil)
	msgs := r["messages"].([]any)
	require.Len(t, msgs, 1)
	m := msgs[0].(map[string]any)
	content := m["content"].(string)
	assert.Contains(t, content, fmt.Sprintf(`data-user-id="%d"`, bobID))
	assert.Contains(t, content, fmt.Sprintf(`/user_uploads/%d/`, res.RealmID))
	streams := dst.ok(t, ada, "GET", "/api/v1/get_stream_id?stream=secret", nil)
	assert.Contains(t, content, fmt.Sprintf(`data-stream-id="%d"`, idOf(streams, "stream_id")))
	assert.Equal(t, float64(adaID), m["sender_id"])

	emoji := dst.ok(t, ada, "GET", "/api/v1/realm/emoji", nil)["emoji"].(map[string]any)
	var emojiID string
	for id := range emoji {
		emojiID = id
	}
	first := dst.ok(t, ada, "GET", "/api/v1/messages?"+vals("anchor", "oldest", "num_before", "0", "num_after", "1").Encode(), nil)["messages"].([]any)[0].(map[string]any)
	var codes []string
	for _, re := range first["reactions"].([]any) {
		codes = append(codes, re.(map[string]any)["emoji_code"].(string))
	}
	assert.Contains(t, codes, emojiID)
	img := emoji[emojiID].(map[string]any)["source_url"].(string)
	assert.Contains(t, img, fmt.Sprintf("/user_avatars/%d/emoji/", res.RealmID))

	// The upload is served at its new path, to those who may see it.
	path := strings.Replace(o.uploads[0], fmt.Sprintf("/user_uploads/%d/", 1), fmt.Sprintf("/user_uploads/%d/", res.RealmID), 1)
	code, body := dst.call(t, ada, "GET", path, nil)
	assert.Equal(t, 200, code)
	assert.Equal(t, "the notes of the meeting", string(body))

	drafts := dst.ok(t, ada, "GET", "/api/v1/drafts", nil)["drafts"].([]any)
	require.Len(t, drafts, 2)
	tos := map[string]any{}
	for _, d := range drafts {
		d := d.(map[string]any)
		tos[d["type"].(string)] = d["to"].([]any)[0]
	}
	general := dst.ok(t, ada, "GET", "/api/v1/get_stream_id?stream=general", nil)
	assert.Equal(t, float64(idOf(general, "stream_id")), tos["stream"])
	assert.Equal(t, float64(bobID), tos["private"])

	// A scheduled message names the new channel and mentions the new
	// Bob; an edit's history names the new editor.
	sched := dst.ok(t, ada, "GET", "/api/v1/scheduled_messages", nil)["scheduled_messages"].([]any)
	require.Len(t, sched, 1)
	sm := sched[0].(map[string]any)
	assert.Equal(t, float64(idOf(general, "stream_id")), sm["to"])
	admin := o.accounts[1]
	adminID := idOf(dst.ok(t, admin, "GET", "/api/v1/users/me", nil), "user_id")
	edited := dst.ok(t, ada, "GET", "/api/v1/messages?"+vals("anchor", "oldest", "num_before", "0", "num_after", "2").Encode(), nil)["messages"].([]any)[1].(map[string]any)
	hist := dst.ok(t, ada, "GET", fmt.Sprintf("/api/v1/messages/%d/history", idOf(edited, "id")), nil)["message_history"].([]any)
	require.Len(t, hist, 2)
	assert.Equal(t, float64(adminID), hist[1].(map[string]any)["user_id"])
	assert.Equal(t, float64(adminID), edited["sender_id"])
}

// Cancelling the context stops an export or an import; a stopped import
// leaves nothing behind.
func TestExportImportCancel(t *testing.T) {
	chattest.SkipStoreRerun(t)
	data, _ := exportedOrg(t)
	dst := newMoveNode(t, bunstore.OpenTestSQLite(t))
	ctx, cancel := context.WithCancel(context.Background())
	_, err := dst.svc.ImportRealm(ctx, bytes.NewReader(data), chat.ImportRequest{Progress: func(p chat.Progress) {
		if p.Records > 0 {
			cancel()
		}
	}})
	require.Error(t, err)
	realms, err := dst.store.ListRealms(context.Background())
	require.NoError(t, err)
	assert.Empty(t, realms)
	assert.Empty(t, dst.files(t))

	res, err := dst.svc.ImportRealm(context.Background(), bytes.NewReader(data), chat.ImportRequest{})
	require.NoError(t, err)
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = dst.svc.ExportRealm(ctx, io.Discard, chat.ExportRequest{RealmID: res.RealmID})
	require.Error(t, err)
}
