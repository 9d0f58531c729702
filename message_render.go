package chat

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// The syntax of mentions and channel links, found before rendering so that
// what they name is read in a few queries (the reference's MentionData).
// They overestimate: syntax inside code blocks counts here and the
// renderer later leaves it alone.
var (
	userMentionRE  = regexp.MustCompile(`@_?\*\*([^*]+)\*\*`)
	groupMentionRE = regexp.MustCompile(`@_?\*([^*]+)\*`)
	channelLinkRE  = regexp.MustCompile(`#\*\*([^*]+)\*\*`)
)

// wildcardMentionThreshold is the reference's WILDCARD_MENTION_THRESHOLD:
// wildcard mentions in a channel with more subscribers (or a topic with
// more participants) need can_mention_many_users_group.
const wildcardMentionThreshold = 15

// mentionData answers the renderer's lookups (markdown.Resolver) from what
// loadMentionData read for one message of one sender.
type mentionData struct {
	rd     reads
	ctx    context.Context
	realm  *storage.Realm
	me     *storage.User
	byName map[string]*storage.User // by Fold(full name)
	byID   map[int64]*storage.User
	groups map[string]*storage.UserGroup // by exact name
	// channels are the channels named by links that the sender may read
	// (the reference's content access), by exact name.
	channels map[string]*storage.Stream
	// emoji are the organization's active custom emoji the content may
	// name (":name:"), their image URLs by name.
	emoji map[string]string
	// err is the first failure of a lookup made while rendering.
	err error
}

// CustomEmojiURL implements markdown.CustomEmojiResolver.
func (d *mentionData) CustomEmojiURL(name string) (string, bool) {
	u, ok := d.emoji[name]
	return u, ok
}

// emojiNameRE finds what may be ":name:" emoji in a message.
var emojiNameRE = regexp.MustCompile(`:([0-9a-z_-]+):`)

// maxEmojiLookups bounds the custom emoji one message looks up.
const maxEmojiLookups = 50

// loadCustomEmoji looks up the ":name:" words that may be custom emoji,
// one query per distinct name (a message names few).
func (d *mentionData) loadCustomEmoji(ctx context.Context, content string) error {
	d.emoji = map[string]string{}
	seen := map[string]bool{}
	for _, m := range emojiNameRE.FindAllStringSubmatch(content, -1) {
		name := m[1]
		if seen[name] || len(seen) >= maxEmojiLookups {
			continue
		}
		seen[name] = true
		e, err := d.rd.st.GetRealmEmojiByName(ctx, d.realm.ID, name)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		d.emoji[name] = emojiURL(d.realm.ID, e.FileName)
	}
	return nil
}

// loadMentionData reads the users, groups and channels the content may name.
func (r reads) loadMentionData(ctx context.Context, realm *storage.Realm, me *storage.User, scope *groupScope, content string) (*mentionData, error) {
	d := &mentionData{rd: r, ctx: ctx, realm: realm, me: me, byName: map[string]*storage.User{}, byID: map[int64]*storage.User{},
		groups: map[string]*storage.UserGroup{}, channels: map[string]*storage.Stream{}}
	if err := d.loadCustomEmoji(ctx, content); err != nil {
		return nil, err
	}
	names, ids := []string{}, []int64{}
	seenName := map[string]bool{}
	for _, m := range userMentionRE.FindAllStringSubmatch(content, -1) {
		text := m[1]
		if markdownWildcards[text] {
			continue
		}
		if bar := strings.LastIndexByte(text, '|'); bar >= 0 {
			if id, err := strconv.ParseInt(text[bar+1:], 10, 64); err == nil && id > 0 {
				ids = append(ids, id)
				continue
			}
		}
		if key := storage.Fold(text); !seenName[key] {
			seenName[key] = true
			names = append(names, text)
		}
	}
	if len(names) > 0 {
		users, err := r.st.FindUsers(ctx, realm.ID, storage.UserFilter{FullNames: names})
		if err != nil {
			return nil, err
		}
		// Two users may share a name: the reference's lookup is not
		// dependable then; the oldest account wins here.
		for i := range users {
			if key := storage.Fold(users[i].FullName); d.byName[key] == nil {
				d.byName[key] = &users[i]
			}
			d.byID[users[i].ID] = &users[i]
		}
	}
	if len(ids) > 0 {
		users, err := r.st.FindUsers(ctx, realm.ID, storage.UserFilter{IDs: ids})
		if err != nil {
			return nil, err
		}
		for i := range users {
			d.byID[users[i].ID] = &users[i]
		}
	}
	var groupNames []string
	for _, m := range groupMentionRE.FindAllStringSubmatch(content, -1) {
		groupNames = append(groupNames, m[1])
	}
	if len(groupNames) > 0 {
		groups, err := r.st.GetGroupsByName(ctx, realm.ID, uniqueStrings(groupNames))
		if err != nil {
			return nil, err
		}
		for i := range groups {
			d.groups[groups[i].Name] = &groups[i]
		}
	}
	var channelNames []string
	for _, m := range channelLinkRE.FindAllStringSubmatch(content, -1) {
		channelNames = append(channelNames, m[1])
		if name, _, ok := strings.Cut(m[1], ">"); ok {
			channelNames = append(channelNames, name)
		}
	}
	if len(channelNames) > 0 {
		wanted := map[string]bool{}
		for _, n := range channelNames {
			wanted[n] = true
		}
		streams, err := r.st.GetStreamsByName(ctx, realm.ID, uniqueStrings(channelNames))
		if err != nil {
			return nil, err
		}
		for i := range streams {
			ch := &streams[i]
			if !wanted[ch.Name] { // links name channels exactly, case included
				continue
			}
			ok, err := r.hasContentAccess(ctx, me, scope, ch)
			if err != nil {
				return nil, err
			}
			if ok {
				d.channels[ch.Name] = ch
			}
		}
	}
	return d, nil
}

