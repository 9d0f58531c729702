package chat

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/teamchat/chat/storage"
)

// Statuses: a user's status text and emoji, and "away" (the deprecated
// inverse of their presence_enabled setting).

// maxStatusTextLength is the reference's limit on status_text.
const maxStatusTextLength = 60

// UserStatusView is a user's status as clients see it: every field is
// absent when not set.
type UserStatusView struct {
	Away         bool   `json:"away,omitempty"`
	StatusText   string `json:"status_text,omitempty"`
	EmojiName    string `json:"emoji_name,omitempty"`
	EmojiCode    string `json:"emoji_code,omitempty"`
	ReactionType string `json:"reaction_type,omitempty"`
}

// statusView formats a stored status (nil: none) with the user's away.
func statusView(st *storage.UserStatus, u *storage.User) UserStatusView {
	if st == nil {
		return UserStatusView{}
	}
	v := UserStatusView{Away: !settingsOf(u).PresenceEnabled, StatusText: st.StatusText}
	if st.EmojiName != "" {
		v.EmojiName, v.EmojiCode, v.ReactionType = st.EmojiName, st.EmojiCode, st.ReactionType
	}
	return v
}

// GetUserStatusRequest is the input of GetUserStatus
// (GET /users/{user_id}/status).
type GetUserStatusRequest struct {
	UserID int64 `json:"user_id"`
}

// GetUserStatusResponse is the success body of GetUserStatus.
type GetUserStatusResponse struct {
	Status UserStatusView `json:"status"`
}

// GetUserStatus returns a user's status (empty when they never set one).
func (s *Service) GetUserStatus(ctx context.Context, c Caller, req GetUserStatusRequest) (*GetUserStatusResponse, error) {
	return s.reads().getUserStatus(ctx, c, req)
}

// getUserStatus is GetUserStatus reading through r.
func (r reads) getUserStatus(ctx context.Context, c Caller, req GetUserStatusRequest) (*GetUserStatusResponse, error) {
	_, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	target, err := r.st.GetUser(ctx, realm.ID, req.UserID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && !target.IsActive {
		return nil, noSuch("No such user")
	}
	if err != nil {
		return nil, r.s.internal(ctx, "get user status", err)
	}
	st, err := r.st.GetUserStatus(ctx, realm.ID, target.ID)
	if errors.Is(err, storage.ErrNotFound) {
		st, err = nil, nil
	}
	if err != nil {
		return nil, r.s.internal(ctx, "get user status", err)
	}
	return &GetUserStatusResponse{Status: statusView(st, target)}, nil
}

// UpdateStatusRequest is the input of UpdateStatus (POST /users/me/status).
// At least one of Away, StatusText and EmojiName must be given.
type UpdateStatusRequest struct {
	// Away (deprecated) sets the presence_enabled setting to its inverse.
	Away *bool `json:"away"`
	// StatusText (at most 60 characters after trimming; "" clears it).
	StatusText *string `json:"status_text"`
	// EmojiName ("" clears the emoji); EmojiCode and ReactionType default
	// to what the name means now.
	EmojiName    *string `json:"emoji_name"`
	EmojiCode    *string `json:"emoji_code"`
	ReactionType *string `json:"reaction_type"`
}

// UserStatusEvent tells everyone a user's status changed: it carries only
// the fields the change set.
type UserStatusEvent struct {
	UserID       int64   `json:"user_id"`
	Away         *bool   `json:"away,omitempty"`
	StatusText   *string `json:"status_text,omitempty"`
	EmojiName    *string `json:"emoji_name,omitempty"`
	EmojiCode    *string `json:"emoji_code,omitempty"`
	ReactionType *string `json:"reaction_type,omitempty"`
}

func (UserStatusEvent) EventType() string { return "user_status" }

// UpdateStatus sets the caller's status; bots have none.
func (s *Service) UpdateStatus(ctx context.Context, c Caller, req UpdateStatusRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if me.IsBot {
		return nil, errBotRequest
	}
	if req.StatusText != nil {
		text := strings.TrimSpace(*req.StatusText)
		if utf8.RuneCountInString(text) > maxStatusTextLength {
			return nil, BadRequest("status_text is too long (limit: %d characters)", maxStatusTextLength)
		}
		req.StatusText = &text
	}
	if req.Away == nil && req.StatusText == nil && req.EmojiName == nil {
		return nil, BadRequest("Client did not pass any new values.")
	}
	var code, typ string
	switch {
	case req.EmojiName != nil && *req.EmojiName == "":
		code, typ = "", ReactionUnicode
	case req.EmojiName != nil:
		name := *req.EmojiName
		if req.EmojiCode == nil || req.ReactionType == nil {
			defCode, defType, err := s.reads().emojiByName(ctx, realm.ID, name)
			if err != nil {
				return nil, s.internal(ctx, "update status", err)
			}
			code, typ = defCode, defType
		}
		if req.EmojiCode != nil {
			code = *req.EmojiCode
		}
		if req.ReactionType != nil {
			typ = requestedType(*req.ReactionType)
		}
		if err := s.reads().checkEmoji(ctx, realm.ID, name, code, typ); err != nil {
			return nil, s.internal(ctx, "update status", err)
		}
	case ptrValue(req.EmojiCode) != "" || ptrValue(req.ReactionType) != "":
		return nil, BadRequest("Client must pass emoji_name if they pass either emoji_code or reaction_type.")
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		fresh, err := w.GetUser(ctx, realm.ID, me.ID)
		if err != nil {
			return err
		}
		ev := UserStatusEvent{UserID: me.ID, Away: req.Away, StatusText: req.StatusText}
		settingChanged := false
		if req.Away != nil {
			before := settingsOf(fresh)
			after := before
			after.PresenceEnabled = !*req.Away
			if after != before {
				settingChanged = true
				next := *fresh
				next.Settings = encodeSettings(after)
				if err := w.UpdateUser(ctx, &next, "settings"); err != nil {
					return err
				}
				emitSettingsChanges(w, realm, fresh, &next, before, after)
				if err := s.presenceEnabledChanged(ctx, w, realm, &next, after.PresenceEnabled); err != nil {
					return err
				}
			}
		}
		if !settingChanged {
			w.keepCallers() // only the status changes
		}
		st, err := w.GetUserStatus(ctx, realm.ID, me.ID)
		if errors.Is(err, storage.ErrNotFound) {
			st, err = &storage.UserStatus{RealmID: realm.ID, UserID: me.ID, ReactionType: ReactionUnicode}, nil
		}
		if err != nil {
			return err
		}
		if req.StatusText != nil {
			st.StatusText = *req.StatusText
		}
		if req.EmojiName != nil {
			st.EmojiName, st.EmojiCode, st.ReactionType = *req.EmojiName, code, typ
			ev.EmojiName, ev.EmojiCode, ev.ReactionType = req.EmojiName, &code, &typ
		}
		st.UpdatedAt = s.nowUnix()
		if err := w.SetUserStatus(ctx, st); err != nil {
			return err
		}
		w.emit(everyone, ev)
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "update status", err)
	}
	return &EmptyResponse{}, nil
}

