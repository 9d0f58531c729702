package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// The records are written kind by kind, in storage.Kinds order; the
// messages are walked once for each kind they give (attachments,
// messages, their readers' rows, reactions, links to files), the same way
// every time, so that IDs agree.

// defaultTopic is the reference's topic of unthreaded messages.
const defaultTopic = "imported from Slack"

var palette = []string{"#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5"}

func (c *converter) records(ctx context.Context) error {
	k := storage.KindByName
	for _, u := range c.users {
		if err := c.emit(k("users"), u); err != nil {
			return err
		}
	}
	for _, s := range c.streams {
		if first, ok := c.first[s.ID]; ok {
			s.FirstMessageID = &first
		}
		if err := c.emit(k("streams"), s); err != nil {
			return err
		}
	}
	if err := c.subscriptions(); err != nil {
		return err
	}
	for _, conv := range c.convs {
		if err := c.emit(k("direct_conversations"), conv); err != nil {
			return err
		}
	}
	for _, conv := range c.convs {
		for _, id := range c.convMem[conv.ID] {
			if err := c.emit(k("direct_conversation_members"), &storage.ConversationMember{ConversationID: conv.ID, UserID: id}); err != nil {
				return err
			}
		}
	}
	seen := map[int64]bool{}
	err := c.walk(ctx, func(m *converted) error {
		for i := range m.attachments {
			if a := &m.attachments[i]; !seen[a.ID] {
				seen[a.ID] = true
				c.files = append(c.files, m.uploads[i])
				if err := c.emit(k("attachments"), a); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var last int64
	c.report.Messages = 0
	if err := c.walk(ctx, func(m *converted) error {
		last = m.msg.ID
		c.report.Messages++
		return c.emit(k("messages"), &m.msg)
	}); err != nil {
		return err
	}
	if err := c.walk(ctx, func(m *converted) error {
		for i := range m.rows {
			if err := c.emit(k("user_messages"), &m.rows[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := c.readRanges(last); err != nil {
		return err
	}
	nextReaction := int64(0)
	if err := c.walk(ctx, func(m *converted) error {
		for i := range m.reactions {
			nextReaction++
			m.reactions[i].ID = nextReaction
			if err := c.emit(k("reactions"), &m.reactions[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return c.walk(ctx, func(m *converted) error {
		for _, a := range m.links {
			if err := c.emit(k("attachment_messages"), &storage.AttachmentMessage{AttachmentID: a, MessageID: m.msg.ID}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (c *converter) subscriptions() error {
	n := map[int64]int{}
	var periods []*storage.SubscriptionPeriod
	for _, s := range c.streams {
		for _, uid := range c.members[s.ID] {
			sub := &storage.Subscription{UserID: uid, StreamID: s.ID, Active: true, Color: palette[n[uid]%len(palette)]}
			n[uid]++
			if err := c.emit(storage.KindByName("subscriptions"), sub); err != nil {
				return err
			}
			periods = append(periods, &storage.SubscriptionPeriod{ID: int64(len(periods) + 1), UserID: uid, StreamID: s.ID, StartedAt: s.DateCreated})
		}
	}
	for _, p := range periods {
		if err := c.emit(storage.KindByName("subscription_periods"), p); err != nil {
			return err
		}
	}
	return nil
}

// readRanges marks every imported channel message read for its members.
func (c *converter) readRanges(last int64) error {
	if last == 0 {
		return nil
	}
	for _, s := range c.streams {
		for _, uid := range c.members[s.ID] {
			if err := c.emit(storage.KindByName("read_ranges"), &storage.ReadRange{UserID: uid, StreamID: s.ID, FirstID: 1, LastID: last}); err != nil {
				return err
			}
		}
	}
	return nil
}

// converted is one Slack message made records.
type converted struct {
	msg         storage.Message
	rows        []storage.UserMessage
	reactions   []storage.Reaction
	attachments []storage.Attachment
	uploads     []upload // the files of attachments
	links       []int64
}

// walkState is what one walk carries from message to message.
type walkState struct {
	next        int64
	threads     map[string]string // channel + thread key -> topic
	topicCount  map[string]int
	attachments map[string]int64 // Slack file ID -> attachment ID
}

type dayMessage struct {
	f     *folder
	entry string
	m     slackMessage
	ts    float64
}

// walk converts every message, oldest day first and by timestamp within
// a day, across all conversations (as the reference does).
func (c *converter) walk(ctx context.Context, fn func(*converted) error) error {
	st := &walkState{threads: map[string]string{}, topicCount: map[string]int{}, attachments: map[string]int64{}}
	days := map[string][]*folder{}
	for _, f := range c.folders {
		for _, day := range c.ex.dirs[f.name] {
			days[day] = append(days[day], f)
		}
	}
	names := make([]string, 0, len(days))
	for d := range days {
		names = append(names, d)
	}
	slices.Sort(names)
	for _, day := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		var all []dayMessage
		for _, f := range days[day] {
			entry := f.name + "/" + day
			var msgs []slackMessage
			if err := c.ex.readJSON(entry, false, &msgs); err != nil {
				return err
			}
			for _, m := range msgs {
				ts, err := strconv.ParseFloat(m.TS, 64)
				if err != nil {
					return refuse(entry, "a message whose ts %q is not a timestamp", m.TS)
				}
				all = append(all, dayMessage{f: f, entry: entry, m: m, ts: ts})
			}
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].ts < all[j].ts })
		for _, dm := range all {
			cm, err := c.convert(st, dm)
			if err != nil {
				return err
			}
			if cm == nil {
				continue
			}
			if cm.msg.StreamID != nil {
				if _, ok := c.first[*cm.msg.StreamID]; !ok {
					c.first[*cm.msg.StreamID] = cm.msg.ID
				}
			}
			if err := fn(cm); err != nil {
				return err
			}
		}
	}
	return nil
}

// skipped are the subtypes the reference leaves out.
var skipped = []string{"pinned_item", "unpinned_item", "channel_join", "channel_leave", "channel_name"}

func (c *converter) convert(st *walkState, dm dayMessage) (*converted, error) {
	m := dm.m
	if m.Type != "" && m.Type != "message" || slices.Contains(skipped, m.Subtype) {
		return nil, nil
	}
	sender := m.User
	if sender == "" && m.File != nil {
		sender = m.BotID
	}
	if sender == "" {
		sender = m.BotID
	}
	if sender == "" {
		return nil, nil // the reference ignores messages without a sender
	}
	senderID, ok := c.byslack[sender]
	if !ok {
		return nil, refuse(dm.entry, "message %s is from user %s, whom users.json does not list", m.TS, sender)
	}
	date, err := tsUnix(m.TS)
	if err != nil {
		return nil, refuse(dm.entry, "%v", err)
	}
	content := convertMarkup(m.Text, c)
	if m.Subtype == "bot_add" || m.Subtype == "sh_room_created" || m.Subtype == "me_message" {
		content = "/me " + content
	}
	st.next++
	cm := &converted{msg: storage.Message{ID: st.next, SenderID: senderID, DateSent: date, SendingClient: "Slack import"}}
	content = c.attachFiles(st, dm, cm, senderID, date, content)
	if dm.f.streamID != 0 {
		id := dm.f.streamID
		cm.msg.StreamID = &id
		cm.msg.Topic = c.topic(st, dm, content)
	} else {
		id := dm.f.convID
		cm.msg.ConversationID = &id
	}
	res := c.render(content)
	cm.msg.Content, cm.msg.RenderedContent = content, res.HTML
	cm.msg.HasLink, cm.msg.HasImage, cm.msg.HasAttachment = res.HasLink, res.HasImage, res.HasAttachment
	cm.msg.IsMeMessage, cm.msg.StreamWildcard, cm.msg.TopicWildcard = res.IsMeMessage, res.StreamWildcard, res.TopicWildcard
	if m.Edited != nil {
		if at, err := tsUnix(m.Edited.TS); err == nil {
			editor := c.byslack[m.Edited.User]
			if editor == 0 {
				editor = senderID
			}
			entry := []map[string]any{{"user_id": editor, "timestamp": at, "prev_content": content, "prev_rendered_content": res.HTML}}
			b, _ := json.Marshal(entry)
			cm.msg.EditHistory, cm.msg.LastEditTime = string(b), &at
		}
	}
	c.readers(cm, dm.f, res.MentionedUserIDs)
	c.reactions(cm, dm)
	return cm, nil
}

// readers are the rows of the message: a direct message's participants,
// a channel message's mentioned members. Everything imported is read.
func (c *converter) readers(cm *converted, f *folder, mentioned []int64) {
	if f.streamID == 0 {
		for _, uid := range f.members {
			flags := storage.FlagPrivate | storage.FlagRead
			if slices.Contains(mentioned, uid) {
				flags |= storage.FlagMentioned
			}
			cm.rows = append(cm.rows, storage.UserMessage{UserID: uid, MessageID: cm.msg.ID, Flags: flags})
		}
		return
	}
	for _, uid := range mentioned {
		if slices.Contains(c.members[f.streamID], uid) {
			cm.rows = append(cm.rows, storage.UserMessage{UserID: uid, MessageID: cm.msg.ID, Flags: storage.FlagMentioned | storage.FlagRead})
		}
	}
}

// slackEmoji are the code points of Slack's (iamcal's) names of frequent
// reactions where this server's names differ (Slack's :smile: is this
// server's :big_smile:) or lack the name; the reference maps every
// Slack name through iamcal's data, which is not at hand here. Other
// names are looked up among this server's.
var slackEmoji = map[string]string{
	"smile": "1f604", "slightly_smiling_face": "1f642", "simple_smile": "1f642", "white_check_mark": "2705",
	"heavy_check_mark": "2714", "thumbsup": "1f44d", "thumbsdown": "1f44e", "thinking_face": "1f914", "ok_hand": "1f44c",
	"raised_hands": "1f64c", "joy": "1f602", "laughing": "1f606", "grin": "1f601", "face_with_rolling_eyes": "1f644",
	"facepalm": "1f926", "face_palm": "1f926", "shrug": "1f937", "handshake": "1f91d", "star-struck": "1f929",
	"partying_face": "1f973", "heavy_plus_sign": "2795", "pray": "1f64f", "clap": "1f44f", "wave": "1f44b",
}

// reactions maps Slack's emoji names (without skin tones) to this
// server's; the reference merges the skin tones of one emoji too.
func (c *converter) reactions(cm *converted, dm dayMessage) {
	type key struct {
		user int64
		code string
	}
	done := map[key]bool{}
	for _, r := range dm.m.Reactions {
		name, _, _ := strings.Cut(r.Name, "::")
		code, ok := slackEmoji[name]
		if !ok {
			code, ok = markdown.EmojiCode(name)
		}
		if !ok {
			c.warn("%s: reaction :%s: left out (not an emoji this server knows; custom emoji are not in Slack's export)", dm.entry, r.Name)
			continue
		}
		if canonical, ok := markdown.EmojiName(code); ok {
			name = canonical
		}
		for _, su := range r.Users {
			uid, ok := c.byslack[su]
			if !ok || done[key{uid, code}] {
				continue
			}
			done[key{uid, code}] = true
			cm.reactions = append(cm.reactions, storage.Reaction{MessageID: cm.msg.ID, UserID: uid, ReactionType: "unicode_emoji", EmojiCode: code, EmojiName: name})
		}
	}
}

// files adds the message's files: imported when the zip holds them, a
// link to Slack otherwise.
func (c *converter) attachFiles(st *walkState, dm dayMessage, cm *converted, owner, date int64, content string) string {
	files := dm.m.Files
	if dm.m.Subtype == "file_share" && dm.m.File != nil {
		files = []slackFile{*dm.m.File}
	}
	var lines []string
	for _, f := range files {
		if f.Mode == "tombstone" || f.Mode == "hidden_by_limit" {
			continue
		}
		title := f.Title
		if title == "" {
			title = f.Name
		}
		entry := "__uploads/" + f.ID + "/" + f.Name
		zf := c.ex.files[entry]
		if zf == nil {
			if f.URLPrivate != "" {
				lines = append(lines, fmt.Sprintf("[%s](%s)", title, f.URLPrivate))
			}
			continue
		}
		id, ok := st.attachments[f.ID]
		path := pathID(f)
		if !ok {
			id = int64(len(st.attachments) + 1)
			st.attachments[f.ID] = id
			cm.attachments = append(cm.attachments, storage.Attachment{ID: id, OwnerID: owner, PathID: path, FileName: f.Name,
				Size: int64(zf.UncompressedSize64), ContentType: f.Mimetype, CreateTime: date})
			cm.uploads = append(cm.uploads, upload{entry: entry, path: path, size: int64(zf.UncompressedSize64)})
		}
		cm.links = append(cm.links, id)
		lines = append(lines, fmt.Sprintf("[%s](/user_uploads/%s)", title, path))
	}
	return strings.Join(slices.DeleteFunc(append([]string{content}, lines...), func(s string) bool { return s == "" }), "\n")
}

// topic is a channel message's topic: its thread's, or the default one.
func (c *converter) topic(st *walkState, dm dayMessage, content string) string {
	m := dm.m
	if m.ThreadTS == "" {
		return defaultTopic
	}
	parent := m.ParentUser
	if m.ThreadTS == m.TS || parent == "" {
		parent = m.User
	}
	key := dm.f.name + "\x00" + m.ThreadTS
	if t, ok := st.threads[key]; ok {
		return t
	}
	sec, err := tsUnix(m.ThreadTS)
	if err != nil {
		return defaultTopic
	}
	base := truncate(time.Unix(sec, 0).UTC().Format("2006-01-02")+" "+strings.Join(strings.Fields(content), " "), 60)
	n := st.topicCount[dm.f.name+"\x00"+base]
	st.topicCount[dm.f.name+"\x00"+base]++
	t := base
	if n > 0 {
		suffix := fmt.Sprintf(" (%d)", n+1)
		t = truncate(base, 60-len(suffix)) + suffix
	}
	st.threads[key] = t
	return t
}

func truncate(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// resolver resolves mentions among the imported users and channels.
type resolver struct{ c *converter }

func (r resolver) UserByName(name string) (markdown.User, bool) {
	for _, u := range r.c.users {
		if strings.EqualFold(u.FullName, name) {
			return markdown.User{ID: u.ID, FullName: u.FullName, IsActive: u.IsActive}, true
		}
	}
	return markdown.User{}, false
}

func (r resolver) UserByID(id int64) (markdown.User, bool) {
	if id < 1 || int(id) > len(r.c.users) {
		return markdown.User{}, false
	}
	u := r.c.users[id-1]
	return markdown.User{ID: u.ID, FullName: u.FullName, IsActive: u.IsActive}, true
}

func (resolver) GroupByName(string) (markdown.Group, bool) { return markdown.Group{}, false }

func (r resolver) ChannelByName(name string) (markdown.Channel, bool) {
	for _, s := range r.c.streams {
		if strings.EqualFold(s.Name, name) {
			return markdown.Channel{ID: s.ID, Name: s.Name}, true
		}
	}
	return markdown.Channel{}, false
}

func (c *converter) render(content string) markdown.Result {
	res, err := markdown.RenderMessage(content, resolver{c}, markdown.Options{RealmURL: strings.TrimSuffix(c.opts.URL, "/")})
	if err != nil {
		return markdown.Result{HTML: "<p>" + strings.ReplaceAll(content, "<", "&lt;") + "</p>"}
	}
	return res
}
