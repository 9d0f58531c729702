package chat

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// channelSettings are the permission settings of channels, with the
// reference's defaults for new channels ("" is the creator alone).
var channelSettings = []settingDescriptor[storage.Stream]{
	newSetting[storage.Stream]("can_add_subscribers_group", GroupNobody, GroupInternet, GroupEveryone),
	newSetting[storage.Stream]("can_remove_subscribers_group", GroupAdministrators, GroupInternet),
	newSetting[storage.Stream]("can_administer_channel_group", "", GroupInternet, GroupEveryone),
	newSetting[storage.Stream]("can_send_message_group", GroupEveryone, GroupInternet),
	newSetting[storage.Stream]("can_subscribe_group", GroupNobody, GroupInternet, GroupEveryone),
}

var (
	channelViewField   = settingFields[GroupSettingValue, Channel](channelSettings)
	channelUpdateField = settingFields[*GroupSettingUpdate, UpdateChannelRequest](channelSettings)
)

// Channel is a channel as GET /streams shows it.
type Channel struct {
	StreamID                   int64             `json:"stream_id"`
	Name                       string            `json:"name"`
	Description                string            `json:"description"`
	RenderedDescription        string            `json:"rendered_description"`
	DateCreated                int64             `json:"date_created"`
	CreatorID                  *int64            `json:"creator_id"`
	InviteOnly                 bool              `json:"invite_only"`
	IsWebPublic                bool              `json:"is_web_public"`
	StreamPostPolicy           int               `json:"stream_post_policy"`
	MessageRetentionDays       *int              `json:"message_retention_days"`
	HistoryPublicToSubscribers bool              `json:"history_public_to_subscribers"`
	FirstMessageID             *int64            `json:"first_message_id"`
	IsRecentlyActive           bool              `json:"is_recently_active"`
	IsAnnouncementOnly         bool              `json:"is_announcement_only"`
	StreamWeeklyTraffic        *int              `json:"stream_weekly_traffic"`
	IsArchived                 bool              `json:"is_archived"`
	CanAddSubscribersGroup     GroupSettingValue `json:"can_add_subscribers_group"`
	CanRemoveSubscribersGroup  GroupSettingValue `json:"can_remove_subscribers_group"`
	CanAdministerChannelGroup  GroupSettingValue `json:"can_administer_channel_group"`
	CanSendMessageGroup        GroupSettingValue `json:"can_send_message_group"`
	CanSubscribeGroup          GroupSettingValue `json:"can_subscribe_group"`
	// IsDefault is set in GET /streams listings only.
	IsDefault *bool `json:"is_default,omitempty"`
}

const week = 7 * 24 * 3600

// channelView formats a channel whose settings' groups g has loaded. The
// traffic fields follow the reference: a channel younger than a week has
// no weekly traffic yet, and counts as recently active.
func (s *Service) channelView(g *groupScope, c *storage.Stream) Channel {
	young := s.nowUnix()-c.DateCreated < week
	v := Channel{StreamID: c.ID, Name: c.Name, Description: c.Description, RenderedDescription: c.RenderedDescription,
		DateCreated: c.DateCreated, CreatorID: c.CreatorID, InviteOnly: c.InviteOnly, IsWebPublic: c.IsWebPublic,
		MessageRetentionDays: c.MessageRetentionDays, HistoryPublicToSubscribers: c.HistoryPublicToSubscribers,
		FirstMessageID: c.FirstMessageID, IsRecentlyActive: young, IsArchived: c.IsArchived}
	if !young {
		zero := 0 // no messages yet: nothing was sent this week
		v.StreamWeeklyTraffic = &zero
	}
	for i, set := range channelSettings {
		*channelViewField[i](&v) = g.value(*set.field(c))
	}
	v.StreamPostPolicy = postPolicy(g.systemName(c.CanSendMessageGroupID))
	v.IsAnnouncementOnly = v.StreamPostPolicy == 2
	return v
}

// postPolicy is the deprecated stream_post_policy matching who may post.
func postPolicy(systemGroup string) int {
	switch systemGroup {
	case GroupAdministrators:
		return 2
	case GroupFullMembers:
		return 3
	case GroupModerators:
		return 4
	}
	return 1
}

