package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// Principal names a user in subscription requests: a user ID (preferred)
// or an email.
type Principal struct {
	ID    int64
	Email string
}

// UnmarshalJSON reads an integer or a string.
func (p *Principal) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &p.ID); err == nil {
		return nil
	}
	if err := json.Unmarshal(b, &p.Email); err == nil {
		return nil
	}
	return BadRequest("principals is not a list of user IDs or emails")
}

// ChannelSpec is one channel to subscribe to: its name, and the
// description to give it if it is created.
type ChannelSpec struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
}

// SubscribeRequest is the input of Subscribe. The channel settings apply
// to channels the request creates.
type SubscribeRequest struct {
	Subscriptions []ChannelSpec `json:"subscriptions"`
	// Principals are the users to subscribe (default: the caller).
	Principals *[]Principal `json:"principals" union:"list[str]|list[int]"`
	// AuthorizationErrorsFatal (default true): one inaccessible channel
	// fails the whole request; false lists them in unauthorized instead.
	AuthorizationErrorsFatal   *bool              `json:"authorization_errors_fatal"`
	Announce                   *bool              `json:"announce"`
	InviteOnly                 *bool              `json:"invite_only"`
	IsWebPublic                *bool              `json:"is_web_public"`
	IsDefaultStream            *bool              `json:"is_default_stream"`
	HistoryPublicToSubscribers *bool              `json:"history_public_to_subscribers"`
	MessageRetentionDays       *RetentionDays     `json:"message_retention_days"`
	CanAddSubscribersGroup     *GroupSettingValue `json:"can_add_subscribers_group"`
	CanRemoveSubscribersGroup  *GroupSettingValue `json:"can_remove_subscribers_group"`
	CanAdministerChannelGroup  *GroupSettingValue `json:"can_administer_channel_group"`
	CanSendMessageGroup        *GroupSettingValue `json:"can_send_message_group"`
	CanSubscribeGroup          *GroupSettingValue `json:"can_subscribe_group"`
}

var subscribeSettingField = settingFields[*GroupSettingValue, SubscribeRequest](channelSettings)

// SubscribeResponse is the success body of Subscribe: channel names keyed
// by user ID (as a string).
type SubscribeResponse struct {
	Subscribed        map[string][]string `json:"subscribed"`
	AlreadySubscribed map[string][]string `json:"already_subscribed"`
	// Unauthorized lists inaccessible channels (only when
	// authorization_errors_fatal is false).
	Unauthorized []string `json:"unauthorized,omitempty"`
}

// subscriptionColors is the palette new subscriptions take colors from.
var subscriptionColors = []string{"#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd",
	"#addfe5", "#f5ce6e", "#c2726a", "#94c849", "#bd86e5", "#ee7e4a", "#a6dcbf", "#95a5fd", "#53a063"}

// maxPrincipals bounds the users one subscription request names.
const maxPrincipals = 10000

// resolvePrincipals turns principals into active users of the realm
// ("No such user" for anything else): duplicates are dropped first, and
// IDs are resolved with one query.
func (r reads) resolvePrincipals(ctx context.Context, cc *channelCtx, ps *[]Principal) ([]*storage.User, error) {
	if ps == nil {
		return []*storage.User{cc.me}, nil
	}
	if len(*ps) == 0 {
		return nil, BadRequest("principals cannot be empty")
	}
	var ids []int64
	var emails []string
	for _, p := range *ps {
		if p.Email != "" {
			emails = append(emails, storage.Fold(p.Email))
		} else {
			ids = append(ids, p.ID)
		}
	}
	ids = uniqueSorted(ids)
	slices.Sort(emails)
	emails = slices.Compact(emails)
	if len(ids)+len(emails) > maxPrincipals {
		return nil, BadRequest("Too many principals (limit: %d).", maxPrincipals)
	}
	var out []*storage.User
	if len(ids) > 0 {
		users, err := r.st.FindUsers(ctx, cc.realm.ID, storage.UserFilter{IDs: ids})
		if err != nil {
			return nil, r.s.internal(ctx, "principals", err)
		}
		if len(users) != len(ids) {
			return nil, errNoSuchUser
		}
		for i := range users {
			out = append(out, &users[i])
		}
	}
	for _, email := range emails {
		u, err := r.userByAPIOrRealEmail(ctx, cc.realm, cc.me, email)
		if errors.Is(err, storage.ErrNotFound) || errors.Is(err, errNoSuchUser) {
			return nil, errNoSuchUser
		} else if err != nil {
			return nil, r.s.internal(ctx, "principals", err)
		}
		if !slices.ContainsFunc(out, func(o *storage.User) bool { return o.ID == u.ID }) {
			out = append(out, u)
		}
	}
	for _, u := range out {
		if !u.IsActive {
			return nil, errNoSuchUser
		}
	}
	return out, nil
}