// userStatuses is the user_status state of registration: the statuses of
// active users that say something (a text, an emoji, or away), by user ID.
func (r reads) userStatuses(ctx context.Context, realmID int64) (map[string]UserStatusView, error) {
	rows, err := r.st.ListUserStatuses(ctx, realmID)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(rows))
	for i := range rows {
		ids[i] = rows[i].UserID
	}
	users, err := r.st.FindUsers(ctx, realmID, storage.UserFilter{IDs: nonNil(ids)})
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*storage.User, len(users))
	for i := range users {
		byID[users[i].ID] = &users[i]
	}
	out := map[string]UserStatusView{}
	for i := range rows {
		u := byID[rows[i].UserID]
		if u == nil {
			continue
		}
		if v := statusView(&rows[i], u); v != (UserStatusView{}) {
			out[strconv.FormatInt(u.ID, 10)] = v
		}
	}
	return out, nil
}

// Presence: who is here. Clients report every minute whether their user
// is active; the reports feed each user's last-active and last-connected
// times (see presence_buffer.go for how they are stored), which clients
// fetch in the modern form (by user ID) or the legacy one (by email).

// ModernPresence is a user's presence in the modern form.
type ModernPresence struct {
	ActiveTimestamp int64 `json:"active_timestamp"`
	IdleTimestamp   int64 `json:"idle_timestamp"`
}

// LegacyPresence is one client entry of the legacy form.
type LegacyPresence struct {
	Client    string `json:"client,omitempty"`
	Status    string `json:"status"`
	Timestamp int64  `json:"timestamp"`
	Pushable  *bool  `json:"pushable,omitempty"`
}

// PresenceEvent tells who may see a user that they came online (or
// changed their presence_enabled setting), in the legacy form.
type PresenceEvent struct {
	UserID          int64                     `json:"user_id"`
	Email           string                    `json:"email"`
	ServerTimestamp float64                   `json:"server_timestamp"`
	Presence        map[string]LegacyPresence `json:"presence"`
}

func (PresenceEvent) EventType() string { return "presence" }

// presenceDefaults are a row's times as clients see them: a time never
// set is the user's date_joined.
func presenceDefaults(t presenceTimes, dateJoined int64) (active, connected int64) {
	active, connected = dateJoined, dateJoined
	if t.Active != nil {
		active = *t.Active
	}
	if t.Connected != nil {
		connected = *t.Connected
	}
	return active, connected
}

