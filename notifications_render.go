package chat

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// The words of missed-message emails and pushes: the reference's
// missed_message templates (email_notifications.py) and its push alert
// (push_notifications.py), with this server's name for itself (the
// organization's) where the reference says "Zulip".

const (
	// pushBodyLimit is how much of a message a push shows (the
	// reference's truncate_content).
	pushBodyLimit = 200
	// mentionContextSeconds and mentionContextMessages: an email about a
	// mention in a channel also shows up to that many earlier messages of
	// the topic from that long before it (get_context_for_message).
	mentionContextSeconds  = 15 * 60
	mentionContextMessages = 10
	// Values of realm_name_in_email_notifications_policy.
	realmNameInSubjectAlways = 2
)

// conversationKey is the email batch of a message: its channel and topic
// (case-folded), or its direct conversation.
func conversationKey(m *storage.Message) string {
	if m.StreamID != nil {
		return fmt.Sprintf("c%d\x00%s", *m.StreamID, storage.Fold(m.Topic))
	}
	return fmt.Sprintf("d%d", *m.ConversationID)
}

// notifyKey identifies a notification of these messages for the user.
func notifyKey(kind string, realmID, userID int64, ids []int64) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %d %d", kind, realmID, userID)
	for _, id := range ids {
		fmt.Fprintf(h, " %d", id)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// notifyTopicName is a topic as notifications show it.
func notifyTopicName(topic string) string {
	if topic == "" {
		return EmptyTopicDisplayName
	}
	return topic
}

// notifyConversation describes the message's conversation for the user;
// participants are a direct message's others, by ID.
func (r reads) notifyConversation(ctx context.Context, realm *storage.Realm, user *storage.User, m *storage.Message) (NotificationConversation, []*storage.User, error) {
	if m.StreamID != nil {
		ch, err := r.channelByID(ctx, realm.ID, *m.StreamID)
		if err != nil {
			return NotificationConversation{}, nil, err
		}
		return NotificationConversation{Type: MessageTypeChannel, ChannelID: ch.ID, ChannelName: ch.Name, Topic: m.Topic}, nil, nil
	}
	ids, err := r.st.ConversationMembers(ctx, realm.ID, *m.ConversationID)
	if err != nil {
		return NotificationConversation{}, nil, err
	}
	users, err := r.usersByID(ctx, realm, ids)
	if err != nil {
		return NotificationConversation{}, nil, err
	}
	conv := NotificationConversation{Type: MessageTypeDirect, UserIDs: []int64{}, Names: []string{}}
	var others []*storage.User
	for _, id := range uniqueSorted(ids) {
		if u := users[id]; u != nil && id != user.ID {
			others = append(others, u)
			conv.UserIDs = append(conv.UserIDs, id)
			conv.Names = append(conv.Names, u.FullName)
		}
	}
	return conv, others, nil
}

// conversationLink opens the conversation in the web client (the
// reference's topic_narrow_url and direct-message narrows).
func conversationLink(realm *storage.Realm, user *storage.User, c NotificationConversation) string {
	if c.Type == MessageTypeChannel {
		return fmt.Sprintf("%s/#narrow/channel/%s/topic/%s", realm.URL, markdown.EncodeChannel(c.ChannelID, c.ChannelName),
			markdown.EncodeHashComponent(c.Topic))
	}
	ids := c.UserIDs
	if len(ids) == 0 {
		ids = []int64{user.ID}
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	kind := "dm"
	if len(ids) > 1 {
		kind = "group"
	}
	return fmt.Sprintf("%s/#narrow/dm/%s-%s", realm.URL, strings.Join(parts, ","), kind)
}

// groupDirectName is the reference's huddle_display_name.
func groupDirectName(names []string) string {
	switch len(names) {
	case 0, 1:
		return strings.Join(names, "")
	case 2:
		return names[0] + " and " + names[1]
	case 3:
		return fmt.Sprintf("%s, %s, and %s", names[0], names[1], names[2])
	}
	return fmt.Sprintf("%s, %s, and %d others", names[0], names[1], len(names)-2)
}

// emailReason is the reference's "You are receiving this because ..."
// line for the triggers of an email's messages ("" for direct messages);
// names tells whether it may name the channel and topic.
func emailReason(items []notifyItem, group string, conv NotificationConversation, names bool) string {
	has := map[string]bool{}
	personal := false
	for _, it := range items {
		has[it.trigger] = true
		if it.trigger == NotifyTriggerMention && it.row.MentionedGroupID == 0 {
			personal = true
		}
	}
	where, whereTopic := "this channel", "this topic"
	if names {
		where = "#" + conv.ChannelName
		whereTopic = where + " > " + notifyTopicName(conv.Topic)
	}
	participants := "all topic participants were mentioned in " + whereTopic
	has["personal"], has["group"] = personal, group != ""
	// The reasons by precedence (missed_message.txt).
	for _, r := range [][2]string{
		{"personal", "you were personally mentioned"},
		{"group", "@" + group + " was mentioned"},
		{NotifyTriggerTopicWildcardFollowed, participants},
		{NotifyTriggerChannelWildcardFollowed, "you have wildcard mention notifications enabled for topics you follow"},
		{NotifyTriggerTopicWildcard, participants},
		{NotifyTriggerChannelWildcard, "everyone was mentioned in " + where},
		{NotifyTriggerFollowedEmail, "you have email notifications enabled for topics you follow"},
		{NotifyTriggerChannelEmail, "you have email notifications enabled for " + where},
	} {
		if has[r[0]] {
			return "You are receiving this because " + r[1] + "."
		}
	}
	return ""
}

// mentionedGroupName is the reference's get_mentioned_user_group: none
// when a message names the recipient, else the smallest group through
// which one mentioned them.
func (r reads) mentionedGroupName(ctx context.Context, realmID int64, items []notifyItem) (int64, string, error) {
	var ids []int64
	for _, it := range items {
		if it.trigger == NotifyTriggerMention && it.row.MentionedGroupID == 0 {
			return 0, "", nil
		}
		if it.row.MentionedGroupID != 0 {
			ids = append(ids, it.row.MentionedGroupID)
		}
	}
	if ids = uniqueSorted(ids); len(ids) == 0 {
		return 0, "", nil
	}
	groups, err := r.st.GetGroupsByID(ctx, realmID, ids)
	if err != nil || len(groups) == 0 {
		return 0, "", err
	}
	best, size := groups[0], -1
	for _, g := range groups {
		closure, err := r.st.GroupClosure(ctx, realmID, g.ID)
		if err != nil {
			return 0, "", err
		}
		members, err := r.st.ListGroupMembershipsOf(ctx, realmID, closure)
		if err != nil {
			return 0, "", err
		}
		n := len(uniqueSorted(memberIDs(members)))
		if size < 0 || n < size {
			best, size = g, n
		}
	}
	return best.ID, best.Name, nil
}

func memberIDs(ms []storage.GroupMembership) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.UserID
	}
	return out
}