// canAddSubscribers: members (not guests; the reference's organization
// default for adding subscribers) may add others to channels they can
// see; so may members of a channel's can_add_subscribers_group and those
// who administer it.
func (cc *channelCtx) canAddSubscribers(c *storage.Stream) bool {
	return cc.me.Role <= RoleMember || cc.groups.in(c.CanAddSubscribersGroupID) || cc.canAdminister(c)
}

// canSubscribeSelf: public channels for members; private channels for
// their can_subscribe_group and administrators.
func (cc *channelCtx) canSubscribeSelf(c *storage.Stream) bool {
	if c.IsArchived {
		return false
	}
	if !c.InviteOnly && cc.me.Role != RoleGuest {
		return true
	}
	return cc.groups.in(c.CanSubscribeGroupID) || cc.canAdminister(c)
}

// Subscribe subscribes users to channels, creating those that do not
// exist. Members may create public and private channels, administrators
// web-public and default ones, owners set a retention period; guests create
// none. Subscribing other users takes the permission to add subscribers.
func (s *Service) Subscribe(ctx context.Context, c Caller, req SubscribeRequest) (*SubscribeResponse, error) {
	cc, err := s.reads().channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(req.Subscriptions) == 0 {
		return nil, BadRequest("Nothing to do: subscriptions is empty")
	}
	users, err := s.reads().resolvePrincipals(ctx, cc, req.Principals)
	if err != nil {
		return nil, err
	}
	others := len(users) > 1 || users[0].ID != cc.me.ID
	fatal := flag(req.AuthorizationErrorsFatal, true)
	resp := &SubscribeResponse{Subscribed: map[string][]string{}, AlreadySubscribed: map[string][]string{}}

	var names []string
	specs := map[string]ChannelSpec{}
	for _, spec := range req.Subscriptions {
		name, err := s.checkChannelName(spec.Name)
		if err != nil {
			return nil, err
		}
		if _, dup := specs[name]; !dup {
			names = append(names, name)
		}
		specs[name] = spec
	}
	// Names are looked up inside the transaction, under the realm's write
	// lock: concurrent requests that create the same channel see each
	// other's result instead of failing.
	err = s.write(ctx, cc.realm.ID, func(w *writeTx) error {
		resp.Subscribed, resp.AlreadySubscribed, resp.Unauthorized = map[string][]string{}, map[string][]string{}, nil
		colors := map[int64]int{}
		for _, name := range names {
			ch, err := w.GetStreamByName(ctx, cc.realm.ID, name)
			created := false
			switch {
			case err == nil:
				allowed := cc.canSee(ch) && !ch.IsArchived && (!others || cc.canAddSubscribers(ch)) &&
					(others || cc.subscribed[ch.ID] || cc.canSubscribeSelf(ch))
				if !allowed {
					if fatal {
						return refused("Unable to access channel (%s).", name)
					}
					resp.Unauthorized = append(resp.Unauthorized, name)
					continue
				}
			case errors.Is(err, storage.ErrNotFound):
				if ch, err = s.createChannel(ctx, w, cc, name, specs[name], req); err != nil {
					return err
				}
				created = true
			default:
				return err
			}
			var added []int64
			for _, u := range users {
				done, err := s.subscribeUser(ctx, w, u, ch, colors)
				if err != nil {
					return err
				}
				key := strconv.FormatInt(u.ID, 10)
				if done {
					resp.Subscribed[key] = append(resp.Subscribed[key], ch.Name)
					added = append(added, u.ID)
				} else {
					resp.AlreadySubscribed[key] = append(resp.AlreadySubscribed[key], ch.Name)
				}
			}
			if err := s.emitSubscribed(ctx, w, cc.groups, ch, created, added); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "subscribe", err)
	}
	return resp, nil
}

// createChannel creates a channel named by a subscription request, with
// the request's settings.
func (s *Service) createChannel(ctx context.Context, w *writeTx, cc *channelCtx, name string, spec ChannelSpec, req SubscribeRequest) (*storage.Stream, error) {
	ch, err := s.newChannel(cc, name, spec, req)
	if err != nil {
		return nil, err
	}
	for i, set := range channelSettings {
		id, err := w.reads().channelGroupSetting(ctx, cc, set, *subscribeSettingField[i](&req))
		if err != nil {
			return nil, err
		}
		*set.field(ch) = id
	}
	if err := w.CreateStream(ctx, ch); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			return nil, clash("Channel '%s' already exists", ch.Name)
		}
		return nil, err
	}
	return ch, nil
}