// channelCtx is what access decisions about channels need: the caller,
// the groups they are in and their active subscriptions. Its cost follows
// the caller's memberships, not the organization.
type channelCtx struct {
	me         *storage.User
	realm      *storage.Realm
	groups     *groupScope
	subscribed map[int64]bool
}

func (r reads) loadChannelCtx(ctx context.Context, me *storage.User, realm *storage.Realm) (*channelCtx, error) {
	groups, err := r.callerScope(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, err
	}
	subs, err := r.st.ListUserSubscriptions(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, err
	}
	cc := &channelCtx{me: me, realm: realm, groups: groups, subscribed: map[int64]bool{}}
	for _, sub := range subs {
		if sub.Active {
			cc.subscribed[sub.StreamID] = true
		}
	}
	return cc, nil
}

// canAdminister: organization administrators and members of the channel's
// can_administer_channel_group.
func (cc *channelCtx) canAdminister(c *storage.Stream) bool {
	return isAdmin(cc.me) || cc.groups.in(c.CanAdministerChannelGroupID)
}

// canSee reports whether the caller may know the channel exists: public
// channels for members, private ones for subscribers and those who
// administer them; guests only channels they are subscribed to.
func (cc *channelCtx) canSee(c *storage.Stream) bool {
	if cc.subscribed[c.ID] {
		return true
	}
	if cc.me.Role == RoleGuest {
		return false
	}
	// A private channel's metadata is open to those who may administer
	// it, add subscribers to it or subscribe to it (the reference's
	// metadata groups).
	return !c.InviteOnly || cc.canAdminister(c) ||
		cc.groups.in(c.CanAddSubscribersGroupID) || cc.groups.in(c.CanSubscribeGroupID)
}

var errInvalidChannelID = noSuch("Invalid channel ID")

// visibleChannel loads a channel the caller may see; any other is answered
// like a channel that does not exist.
func (r reads) visibleChannel(ctx context.Context, cc *channelCtx, id int64) (*storage.Stream, error) {
	c, err := r.st.GetStream(ctx, cc.realm.ID, id)
	if errors.Is(err, storage.ErrNotFound) || err == nil && !cc.canSee(c) {
		return nil, errInvalidChannelID
	} else if err != nil {
		return nil, r.s.internal(ctx, "load channel", err)
	}
	return c, nil
}

// channelCaller loads the caller and their channel context.
func (r reads) channelCaller(ctx context.Context, c Caller) (*channelCtx, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	cc, err := r.loadChannelCtx(ctx, me, realm)
	if err != nil {
		return nil, r.s.internal(ctx, "load channels", err)
	}
	return cc, nil
}

// checkChannelName applies the channel name rules (facts §7).
func (s *Service) checkChannelName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", BadRequest("Channel name can't be empty.")
	}
	if utf8.RuneCountInString(name) > s.limits.MaxStreamNameLength {
		return "", BadRequest("Channel name too long (limit: %d characters).", s.limits.MaxStreamNameLength)
	}
	for i, r := range []rune(name) {
		if unicode.IsControl(r) || r == '\ufffe' || r == '\uffff' {
			return "", BadRequest("Invalid character in channel name, at position %d.", i+1)
		}
	}
	return name, nil
}

func (s *Service) checkChannelDescription(d string) (string, error) {
	d = strings.ReplaceAll(d, "\n", " ")
	if utf8.RuneCountInString(d) > s.limits.MaxStreamDescLength {
		return "", BadRequest("description is too long (limit: %d characters)", s.limits.MaxStreamDescLength)
	}
	return d, nil
}

// GetChannelsRequest is the input of GetChannels.
type GetChannelsRequest struct {
	IncludePublic           *bool `json:"include_public"`
	IncludeWebPublic        *bool `json:"include_web_public"`
	IncludeSubscribed       *bool `json:"include_subscribed"`
	ExcludeArchived         *bool `json:"exclude_archived"`
	IncludeAll              *bool `json:"include_all"`
	IncludeAllActive        *bool `json:"include_all_active"`
	IncludeDefault          *bool `json:"include_default"`
	IncludeOwnerSubscribed  *bool `json:"include_owner_subscribed"`
	IncludeCanAccessContent *bool `json:"include_can_access_content"`
}