// mentionContext lists the topic's messages the user may see from the
// quarter of an hour before the first message of an email about a
// mention (at most mentionContextMessages, oldest first).
func (r reads) mentionContext(ctx context.Context, realm *storage.Realm, user *storage.User, first *storage.Message) ([]storage.Message, error) {
	ch, err := r.channelByID(ctx, realm.ID, *first.StreamID)
	if err != nil {
		return nil, err
	}
	scope, err := r.channelReadScope(ctx, realm.ID, user.ID, ch)
	if err != nil {
		return nil, err
	}
	topic := first.Topic
	older, _, err := r.st.ListMessageWindow(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: user.ID, Scope: scope,
		Filter: storage.MessageFilter{StreamID: &ch.ID, Topic: &topic}, Anchor: first.ID - 1, Before: mentionContextMessages})
	var out []storage.Message
	for _, m := range older {
		if m.ID < first.ID && m.DateSent > first.DateSent-mentionContextSeconds {
			out = append(out, m)
		}
	}
	return out, err
}

// buildEmail makes the email of one conversation's notifications.
func (s *Service) buildEmail(ctx context.Context, realm *storage.Realm, user *storage.User, items []notifyItem) (*EmailNotification, error) {
	slices.SortFunc(items, func(a, b notifyItem) int {
		return cmp.Or(cmp.Compare(a.msg.DateSent, b.msg.DateSent), cmp.Compare(a.msg.ID, b.msg.ID))
	})
	first := items[0].msg
	conv, others, err := s.reads().notifyConversation(ctx, realm, user, first)
	if err != nil {
		return nil, err
	}
	set := settingsOf(user)
	show := set.MessageContentInEmailNotifications
	msgs := make([]storage.Message, 0, len(items))
	triggers := map[int64]string{}
	ids := make([]int64, len(items))
	for i, it := range items {
		msgs = append(msgs, *it.msg)
		triggers[it.msg.ID] = it.trigger
		ids[i] = it.msg.ID
	}
	if first.StreamID != nil && isMentionTrigger(items[0].trigger) {
		more, err := s.reads().mentionContext(ctx, realm, user, first)
		if err != nil {
			return nil, err
		}
		msgs = append(more, msgs...)
	}
	senderIDs := make([]int64, len(msgs))
	for i := range msgs {
		senderIDs[i] = msgs[i].SenderID
	}
	senders, err := s.reads().usersByID(ctx, realm, senderIDs)
	if err != nil {
		return nil, err
	}
	senderName := func(id int64) string {
		if u := senders[id]; u != nil {
			return u.FullName
		}
		return ""
	}
	_, groupName, err := s.reads().mentionedGroupName(ctx, realm.ID, items)
	if err != nil {
		return nil, err
	}
	e := &EmailNotification{Key: notifyKey("email", realm.ID, user.ID, ids), RealmID: realm.ID, RealmName: realm.Name,
		RealmURL: realm.URL, UserID: user.ID, To: user.Email, ToName: user.FullName, FromName: realm.Name + " notifications",
		Conversation: conv, Link: conversationLink(realm, user, conv), SettingsLink: realm.URL + "/#settings/notifications",
		Reason: emailReason(items, groupName, conv, show), ContentHidden: !show}
	if !show {
		e.Conversation = NotificationConversation{Type: conv.Type}
	}
	// The reply address (the reference's create_missed_message_address),
	// tied to the first message and the recipient.
	if e.ReplyTo, err = s.replyAddress(ctx, realm.ID, user.ID, first.ID); err != nil {
		return nil, err
	}
	// The subject (missed_message.subject.txt).
	switch {
	case !show:
		e.Subject = "New messages"
	case conv.Type == MessageTypeDirect && len(others) > 1:
		e.Subject = "Group DMs with " + groupDirectName(conv.Names)
	case conv.Type == MessageTypeDirect:
		var names []string
		for _, it := range items {
			if n := senderName(it.msg.SenderID); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		e.Subject = "DMs with " + strings.Join(names, ", ")
	default:
		topic, resolved := strings.CutPrefix(notifyTopicName(conv.Topic), resolvedPrefix)
		e.Subject = "#" + conv.ChannelName + " > " + topic
		if resolved {
			e.Subject = "[resolved] " + e.Subject
		}
	}
	if set.RealmNameInEmailNotificationsPolicy == realmNameInSubjectAlways {
		e.Subject += " [" + realm.Name + "]"
	}
	// The messages, in blocks of consecutive messages of one sender, each
	// block led by the sender's name (not in a one-to-one conversation).
	named := conv.Type == MessageTypeChannel || len(others) > 1
	var text, body strings.Builder
	prevSender := int64(-1)
	for i := range msgs {
		m := &msgs[i]
		nm := NotifiedMessage{ID: m.ID, SenderID: m.SenderID, Timestamp: m.DateSent, Trigger: triggers[m.ID]}
		if show {
			nm.SenderName = senderName(m.SenderID)
			nm.Content = m.Content
			nm.Text = emailPlainText(realm, m.Content)
			nm.HTML = emailHTML(realm, m.RenderedContent)
			lead := named && m.SenderID != prevSender
			if lead {
				nm.Text = nm.SenderName + ":\n" + nm.Text
				nm.HTML = withSenderName(nm.HTML, nm.SenderName)
			}
			if m.SenderID != prevSender {
				if prevSender >= 0 {
					body.WriteString("</div>\n")
				}
				body.WriteString(`<div class="missed_message">` + "\n")
			}
			body.WriteString(nm.HTML + "\n")
			text.WriteString(nm.Text + "\n\n")
			prevSender = m.SenderID
		}
		e.Messages = append(e.Messages, nm)
	}
	if prevSender >= 0 {
		body.WriteString("</div>\n")
	}
	e.Text, e.HTML = emailBodies(e, conv, others, text.String(), body.String())
	return e, nil
}

// emailBodies lays out the text and HTML of an email around its
// messages (missed_message.txt and .html).
func emailBodies(e *EmailNotification, conv NotificationConversation, others []*storage.User, text, body string) (string, string) {
	esc := html.EscapeString
	var t, h strings.Builder
	h.WriteString("<!DOCTYPE html>\n<html>\n<body>\n")
	if !e.ContentHidden {
		header, headerHTML := "", ""
		switch {
		case conv.Type == MessageTypeChannel:
			header = conv.ChannelName + " > " + notifyTopicName(conv.Topic)
			headerHTML = fmt.Sprintf(`<a href="%s/#narrow/channel/%s">%s</a> &gt; <a href="%s">%s</a>`, esc(e.RealmURL),
				esc(markdown.EncodeChannel(conv.ChannelID, conv.ChannelName)), esc(conv.ChannelName), esc(e.Link), esc(notifyTopicName(conv.Topic)))
		case len(others) == 0:
			header = "You"
		default:
			header = "You and " + strings.Join(conv.Names, ", ")
		}
		if headerHTML == "" {
			headerHTML = fmt.Sprintf(`<a href="%s">%s</a>`, esc(e.Link), esc(header))
		}
		t.WriteString(header + "\n\n" + text)
		h.WriteString(`<div class="recipient_header">` + headerHTML + "</div>\n" + body)
	} else {
		help := e.RealmURL + "/help/dm-mention-alert-notifications"
		t.WriteString("This email does not include message content because you have disabled message content appearing in email notifications.\n")
		t.WriteString("See " + help + " for more details.\n\n")
		h.WriteString(`<div class="missed_message no-content-explanation">This email does not include message content because you have disabled ` +
			`<a class="content_disabled_help_link" href="` + esc(help) + `">message content appearing in email notifications</a>.</div>` + "\n")
	}
	t.WriteString("--\n")
	h.WriteString(`<div class="email-preferences">` + "\n&mdash;<br />\n")
	if e.Reason != "" {
		t.WriteString(e.Reason + "\n\n")
		h.WriteString(esc(e.Reason) + "<br />\n")
	}
	verb := "Reply in"
	if e.ContentHidden {
		verb = "View or reply in"
	}
	switch {
	case e.ReplyTo != "":
		t.WriteString("Reply to this email directly, or view it in " + e.RealmName + ":\n\n" + e.Link + "\n\n")
		h.WriteString(fmt.Sprintf(`Reply to this email directly, <a href="%s">view it in %s</a>, or <a href="%s">manage email preferences</a>.<br />`+"\n",
			esc(e.Link), esc(e.RealmName), esc(e.SettingsLink)))
	default:
		t.WriteString(verb + " " + e.RealmName + ":\n\n" + e.Link + "\n\n")
		h.WriteString(fmt.Sprintf(`<a href="%s">%s %s</a>, or <a href="%s">manage email preferences</a>.<br />`+"\n",
			esc(e.Link), verb, esc(e.RealmName), esc(e.SettingsLink)))
	}
	if !e.ContentHidden && e.ReplyTo == "" {
		t.WriteString("Do not reply to this email. This server is not configured to accept incoming emails.\n\n")
		h.WriteString("<br />\nDo not reply to this email. This server is not configured to accept incoming emails.\n")
	}
	t.WriteString("Manage email preferences:\n\n" + e.SettingsLink + "\n")
	h.WriteString("</div>\n</body>\n</html>\n")
	return t.String(), h.String()
}

var (
	markdownImageLink = regexp.MustCompile(`\[(\S*)\]\((\S*)\)`)
	relativeUploads   = regexp.MustCompile(`(^|[^\w/])/user_uploads/`)
	spoilerFence      = regexp.MustCompile("^\\s*(`{3,}|~{3,})\\s*spoiler\\b")
)

// emailPlainText is a message's Markdown as a plain email shows it:
// links to images as their URL, uploads with the organization's address,
// spoilers hidden, every line quoted.
func emailPlainText(realm *storage.Realm, content string) string {
	content = markdownImageLink.ReplaceAllString(content, "$2")
	content = relativeUploads.ReplaceAllString(content, "${1}"+realm.URL+"/user_uploads/")
	var out []string
	fence := ""
	for _, line := range strings.Split(content, "\n") {
		if fence != "" {
			if strings.TrimSpace(line) == fence {
				fence = ""
				out = append(out, line)
			}
			continue
		}
		if m := spoilerFence.FindStringSubmatch(line); m != nil {
			fence = m[1]
			out = append(out, line, "(Open "+realm.Name+" to see the spoiler content)")
			continue
		}
		out = append(out, line)
	}
	for i, line := range out {
		out[i] = "> " + line
	}
	return strings.Join(out, "\n")
}

// emailHTML is a message's rendered HTML as an email shows it: links
// absolute, emoji as characters, spoilers closed, inline images (which a
// mail client cannot load without the recipient's session) left out.
func emailHTML(realm *storage.Realm, rendered string) string {
	nodes := parseFragment(rendered)
	var keep []*xhtml.Node
	for _, n := range nodes {
		if hasClass(n, "message_inline_image") {
			if len(nodes) == 1 {
				keep = append(keep, inlineImageLink(n))
			}
			continue
		}
		keep = append(keep, n)
	}
	var b bytes.Buffer
	for _, n := range keep {
		fixEmailNode(realm, n)
		_ = xhtml.Render(&b, n)
	}
	return b.String()
}

// inlineImageLink replaces a message that is only an image by a link to it.
func inlineImageLink(n *xhtml.Node) *xhtml.Node {
	href := ""
	walk(n, func(c *xhtml.Node) bool {
		if c.DataAtom == atom.A && href == "" {
			href = attr(c, "href")
		}
		return true
	})
	p := &xhtml.Node{Type: xhtml.ElementNode, Data: "p", DataAtom: atom.P}
	a := &xhtml.Node{Type: xhtml.ElementNode, Data: "a", DataAtom: atom.A, Attr: []xhtml.Attribute{{Key: "href", Val: href}}}
	a.AppendChild(&xhtml.Node{Type: xhtml.TextNode, Data: href})
	p.AppendChild(a)
	return p
}

func fixEmailNode(realm *storage.Realm, n *xhtml.Node) {
	walk(n, func(c *xhtml.Node) bool {
		if c.Type != xhtml.ElementNode {
			return true
		}
		for i, a := range c.Attr {
			if a.Key == "href" || a.Key == "src" {
				c.Attr[i].Val = absoluteURL(realm, a.Val)
			}
		}
		switch {
		case hasClass(c, "emoji") && emojiText(c) != "":
			replaceWithText(c, emojiText(c))
			return false
		case hasClass(c, "message_inline_image"):
			c.Parent.RemoveChild(c)
			return false
		case hasClass(c, "spoiler-content"):
			c.Parent.RemoveChild(c)
			return false
		case hasClass(c, "spoiler-header"):
			title := &xhtml.Node{Type: xhtml.ElementNode, Data: "span", DataAtom: atom.Span,
				Attr: []xhtml.Attribute{{Key: "class", Val: "spoiler-title"}}}
			title.AppendChild(&xhtml.Node{Type: xhtml.TextNode, Data: " (Open " + realm.Name + " to see the spoiler content)"})
			target := c
			walk(c, func(p *xhtml.Node) bool {
				if p.DataAtom == atom.P && target == c {
					target = p
				}
				return true
			})
			target.AppendChild(title)
		}
		return true
	})
}

// absoluteURL makes the server's relative links absolute (the reference's
// relative_to_full_url).
func absoluteURL(realm *storage.Realm, u string) string {
	switch {
	case strings.HasPrefix(u, "#"):
		return realm.URL + "/" + u
	case strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//"):
		return realm.URL + u
	}
	return u
}

// withSenderName puts "<b>Sender</b>: " at the start of the message's
// first paragraph, or before it when it does not start with one.
func withSenderName(rendered, name string) string {
	lead := "<b>" + html.EscapeString(name) + "</b>: "
	if rest, ok := strings.CutPrefix(rendered, "<p>"); ok {
		return "<p>" + lead + rest
	}
	return lead + rendered
}

// buildPush makes the push of one notification (the reference's
// get_message_payload_apns and _gcm).
func (s *Service) buildPush(ctx context.Context, realm *storage.Realm, user *storage.User, it notifyItem) (*PushNotification, error) {
	m := it.msg
	conv, others, err := s.reads().notifyConversation(ctx, realm, user, m)
	if err != nil {
		return nil, err
	}
	senders, err := s.reads().usersByID(ctx, realm, []int64{m.SenderID})
	if err != nil {
		return nil, err
	}
	sender := senders[m.SenderID]
	if sender == nil {
		sender = &storage.User{ID: m.SenderID}
	}
	body, truncated := pushText(m.RenderedContent)
	p := &PushNotification{Key: notifyKey("push", realm.ID, user.ID, []int64{m.ID}), RealmID: realm.ID, RealmName: realm.Name,
		RealmURL: realm.URL, UserID: user.ID, MessageID: m.ID, Trigger: it.trigger, Body: body, BodyTruncated: truncated,
		SenderID: sender.ID, SenderEmail: apiEmail(realm, sender), SenderName: sender.FullName, Conversation: conv,
		Timestamp: m.DateSent, Link: fmt.Sprintf("%s/near/%d", conversationLink(realm, user, conv), m.ID)}
	if it.trigger == NotifyTriggerMention && it.row.MentionedGroupID != 0 {
		if p.MentionedGroupID, p.MentionedGroupName, err = s.reads().mentionedGroupName(ctx, realm.ID, []notifyItem{it}); err != nil {
			return nil, err
		}
	}
	group := conv.Type == MessageTypeDirect && len(others) > 1
	switch {
	case conv.Type == MessageTypeChannel:
		p.Title = "#" + conv.ChannelName + " > " + notifyTopicName(conv.Topic)
	case group:
		names := append(slices.Clone(conv.Names), user.FullName)
		slices.Sort(names)
		p.Title = strings.Join(names, ", ")
	default:
		p.Title = sender.FullName
	}
	switch {
	case it.trigger == NotifyTriggerMention && p.MentionedGroupName != "":
		p.Subtitle = sender.FullName + " mentioned @" + p.MentionedGroupName + ":"
	case it.trigger == NotifyTriggerMention:
		p.Subtitle = sender.FullName + " mentioned you:"
	case isMentionTrigger(it.trigger):
		p.Subtitle = sender.FullName + " mentioned everyone:"
	case conv.Type == MessageTypeDirect && !group:
	default:
		p.Subtitle = sender.FullName + ":"
	}
	return p, nil
}

// pushText is a message's text as a push shows it (the reference's
// get_mobile_push_content and truncate_content): emoji as characters,
// images as their alt text, quotes with "> " (a quote beside other text
// collapsed to "[…]"), numbered lists numbered, spoilers closed; cut to
// pushBodyLimit characters.
func pushText(rendered string) (string, bool) {
	nodes := parseFragment(rendered)
	quotes := 0
	for _, n := range nodes {
		if n.DataAtom == atom.Blockquote {
			quotes++
		}
	}
	var b strings.Builder
	collapsed := false
	for _, n := range nodes {
		if n.Type == xhtml.ElementNode && quotes > 0 && quotes < countElements(nodes) && n.DataAtom == atom.Blockquote {
			if !collapsed {
				b.WriteString("[…]")
			}
			collapsed = true
			continue
		}
		if n.Type == xhtml.ElementNode {
			collapsed = false
		}
		b.WriteString(pushNodeText(n))
	}
	text := strings.TrimSpace(b.String())
	if utf8.RuneCountInString(text) <= pushBodyLimit {
		return text, false
	}
	return string([]rune(text)[:pushBodyLimit]) + "…", true
}

func countElements(nodes []*xhtml.Node) int {
	n := 0
	for _, c := range nodes {
		if c.Type == xhtml.ElementNode {
			n++
		}
	}
	return n
}

func pushNodeText(n *xhtml.Node) string {
	switch {
	case n.Type == xhtml.TextNode:
		return n.Data
	case n.Type != xhtml.ElementNode:
		return ""
	case hasClass(n, "emoji") && emojiText(n) != "":
		return emojiText(n)
	case n.DataAtom == atom.Img:
		return attr(n, "alt")
	case hasClass(n, "spoiler-block"):
		header := ""
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if hasClass(c, "spoiler-header") {
				header = strings.TrimSpace(pushNodeText(c))
			}
		}
		if header == "" {
			return "(…)\n"
		}
		return header + " (…)\n"
	case n.DataAtom == atom.Ol:
		start := 1
		if v, err := strconv.Atoi(attr(n, "start")); err == nil {
			start = v
		}
		var items []string
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.DataAtom == atom.Li {
				items = append(items, strconv.Itoa(start)+". "+strings.TrimSpace(pushNodeText(c)))
				start++
			}
		}
		return strings.Join(items, "\n")
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(pushNodeText(c))
	}
	if n.DataAtom == atom.Blockquote {
		var q strings.Builder
		for _, line := range strings.Split(b.String(), "\n") {
			if line != "" {
				q.WriteString("> " + line + "\n")
			}
		}
		return q.String()
	}
	return b.String()
}

