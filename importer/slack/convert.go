package slack

import (
	"archive/zip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teamchat/chat/internal/archive"
	"github.com/teamchat/chat/storage"
)

// Options of a conversion.
type Options struct {
	// URL is the new organization's URL; Name its name ("Slack" when
	// empty).
	URL, Name string
	// Now is the time of the import (time.Now when nil).
	Now func() time.Time
}

// Report says what a conversion made.
type Report struct {
	Users, Channels, Conversations, Messages, Files int
	Warnings                                        []string
}

// Slack's records, as its export writes them.
type slackUser struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	RealName          string `json:"real_name"`
	Deleted           bool   `json:"deleted"`
	TZ                string `json:"tz"`
	IsAdmin           bool   `json:"is_admin"`
	IsOwner           bool   `json:"is_owner"`
	IsPrimaryOwner    bool   `json:"is_primary_owner"`
	IsRestricted      bool   `json:"is_restricted"`
	IsUltraRestricted bool   `json:"is_ultra_restricted"`
	IsBot             bool   `json:"is_bot"`
	Profile           struct {
		Email    string `json:"email"`
		RealName string `json:"real_name"`
		BotID    string `json:"bot_id"`
	} `json:"profile"`
}

type slackChannel struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Created    int64    `json:"created"`
	Creator    string   `json:"creator"`
	IsArchived bool     `json:"is_archived"`
	Members    []string `json:"members"`
	Purpose    struct {
		Value string `json:"value"`
	} `json:"purpose"`
}

type slackFile struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Title      string `json:"title"`
	Mimetype   string `json:"mimetype"`
	Size       int64  `json:"size"`
	URLPrivate string `json:"url_private"`
	Mode       string `json:"mode"`
}

type slackMessage struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	User       string `json:"user"`
	BotID      string `json:"bot_id"`
	Username   string `json:"username"`
	Text       string `json:"text"`
	TS         string `json:"ts"`
	ThreadTS   string `json:"thread_ts"`
	ParentUser string `json:"parent_user_id"`
	Edited     *struct {
		User string `json:"user"`
		TS   string `json:"ts"`
	} `json:"edited"`
	Reactions []struct {
		Name  string   `json:"name"`
		Users []string `json:"users"`
	} `json:"reactions"`
	Files []slackFile `json:"files"`
	File  *slackFile  `json:"file"`
}

// folder is a conversation's folder of day files.
type folder struct {
	name     string
	streamID int64 // a channel's
	convID   int64 // a direct conversation's
	members  []int64
}

type converter struct {
	ex      *export
	opts    Options
	domain  string
	now     int64
	report  *Report
	users   []*storage.User
	byslack map[string]int64 // Slack user or bot ID -> user ID
	names   map[int64]string
	streams []*storage.Stream
	members map[int64][]int64 // stream ID -> member IDs
	chanIDs map[string]string // Slack channel ID -> name
	folders []*folder
	convs   []*storage.DirectConversation
	convMem map[int64][]int64
	first   map[int64]int64 // stream ID -> first message ID
	emit    func(k *storage.Kind, rec any) error
	files   []upload
}

// upload is a file of the zip that becomes an attachment.
type upload struct {
	entry, path string
	size        int64
}

