package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/blob"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// The move between databases: an organization populated through the REST
// API on SQLite is exported, imported into PostgreSQL, exported again and
// imported into a new SQLite file; every user's answers are the same at
// each step, and the old API keys and passwords still work.

// moveNode is one Service on its own store, with its REST handler.
type moveNode struct {
	svc   *chat.Service
	store storage.Store
	h     http.Handler
	dir   string // the blob store's
}

// files lists the files in the node's blob store.
func (n *moveNode) files(t *testing.T) []string {
	var out []string
	require.NoError(t, filepath.WalkDir(n.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, path)
		}
		return err
	}))
	return out
}

var moveClock = func() time.Time { return chattest.Start }

func newMoveNode(t *testing.T, st storage.Store) *moveNode {
	dir := filepath.Join(t.TempDir(), "uploads")
	blobs, err := blob.NewDir(dir)
	require.NoError(t, err)
	svc := chat.New(st, chat.WithBlobStore(blobs), chat.WithClock(moveClock),
		chat.WithPasswordHasher(chat.Argon2id{Time: 1, MemoryKiB: 64}))
	t.Cleanup(func() { _ = svc.Close() })
	return &moveNode{svc: svc, store: st, h: rest.NewHandler(svc, rest.WithRateLimit(0, time.Minute), rest.WithAddressRateLimit(0, time.Minute)), dir: dir}
}

// account is who calls.
type account struct {
	id           int64
	email, key   string
	password     string
	name         string
	notLoggingIn bool // a bot or a deactivated user
}

// call makes one request; body is url.Values or a *multipart form.
func (n *moveNode) call(t *testing.T, who account, method, path string, form url.Values) (int, []byte) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, "http://chat.example.com"+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if who.email != "" {
		req.SetBasicAuth(who.email, who.key)
	}
	rec := httptest.NewRecorder()
	n.h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// ok makes a request that must succeed and returns its JSON.
func (n *moveNode) ok(t *testing.T, who account, method, path string, form url.Values) map[string]any {
	t.Helper()
	code, body := n.call(t, who, method, path, form)
	require.Equal(t, 200, code, "%s %s as %s: %s", method, path, who.email, body)
	var out map[string]any
	require.NoError(t, json.Unmarshal(body, &out))
	return out
}

func (n *moveNode) upload(t *testing.T, who account, path, name, content string) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	hdr := textproto.MIMEHeader{}
	hdr.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	hdr.Set("Content-Type", mime.TypeByExtension(filepath.Ext(name)))
	fw, err := mw.CreatePart(hdr)
	require.NoError(t, err)
	_, _ = io.WriteString(fw, content)
	require.NoError(t, mw.Close())
	req := httptest.NewRequest("POST", "http://chat.example.com"+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth(who.email, who.key)
	rec := httptest.NewRecorder()
	n.h.ServeHTTP(rec, req)
	require.Equal(t, 200, rec.Code, "upload %s: %s", path, rec.Body.String())
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out
}

func tinyPNG(t *testing.T) string {
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 2, 2))))
	return buf.String()
}

