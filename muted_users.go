package chat

import (
	"context"
	"errors"
	"strconv"

	"github.com/teamchat/chat/storage"
)

// Muted users: a user can mute another, whose messages then count as read
// for them (none notify, count as unread or show as mentions). The state
// is sparse: one row per mute. Muting marks the target's unread messages
// read; while the mute lasts, the read paths treat the target's channel
// messages as read (a rule applied when reading, in the store's unread
// queries and in the flags a reader sees), and their direct messages
// arrive read (a direct message has a row per participant anyway).
// Unmuting keeps read what the mute showed as read, as the reference
// does (where every such message was marked at send).

// MutedUserView is one entry of muted_users.
type MutedUserView struct {
	ID        int64 `json:"id"`
	Timestamp int64 `json:"timestamp"`
}

// MutedUsersEvent gives a user their whole list of muted users.
type MutedUsersEvent struct {
	MutedUsers []MutedUserView `json:"muted_users"`
}

func (MutedUsersEvent) EventType() string { return "muted_users" }

// MuteUserRequest is the input of MuteUser and UnmuteUser
// (POST/DELETE /users/me/muted_users/{muted_user_id}).
type MuteUserRequest struct {
	MutedUserID int64 `json:"muted_user_id"`
}

// mutedUsers lists the mutes of userID (as r reads them) as clients see them.
func (r reads) mutedUsers(ctx context.Context, realmID, userID int64) ([]MutedUserView, error) {
	mutes, err := r.st.ListUserMutes(ctx, realmID, userID)
	if err != nil {
		return nil, err
	}
	out := make([]MutedUserView, len(mutes))
	for i, m := range mutes {
		out[i] = MutedUserView{ID: m.MutedUserID, Timestamp: m.DateMuted}
	}
	return out, nil
}

// muteSet reads the users userID muted, as a set.
func (r reads) muteSet(ctx context.Context, realmID, userID int64) (map[int64]bool, error) {
	mutes, err := r.st.ListUserMutes(ctx, realmID, userID)
	if err != nil {
		return nil, err
	}
	set := make(map[int64]bool, len(mutes))
	for _, m := range mutes {
		set[m.MutedUserID] = true
	}
	return set, nil
}

// muteTarget checks the target of a mute or unmute: not the caller, a
// user of the organization (deactivated users and bots included).
func (r reads) muteTarget(ctx context.Context, c Caller, id int64) (*storage.User, *storage.Realm, *storage.User, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, nil, nil, err
	}
	if id == me.ID {
		return nil, nil, nil, BadRequest("Cannot mute self")
	}
	target, err := r.st.GetUser(ctx, realm.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, nil, noSuch("No such user")
	}
	if err != nil {
		return nil, nil, nil, r.s.internal(ctx, "mute user", err)
	}
	return me, realm, target, nil
}

// MuteUser mutes a user for the caller and marks their unread messages
// read.
func (s *Service) MuteUser(ctx context.Context, c Caller, req MuteUserRequest) (*EmptyResponse, error) {
	me, realm, target, err := s.reads().muteTarget(ctx, c, req.MutedUserID)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		// Mark first: with the mute in place, the messages already look read.
		if err := s.markReadFrom(ctx, w, realm, me, target.ID); err != nil {
			return err
		}
		err := w.AddUserMute(ctx, &storage.UserMute{RealmID: realm.ID, UserID: me.ID, MutedUserID: target.ID, DateMuted: s.nowUnix()})
		if errors.Is(err, storage.ErrConflict) {
			return clash("User already muted")
		}
		if err != nil {
			return err
		}
		return s.emitMutedUsers(ctx, w, realm.ID, me.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "mute user", err)
	}
	return &EmptyResponse{}, nil
}

// UnmuteUser ends a mute. The target's messages the mute showed as read
// are marked read, so they stay read.
func (s *Service) UnmuteUser(ctx context.Context, c Caller, req MuteUserRequest) (*EmptyResponse, error) {
	me, realm, target, err := s.reads().muteTarget(ctx, c, req.MutedUserID)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		err := w.RemoveUserMute(ctx, realm.ID, me.ID, target.ID)
		if errors.Is(err, storage.ErrNotFound) {
			return noSuch("User is not muted")
		}
		if err != nil {
			return err
		}
		if err := s.markReadFrom(ctx, w, realm, me, target.ID); err != nil {
			return err
		}
		return s.emitMutedUsers(ctx, w, realm.ID, me.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "unmute user", err)
	}
	return &EmptyResponse{}, nil
}

func (s *Service) emitMutedUsers(ctx context.Context, w *writeTx, realmID, userID int64) error {
	list, err := w.reads().mutedUsers(ctx, realmID, userID)
	if err != nil {
		return err
	}
	w.emit(toUsers(userID), MutedUsersEvent{MutedUsers: list})
	return nil
}

// markReadFrom marks read, in w, the caller's unread messages sent by
// sender (what the caller can read of them), in batches of the flag
// endpoints' size, with the usual update_message_flags events.
func (s *Service) markReadFrom(ctx context.Context, w *writeTx, realm *storage.Realm, me *storage.User, sender int64) error {
	view := s.privateReads(w) // reads see the transaction's writes, in every record
	narrow := `[{"operator":"sender","operand":` + strconv.FormatInt(sender, 10) + `},{"operator":"is","operand":"unread"}]`
	q, err := view.compileNarrow(ctx, me, realm, &narrow, narrowUse{})
	if err != nil {
		return err
	}
	anchor := int64(0)
	for {
		var window GetMessagesResponse
		rows, err := view.window(ctx, realm.ID, me.ID, q, anchor, 0, maxMessagesPerUpdate, true, &window)
		if err != nil {
			return err
		}
		if ids := messageIDs(rows); len(ids) > 0 {
			if _, err := s.changeFlags(ctx, w, realm, me, true, storage.FlagRead, "read", ids); err != nil {
				return err
			}
			anchor = ids[len(ids)-1] + 1
		}
		if window.FoundNewest || len(rows) == 0 {
			return nil
		}
	}
}

// applyMutes finds the recipients who muted the sender (usually nobody;
// from the record cache, else one indexed read): a direct message's row
// is read for them, and every message event they get says read. A
// channel muter without a row is told only when subscribed.
func (s *Service) applyMutes(ctx context.Context, r reads, o *outgoing, readers []storage.UserMessage) error {
	muters, err := r.muters(ctx, o.realm.ID, o.me.ID)
	if err != nil || len(muters) == 0 {
		return err
	}
	o.mutedBy = map[int64]bool{}
	hasRow := map[int64]bool{}
	for i := range readers {
		hasRow[readers[i].UserID] = true
	}
	for _, id := range muters {
		if hasRow[id] {
			o.mutedBy[id] = true
			continue
		}
		if o.msg.StreamID == nil {
			continue // not a participant
		}
		sub, err := r.st.GetSubscription(ctx, o.realm.ID, id, *o.msg.StreamID)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if sub.Active {
			o.mutedBy[id] = true
		}
	}
	if o.msg.StreamID == nil {
		for i := range readers {
			if o.mutedBy[readers[i].UserID] {
				readers[i].Flags |= storage.FlagRead
			}
		}
	}
	return nil
}
