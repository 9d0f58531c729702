package chat

import (
	"context"
	"errors"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// Emoji reactions: one row per (message, user, emoji). A reaction costs a
// row and an event whose audience is a rule (the channel's subscribers),
// so adding one costs the same in a channel of 10 or of 10,000.

// The reaction types. The reference's zulip_extra_emoji is spelled
// service_extra_emoji here.
const (
	ReactionUnicode = "unicode_emoji"
	ReactionRealm   = "realm_emoji"
	ReactionExtra   = "service_extra_emoji"
)

// extraEmoji is the one extra emoji, the product's logo.
const extraEmoji = "zulip"

// requestedType reads a request's reaction_type: the reference's name of
// the extra emoji's type, zulip_extra_emoji, which its clients send, means
// service_extra_emoji.
func requestedType(t string) string {
	if t == "zulip_extra_emoji" {
		return ReactionExtra
	}
	return t
}

// AddReactionRequest is the input of AddReaction (POST
// /messages/{message_id}/reactions).
type AddReactionRequest struct {
	MessageID int64  `json:"message_id"`
	EmojiName string `json:"emoji_name"`
	// EmojiCode and ReactionType default to what the name means now.
	EmojiCode    *string `json:"emoji_code"`
	ReactionType *string `json:"reaction_type"`
}

// RemoveReactionRequest is the input of RemoveReaction (DELETE
// /messages/{message_id}/reactions): the emoji by name, by code, or both.
type RemoveReactionRequest struct {
	MessageID int64   `json:"message_id"`
	EmojiName *string `json:"emoji_name"`
	EmojiCode *string `json:"emoji_code"`
	// ReactionType defaults to unicode_emoji.
	ReactionType *string `json:"reaction_type"`
}

// ReactionEvent tells who may see a message that a reaction came or went.
type ReactionEvent struct {
	Op     string `json:"op"`
	UserID int64  `json:"user_id"`
	// User is the reactor again, as the reference re-added it (feature
	// level 339, deprecated) for clients that still read it.
	User         ReactionUser `json:"user"`
	MessageID    int64        `json:"message_id"`
	EmojiName    string       `json:"emoji_name"`
	EmojiCode    string       `json:"emoji_code"`
	ReactionType string       `json:"reaction_type"`
}

// ReactionUser is the reaction event's user object: the reactor's ID, API
// email and name.
type ReactionUser struct {
	UserID   int64  `json:"user_id"`
	Email    string `json:"email"`
	FullName string `json:"full_name"`
}

func reactionUser(realm *storage.Realm, u *storage.User) ReactionUser {
	return ReactionUser{UserID: u.ID, Email: apiEmail(realm, u), FullName: u.FullName}
}

// EventType implements EventBody.
func (ReactionEvent) EventType() string { return "reaction" }

// AddReaction adds the caller's reaction to a message they may see. A
// reaction with an emoji code someone already used on the message takes
// that reaction's name (a vote for it); otherwise name, code and type
// must agree. Reacting to a channel message one never received gives it
// a historical row, as in the reference.
func (s *Service) AddReaction(ctx context.Context, c Caller, req AddReactionRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		m, rs, err := s.modifiableMessage(ctx, w.reads(), realm, me, req.MessageID)
		if err != nil {
			return err
		}
		w.forgetMessages(m.ID) // its cached reactions
		code, typ, name := "", "", req.EmojiName
		if req.EmojiCode == nil || req.ReactionType == nil {
			c, t, err := w.reads().emojiByName(ctx, realm.ID, req.EmojiName)
			if err != nil {
				return err
			}
			code, typ = c, t
		}
		if req.EmojiCode != nil {
			code = *req.EmojiCode
		}
		if req.ReactionType != nil {
			typ = requestedType(*req.ReactionType)
		}
		existing, err := w.ListReactions(ctx, realm.ID, []int64{m.ID})
		if err != nil {
			return err
		}
		vote := false
		for _, r := range existing {
			if r.ReactionType == typ && r.EmojiCode == code {
				if r.UserID == me.ID {
					return errReactionExists
				}
				if !vote {
					name, vote = r.EmojiName, true
				}
			}
		}
		if !vote {
			if err := w.reads().checkEmoji(ctx, realm.ID, name, code, typ); err != nil {
				return err
			}
		}
		if ms := rs.msgs[m.ID]; m.StreamID != nil && !ms.hasRow && !ms.received {
			row := storage.UserMessage{RealmID: realm.ID, UserID: me.ID, MessageID: m.ID, Flags: defaultHistoricalFlags}
			if err := w.InsertUserMessages(ctx, []storage.UserMessage{row}); err != nil {
				return err
			}
		}
		r := &storage.Reaction{RealmID: realm.ID, MessageID: m.ID, UserID: me.ID, ReactionType: typ, EmojiCode: code, EmojiName: name}
		if err := w.AddReaction(ctx, r); errors.Is(err, storage.ErrConflict) {
			return errReactionExists
		} else if err != nil {
			return err
		}
		aud, err := w.reads().messageAudience(ctx, realm, m)
		if err != nil {
			return err
		}
		w.emit(aud, ReactionEvent{Op: "add", UserID: me.ID, User: reactionUser(realm, me), MessageID: m.ID, EmojiName: name, EmojiCode: code, ReactionType: typ})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "add reaction", err)
	}
	return &EmptyResponse{}, nil
}