// GetChannelsResponse is the success body of GetChannels.
type GetChannelsResponse struct {
	Streams []Channel `json:"streams"`
}

func flag(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// GetChannels lists channels: by default the public ones (for members) and
// the caller's subscriptions, without archived channels. include_all (or
// the deprecated include_all_active) lists every channel the caller may
// see; organization administrators then see private channels too.
func (s *Service) GetChannels(ctx context.Context, c Caller, req GetChannelsRequest) (*GetChannelsResponse, error) {
	return s.reads().getChannels(ctx, c, req)
}

// getChannels is GetChannels reading through r.
func (r reads) getChannels(ctx context.Context, c Caller, req GetChannelsRequest) (*GetChannelsResponse, error) {
	cc, err := r.channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	all, err := r.st.ListStreams(ctx, cc.realm.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get channels", err)
	}
	includeAll := flag(req.IncludeAll, false) || flag(req.IncludeAllActive, false)
	if includeAll && cc.me.Role == RoleGuest {
		return nil, refused("User not authorized for this query")
	}
	// A bot may ask for the channels its owner is subscribed to: it acts
	// for its owner, who may see them.
	ownerSubscribed := map[int64]bool{}
	if cc.me.IsBot && cc.me.BotOwnerID != nil && flag(req.IncludeOwnerSubscribed, false) && !includeAll {
		subs, err := r.st.ListUserSubscriptions(ctx, cc.realm.ID, *cc.me.BotOwnerID)
		if err != nil {
			return nil, r.s.internal(ctx, "get channels", err)
		}
		for _, sub := range subs {
			ownerSubscribed[sub.StreamID] = sub.Active
		}
	}
	var shown []*storage.Stream
	for i := range all {
		ch := &all[i]
		if !cc.canSee(ch) && !ownerSubscribed[ch.ID] || ch.IsArchived && flag(req.ExcludeArchived, true) {
			continue
		}
		include := includeAll || ownerSubscribed[ch.ID] ||
			flag(req.IncludePublic, true) && !ch.InviteOnly && cc.me.Role != RoleGuest ||
			flag(req.IncludeWebPublic, false) && ch.IsWebPublic ||
			flag(req.IncludeSubscribed, true) && cc.subscribed[ch.ID] ||
			flag(req.IncludeDefault, false) && ch.IsDefault ||
			flag(req.IncludeCanAccessContent, false) && (cc.subscribed[ch.ID] || !ch.InviteOnly && cc.me.Role != RoleGuest)
		if include {
			shown = append(shown, ch)
		}
	}
	if err := cc.groups.load(ctx, r.st, cc.realm.ID, settingIDs(channelSettings, shown...)...); err != nil {
		return nil, r.s.internal(ctx, "get channels", err)
	}
	// By name, in code-point order, as the reference lists them.
	slices.SortStableFunc(shown, func(a, b *storage.Stream) int { return strings.Compare(a.Name, b.Name) })
	resp := &GetChannelsResponse{Streams: make([]Channel, 0, len(shown))}
	for _, ch := range shown {
		v := r.s.channelView(cc.groups, ch)
		isDefault := ch.IsDefault
		v.IsDefault = &isDefault
		resp.Streams = append(resp.Streams, v)
	}
	return resp, nil
}

// GetChannelRequest is the input of GetChannel.
type GetChannelRequest struct {
	StreamID int64 `json:"stream_id"`
}

// GetChannelResponse is the success body of GetChannel.
type GetChannelResponse struct {
	Stream Channel `json:"stream"`
}

// GetChannel returns one channel the caller may see ("Invalid channel ID"
// for any other, existing or not).
func (s *Service) GetChannel(ctx context.Context, c Caller, req GetChannelRequest) (*GetChannelResponse, error) {
	return s.reads().getChannel(ctx, c, req)
}

// getChannel is GetChannel reading through r.
func (r reads) getChannel(ctx context.Context, c Caller, req GetChannelRequest) (*GetChannelResponse, error) {
	cc, err := r.channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	ch, err := r.visibleChannel(ctx, cc, req.StreamID)
	if err != nil {
		return nil, err
	}
	if err := cc.groups.load(ctx, r.st, cc.realm.ID, settingIDs(channelSettings, ch)...); err != nil {
		return nil, r.s.internal(ctx, "get channel", err)
	}
	return &GetChannelResponse{Stream: r.s.channelView(cc.groups, ch)}, nil
}

// GetChannelIDRequest is the input of GetChannelID.
type GetChannelIDRequest struct {
	Stream string `json:"stream"`
}

// GetChannelIDResponse is the success body of GetChannelID.
type GetChannelIDResponse struct {
	StreamID int64 `json:"stream_id"`
}

// GetChannelID finds a visible channel by name, case-insensitively.
func (s *Service) GetChannelID(ctx context.Context, c Caller, req GetChannelIDRequest) (*GetChannelIDResponse, error) {
	return s.reads().getChannelID(ctx, c, req)
}

// getChannelID is GetChannelID reading through r.
func (r reads) getChannelID(ctx context.Context, c Caller, req GetChannelIDRequest) (*GetChannelIDResponse, error) {
	cc, err := r.channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	ch, err := r.st.GetStreamByName(ctx, cc.realm.ID, strings.TrimSpace(req.Stream))
	if errors.Is(err, storage.ErrNotFound) || err == nil && !cc.canSee(ch) {
		return nil, noSuch("Invalid channel name '%s'", req.Stream)
	} else if err != nil {
		return nil, r.s.internal(ctx, "get channel id", err)
	}
	return &GetChannelIDResponse{StreamID: ch.ID}, nil
}

// RetentionDays is a channel's message_retention_days parameter: a number
// of days, "unlimited" (-1 internally) or "realm_default" (nil).
type RetentionDays struct {
	Days *int
}

// UnmarshalJSON reads a positive integer, "unlimited" or "realm_default".
func (r *RetentionDays) UnmarshalJSON(b []byte) error {
	var word string
	if err := json.Unmarshal(b, &word); err == nil {
		switch word {
		case "unlimited":
			v := -1
			r.Days = &v
			return nil
		case "realm_default":
			r.Days = nil
			return nil
		}
		return badValue("message_retention_days", word)
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil || n <= 0 {
		return badValue("message_retention_days", string(b))
	}
	r.Days = &n
	return nil
}

// UpdateChannelRequest is the input of UpdateChannel.
type UpdateChannelRequest struct {
	StreamID                   int64               `json:"stream_id"`
	Description                *string             `json:"description"`
	NewName                    *string             `json:"new_name"`
	IsPrivate                  *bool               `json:"is_private"`
	IsWebPublic                *bool               `json:"is_web_public"`
	HistoryPublicToSubscribers *bool               `json:"history_public_to_subscribers"`
	IsDefaultStream            *bool               `json:"is_default_stream"`
	MessageRetentionDays       *RetentionDays      `json:"message_retention_days"`
	CanAddSubscribersGroup     *GroupSettingUpdate `json:"can_add_subscribers_group"`
	CanRemoveSubscribersGroup  *GroupSettingUpdate `json:"can_remove_subscribers_group"`
	CanAdministerChannelGroup  *GroupSettingUpdate `json:"can_administer_channel_group"`
	CanSendMessageGroup        *GroupSettingUpdate `json:"can_send_message_group"`
	CanSubscribeGroup          *GroupSettingUpdate `json:"can_subscribe_group"`
}

var errCannotAdminister = refused("You do not have permission to administer this channel.")

// UpdateChannel changes a channel's name, description, privacy, default
// status, retention or permissions. Organization administrators and members
// of its can_administer_channel_group may; the default status takes an
// administrator and retention an owner. Everything is checked first.
func (s *Service) UpdateChannel(ctx context.Context, c Caller, req UpdateChannelRequest) (*EmptyResponse, error) {
	cc, err := s.reads().channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	ch, err := s.reads().visibleChannel(ctx, cc, req.StreamID)
	if err != nil {
		return nil, err
	}
	if !cc.canAdminister(ch) {
		return nil, errCannotAdminister
	}
	next := *ch
	var columns []string
	if req.NewName != nil {
		name, err := s.checkChannelName(*req.NewName)
		if err != nil {
			return nil, err
		}
		next.Name, columns = name, append(columns, "name")
	}
	if req.Description != nil {
		d, err := s.checkChannelDescription(*req.Description)
		if err != nil {
			return nil, err
		}
		next.Description, next.RenderedDescription = d, markdown.Render(d)
		columns = append(columns, "description", "rendered_description")
	}
	if req.IsPrivate != nil {
		next.InviteOnly, columns = *req.IsPrivate, append(columns, "invite_only")
		if next.InviteOnly && req.HistoryPublicToSubscribers == nil && !ch.InviteOnly {
			next.HistoryPublicToSubscribers = false
			columns = append(columns, "history_public_to_subscribers")
		}
	}
	if req.HistoryPublicToSubscribers != nil {
		next.HistoryPublicToSubscribers, columns = *req.HistoryPublicToSubscribers, append(columns, "history_public_to_subscribers")
	}
	if req.IsWebPublic != nil {
		if *req.IsWebPublic && !isAdmin(cc.me) {
			return nil, errAdminRequired
		}
		next.IsWebPublic, columns = *req.IsWebPublic, append(columns, "is_web_public")
	}
	if !next.InviteOnly {
		next.HistoryPublicToSubscribers = true // public channels always share history
	}
	if next.InviteOnly && next.IsWebPublic {
		return nil, BadRequest("A web-public channel cannot be private.")
	}
	if req.IsDefaultStream != nil {
		if !isAdmin(cc.me) {
			return nil, errAdminRequired
		}
		next.IsDefault, columns = *req.IsDefaultStream, append(columns, "is_default")
	}
	if next.IsDefault && next.InviteOnly {
		return nil, BadRequest("A default channel cannot be private.")
	}
	if req.MessageRetentionDays != nil {
		if cc.me.Role != RoleOwner {
			return nil, errOwnerRequired
		}
		next.MessageRetentionDays, columns = req.MessageRetentionDays.Days, append(columns, "message_retention_days")
	}
	err = s.write(ctx, cc.realm.ID, func(w *writeTx) error {
		if err := cc.groups.load(ctx, w, cc.realm.ID, settingIDs(channelSettings, ch)...); err != nil {
			return err
		}
		for i, set := range channelSettings {
			up := *channelUpdateField[i](&req)
			if up == nil {
				continue
			}
			id, err := w.reads().updateGroupSetting(ctx, cc.realm.ID, set.name, cc.groups.value(*set.field(ch)), up, func(v GroupSettingValue) (int64, error) {
				return w.reads().channelGroupSetting(ctx, cc, set, &v)
			})
			if err != nil {
				return err
			}
			*set.field(&next) = id
			columns = append(columns, set.column())
		}
		if len(columns) == 0 {
			return nil
		}
		columns = append(columns, "history_public_to_subscribers")
		err := w.UpdateStream(ctx, &next, slices.Compact(sortedCopy(columns))...)
		if errors.Is(err, storage.ErrConflict) {
			return clash("Channel '%s' already exists", next.Name)
		} else if err != nil {
			return err
		}
		return s.emitChannelUpdates(ctx, w, cc.groups, ch, &next)
	})
	if err != nil {
		return nil, s.internal(ctx, "update channel", err)
	}
	return &EmptyResponse{}, nil
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// channelAudience is who may see a channel's metadata: for a web-public
// channel everyone, for a public one every member and its subscribers
// (guests among them), for a private one its subscribers, the
// organization's administrators and the members (not guests) of its
// metadata groups. It reads nothing: subscribers and group members are
// resolved on delivery.
func channelAudience(ch *storage.Stream) Audience {
	var aud Audience
	switch {
	case ch.IsWebPublic:
		aud = everyone
	case ch.InviteOnly:
		aud = admins
		aud.Groups = []int64{ch.CanAdministerChannelGroupID, ch.CanAddSubscribersGroupID, ch.CanSubscribeGroupID}
	default:
		aud = members
	}
	aud.Subscribers = []int64{ch.ID}
	return aud
}

// emitChannelUpdates emits one stream update event per changed property,
// as the reference does, to those who may see the channel (before or
// after the change).
func (s *Service) emitChannelUpdates(ctx context.Context, w *writeTx, groups *groupScope, old, next *storage.Stream) error {
	aud := channelAudience(next)
	if prev := channelAudience(old); len(prev.Roles) > len(aud.Roles) {
		aud.Roles = prev.Roles
	}
	ev := func(property string, value any) StreamEvent {
		return StreamEvent{Op: "update", StreamID: next.ID, Name: old.Name, Property: property, Value: value}
	}
	if next.Name != old.Name {
		w.emit(aud, ev("name", next.Name))
	}
	if next.Description != old.Description {
		e := ev("description", next.Description)
		e.RenderedDescription = &next.RenderedDescription
		w.emit(aud, e)
	}
	// One invite_only event covers the three privacy settings, as the
	// reference sends it.
	if next.InviteOnly != old.InviteOnly || next.HistoryPublicToSubscribers != old.HistoryPublicToSubscribers ||
		next.IsWebPublic != old.IsWebPublic {
		e := ev("invite_only", next.InviteOnly)
		e.HistoryPublicToSubscribers, e.IsWebPublic = &next.HistoryPublicToSubscribers, &next.IsWebPublic
		w.emit(aud, e)
	}
	if !equalPtr(next.MessageRetentionDays, old.MessageRetentionDays) {
		w.emit(aud, ev("message_retention_days", next.MessageRetentionDays))
	}
	for _, set := range channelSettings {
		if id := *set.field(next); id != *set.field(old) {
			if err := groups.load(ctx, w, next.RealmID, id); err != nil {
				return err
			}
			w.emit(aud, ev(set.name, groups.value(id)))
		}
	}
	return nil
}

func equalPtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// channelGroupSetting stores a channel permission value (or its default).
func (r reads) channelGroupSetting(ctx context.Context, cc *channelCtx, set settingDescriptor[storage.Stream], v *GroupSettingValue) (int64, error) {
	if v != nil {
		c, err := r.collapse(ctx, cc.realm.ID, *v)
		if err != nil {
			return 0, err
		}
		v = &c
	}
	if v == nil {
		if set.def == "" {
			v = &GroupSettingValue{DirectMembers: []int64{cc.me.ID}, DirectSubgroups: []int64{}}
		} else {
			id, err := r.systemGroupID(ctx, cc.realm.ID, set.def)
			if err != nil {
				return 0, err
			}
			v = &GroupSettingValue{GroupID: &id}
		}
	}
	if v.GroupID != nil {
		if err := cc.groups.load(ctx, r.st, cc.realm.ID, *v.GroupID); err != nil {
			return 0, err
		}
		if err := set.checkAllowed(cc.groups, *v); err != nil {
			return 0, err
		}
	}
	return r.s.storeGroupSetting(ctx, r.st, cc.realm.ID, set.name, *v)
}

// ArchiveChannelRequest is the input of ArchiveChannel.
type ArchiveChannelRequest struct {
	StreamID int64 `json:"stream_id"`
}

// ArchiveChannel archives a channel (DELETE /streams/{id}). Its
// subscriptions are kept and can still be changed. Administrators and
// members of can_administer_channel_group may.
func (s *Service) ArchiveChannel(ctx context.Context, c Caller, req ArchiveChannelRequest) (*EmptyResponse, error) {
	cc, err := s.reads().channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	ch, err := s.reads().visibleChannel(ctx, cc, req.StreamID)
	if err != nil {
		return nil, err
	}
	if !cc.canAdminister(ch) {
		return nil, errCannotAdminister
	}
	if ch.IsArchived {
		return nil, clash("Channel is already archived.")
	}
	err = s.write(ctx, cc.realm.ID, func(w *writeTx) error {
		ch.IsArchived, ch.IsDefault = true, false
		if err := w.UpdateStream(ctx, ch, "is_archived", "is_default"); err != nil {
			return err
		}
		w.emitChanging(channelAudience(ch), StreamEvent{Op: "delete", Deleted: []streamRef{{ch.ID}}, StreamIDs: []int64{ch.ID}},
			eventq.Change{DeletedChannels: []int64{ch.ID}})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "archive channel", err)
	}
	return &EmptyResponse{}, nil
}