// emitSubscribed announces a new channel to those who may see it (its
// first subscribers among them), tells each new subscriber about their
// subscription, and everyone else who may see the channel's subscribers
// about the newcomers.
func (s *Service) emitSubscribed(ctx context.Context, w *writeTx, groups *groupScope, ch *storage.Stream, created bool, added []int64) error {
	if !created && len(added) == 0 {
		return nil
	}
	if err := groups.load(ctx, w, ch.RealmID, settingIDs(channelSettings, ch)...); err != nil {
		return err
	}
	view := s.channelView(groups, ch)
	aud := channelAudience(ch)
	if created {
		w.emit(aud, StreamEvent{Op: "create", Streams: []Channel{view}})
	}
	if len(added) == 0 {
		return nil
	}
	for _, id := range added {
		sub, err := w.GetSubscription(ctx, ch.RealmID, id, ch.ID)
		if err != nil {
			return err
		}
		w.emitChanging(toUsers(id), SubscriptionEvent{Op: "add", Subscriptions: []SubscriptionInfo{subscriptionInfo(view, sub)}},
			eventq.Change{Users: []int64{id}, Subscribed: []int64{ch.ID}})
	}
	aud.Except = added
	w.emit(aud, SubscriptionEvent{Op: "peer_add", StreamIDs: []int64{ch.ID}, UserIDs: added})
	return nil
}

// newChannel validates and prepares a channel the request creates.
func (s *Service) newChannel(cc *channelCtx, name string, spec ChannelSpec, req SubscribeRequest) (*storage.Stream, error) {
	if cc.me.Role == RoleGuest {
		return nil, errGuestNotAllowed
	}
	ch := &storage.Stream{RealmID: cc.realm.ID, Name: name, DateCreated: s.nowUnix(), CreatorID: &cc.me.ID,
		InviteOnly: flag(req.InviteOnly, false), IsWebPublic: flag(req.IsWebPublic, false), IsDefault: flag(req.IsDefaultStream, false)}
	if spec.Description != nil {
		d, err := s.checkChannelDescription(*spec.Description)
		if err != nil {
			return nil, err
		}
		ch.Description, ch.RenderedDescription = d, markdown.Render(d)
	}
	if (ch.IsWebPublic || ch.IsDefault) && !isAdmin(cc.me) {
		return nil, errAdminRequired
	}
	if ch.InviteOnly && (ch.IsWebPublic || ch.IsDefault) {
		return nil, BadRequest("A default or web-public channel cannot be private.")
	}
	ch.HistoryPublicToSubscribers = !ch.InviteOnly || flag(req.HistoryPublicToSubscribers, false)
	if req.MessageRetentionDays != nil {
		if cc.me.Role != RoleOwner {
			return nil, errOwnerRequired
		}
		ch.MessageRetentionDays = req.MessageRetentionDays.Days
	}
	return ch, nil
}