// emojiText is the character of an emoji span (class emoji-1f642, or
// several code points joined by "-"); "" for custom emoji.
func emojiText(n *xhtml.Node) string {
	for _, c := range strings.Fields(attr(n, "class")) {
		code, ok := strings.CutPrefix(c, "emoji-")
		if !ok {
			continue
		}
		var b strings.Builder
		for _, part := range strings.Split(code, "-") {
			r, err := strconv.ParseUint(part, 16, 32)
			if err != nil || !utf8.ValidRune(rune(r)) {
				return ""
			}
			b.WriteRune(rune(r))
		}
		return b.String()
	}
	return ""
}

func parseFragment(s string) []*xhtml.Node {
	ctx := &xhtml.Node{Type: xhtml.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := xhtml.ParseFragment(strings.NewReader(s), ctx)
	if err != nil {
		return []*xhtml.Node{{Type: xhtml.TextNode, Data: s}}
	}
	return nodes
}

// walk visits n and its descendants depth first while fn returns true
// for a node (false skips its children). fn may remove the node it is
// given.
func walk(n *xhtml.Node, fn func(*xhtml.Node) bool) {
	if !fn(n) {
		return
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		walk(c, fn)
		c = next
	}
}

func attr(n *xhtml.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *xhtml.Node, class string) bool {
	return n.Type == xhtml.ElementNode && slices.Contains(strings.Fields(attr(n, "class")), class)
}

func replaceWithText(n *xhtml.Node, text string) {
	n.Parent.InsertBefore(&xhtml.Node{Type: xhtml.TextNode, Data: text}, n)
	n.Parent.RemoveChild(n)
}