var markdownWildcards = map[string]bool{"all": true, "everyone": true, "stream": true, "channel": true, "topic": true}

func uniqueStrings(in []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// hasContentAccess is the reference's user_has_content_access: web-public
// channels, channels one is subscribed to, and (not for guests) public
// channels and private ones one may subscribe to or add subscribers to.
func (r reads) hasContentAccess(ctx context.Context, me *storage.User, scope *groupScope, ch *storage.Stream) (bool, error) {
	if ch.IsWebPublic {
		return true, nil
	}
	sub, err := r.st.GetSubscription(ctx, ch.RealmID, me.ID, ch.ID)
	if err == nil && sub.Active {
		return true, nil
	} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return false, err
	}
	if me.Role == RoleGuest {
		return false, nil
	}
	return !ch.InviteOnly || scope.in(ch.CanSubscribeGroupID) || scope.in(ch.CanAddSubscribersGroupID), nil
}

func (d *mentionData) user(u *storage.User) markdown.User {
	return markdown.User{ID: u.ID, FullName: u.FullName, IsActive: u.IsActive}
}

func (d *mentionData) UserByName(name string) (markdown.User, bool) {
	if u := d.byName[storage.Fold(name)]; u != nil {
		return d.user(u), true
	}
	return markdown.User{}, false
}

func (d *mentionData) UserByID(id int64) (markdown.User, bool) {
	if u := d.byID[id]; u != nil {
		return d.user(u), true
	}
	return markdown.User{}, false
}

func (d *mentionData) GroupByName(name string) (markdown.Group, bool) {
	g := d.groups[name]
	if g == nil {
		return markdown.Group{}, false
	}
	shown := g.Name
	if g.IsSystemGroup {
		shown = systemGroupDisplayName(g.Name)
	}
	return markdown.Group{ID: g.ID, Name: shown, Deactivated: g.Deactivated}, true
}

func (d *mentionData) ChannelByName(name string) (markdown.Channel, bool) {
	if ch := d.channels[name]; ch != nil {
		return markdown.Channel{ID: ch.ID, Name: ch.Name}, true
	}
	return markdown.Channel{}, false
}

// TopicOldestMessageID is the oldest message of the topic the sender may
// read: of the whole channel when its history is shared, else of the
// periods they were subscribed (the reference's
// get_first_message_for_user_in_topic).
func (d *mentionData) TopicOldestMessageID(channelID int64, topic string) (int64, bool) {
	var ch *storage.Stream
	for _, c := range d.channels {
		if c.ID == channelID {
			ch = c
		}
	}
	if ch == nil || d.err != nil {
		return 0, false
	}
	scope, err := d.rd.channelReadScope(d.ctx, d.realm.ID, d.me.ID, ch)
	if err != nil {
		d.err = err
		return 0, false
	}
	_, newer, err := d.rd.st.ListMessageWindow(d.ctx, storage.MessageWindow{RealmID: d.realm.ID, UserID: d.me.ID, Scope: scope,
		Filter: storage.MessageFilter{StreamID: &ch.ID, Topic: &topic}, Anchor: 0, After: 1})
	if err != nil {
		d.err = err
		return 0, false
	}
	if len(newer) == 0 {
		return 0, false
	}
	return newer[0].ID, true
}

