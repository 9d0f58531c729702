package chat

import (
	"context"
	"errors"
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
	_, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	target, err := s.store.GetUser(ctx, realm.ID, req.UserID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && !target.IsActive {
		return nil, BadRequest("No such user")
	}
	if err != nil {
		return nil, s.internal(ctx, "get user status", err)
	}
	st, err := s.store.GetUserStatus(ctx, realm.ID, target.ID)
	if errors.Is(err, storage.ErrNotFound) {
		st, err = nil, nil
	}
	if err != nil {
		return nil, s.internal(ctx, "get user status", err)
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
	me, realm, err := s.actor(ctx, c)
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
			defCode, defType, err := s.emojiByName(ctx, s.store, realm.ID, name)
			if err != nil {
				return nil, s.internal(ctx, "update status", err)
			}
			code, typ = defCode, defType
		}
		if req.EmojiCode != nil {
			code = *req.EmojiCode
		}
		if req.ReactionType != nil {
			typ = *req.ReactionType
		}
		if err := s.checkEmoji(ctx, s.store, realm.ID, name, code, typ); err != nil {
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
func (s *Service) userStatuses(ctx context.Context, realmID int64) (map[string]UserStatusView, error) {
	rows, err := s.store.ListUserStatuses(ctx, realmID)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(rows))
	for i := range rows {
		ids[i] = rows[i].UserID
	}
	users, err := s.store.FindUsers(ctx, realmID, storage.UserFilter{IDs: nonNil(ids)})
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