// RemoveReaction removes the caller's reaction. Without a code, the name
// says which emoji; the emoji need not be valid any more (a deactivated
// custom emoji's reaction can still be removed).
func (s *Service) RemoveReaction(ctx context.Context, c Caller, req RemoveReactionRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		m, _, err := s.modifiableMessage(ctx, w.reads(), realm, me, req.MessageID)
		if err != nil {
			return err
		}
		w.forgetMessages(m.ID) // its cached reactions
		typ := ReactionUnicode
		if req.ReactionType != nil {
			typ = requestedType(*req.ReactionType)
		}
		var code string
		switch {
		case req.EmojiCode != nil:
			code = *req.EmojiCode
		case req.EmojiName != nil:
			if code, _, err = w.reads().emojiByName(ctx, realm.ID, *req.EmojiName); err != nil {
				return err
			}
		default:
			return BadRequest("At least one of the following arguments must be present: emoji_name, emoji_code")
		}
		existing, err := w.ListReactions(ctx, realm.ID, []int64{m.ID})
		if err != nil {
			return err
		}
		var gone *storage.Reaction
		for i, r := range existing {
			if r.UserID == me.ID && r.ReactionType == typ && r.EmojiCode == code {
				gone = &existing[i]
			}
		}
		if gone == nil {
			return errReactionMissing
		}
		if err := w.DeleteReaction(ctx, realm.ID, m.ID, me.ID, typ, code); err != nil {
			return err
		}
		aud, err := w.reads().messageAudience(ctx, realm, m)
		if err != nil {
			return err
		}
		w.emit(aud, ReactionEvent{Op: "remove", UserID: me.ID, User: reactionUser(realm, me), MessageID: m.ID, EmojiName: gone.EmojiName, EmojiCode: code, ReactionType: typ})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "remove reaction", err)
	}
	return &EmptyResponse{}, nil
}

// messageAudience is who hears of an action on a message (the
// reference's event_recipient_ids_for_action_on_messages): a direct
// message's participants; a channel message's subscribers, and, in a
// public channel with shared history, the users with a row for it (who
// starred or reacted to it from outside). In a channel whose history is
// protected, only the subscribers who received it: they are listed,
// which costs the channel's subscribers (such channels are private).
func (r reads) messageAudience(ctx context.Context, realm *storage.Realm, m *storage.Message) (Audience, error) {
	if m.ConversationID != nil {
		members, err := r.st.ConversationMembers(ctx, realm.ID, *m.ConversationID)
		return Audience{Users: members}, err
	}
	ch, err := r.channelByID(ctx, realm.ID, *m.StreamID)
	if err != nil {
		return Audience{}, err
	}
	if !ch.HistoryPublicToSubscribers {
		ids, err := r.st.SubscribersWhoReceived(ctx, realm.ID, ch.ID, m.ID)
		return Audience{Users: ids}, err
	}
	aud := Audience{Subscribers: []int64{ch.ID}}
	if !ch.InviteOnly {
		rows, err := r.st.MessageRowUsers(ctx, realm.ID, m.ID)
		if err != nil {
			return Audience{}, err
		}
		aud.Users = rows
	}
	return aud, nil
}

// emojiByName is the reference's get_emoji_data: the organization's
// active custom emoji first, then the extra emoji, then Unicode names.
func (r reads) emojiByName(ctx context.Context, realmID int64, name string) (code, typ string, err error) {
	custom, err := r.st.GetRealmEmojiByName(ctx, realmID, name)
	if err == nil {
		return custom.Code(), ReactionRealm, nil
	} else if !errors.Is(err, storage.ErrNotFound) {
		return "", "", err
	}
	if name == extraEmoji {
		return extraEmoji, ReactionExtra, nil
	}
	if c, ok := markdown.EmojiCode(name); ok {
		return c, ReactionUnicode, nil
	}
	return "", "", noSuch("Emoji '%s' does not exist", name)
}

// checkEmoji is the reference's check_emoji_request: name, code and type
// must agree, and a custom emoji must be active.
func (r reads) checkEmoji(ctx context.Context, realmID int64, name, code, typ string) error {
	switch typ {
	case ReactionRealm:
		custom, err := r.st.GetRealmEmojiByCode(ctx, realmID, code)
		if errors.Is(err, storage.ErrNotFound) {
			return BadRequest("Invalid custom emoji.")
		} else if err != nil {
			return err
		}
		if custom.Name != name {
			return BadRequest("Invalid custom emoji name.")
		}
		if custom.Deactivated {
			return BadRequest("This custom emoji has been deactivated.")
		}
	case ReactionExtra:
		if code != extraEmoji {
			return BadRequest("Invalid emoji code.")
		}
		if name != code {
			return BadRequest("Invalid emoji name.")
		}
	case ReactionUnicode:
		if _, ok := markdown.EmojiName(code); !ok {
			return BadRequest("Invalid emoji code.")
		}
		if c, ok := markdown.EmojiCode(name); !ok || c != code {
			return BadRequest("Invalid emoji name.")
		}
	default:
		return BadRequest("Invalid emoji type.")
	}
	return nil
}