func vals(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func idOf(m map[string]any, key string) int64 { return int64(m[key].(float64)) }

// movedOrg is what populate made.
type movedOrg struct {
	accounts []account
	channels map[string]int64
	uploads  []string
	emoji    string
}

// populate fills an organization with some of everything a user would
// miss after a move.
func populate(t *testing.T, n *moveNode) *movedOrg {
	ctx := context.Background()
	realm, err := n.svc.CreateRealm(ctx, chat.CreateRealmRequest{Name: "Moving Co", URL: "http://chat.example.com",
		OwnerEmail: "owner@example.com", OwnerFullName: "Olivia Owner", OwnerPassword: chattest.Password})
	require.NoError(t, err)
	owner := account{id: realm.OwnerID, email: "owner@example.com", key: realm.OwnerAPIKey, password: chattest.Password, name: "Olivia Owner"}
	o := &movedOrg{accounts: []account{owner}, channels: map[string]int64{}}
	for i, role := range []int{chat.RoleAdministrator, chat.RoleModerator, chat.RoleMember, chat.RoleMember, chat.RoleGuest, chat.RoleMember} {
		email := fmt.Sprintf("user%d@example.com", i)
		name := fmt.Sprintf("User Number%d", i)
		r := n.ok(t, owner, "POST", "/api/v1/users", vals("email", email, "password", "a long password "+email, "full_name", name))
		id := idOf(r, "user_id")
		n.ok(t, owner, "PATCH", fmt.Sprintf("/api/v1/users/%d", id), vals("role", fmt.Sprint(role)))
		key := n.ok(t, account{}, "POST", "/api/v1/fetch_api_key", vals("username", email, "password", "a long password "+email))["api_key"].(string)
		o.accounts = append(o.accounts, account{id: id, email: email, key: key, password: "a long password " + email, name: name})
	}
	admin, mod, ada, bob, guest, gone := o.accounts[1], o.accounts[2], o.accounts[3], o.accounts[4], o.accounts[5], o.accounts[6]
	bot := n.ok(t, ada, "POST", "/api/v1/bots", vals("full_name", "Helper Bot", "short_name", "helper", "bot_type", "1"))
	o.accounts = append(o.accounts, account{id: idOf(bot, "user_id"), email: "helper-bot@chat.example.com", key: bot["api_key"].(string), notLoggingIn: true})

	sub := func(who account, name string, extra ...string) {
		form := vals(append([]string{"subscriptions", fmt.Sprintf(`[{"name": %q, "description": "About **%s** with @**%s**"}]`, name, name, ada.name)}, extra...)...)
		n.ok(t, who, "POST", "/api/v1/users/me/subscriptions", form)
	}
	sub(owner, "general", "principals", fmt.Sprintf("[%d,%d,%d,%d,%d,%d,%d]", admin.id, mod.id, ada.id, bob.id, gone.id, owner.id, guest.id))
	sub(ada, "secret", "invite_only", "true", "principals", fmt.Sprintf("[%d,%d]", ada.id, bob.id), "history_public_to_subscribers", "false")
	sub(owner, "old news", "principals", fmt.Sprintf("[%d,%d]", owner.id, ada.id))
	for _, name := range []string{"general", "secret", "old news"} {
		r := n.ok(t, owner, "GET", "/api/v1/get_stream_id?stream="+url.QueryEscape(name), nil)
		o.channels[name] = idOf(r, "stream_id")
	}
	general, secret := o.channels["general"], o.channels["secret"]

	// Custom emoji, an upload, linkifiers, playgrounds, profile fields.
	n.upload(t, owner, "/api/v1/realm/emoji/party_parrot", "parrot.png", tinyPNG(t))
	o.emoji = "party_parrot"
	up := n.upload(t, ada, "/api/v1/user_uploads", "notes.txt", "the notes of the meeting")
	o.uploads = append(o.uploads, up["url"].(string))
	n.ok(t, owner, "POST", "/api/v1/realm/filters", vals("pattern", `#(?P<id>[0-9]+)`, "url_template", "https://tracker.example.com/{id}"))
	n.ok(t, owner, "POST", "/api/v1/realm/playgrounds", vals("name", "Go Playground", "pygments_language", "go", "url_template", "https://go.dev/play/?c={code}"))
	n.ok(t, owner, "POST", "/api/v1/realm/profile_fields", vals("name", "Team", "field_type", "1", "hint", "Which team"))
	n.ok(t, owner, "PATCH", "/api/v1/realm", vals("description", "We **move** things", "mandatory_topics", "false", "waiting_period_threshold", "3"))

	// Groups.
	g := n.ok(t, owner, "POST", "/api/v1/user_groups/create", vals("name", "backend", "description", "Backend people", "members", fmt.Sprintf("[%d,%d]", ada.id, bob.id)))
	g2 := n.ok(t, owner, "POST", "/api/v1/user_groups/create", vals("name", "everyone-dev", "description", "All devs", "members", fmt.Sprintf("[%d]", mod.id)))
	n.ok(t, owner, "POST", fmt.Sprintf("/api/v1/user_groups/%d/subgroups", idOf(g2, "group_id")), vals("add", fmt.Sprintf("[%d]", idOf(g, "group_id"))))

	// Messages of every kind.
	send := func(who account, form url.Values) int64 {
		return idOf(n.ok(t, who, "POST", "/api/v1/messages", form), "id")
	}
	var ids []int64
	for i := range 12 {
		ids = append(ids, send(o.accounts[i%4], vals("type", "stream", "to", "general", "topic", fmt.Sprintf("topic %d", i%3),
			"content", fmt.Sprintf("message %d about deploy #%d", i, 100+i))))
	}
	ids = append(ids, send(ada, vals("type", "stream", "to", "general", "topic", "mentions",
		"content", fmt.Sprintf("hi @**%s** and @*backend* and @**all**, see #**secret** and [notes](%s) :party_parrot:", bob.name, o.uploads[0]))))
	ids = append(ids, send(bob, vals("type", "stream", "to", "secret", "topic", "plans", "content", "private plans ```go\nfmt.Println()\n```")))
	ids = append(ids, send(ada, vals("type", "direct", "to", fmt.Sprintf("[%d]", bob.id), "content", "a direct word")))
	ids = append(ids, send(bob, vals("type", "direct", "to", fmt.Sprintf("[%d,%d]", ada.id, mod.id), "content", "a group word")))
	ids = append(ids, send(owner, vals("type", "stream", "to", "old news", "topic", "history", "content", "before archiving")))
	n.ok(t, admin, "PATCH", fmt.Sprintf("/api/v1/messages/%d", ids[1]), vals("content", "message 1 edited"))
	n.ok(t, owner, "PATCH", fmt.Sprintf("/api/v1/messages/%d", ids[2]), vals("topic", "moved topic", "propagate_mode", "change_one"))
	n.ok(t, bob, "POST", fmt.Sprintf("/api/v1/messages/%d/reactions", ids[0]), vals("emoji_name", "smile"))
	n.ok(t, ada, "POST", fmt.Sprintf("/api/v1/messages/%d/reactions", ids[0]), vals("emoji_name", "party_parrot"))
	n.ok(t, ada, "POST", "/api/v1/messages/flags", vals("messages", fmt.Sprintf("[%d,%d]", ids[3], ids[14]), "op", "add", "flag", "starred"))
	n.ok(t, bob, "POST", "/api/v1/mark_stream_as_read", vals("stream_id", fmt.Sprint(general)))
	n.ok(t, bob, "POST", "/api/v1/messages/flags", vals("messages", fmt.Sprintf("[%d]", ids[5]), "op", "remove", "flag", "read"))
	n.ok(t, ada, "POST", "/api/v1/messages/flags", vals("messages", fmt.Sprintf("[%d,%d,%d]", ids[0], ids[1], ids[15]), "op", "add", "flag", "read"))
	n.ok(t, ada, "POST", "/api/v1/user_topics", vals("stream_id", fmt.Sprint(general), "topic", "topic 1", "visibility_policy", "1"))
	n.ok(t, ada, "POST", "/api/v1/user_topics", vals("stream_id", fmt.Sprint(general), "topic", "mentions", "visibility_policy", "3"))
	n.ok(t, ada, "POST", "/api/v1/users/me/subscriptions/properties", vals("subscription_data",
		fmt.Sprintf(`[{"stream_id": %d, "property": "color", "value": "#abcdef"}, {"stream_id": %d, "property": "pin_to_top", "value": true}, {"stream_id": %d, "property": "is_muted", "value": true}]`, general, secret, o.channels["old news"])))
	n.ok(t, bob, "DELETE", "/api/v1/users/me/subscriptions", vals("subscriptions", `["secret"]`))
	send(ada, vals("type", "stream", "to", "secret", "topic", "plans", "content", "while bob is away"))
	sub(ada, "secret", "principals", fmt.Sprintf("[%d]", bob.id))
	n.ok(t, owner, "DELETE", fmt.Sprintf("/api/v1/streams/%d", o.channels["old news"]), nil)

	// Personal things.
	n.ok(t, ada, "POST", "/api/v1/drafts", vals("drafts", fmt.Sprintf(`[{"type": "stream", "to": [%d], "topic": "draft topic", "content": "half a thought", "timestamp": 1700000000}, {"type": "private", "to": [%d], "topic": "", "content": "dm draft", "timestamp": 1700000001}]`, general, bob.id)))
	n.ok(t, ada, "POST", "/api/v1/scheduled_messages", vals("type", "stream", "to", fmt.Sprint(general), "topic", "later",
		"content", "scheduled hello @**"+bob.name+"**", "scheduled_delivery_timestamp", fmt.Sprint(chattest.Start.Add(48*time.Hour).Unix())))
	n.ok(t, ada, "PATCH", "/api/v1/settings", vals("twenty_four_hour_time", "true", "enable_stream_email_notifications", "true", "timezone", "Europe/Paris"))
	n.ok(t, ada, "POST", "/api/v1/users/me/alert_words", vals("alert_words", `["deploy"]`))
	n.ok(t, ada, "POST", fmt.Sprintf("/api/v1/users/me/muted_users/%d", mod.id), nil)
	n.ok(t, bob, "POST", "/api/v1/users/me/status", vals("status_text", "on holiday", "emoji_name", "party_parrot"))
	n.ok(t, owner, "POST", "/api/v1/invites", vals("invitee_emails", "newbie@example.com", "stream_ids", fmt.Sprintf("[%d]", general)))
	n.ok(t, owner, "POST", "/api/v1/invites/multiuse", vals("invite_expires_in_minutes", "600"))
	n.ok(t, owner, "DELETE", fmt.Sprintf("/api/v1/users/%d", gone.id), nil)
	o.accounts[6].notLoggingIn = true
	return o
}

// narrows are the GET /messages narrows each user's answers include.
func (o *movedOrg) narrows(me account) []string {
	others := o.accounts[3].id
	if me.id == others {
		others = o.accounts[4].id
	}
	return []string{`[]`, fmt.Sprintf(`[{"operator":"channel","operand":%d}]`, o.channels["general"]),
		`[{"operator":"channel","operand":"general"},{"operator":"topic","operand":"mentions"}]`,
		fmt.Sprintf(`[{"operator":"dm","operand":[%d]}]`, others), `[{"operator":"is","operand":"dm"}]`,
		`[{"operator":"is","operand":"starred"}]`, `[{"operator":"is","operand":"mentioned"}]`,
		`[{"operator":"is","operand":"unread"}]`, `[{"operator":"search","operand":"deploy"}]`,
		`[{"operator":"has","operand":"attachment"}]`, `[{"operator":"is","operand":"resolved"}]`,
		fmt.Sprintf(`[{"operator":"sender","operand":%d}]`, o.accounts[3].id)}
}

// answers is what every user sees, as JSON text by question.
func (o *movedOrg) answers(t *testing.T, n *moveNode) map[string]string {
	out := map[string]string{}
	put := func(key string, v any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		out[key] = string(b)
	}
	for _, me := range o.accounts {
		if me.notLoggingIn {
			code, _ := n.call(t, me, "GET", "/api/v1/users/me", nil)
			put(me.email+" /users/me status", code)
			continue
		}
		for _, path := range []string{"/api/v1/users", "/api/v1/users/me", "/api/v1/users/me/subscriptions?include_subscribers=true",
			"/api/v1/drafts", "/api/v1/scheduled_messages", "/api/v1/user_groups", "/api/v1/realm/emoji", "/api/v1/realm/linkifiers",
			"/api/v1/realm/profile_fields", "/api/v1/users/me/alert_words", "/api/v1/streams?include_all=true", "/api/v1/bots",
			fmt.Sprintf("/api/v1/users/me/%d/topics", o.channels["general"])} {
			code, body := n.call(t, me, "GET", path, nil)
			put(me.email+" "+path, fmt.Sprintf("%d %s", code, body))
		}
		for _, narrow := range o.narrows(me) {
			r := n.ok(t, me, "GET", "/api/v1/messages?"+vals("anchor", "newest", "num_before", "100", "num_after", "0", "narrow", narrow).Encode(), nil)
			put(me.email+" GET /messages "+narrow, r)
		}
		reg := n.ok(t, me, "POST", "/api/v1/register", vals("apply_markdown", "true"))
		delete(reg, "queue_id")
		put(me.email+" POST /register", reg)
		for _, u := range o.uploads {
			code, body := n.call(t, me, "GET", u, nil)
			put(me.email+" "+u, fmt.Sprintf("%d %s", code, body))
		}
	}
	return out
}

// move exports from one node and imports into the other.
func move(t *testing.T, from, to *moveNode, realmID int64) int64 {
	ctx := context.Background()
	var buf bytes.Buffer
	var exported, imported chat.Progress
	_, err := from.svc.ExportRealm(ctx, &buf, chat.ExportRequest{RealmID: realmID, Progress: func(p chat.Progress) { exported = p }})
	require.NoError(t, err)
	res, err := to.svc.ImportRealm(ctx, &buf, chat.ImportRequest{Progress: func(p chat.Progress) { imported = p }})
	require.NoError(t, err)
	for _, p := range []chat.Progress{exported, imported} {
		assert.Equal(t, p.TotalRecords, p.Records, "progress reaches the end")
		assert.Equal(t, p.TotalFiles, p.Files)
		assert.Equal(t, int64(2), p.Files, "an upload and an emoji image")
	}
	assert.Equal(t, res.Records, imported.Records)
	assert.True(t, res.IDsKept, "an import into an empty database keeps IDs")
	assert.Equal(t, realmID, res.RealmID)
	return res.RealmID
}

func TestMoveSQLiteToPostgresAndBack(t *testing.T) {
	chattest.SkipStoreRerun(t)
	src := newMoveNode(t, bunstore.OpenTestSQLite(t))
	o := populate(t, src)
	before := o.answers(t, src)
	t.Logf("%d answers; %.600s", len(before), before["user2@example.com GET /messages []"])
	realms, err := src.store.ListRealms(context.Background())
	require.NoError(t, err)

	pg := newMoveNode(t, bunstore.OpenTestPostgres(t))
	realmID := move(t, src, pg, realms[0].ID)
	assertSameAnswers(t, before, o.answers(t, pg), "SQLite -> PostgreSQL")
	// PostgreSQL's sequences were moved past the kept IDs.
	probe := newMoveNode(t, bunstore.OpenTestPostgres(t))
	move(t, src, probe, realms[0].ID)
	r := probe.ok(t, o.accounts[3], "POST", "/api/v1/messages", vals("type", "stream", "to", "general", "topic", "after the move", "content", "on PostgreSQL"))
	assert.Greater(t, idOf(r, "id"), int64(18))
	g := probe.ok(t, o.accounts[0], "POST", "/api/v1/user_groups/create", vals("name", "new after move", "description", "d", "members", "[]"))
	assert.NotZero(t, idOf(g, "group_id"), "a new ID, past the moved ones")

	back := newMoveNode(t, bunstore.OpenTestSQLite(t))
	move(t, pg, back, realmID)
	assertSameAnswers(t, before, o.answers(t, back), "SQLite -> PostgreSQL -> SQLite")

	// The old passwords still log in, to the same API keys.
	for _, a := range o.accounts {
		if a.notLoggingIn {
			continue
		}
		r := back.ok(t, account{}, "POST", "/api/v1/fetch_api_key", vals("username", a.email, "password", a.password))
		assert.Equal(t, a.key, r["api_key"], a.email)
	}
	// Sending and reading go on, with new IDs above the moved ones.
	ada := o.accounts[3]
	r = back.ok(t, ada, "POST", "/api/v1/messages", vals("type", "stream", "to", "general", "topic", "after the move", "content", "still here"))
	assert.Greater(t, idOf(r, "id"), int64(18))
}

func assertSameAnswers(t *testing.T, want, got map[string]string, step string) {
	t.Helper()
	require.Len(t, got, len(want), step)
	for k, w := range want {
		if !assert.Equal(t, w, got[k], "%s: %s", step, k) {
			return
		}
	}
}