// subscribeUser subscribes u to ch; false means u already was. colors
// counts the user's subscriptions across calls of one request, so that
// they are listed once per user to pick the next color.
func (s *Service) subscribeUser(ctx context.Context, w *writeTx, u *storage.User, ch *storage.Stream, colors map[int64]int) (bool, error) {
	n, ok := colors[u.ID]
	if !ok {
		existing, err := w.ListUserSubscriptions(ctx, u.RealmID, u.ID)
		if err != nil {
			return false, err
		}
		n = len(existing)
	}
	sub := &storage.Subscription{RealmID: u.RealmID, UserID: u.ID, StreamID: ch.ID, Active: true,
		Color: subscriptionColors[n%len(subscriptionColors)]}
	// No message has been sent yet in any channel: the period starts at 0.
	if err := w.Subscribe(ctx, sub, s.nowUnix()); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			colors[u.ID] = n
			return false, nil
		}
		return false, err
	}
	colors[u.ID] = n + 1
	return true, nil
}

// UnsubscribeRequest is the input of Unsubscribe.
type UnsubscribeRequest struct {
	// Subscriptions are channel names.
	Subscriptions []string `json:"subscriptions"`
	// Principals are the users to unsubscribe (default: the caller).
	Principals *[]Principal `json:"principals" union:"list[str]|list[int]"`
}

// UnsubscribeResponse is the success body of Unsubscribe.
type UnsubscribeResponse struct {
	Removed    []string `json:"removed"`
	NotRemoved []string `json:"not_removed"`
}