// Convert writes the Slack export in zr to w in teamchat's export format.
func Convert(ctx context.Context, zr *zip.Reader, w io.Writer, opts Options) (*Report, error) {
	ex, err := openExport(zr)
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Name == "" {
		opts.Name = "Slack"
	}
	u, err := url.Parse(opts.URL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("slack: the organization's URL %q has no host", opts.URL)
	}
	c := &converter{ex: ex, opts: opts, domain: u.Hostname(), now: opts.Now().Unix(), report: &Report{},
		byslack: map[string]int64{}, names: map[int64]string{}, members: map[int64][]int64{}, chanIDs: map[string]string{},
		convMem: map[int64][]int64{}, first: map[int64]int64{}}
	if err := c.load(ctx); err != nil {
		return nil, err
	}
	// The first pass counts, for the manifest; the second writes.
	counts := map[string]*archive.KindInfo{}
	c.emit = func(k *storage.Kind, rec any) error {
		info := counts[k.Name]
		if info == nil {
			info = &archive.KindInfo{Name: k.Name}
			counts[k.Name] = info
		}
		info.Records++
		if k.HasID() {
			info.MaxID = max(info.MaxID, storage.ColumnValue(rec, "id").Int())
		}
		return nil
	}
	if err := c.records(ctx); err != nil {
		return nil, err
	}
	m := archive.Manifest{Format: archive.Format, FormatVersion: archive.Version, Schema: "slack", Created: c.now, Source: "slack",
		Realm: archive.RealmInfo{Name: opts.Name, URL: opts.URL}, Files: map[string]int64{}, NewOrganization: true}
	m.Schema, m.SchemaVersion = schemaOfRecords()
	for _, k := range storage.Kinds {
		if info := counts[k.Name]; info != nil {
			m.Kinds = append(m.Kinds, *info)
		}
	}
	if len(c.files) > 0 {
		m.Files[archive.Uploads] = int64(len(c.files))
	}
	aw, err := archive.NewWriter(w, m)
	if err != nil {
		return nil, err
	}
	c.report = &Report{Warnings: c.report.Warnings[:0]}
	c.files = nil
	c.emit = func(k *storage.Kind, rec any) error { return aw.Record(k, rec) }
	if err := c.records(ctx); err != nil {
		return nil, err
	}
	for _, f := range c.files {
		rc, err := ex.open(f.entry)
		if err != nil {
			return nil, err
		}
		err = aw.File(archive.Uploads, strings.TrimPrefix(f.path, "0/"), f.size, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	c.report.Files = len(c.files)
	return c.report, aw.Close()
}

// load reads the users and conversations.
func (c *converter) load(ctx context.Context) error {
	var users []slackUser
	if err := c.ex.readJSON("users.json", false, &users); err != nil {
		return err
	}
	var public, private, mpims []slackChannel
	var dms []slackChannel
	if err := c.ex.readJSON("channels.json", false, &public); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *[]slackChannel
	}{{"groups.json", &private}, {"mpims.json", &mpims}, {"dms.json", &dms}} {
		if err := c.ex.readJSON(f.name, true, f.v); err != nil {
			return err
		}
	}
	if err := c.loadUsers(users); err != nil {
		return err
	}
	if err := c.botSenders(ctx, public, private, mpims, dms); err != nil {
		return err
	}
	for i, list := range [][]slackChannel{public, private} {
		for _, ch := range list {
			if err := c.addChannel(ch, i == 1); err != nil {
				return err
			}
		}
	}
	for _, list := range [][]slackChannel{mpims, dms} {
		for _, ch := range list {
			if err := c.addConversation(ch); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *converter) loadUsers(users []slackUser) error {
	emails := map[string]int64{}
	for _, su := range users {
		email := su.Profile.Email
		bot := su.IsBot || strings.EqualFold(fullName(su), "slackbot")
		switch {
		case email != "":
		case strings.EqualFold(fullName(su), "slackbot"):
			email = "imported-slackbot-bot@" + c.domain
		case bot:
			email = strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(fullName(su), "Bot", ""), " ", "")) + "-bot@" + c.domain
		default:
			return refuse("users.json", "user %s (%s) has no email", su.ID, su.Name)
		}
		if id, ok := emails[strings.ToLower(email)]; ok {
			c.byslack[su.ID] = id // the reference merges accounts that share an email
			continue
		}
		role := 400
		switch {
		case su.IsRestricted || su.IsUltraRestricted:
			role = 600
		case su.IsOwner || su.IsPrimaryOwner:
			role = 100
		case su.IsAdmin:
			role = 200
		}
		tz := su.TZ
		if !strings.Contains(tz, "/") {
			tz = "America/New_York" // the reference's default
		}
		u := &storage.User{ID: int64(len(c.users) + 1), Email: email, FullName: fullName(su), Role: role, IsActive: !su.Deleted,
			IsBot: bot, Timezone: tz, DateJoined: c.now, APIKey: randomKey(), AvatarSource: "G", AvatarVersion: 1}
		if bot {
			u.BotType = new(1)
		}
		c.addUser(su.ID, u)
		emails[strings.ToLower(email)] = u.ID
	}
	return nil
}

func (c *converter) addUser(slackID string, u *storage.User) {
	c.users = append(c.users, u)
	c.byslack[slackID] = u.ID
	c.names[u.ID] = u.FullName
	c.report.Users++
}

// fullName is the reference's get_user_full_name.
func fullName(su slackUser) string {
	if !su.Deleted && su.RealName != "" {
		return su.RealName
	}
	if su.Profile.RealName != "" && !su.Deleted {
		return su.Profile.RealName
	}
	return su.Name
}

func randomKey() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:32]
}