// legacyPresence is the reference's format_legacy_presence_dict: active
// at the active time when it is within 70 s of the connected time, idle
// at the connected time otherwise.
func legacyPresence(active, connected int64) LegacyPresence {
	no := false
	if active+presenceLegacyActivitySeconds >= connected {
		return LegacyPresence{Client: "website", Status: "active", Timestamp: active, Pushable: &no}
	}
	return LegacyPresence{Client: "website", Status: "idle", Timestamp: connected, Pushable: &no}
}

// legacyPresenceEntry is a user's legacy entry: "aggregated" and
// "website", the same data.
func legacyPresenceEntry(active, connected int64) map[string]LegacyPresence {
	web := legacyPresence(active, connected)
	return map[string]LegacyPresence{"website": web,
		"aggregated": {Client: web.Client, Status: web.Status, Timestamp: web.Timestamp}}
}

// presenceQuery is what a presence fetch asks for.
type presenceQuery struct {
	slim         bool
	lastUpdateID *int64
	historyDays  *int
}

// presences reads the organization's presence for me: the rows changed
// after lastUpdateID (all when absent), of users connected within the
// history limit (default 14 days; not applied once the client has data),
// in the modern or legacy form. It also returns the highest update ID
// read (the client's when nothing changed; -1 when it sent none and
// nothing was read, or presence is disabled).
func (r reads) presences(ctx context.Context, realm *storage.Realm, q presenceQuery) (map[string]any, int64, error) {
	out := map[string]any{}
	if realm.PresenceDisabled {
		return out, -1, nil
	}
	after := int64(-1)
	if q.lastUpdateID != nil {
		after = *q.lastUpdateID
	}
	var rows []storage.PresenceEntry
	if q.historyDays == nil || *q.historyDays != 0 {
		days := int64(14)
		if q.historyDays != nil {
			days = int64(*q.historyDays)
		}
		since := int64(math.MinInt64)
		if q.lastUpdateID == nil || *q.lastUpdateID <= 0 {
			since = r.s.nowUnix() - days*86400
		}
		var err error
		if rows, err = r.st.ListPresences(ctx, realm.ID, after, since); err != nil {
			return nil, 0, err
		}
	}
	last := after
	if q.lastUpdateID == nil {
		last = -1
	}
	for _, row := range rows {
		last = max(last, row.LastUpdateID)
		active, connected := presenceDefaults(presenceTimes{Active: row.LastActive, Connected: row.LastConnected}, row.DateJoined)
		if q.slim {
			out[strconv.FormatInt(row.UserID, 10)] = ModernPresence{ActiveTimestamp: active, IdleTimestamp: connected}
			continue
		}
		u := storage.User{ID: row.UserID, Email: row.Email, Settings: row.Settings}
		out[apiEmail(realm, &u)] = legacyPresenceEntry(active, connected)
	}
	return out, last, nil
}

// serverTimestamp is the time as the presence responses give it.
func (s *Service) serverTimestamp() float64 { return float64(s.now().UnixMicro()) / 1e6 }

// UpdatePresenceRequest is the input of UpdatePresence
// (POST /users/me/presence).
type UpdatePresenceRequest struct {
	// Status is "active" or "idle" (required).
	Status string `json:"status"`
	// PingOnly: report only; no presence data back.
	PingOnly *bool `json:"ping_only"`
	// NewUserInput: the user interacted since the last report (usage
	// statistics, which this server does not keep).
	NewUserInput *bool `json:"new_user_input"`
	// LastUpdateID: -1 for a first fetch, then the last
	// presence_last_update_id received; implies the modern form.
	LastUpdateID *int64 `json:"last_update_id"`
	// HistoryLimitDays bounds the age of the data fetched (default 14).
	HistoryLimitDays *int `json:"history_limit_days"`
	// SlimPresence (deprecated) asks for the modern form.
	SlimPresence *bool `json:"slim_presence"`
}

// UpdatePresenceResponse is the success body of UpdatePresence; a
// ping-only report has none of its fields.
type UpdatePresenceResponse struct {
	PresenceLastUpdateID *int64  `json:"presence_last_update_id"`
	ServerTimestamp      float64 `json:"server_timestamp"`
	// Presences maps user IDs (modern form) or API emails (legacy form)
	// to their presence.
	Presences map[string]any `json:"presences"`
}

// MarshalJSON writes nothing for a ping-only report.
func (r UpdatePresenceResponse) MarshalJSON() ([]byte, error) {
	if r.PresenceLastUpdateID == nil {
		return []byte("{}"), nil
	}
	type plain UpdatePresenceResponse
	return json.Marshal(plain(r))
}