// mentions is what rendering found that decides readers' flags.
type mentions struct {
	// users are the users mentioned by name or through a group (active
	// members only), not yet narrowed to the message's recipients.
	users map[int64]bool
	// topicParticipants are the topic's senders and the sender, when the
	// message mentions @**topic**.
	topicParticipants map[int64]bool
	// alerted are the users whose alert words the message contains, not
	// yet narrowed to its recipients.
	alerted map[int64]bool
	// viaGroup is, for members of mentioned groups the message does not
	// name, the smallest such group (notifications say so); groupSize the
	// mentioned groups' sizes.
	viaGroup  map[int64]int64
	groupSize map[int64]int
}

// renderOutgoing renders the message with its mentions resolved, records
// what the rendering found on the message, and applies the reference's
// mention permissions: wildcards in large channels and topics, and each
// mentioned group's can_mention_group.
func (r reads) renderOutgoing(ctx context.Context, o *outgoing) error {
	m := &o.msg
	scope := o.scope
	if scope == nil {
		var err error
		if scope, err = r.cachedScope(ctx, o.realm.ID, o.me.ID); err != nil {
			return r.s.internal(ctx, "send message", err)
		}
	}
	d, err := r.loadMentionData(ctx, o.realm, o.me, scope, m.Content)
	if err != nil {
		return r.s.internal(ctx, "send message", err)
	}
	if o.linkifiers, err = r.compiledLinkifiers(ctx, o.realm.ID); err != nil {
		return r.s.internal(ctx, "send message", err)
	}
	res, err := markdown.RenderMessage(m.Content, d, markdown.Options{RealmURL: o.realm.URL,
		TranslateEmoticons: settingsOf(o.me).TranslateEmoticons, Linkifiers: o.linkifiers})
	if err == nil {
		err = d.err
	}
	if err != nil {
		return r.s.internal(ctx, "send message", err)
	}
	m.RenderedContent = res.HTML
	m.HasLink, m.HasImage, m.HasAttachment = res.HasLink, res.HasImage, res.HasAttachment
	o.uploads = res.UploadPaths
	m.IsMeMessage = res.IsMeMessage
	m.StreamWildcard = res.StreamWildcard
	m.TopicWildcard = res.TopicWildcard && m.StreamID != nil
	o.mentions = mentions{users: map[int64]bool{}}
	for _, id := range res.MentionedUserIDs {
		o.mentions.users[id] = true
	}
	manyAllowed := scope.in(o.realm.CanMentionManyUsersGroupID)
	if m.StreamID != nil && m.StreamWildcard && !manyAllowed {
		n, err := r.st.CountActiveSubscribers(ctx, o.realm.ID, *m.StreamID, wildcardMentionThreshold+1)
		if err != nil {
			return r.s.internal(ctx, "send message", err)
		}
		if n > wildcardMentionThreshold {
			return errChannelWildcard
		}
	}
	if m.TopicWildcard {
		senders, err := r.st.TopicSenders(ctx, o.realm.ID, *m.StreamID, m.Topic)
		if err != nil {
			return r.s.internal(ctx, "send message", err)
		}
		o.mentions.topicParticipants = map[int64]bool{o.me.ID: true}
		for _, id := range senders {
			o.mentions.topicParticipants[id] = true
		}
		if len(o.mentions.topicParticipants) > wildcardMentionThreshold && !manyAllowed {
			return errTopicWildcard
		}
	}
	if len(res.MentionedGroupIDs) > 0 {
		groups, err := r.st.GetGroupsByID(ctx, o.realm.ID, res.MentionedGroupIDs)
		if err != nil {
			return r.s.internal(ctx, "send message", err)
		}
		for _, g := range groups {
			if !scope.in(g.CanMentionGroupID) {
				return refused("You are not allowed to mention user group '%s'.", g.Name)
			}
		}
		for _, g := range groups {
			closure, err := r.st.GroupClosure(ctx, o.realm.ID, g.ID)
			if err != nil {
				return r.s.internal(ctx, "send message", err)
			}
			members, err := r.st.ListGroupMembershipsOf(ctx, o.realm.ID, closure)
			if err != nil {
				return r.s.internal(ctx, "send message", err)
			}
			for _, mem := range members {
				o.mentions.users[mem.UserID] = true
			}
			o.mentions.noteGroup(g.ID, members, res.MentionedUserIDs)
		}
	}
	if o.mentions.alerted, err = r.s.alertedUsers(ctx, r, o.realm.ID, m.Content); err != nil {
		return r.s.internal(ctx, "send message", err)
	}
	return nil
}