// botSenders makes a bot account for each integration bot that posted
// without a user record (the reference asks Slack's API about it).
func (c *converter) botSenders(ctx context.Context, lists ...[]slackChannel) error {
	for _, list := range lists {
		for _, ch := range list {
			err := c.eachDay(ctx, folderName(ch), func(entry string, msgs []slackMessage) error {
				for _, m := range msgs {
					if m.User != "" || m.BotID == "" || c.byslack[m.BotID] != 0 {
						continue
					}
					name := m.Username
					if name == "" {
						name = "Slack bot " + m.BotID
					}
					email := strings.ToLower(strings.ReplaceAll(name, " ", "")) + "-" + strings.ToLower(m.BotID) + "-bot@" + c.domain
					c.addUser(m.BotID, &storage.User{ID: int64(len(c.users) + 1), Email: email, FullName: name, Role: 400, IsActive: true,
						IsBot: true, BotType: new(1), Timezone: "America/New_York", DateJoined: c.now, APIKey: randomKey(), AvatarSource: "G", AvatarVersion: 1})
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// folderName is a conversation's folder: a channel's or group DM's
// name, a DM's ID.
func folderName(ch slackChannel) string {
	if ch.Name != "" {
		return ch.Name
	}
	return ch.ID
}

func (c *converter) memberIDs(entry string, slackIDs []string) ([]int64, error) {
	var ids []int64
	for _, s := range slackIDs {
		id, ok := c.byslack[s]
		if !ok {
			return nil, refuse(entry, "refers to user %s, whom users.json does not list", s)
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (c *converter) addChannel(ch slackChannel, private bool) error {
	entry := "channels.json"
	if private {
		entry = "groups.json"
	}
	ids, err := c.memberIDs(entry, ch.Members)
	if err != nil {
		return err
	}
	s := &storage.Stream{ID: int64(len(c.streams) + 1), Name: ch.Name, Description: convertMarkup(ch.Purpose.Value, c),
		InviteOnly: private, HistoryPublicToSubscribers: true, DateCreated: ch.Created, IsArchived: ch.IsArchived,
		IsDefault: !private && !ch.IsArchived && (ch.Name == "general" || ch.Name == "random")}
	if creator, ok := c.byslack[ch.Creator]; ok {
		s.CreatorID = &creator
	}
	s.RenderedDescription = c.render(s.Description).HTML
	c.streams = append(c.streams, s)
	c.members[s.ID] = ids
	c.chanIDs[ch.ID] = ch.Name
	c.folders = append(c.folders, &folder{name: ch.Name, streamID: s.ID})
	c.report.Channels++
	return nil
}

func (c *converter) addConversation(ch slackChannel) error {
	ids, err := c.memberIDs("conversation "+folderName(ch), ch.Members)
	if err != nil {
		return err
	}
	key := make([]string, len(ids))
	for i, id := range ids {
		key[i] = strconv.FormatInt(id, 10)
	}
	memberKey := strings.Join(key, ",")
	f := &folder{name: folderName(ch), members: ids}
	for _, conv := range c.convs {
		if conv.MemberKey == memberKey {
			f.convID = conv.ID
		}
	}
	if f.convID == 0 {
		conv := &storage.DirectConversation{ID: int64(len(c.convs) + 1), MemberKey: memberKey}
		c.convs = append(c.convs, conv)
		c.convMem[conv.ID] = ids
		f.convID = conv.ID
		c.report.Conversations++
	}
	c.folders = append(c.folders, f)
	return nil
}

// eachDay reads a folder's day files in date order.
func (c *converter) eachDay(ctx context.Context, dir string, fn func(entry string, msgs []slackMessage) error) error {
	for _, day := range c.ex.dirs[dir] {
		if err := ctx.Err(); err != nil {
			return err
		}
		entry := dir + "/" + day
		var msgs []slackMessage
		if err := c.ex.readJSON(entry, false, &msgs); err != nil {
			return err
		}
		if err := fn(entry, msgs); err != nil {
			return err
		}
	}
	return nil
}

// warn adds a warning once (the messages are walked several times).
func (c *converter) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(c.report.Warnings, w) {
		c.report.Warnings = append(c.report.Warnings, w)
	}
}

// pathID is an imported file's path, derived from its Slack ID so that
// both passes agree; "0" stands for the organization, which the import
// replaces with its ID.
func pathID(f slackFile) string {
	sum := sha256.Sum256([]byte(f.ID))
	return fmt.Sprintf("0/%x/%s/%s", sum[0], hex.EncodeToString(sum[1:13]), sanitizeName(f.Name))
}

func sanitizeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if s == "" {
		return "uploaded-file"
	}
	return s
}

// tsUnix is a Slack timestamp ("1700000000.000200") in Unix seconds.
func tsUnix(ts string) (int64, error) {
	sec, _, _ := strings.Cut(ts, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, errors.New("a timestamp that is not one: " + strconv.Quote(ts))
	}
	return n, nil
}

// schemaOfRecords is the schema whose records the converter writes: the
// one this build's storage package describes.
func schemaOfRecords() (string, int) { return RecordsSchema, RecordsSchemaVersion }

// RecordsSchema names the migration whose records this package writes;
// a test keeps it equal to the newest migration.
const (
	RecordsSchema        = "0031_email_gateway"
	RecordsSchemaVersion = 31
)