// UpdatePresence records the caller's presence report and returns the
// organization's presence. Users in invisible mode (presence_enabled
// false) report nothing; bots have no presence.
func (s *Service) UpdatePresence(ctx context.Context, c Caller, req UpdatePresenceRequest) (*UpdatePresenceResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if me.IsBot {
		return nil, errBotRequest
	}
	if req.Status != "active" && req.Status != "idle" {
		return nil, BadRequest("Invalid status: %s", req.Status)
	}
	if settingsOf(me).PresenceEnabled {
		if err := s.reportPresence(ctx, realm, me, req.Status == "active", s.nowUnix()); err != nil {
			return nil, s.internal(ctx, "update presence", err)
		}
	}
	if flag(req.PingOnly, false) {
		return &UpdatePresenceResponse{}, nil
	}
	q := presenceQuery{slim: req.LastUpdateID != nil || flag(req.SlimPresence, false),
		lastUpdateID: req.LastUpdateID, historyDays: req.HistoryLimitDays}
	presences, last, err := s.reads().presences(ctx, realm, q)
	if err != nil {
		return nil, s.internal(ctx, "get presence", err)
	}
	return &UpdatePresenceResponse{PresenceLastUpdateID: &last, ServerTimestamp: s.serverTimestamp(), Presences: presences}, nil
}

// GetRealmPresenceResponse is the success body of GetRealmPresence.
type GetRealmPresenceResponse struct {
	ServerTimestamp float64        `json:"server_timestamp"`
	Presences       map[string]any `json:"presences"`
}

// GetRealmPresence returns every user's presence of the last two weeks in
// the legacy form, by API email (GET /realm/presence).
func (s *Service) GetRealmPresence(ctx context.Context, c Caller) (*GetRealmPresenceResponse, error) {
	_, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	presences, _, err := s.reads().presences(ctx, realm, presenceQuery{})
	if err != nil {
		return nil, s.internal(ctx, "get presence", err)
	}
	return &GetRealmPresenceResponse{ServerTimestamp: s.serverTimestamp(), Presences: presences}, nil
}

// GetUserPresenceRequest is the input of GetUserPresence
// (GET /users/{user_id_or_email}/presence).
type GetUserPresenceRequest struct {
	// UserIDOrEmail is a user ID or an API (or visible real) email.
	UserIDOrEmail string `json:"user_id_or_email"`
	// SlimPresence asks for the modern form.
	SlimPresence *bool `json:"slim_presence"`
}

// GetUserPresenceResponse is the success body of GetUserPresence: the
// modern form, or the legacy entries "aggregated" and "website" (without
// client and pushable; "aggregated" says "offline" when the user was not
// seen within the offline threshold).
type GetUserPresenceResponse struct {
	Presence any `json:"presence"`
}

// GetUserPresence returns one active human user's presence.
func (s *Service) GetUserPresence(ctx context.Context, c Caller, req GetUserPresenceRequest) (*GetUserPresenceResponse, error) {
	return s.reads().getUserPresence(ctx, c, req)
}

// getUserPresence is GetUserPresence reading through r.
func (r reads) getUserPresence(ctx context.Context, c Caller, req GetUserPresenceRequest) (*GetUserPresenceResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	var target *storage.User
	if id, perr := strconv.ParseInt(req.UserIDOrEmail, 10, 64); perr == nil {
		target, err = r.st.GetUser(ctx, realm.ID, id)
	} else {
		target, err = r.userByAPIOrRealEmail(ctx, realm, me, req.UserIDOrEmail)
	}
	if errors.Is(err, storage.ErrNotFound) || err == nil && !target.IsActive {
		return nil, noSuch("No such user")
	}
	if err != nil {
		return nil, r.s.internal(ctx, "get user presence", err)
	}
	if target.IsBot {
		return nil, BadRequest("Presence is not supported for bot users.")
	}
	stored, exists, err := r.storedPresence(ctx, realm.ID, target.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get user presence", err)
	}
	if !exists {
		return nil, BadRequest("No presence data for %s", req.UserIDOrEmail)
	}
	active, connected := presenceDefaults(stored, target.DateJoined)
	if flag(req.SlimPresence, false) {
		return &GetUserPresenceResponse{Presence: ModernPresence{ActiveTimestamp: active, IdleTimestamp: connected}}, nil
	}
	web := legacyPresence(active, connected)
	web.Client, web.Pushable = "", nil
	aggregated := web
	if r.s.nowUnix()-aggregated.Timestamp > presenceOfflineThresholdSeconds {
		aggregated.Status = "offline"
	}
	return &GetUserPresenceResponse{Presence: map[string]LegacyPresence{"website": web, "aggregated": aggregated}}, nil
}