// Unsubscribe removes users from channels (archived ones too). Others may
// be unsubscribed by administrators, by a bot's owner (the bot, from
// channels the owner can see), and by members of a channel's
// can_remove_subscribers_group who can see it.
func (s *Service) Unsubscribe(ctx context.Context, c Caller, req UnsubscribeRequest) (*UnsubscribeResponse, error) {
	cc, err := s.reads().channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	users, err := s.reads().resolvePrincipals(ctx, cc, req.Principals)
	if err != nil {
		return nil, err
	}
	channels, err := s.reads().channelsToLeave(ctx, cc, users, req.Subscriptions)
	if err != nil {
		return nil, err
	}
	resp := &UnsubscribeResponse{Removed: []string{}, NotRemoved: []string{}}
	err = s.write(ctx, cc.realm.ID, func(w *writeTx) error {
		resp.Removed, resp.NotRemoved = []string{}, []string{}
		for _, ch := range channels {
			var removed []int64
			for _, u := range users {
				err := w.Unsubscribe(ctx, cc.realm.ID, u.ID, ch.ID, s.nowUnix())
				switch {
				case errors.Is(err, storage.ErrNotFound):
					resp.NotRemoved = append(resp.NotRemoved, ch.Name)
				case err != nil:
					return err
				default:
					if err := leaveChannelRead(ctx, w, cc.realm.ID, u.ID, ch.ID); err != nil {
						return err
					}
					resp.Removed = append(resp.Removed, ch.Name)
					removed = append(removed, u.ID)
					w.emitChanging(toUsers(u.ID), SubscriptionEvent{Op: "remove", Removed: []channelNameRef{{ch.Name, ch.ID}}},
						eventq.Change{Users: []int64{u.ID}, Unsubscribed: []int64{ch.ID}})
				}
			}
			if len(removed) > 0 {
				aud := channelAudience(ch)
				aud.Except = removed
				w.emit(aud, SubscriptionEvent{Op: "peer_remove", StreamIDs: []int64{ch.ID}, UserIDs: removed})
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "unsubscribe", err)
	}
	return resp, nil
}

// channelsToLeave finds the named channels users are to leave, checking
// that the caller may remove each of them (other than themselves) from
// each: administrators may, a bot's owner may for the bot, and members
// of the channel's can_remove_subscribers_group.
func (r reads) channelsToLeave(ctx context.Context, cc *channelCtx, users []*storage.User, names []string) ([]*storage.Stream, error) {
	var channels []*storage.Stream
	for _, name := range names {
		ch, err := r.st.GetStreamByName(ctx, cc.realm.ID, strings.TrimSpace(name))
		if errors.Is(err, storage.ErrNotFound) || err == nil && !cc.canSee(ch) {
			return nil, noSuchChannelName(name)
		} else if err != nil {
			return nil, r.s.internal(ctx, "unsubscribe", err)
		}
		for _, u := range users {
			if u.ID == cc.me.ID {
				continue
			}
			ownBot := u.IsBot && u.BotOwnerID != nil && *u.BotOwnerID == cc.me.ID
			if !isAdmin(cc.me) && !ownBot && !cc.groups.in(ch.CanRemoveSubscribersGroupID) {
				return nil, errInsufficient
			}
		}
		channels = append(channels, ch)
	}
	return channels, nil
}

// SubscriptionInfo is one subscribed channel with the user's settings.
type SubscriptionInfo struct {
	Channel
	Subscribers            []int64 `json:"subscribers,omitempty"`
	Color                  string  `json:"color"`
	IsMuted                bool    `json:"is_muted"`
	InHomeView             bool    `json:"in_home_view"`
	PinToTop               bool    `json:"pin_to_top"`
	DesktopNotifications   *bool   `json:"desktop_notifications"`
	EmailNotifications     *bool   `json:"email_notifications"`
	PushNotifications      *bool   `json:"push_notifications"`
	AudibleNotifications   *bool   `json:"audible_notifications"`
	WildcardMentionsNotify *bool   `json:"wildcard_mentions_notify"`
}

// GetSubscriptionsRequest is the input of GetSubscriptions.
type GetSubscriptionsRequest struct {
	IncludeSubscribers *bool `json:"include_subscribers"`
}

// GetSubscriptionsResponse is the success body of GetSubscriptions.
type GetSubscriptionsResponse struct {
	Subscriptions []SubscriptionInfo `json:"subscriptions"`
}

// GetSubscriptions lists the caller's subscribed channels (archived ones
// included) with their personal settings.
func (s *Service) GetSubscriptions(ctx context.Context, c Caller, req GetSubscriptionsRequest) (*GetSubscriptionsResponse, error) {
	return s.reads().getSubscriptions(ctx, c, req)
}

// getSubscriptions is GetSubscriptions reading through r.
func (r reads) getSubscriptions(ctx context.Context, c Caller, req GetSubscriptionsRequest) (*GetSubscriptionsResponse, error) {
	cc, err := r.channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	subs, err := r.st.ListUserSubscriptions(ctx, cc.realm.ID, cc.me.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get subscriptions", err)
	}
	var ids []int64
	for _, sub := range subs {
		if sub.Active {
			ids = append(ids, sub.StreamID)
		}
	}
	channels, err := r.st.GetStreamsByID(ctx, cc.realm.ID, ids)
	if err != nil {
		return nil, r.s.internal(ctx, "get subscriptions", err)
	}
	byID := make(map[int64]*storage.Stream, len(channels))
	var shown []*storage.Stream
	for i := range channels {
		byID[channels[i].ID] = &channels[i]
		shown = append(shown, &channels[i])
	}
	var subscribers map[int64][]int64
	if flag(req.IncludeSubscribers, false) {
		rows, err := r.st.ListActiveSubscribers(ctx, cc.realm.ID, ids)
		if err != nil {
			return nil, r.s.internal(ctx, "get subscriptions", err)
		}
		subscribers = map[int64][]int64{}
		for _, sub := range rows {
			subscribers[sub.StreamID] = append(subscribers[sub.StreamID], sub.UserID)
		}
	}
	if err := cc.groups.load(ctx, r.st, cc.realm.ID, settingIDs(channelSettings, shown...)...); err != nil {
		return nil, r.s.internal(ctx, "get subscriptions", err)
	}
	resp := &GetSubscriptionsResponse{Subscriptions: []SubscriptionInfo{}}
	for i := range subs {
		ch := byID[subs[i].StreamID]
		if !subs[i].Active || ch == nil {
			continue
		}
		info := subscriptionInfo(r.s.channelView(cc.groups, ch), &subs[i])
		if subscribers != nil {
			info.Subscribers = nonNil(subscribers[ch.ID])
		}
		resp.Subscriptions = append(resp.Subscriptions, info)
	}
	// By name, in code-point order, as the reference lists them.
	slices.SortStableFunc(resp.Subscriptions, func(a, b SubscriptionInfo) int { return strings.Compare(a.Name, b.Name) })
	return resp, nil
}

// subscriptionInfo combines a channel's view with a user's subscription.
func subscriptionInfo(view Channel, sub *storage.Subscription) SubscriptionInfo {
	return SubscriptionInfo{Channel: view, Color: sub.Color,
		IsMuted: sub.IsMuted, InHomeView: !sub.IsMuted, PinToTop: sub.PinToTop,
		DesktopNotifications: sub.DesktopNotifications, EmailNotifications: sub.EmailNotifications,
		PushNotifications: sub.PushNotifications, AudibleNotifications: sub.AudibleNotifications,
		WildcardMentionsNotify: sub.WildcardMentionsNotify}
}

// SubscriptionProperty is one change of UpdateSubscriptionProperties.
type SubscriptionProperty struct {
	StreamID int64           `json:"stream_id"`
	Property string          `json:"property"`
	Value    json.RawMessage `json:"value"`
}

// UpdateSubscriptionPropertiesRequest is the input of UpdateSubscriptionProperties.
type UpdateSubscriptionPropertiesRequest struct {
	SubscriptionData []SubscriptionProperty `json:"subscription_data"`
}

var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// UpdateSubscriptionProperties changes personal settings of the caller's
// subscriptions: color (hex), is_muted (in_home_view is its legacy
// inverse), pin_to_top and the notification settings. The whole batch is
// checked first: one bad entry changes nothing.
func (s *Service) UpdateSubscriptionProperties(ctx context.Context, c Caller, req UpdateSubscriptionPropertiesRequest) (*EmptyResponse, error) {
	r := s.reads()
	cc, err := r.channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(req.SubscriptionData) == 0 {
		return nil, MissingArgument("subscription_data")
	}
	changed := map[int64]*storage.Subscription{}
	columns := map[int64][]string{}
	for i, p := range req.SubscriptionData {
		sub := changed[p.StreamID]
		if sub == nil {
			if sub, err = r.ownSubscription(ctx, cc, p.StreamID); err != nil {
				return nil, err
			}
			changed[p.StreamID] = sub
		}
		where := fmt.Sprintf("subscription_data[%d][\"value\"]", i)
		if len(p.Value) == 0 || string(p.Value) == "null" {
			return nil, BadRequest(`%s["bool"] is not a boolean`, where)
		}
		var b bool
		isBool := json.Unmarshal(p.Value, &b) == nil
		switch p.Property {
		case "color":
			var color string
			if json.Unmarshal(p.Value, &color) != nil || !hexColor.MatchString(color) {
				return nil, BadRequest("%s is not a valid hex color code", where)
			}
			sub.Color = color
			columns[p.StreamID] = append(columns[p.StreamID], "color")
			continue
		case "is_muted", "in_home_view", "pin_to_top", "desktop_notifications", "email_notifications",
			"push_notifications", "audible_notifications", "wildcard_mentions_notify":
			if !isBool {
				return nil, BadRequest("%s is not a boolean", where)
			}
		default:
			return nil, BadRequest("Unknown subscription property: %s", p.Property)
		}
		column := p.Property
		switch p.Property {
		case "is_muted":
			sub.IsMuted = b
		case "in_home_view":
			sub.IsMuted, column = !b, "is_muted"
		case "pin_to_top":
			sub.PinToTop = b
		case "desktop_notifications":
			sub.DesktopNotifications = &b
		case "email_notifications":
			sub.EmailNotifications = &b
		case "push_notifications":
			sub.PushNotifications = &b
		case "audible_notifications":
			sub.AudibleNotifications = &b
		case "wildcard_mentions_notify":
			sub.WildcardMentionsNotify = &b
		}
		columns[p.StreamID] = append(columns[p.StreamID], column)
	}
	err = s.write(ctx, cc.realm.ID, func(w *writeTx) error {
		for id, sub := range changed {
			if err := w.UpdateSubscription(ctx, sub, columns[id]...); err != nil {
				return err
			}
		}
		for _, p := range req.SubscriptionData {
			var value any
			if err := json.Unmarshal(p.Value, &value); err != nil {
				return err
			}
			ev := func(property string, value any) {
				w.emit(toUsers(cc.me.ID), SubscriptionEvent{Op: "update", StreamID: p.StreamID, Property: property, Value: value})
			}
			switch p.Property {
			case "is_muted", "in_home_view":
				// Either name sends both, as the reference does.
				muted := changed[p.StreamID].IsMuted
				ev("in_home_view", !muted)
				ev("is_muted", muted)
			default:
				ev(p.Property, value)
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "subscription properties", err)
	}
	return &EmptyResponse{}, nil
}

// ownSubscription is the caller's active subscription to a channel.
func (r reads) ownSubscription(ctx context.Context, cc *channelCtx, channelID int64) (*storage.Subscription, error) {
	sub, err := r.st.GetSubscription(ctx, cc.realm.ID, cc.me.ID, channelID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && !sub.Active {
		return nil, BadRequest("Not subscribed to channel ID %d", channelID)
	} else if err != nil {
		return nil, r.s.internal(ctx, "subscription properties", err)
	}
	return sub, nil
}

// subscribeToDefaultChannels subscribes a new account to the
// organization's default channels, with the subscription events.
func (s *Service) subscribeToDefaultChannels(ctx context.Context, w *writeTx, u *storage.User) error {
	channels, err := w.ListDefaultStreams(ctx, u.RealmID)
	if err != nil {
		return err
	}
	ids := make([]int64, len(channels))
	for i := range channels {
		ids[i] = channels[i].ID
	}
	return s.subscribeNewAccount(ctx, w, u, ids)
}

// subscribeNewAccount subscribes a new account to the channels that are
// not archived, telling it and those who may see the channels'
// subscribers.
func (s *Service) subscribeNewAccount(ctx context.Context, w *writeTx, u *storage.User, ids []int64) error {
	ids = uniqueSorted(ids)
	if len(ids) == 0 {
		return nil
	}
	channels, err := w.GetStreamsByID(ctx, u.RealmID, ids)
	if err != nil {
		return err
	}
	colors := map[int64]int{}
	scope := newGroupScope(nil)
	for i := range channels {
		ch := &channels[i]
		if ch.IsArchived {
			continue
		}
		added, err := s.subscribeUser(ctx, w, u, ch, colors)
		if err != nil {
			return err
		}
		if added {
			if err := s.emitSubscribed(ctx, w, scope, ch, false, []int64{u.ID}); err != nil {
				return err
			}
		}
	}
	return nil
}