// channelReaders are the rows a channel message needs: readers it mentions
// (by name, group or @**topic** as a topic participant) among its
// recipients, the channel's active subscribers. Mentioned generic bots get
// a row even when not subscribed, as in the reference. Everyone else's
// state of the message is the default, stored nowhere.
func (r reads) channelReaders(ctx context.Context, o *outgoing) ([]storage.UserMessage, error) {
	m := &o.msg
	candidates := []int64{}
	for id := range o.mentions.users {
		candidates = append(candidates, id)
	}
	for id := range o.mentions.topicParticipants {
		if !o.mentions.users[id] {
			candidates = append(candidates, id)
		}
	}
	for id := range o.mentions.alerted {
		if !o.mentions.users[id] && !o.mentions.topicParticipants[id] {
			candidates = append(candidates, id)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	eligible, err := r.st.ActiveSubscribersAmong(ctx, o.realm.ID, *m.StreamID, candidates)
	if err != nil {
		return nil, err
	}
	isEligible := map[int64]bool{}
	for _, id := range eligible {
		isEligible[id] = true
	}
	if len(o.mentions.users) > 0 {
		bots, err := r.st.FindUsers(ctx, o.realm.ID, storage.UserFilter{IDs: mapKeys(o.mentions.users), Bot: new(true), Active: new(true)})
		if err != nil {
			return nil, err
		}
		for _, b := range bots {
			if b.BotType != nil && *b.BotType == BotTypeGeneric {
				isEligible[b.ID] = true
			}
		}
	}
	var readers []storage.UserMessage
	for _, id := range uniqueSorted(mapKeys(isEligible)) {
		var flags int64
		if o.mentions.users[id] {
			flags |= storage.FlagMentioned
		}
		if o.mentions.topicParticipants[id] {
			flags |= storage.FlagTopicWildcardMentioned
		}
		if o.mentions.alerted[id] {
			flags |= storage.FlagHasAlertWord
		}
		if flags == 0 {
			continue
		}
		if m.StreamWildcard {
			flags |= storage.FlagStreamWildcardMentioned
		}
		readers = append(readers, storage.UserMessage{UserID: id, Flags: flags})
	}
	return readers, nil
}

// followWhereMentioned lists the mentioned human recipients for whom the
// send follows the topic, as they asked
// (automatically_follow_topics_where_mentioned), unless they muted or
// already follow it.
func (r reads) followWhereMentioned(ctx context.Context, o *outgoing, readers []storage.UserMessage) ([]int64, error) {
	var mentioned []int64
	for _, reader := range readers {
		if reader.Flags&storage.FlagMentioned != 0 {
			mentioned = append(mentioned, reader.UserID)
		}
	}
	if len(mentioned) == 0 {
		return nil, nil
	}
	users, err := r.st.FindUsers(ctx, o.realm.ID, storage.UserFilter{IDs: mentioned, Bot: new(false), Active: new(true)})
	if err != nil {
		return nil, err
	}
	var follow []int64
	for i := range users {
		u := &users[i]
		if !settingsOf(u).AutomaticallyFollowTopicsWhereMentioned {
			continue
		}
		policy, err := r.storedTopicPolicy(ctx, o.realm.ID, u.ID, o.channel.ID, o.msg.Topic)
		if err != nil {
			return nil, err
		}
		if policy == TopicPolicyMuted || policy == TopicPolicyFollowed {
			continue
		}
		follow = append(follow, u.ID)
	}
	return follow, nil
}

// mapKeys lists a map's keys, in no order.
func mapKeys[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
