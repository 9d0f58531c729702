package slack_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/importer/slack"
	"github.com/teamchat/chat/importer/slack/slacktest"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// zipDir is the fixture as a zip, with edit applied.
func zipDir(t *testing.T, edit func(w *zip.Writer)) *zip.Reader {
	data := slacktest.Zip(t, edit)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	return zr
}

// importSlack converts and imports the zip into h's store, beside the
// organization already there (so IDs are shifted).
func importSlack(t *testing.T, h *chattest.Harness, zr *zip.Reader) (*chat.ImportResult, *slack.Report, error) {
	ctx := context.Background()
	var buf bytes.Buffer
	rep, err := slack.Convert(ctx, zr, &buf, slack.Options{URL: "http://acme.example.com", Name: "Acme",
		Now: func() time.Time { return chattest.Start }})
	if err != nil {
		return nil, nil, err
	}
	res, err := h.Service.ImportRealm(ctx, &buf, chat.ImportRequest{})
	return res, rep, err
}

type caller struct {
	t          *testing.T
	h          *chattest.Harness
	email, key string
}

func (c caller) get(path string) map[string]any {
	c.t.Helper()
	req := httptest.NewRequest("GET", "http://acme.example.com"+path, nil)
	req.SetBasicAuth(c.email, c.key)
	rec := httptest.NewRecorder()
	rest.NewHandler(c.h.Service).ServeHTTP(rec, req)
	require.Equal(c.t, 200, rec.Code, "GET %s: %s", path, rec.Body.String())
	var out map[string]any
	require.NoError(c.t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out
}

func (c caller) raw(path string) (int, string) {
	req := httptest.NewRequest("GET", "http://acme.example.com"+path, nil)
	req.SetBasicAuth(c.email, c.key)
	rec := httptest.NewRecorder()
	rest.NewHandler(c.h.Service).ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func as(t *testing.T, h *chattest.Harness, realmID int64, email string) caller {
	u, err := h.Store.GetUserByEmail(context.Background(), realmID, email)
	require.NoError(t, err)
	return caller{t: t, h: h, email: email, key: u.APIKey}
}

func messages(c caller, narrow string) []map[string]any {
	r := c.get("/api/v1/messages?" + url.Values{"anchor": {"oldest"}, "num_before": {"0"}, "num_after": {"100"}, "narrow": {narrow}}.Encode())
	var out []map[string]any
	for _, m := range r["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

func TestSlackImport(t *testing.T) {
	h := chattest.New(t)
	res, rep, err := importSlack(t, h, zipDir(t, nil))
	require.NoError(t, err)
	assert.False(t, res.IDsKept)
	assert.Equal(t, 1, rep.Files)
	require.Len(t, rep.Warnings, 1)
	assert.Contains(t, rep.Warnings[0], ":partyparrot:")

	alice := as(t, h, res.RealmID, "alice@example.com")
	// Users: roles, names, time zones, deactivation, bots, merged accounts.
	users := alice.get("/api/v1/users")["members"].([]any)
	byEmail := map[string]map[string]any{}
	for _, u := range users {
		u := u.(map[string]any)
		byEmail[u["email"].(string)] = u
	}
	assert.Len(t, byEmail, 9, "Carol's second account is merged into her first, a bot without a record gets one")
	want := []struct {
		email, name, tz string
		role            float64
		active, bot     bool
	}{
		{"alice@example.com", "Alice Anders", "Europe/Berlin", 100, true, false},
		{"bob@example.com", "Bob Baker", "America/Chicago", 200, true, false},
		{"carol@example.com", "Carol Cruz", "America/New_York", 400, true, false},
		{"dave@example.com", "Dave Dunn", "Asia/Tokyo", 600, true, false},
		{"eve@example.com", "eve", "America/New_York", 400, false, false},
		{"olga@example.com", "Olga Owner", "Europe/Paris", 100, true, false},
		{"deploy-bot@acme.example.com", "Deploy Bot", "", 400, true, true},
		{"imported-slackbot-bot@acme.example.com", "Slackbot", "", 400, true, true},
	}
	for _, w := range want {
		u := byEmail[w.email]
		require.NotNil(t, u, w.email)
		assert.Equal(t, w.name, u["full_name"], w.email)
		assert.Equal(t, w.role, u["role"], w.email)
		assert.Equal(t, w.active, u["is_active"], w.email)
		assert.Equal(t, w.bot, u["is_bot"], w.email)
		if !w.bot {
			assert.Equal(t, w.tz, u["timezone"], w.email)
		}
	}
	var ciRobot map[string]any
	for email, u := range byEmail {
		if strings.HasPrefix(email, "cirobot-") {
			ciRobot = u
		}
	}
	require.NotNil(t, ciRobot, "the integration bot that posted without a record")
	assert.Equal(t, "CI Robot", ciRobot["full_name"])

	// Role groups: the owners are in role:owners.
	groups := alice.get("/api/v1/user_groups")["user_groups"].([]any)
	for _, g := range groups {
		g := g.(map[string]any)
		if g["name"] == "role:owners" {
			assert.Len(t, g["members"], 2)
		}
	}

	// Channels: private, archived, descriptions, members.
	chans := alice.get("/api/v1/streams?include_all=true&exclude_archived=false")["streams"].([]any)
	byName := map[string]map[string]any{}
	for _, c := range chans {
		c := c.(map[string]any)
		byName[c["name"].(string)] = c
	}
	require.Contains(t, byName, "general")
	assert.Equal(t, "Talk to **everyone**, ask @**Alice Anders|"+jsonID(byEmail["alice@example.com"]["user_id"])+"**", byName["general"]["description"])
	assert.Contains(t, byName["general"]["rendered_description"], `class="user-mention"`)
	assert.Equal(t, true, byName["secret-plans"]["invite_only"])
	assert.Equal(t, true, byName["old-project"]["is_archived"])
	assert.Equal(t, false, byName["general"]["invite_only"])
	subs := alice.get("/api/v1/users/me/subscriptions")["subscriptions"].([]any)
	assert.Len(t, subs, 3, "general, random, secret-plans")

	// Messages: markup, mentions, wildcards, links, the default topic and
	// thread topics; subtypes.
	general := messages(alice, `[{"operator":"channel","operand":"general"}]`)
	var contents []string
	topics := map[string]string{}
	for _, m := range general {
		contents = append(contents, m["content"].(string))
		topics[m["content"].(string)] = m["subject"].(string)
	}
	require.Len(t, general, 11, "joins, leaves and pins are left out")
	welcome := general[0]
	assert.Contains(t, welcome["content"], `data-user-id="`+jsonID(byEmail["bob@example.com"]["user_id"])+`"`)
	assert.Contains(t, welcome["content"], `class="user-mention channel-wildcard-mention"`)
	assert.Contains(t, welcome["content"], `class="stream" data-stream-id="`)
	assert.Contains(t, welcome["content"], `<a href="https://example.com/docs">the docs</a>`)
	assert.Contains(t, welcome["content"], `<a href="https://example.org">https://example.org</a>`)
	assert.Equal(t, "imported from Slack", welcome["subject"])
	reactions := welcome["reactions"].([]any)
	var codes []string
	for _, r := range reactions {
		codes = append(codes, r.(map[string]any)["emoji_code"].(string))
	}
	assert.Equal(t, []string{"1f44d", "1f44d", "2705", "1f604"}, codes,
		"+1 with and without skin tone merge (Bob once, Carol); Slack's names map to their code points (its smile is 1f604); the custom emoji is left out")
	formatted := general[1]["content"].(string)
	for _, part := range []string{"<strong>bold</strong>", "<em>italic</em>", "<del>struck</del>", "<code>*not bold*</code>",
		"&amp; &lt;tags&gt;", "<blockquote>", `<div class="codehilite"><pre><span></span><code>code *block*`, `title="smile"`, `href="mailto:bob@example.com"`} {
		assert.Contains(t, formatted, part)
	}
	assert.NotNil(t, general[1]["last_edit_timestamp"], "edited in Slack")
	thread := topics[general[2]["content"].(string)]
	assert.Equal(t, "2023-11-14 Should we ship the release today?", thread)
	assert.Equal(t, thread, general[3]["subject"], "a reply joins its thread's topic")
	assert.Contains(t, general[3]["content"], "channel-wildcard-mention", "@here")
	assert.Equal(t, "CI Robot", general[4]["sender_full_name"])
	assert.Equal(t, true, general[5]["is_me_message"])
	assert.Contains(t, general[6]["content"], "set the channel topic")
	assert.Equal(t, "Deploy Bot", general[7]["sender_full_name"])
	share := general[8]["content"].(string)
	assert.Contains(t, share, "Here is the report")
	assert.Contains(t, share, `/user_uploads/`+jsonID(res.RealmID)+`/`)
	assert.Equal(t, true, general[8]["has_attachment"] == nil || general[8]["has_attachment"] == true)
	assert.Contains(t, general[9]["content"], `href="https://files.slack.com/files-pri/T01-F0GONE/slides.pdf"`)
	assert.Equal(t, thread, general[10]["subject"], "a reply a day later joins the thread too")
	random := messages(alice, `[{"operator":"channel","operand":"random"}]`)
	require.Len(t, random, 2)
	assert.Equal(t, "2023-11-14 Should we ship the release today?", random[1]["subject"], "threads are per channel")

	// The uploaded file is served to those who may see the message.
	start := strings.Index(share, `/user_uploads/`)
	path := share[start : start+strings.Index(share[start:], `"`)]
	code, body := alice.raw(path)
	assert.Equal(t, 200, code)
	assert.Equal(t, "the quarterly report", body)

	// Direct and group direct messages; everything is read.
	dms := messages(alice, `[{"operator":"is","operand":"dm"}]`)
	require.Len(t, dms, 3)
	assert.Equal(t, "private", dms[0]["type"])
	assert.Len(t, dms[2]["display_recipient"], 3)
	assert.Len(t, dms[2]["reactions"], 1)
	assert.Contains(t, dms[1]["flags"], "mentioned")
	unread := messages(alice, `[{"operator":"is","operand":"unread"}]`)
	assert.Empty(t, unread)
	bob := as(t, h, res.RealmID, "bob@example.com")
	secret := messages(bob, `[{"operator":"channel","operand":"secret-plans"}]`)
	require.Len(t, secret, 1)
	assert.Contains(t, secret[0]["flags"], "mentioned")
	dave := as(t, h, res.RealmID, "dave@example.com")
	assert.Empty(t, messages(dave, `[{"operator":"channel","operand":"secret-plans"}]`), "a guest outside the private channel")

	// Imported users log in once an administrator sets their password.
	ctx := context.Background()
	_, err = h.Service.FetchAPIKey(ctx, res.RealmID, chat.FetchAPIKeyRequest{Username: "carol@example.com", Password: ""})
	require.Error(t, err)
	require.Error(t, h.Service.SetUserPassword(ctx, res.RealmID, chat.SetUserPasswordRequest{Email: "carol@example.com", Password: "x"}), "too weak")
	require.NoError(t, h.Service.SetUserPassword(ctx, res.RealmID, chat.SetUserPasswordRequest{Email: "carol@example.com", Password: "a long new password"}))
	key, err := h.Service.FetchAPIKey(ctx, res.RealmID, chat.FetchAPIKeyRequest{Username: "carol@example.com", Password: "a long new password"})
	require.NoError(t, err)
	assert.Equal(t, as(t, h, res.RealmID, "carol@example.com").key, key.APIKey)
}

func jsonID(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSlackImportRefusesBadExports(t *testing.T) {
	addFile := func(name, content string) func(*zip.Writer) {
		return func(zw *zip.Writer) {
			w, err := zw.Create(name)
			require.NoError(t, err)
			_, _ = io.WriteString(w, content)
		}
	}
	cases := []struct {
		name, want string
		edit       func(*zip.Writer)
	}{
		{"path leaving the folder", "leaves the export's folder", addFile("general/../../etc/passwd", "x")},
		{"absolute path", "not a relative path", addFile("/etc/passwd", "x")},
		{"symbolic link", "links are not allowed", func(zw *zip.Writer) {
			hdr := &zip.FileHeader{Name: "general/link.json"}
			hdr.SetMode(fs.ModeSymlink | 0o777)
			w, err := zw.CreateHeader(hdr)
			require.NoError(t, err)
			_, _ = io.WriteString(w, "/etc/passwd")
		}},
		{"entry far larger than any (bomb)", "larger than any file of an export", func(zw *zip.Writer) {
			hdr := &zip.FileHeader{Name: "general/2023-11-17.json", Method: zip.Deflate, UncompressedSize64: 300 << 20, CompressedSize64: 10}
			w, err := zw.CreateRaw(hdr)
			require.NoError(t, err)
			_, _ = w.Write(bytes.Repeat([]byte{0}, 10))
		}},
		{"entry holding more than it states", "holds more bytes than it states", func(zw *zip.Writer) {
			body := []byte(`[{"type": "message", "user": "U0ALICE", "text": "sneaky", "ts": "1700200000.000100"}]`)
			hdr := &zip.FileHeader{Name: "general/2023-11-17.json", Method: zip.Store, UncompressedSize64: 5, CompressedSize64: uint64(len(body))}
			w, err := zw.CreateRaw(hdr)
			require.NoError(t, err)
			_, _ = w.Write(body)
		}},
		{"broken JSON names file and line", "general/2023-11-17.json: line 3: broken JSON", addFile("general/2023-11-17.json", "[\n  {\"type\": \"message\",\n   \"user\": }\n]")},
		{"message from an unknown user", "message 1700200000.000100 is from user U0NOBODY, whom users.json does not list",
			addFile("general/2023-11-17.json", `[{"type": "message", "user": "U0NOBODY", "text": "who am I", "ts": "1700200000.000100"}]`)},
		{"channel member unknown", "refers to user U0GHOST", addFile("groups.json", `[{"id": "G0X", "name": "ghosts", "created": 1, "members": ["U0GHOST"], "purpose": {"value": ""}}]`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := chattest.New(t)
			before, err := h.Store.ListRealms(context.Background())
			require.NoError(t, err)
			_, _, err = importSlack(t, h, zipDir(t, c.edit))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			after, err := h.Store.ListRealms(context.Background())
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing imported")
		})
	}
	t.Run("not a Slack export", func(t *testing.T) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		require.NoError(t, zw.Close())
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		require.NoError(t, err)
		_, err = slack.Convert(context.Background(), zr, io.Discard, slack.Options{URL: "http://acme.example.com"})
		assert.ErrorContains(t, err, "users.json and channels.json are missing")
	})
}

// The converter writes the records of the newest schema.
func TestRecordsSchema(t *testing.T) {
	name, n := bunstore.LatestSchemaVersion()
	assert.Equal(t, name, slack.RecordsSchema)
	assert.Equal(t, n, slack.RecordsSchemaVersion)
}
