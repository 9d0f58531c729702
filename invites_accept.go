package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/teamchat/chat/storage"
)

// Accepting an invitation: the new account is made as every account is
// (addToRoleGroups, emitUserAdded), then subscribed to the invitation's
// channels (and the organization's default channels when it says so)
// and added to its groups, with the events each of those sends. The
// reference makes the account in its web sign-up flow; here one
// unauthenticated call does it (POST /invites/accept in transport/rest).

// AcceptInvitationRequest is the input of AcceptInvitation.
type AcceptInvitationRequest struct {
	// Key is the invitation's key, or its whole link
	// (<organization URL>/join/<key>/).
	Key string `json:"key"`
	// Email is the new account's address: required for a reusable link;
	// an email invitation is for its own address (Email may repeat it).
	Email *string `json:"email"`
	// FullName and Password follow the rules of every account.
	FullName string `json:"full_name"`
	Password string `json:"password"`
}

// AcceptInvitationResponse is what the new user needs to use the API:
// their ID, their email (the username of fetch_api_key and of HTTP
// Basic authentication) and their API key.
type AcceptInvitationResponse struct {
	UserID int64  `json:"user_id"`
	Email  string `json:"email"`
	APIKey string `json:"api_key"`
}

// Why an invitation key does not work.
var (
	errInviteInvalid = BadRequest("The invitation link is malformed or invalid.")
	errInviteExpired = BadRequest("The invitation link has expired.")
	errInviteRevoked = BadRequest("The invitation link has been revoked.")
	errInviteUsed    = clash("The invitation link has already been used.")
	errInviteEmail   = refused("This invitation is for another email address.")
)

// inviteKey is the key of a key or a link.
func inviteKey(raw string) string {
	raw = strings.TrimSpace(raw)
	if _, after, ok := strings.Cut(raw, "/join/"); ok {
		raw = after
	}
	return strings.Trim(raw, "/")
}

// checkInviteUsable refuses an invitation that can no longer be
// accepted (at now).
func checkInviteUsable(inv *storage.Invite, referrer *storage.User, now int64) error {
	switch {
	case inv.Status == storage.InviteUsed:
		return errInviteUsed
	case inv.Status == storage.InviteRevoked || !referrer.IsActive:
		return errInviteRevoked
	case inv.ExpiresAt != nil && now > *inv.ExpiresAt:
		return errInviteExpired
	}
	return nil
}

// usableInvite is the invitation of key in an active organization, with
// its creator, if it can still be accepted (checkInviteUsable).
func (r reads) usableInvite(ctx context.Context, realmID int64, key string) (*storage.Realm, *storage.Invite, *storage.User, error) {
	realm, err := r.organization(ctx, realmID, "accept invitation")
	if err != nil {
		return nil, nil, nil, err
	}
	if realm.Deactivated {
		return nil, nil, nil, errRealmDeactivated
	}
	inv, err := r.st.GetInviteByKey(ctx, realm.ID, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, nil, errInviteInvalid
	} else if err != nil {
		return nil, nil, nil, r.s.internal(ctx, "accept invitation", err)
	}
	referrer, err := r.st.GetUser(ctx, realm.ID, inv.ReferrerID)
	if err != nil {
		return nil, nil, nil, r.s.internal(ctx, "accept invitation", err)
	}
	if err := checkInviteUsable(inv, referrer, r.s.nowUnix()); err != nil {
		return nil, nil, nil, err
	}
	return realm, inv, referrer, nil
}

// AcceptInvitation makes an account from an invitation key: for an email
// invitation with its address, for a reusable link with the address
// given. The key is the credential, so no Caller is needed. An email
// invitation works once (and using it revokes the other invitations of
// its address); a link works until it expires or is revoked.
func (s *Service) AcceptInvitation(ctx context.Context, realmID int64, req AcceptInvitationRequest) (*AcceptInvitationResponse, error) {
	key := inviteKey(req.Key)
	if key == "" {
		return nil, MissingArgument("key")
	}
	realm, inv, referrer, err := s.reads().usableInvite(ctx, realmID, key)
	if err != nil {
		return nil, err
	}

	email := inv.Email
	switch {
	case inv.IsMultiuse && req.Email == nil:
		return nil, MissingArgument("email")
	case inv.IsMultiuse:
		if email, err = s.checkNewEmail(*req.Email); err != nil {
			return nil, err
		}
	case req.Email != nil && storage.Fold(strings.TrimSpace(*req.Email)) != storage.Fold(inv.Email):
		return nil, errInviteEmail
	}
	fullName, err := s.checkFullName(req.FullName)
	if err != nil {
		return nil, err
	}
	if err := s.checkPassword(req.Password); err != nil {
		return nil, err
	}
	if err := s.reads().emailFree(ctx, realm.ID, email, 0); err != nil {
		return nil, err
	}
	hash, err := s.hasher.Hash(req.Password)
	if err != nil {
		return nil, s.internal(ctx, "accept invitation", err)
	}
	apiKey, err := newAPIKey()
	if err != nil {
		return nil, s.internal(ctx, "accept invitation", err)
	}
	u := &storage.User{RealmID: realm.ID, Email: email, FullName: fullName, Role: inv.InvitedAs, IsActive: true,
		DateJoined: s.nowUnix(), PasswordHash: hash, APIKey: apiKey, AvatarSource: "G", AvatarVersion: 1}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		// Checked again under the write lock: the invitation may have
		// been used or revoked, its creator deactivated, since.
		fresh, err := w.GetInvite(ctx, realm.ID, inv.ID)
		if err != nil {
			return err
		}
		if referrer, err = w.GetUser(ctx, realm.ID, inv.ReferrerID); err != nil {
			return err
		}
		if err := checkInviteUsable(fresh, referrer, s.nowUnix()); err != nil {
			return err
		}
		if err := w.CreateUser(ctx, u); err != nil {
			return err
		}
		if err := s.addToRoleGroups(ctx, w, realm, u); err != nil {
			return err
		}
		emitUserAdded(w, realm, u, map[string]ProfileFieldValue{})
		if err := s.subscribeInvited(ctx, w, u, fresh); err != nil {
			return err
		}
		if err := s.joinInvitedGroups(ctx, w, u, fresh.GroupIDs); err != nil {
			return err
		}
		if !fresh.IsMultiuse {
			if err := w.SetInviteStatus(ctx, realm.ID, fresh.ID, storage.InviteUsed); err != nil {
				return err
			}
		}
		// The address's other invitations are spent (the reference's
		// process_new_human_user).
		if _, err := w.RevokeEmailInvites(ctx, realm.ID, email, fresh.ID); err != nil {
			return err
		}
		w.emit(admins.plus(fresh.ReferrerID), InvitesChangedEvent{})
		inv = fresh
		return nil
	})
	if errors.Is(err, storage.ErrConflict) {
		return nil, clash("Email is already in use.")
	}
	if err != nil {
		return nil, s.internal(ctx, "accept invitation", err)
	}
	if !inv.IsMultiuse && inv.NotifyReferrerOnJoin {
		if err := s.notifyReferrer(ctx, realm, referrer, u); err != nil {
			s.log.ErrorContext(ctx, "invitation accepted: notifying the referrer failed", "user_id", u.ID, "err", err)
		}
	}
	s.log.InfoContext(ctx, "invitation accepted", "realm_id", realm.ID, "user_id", u.ID, "invite_id", inv.ID)
	return &AcceptInvitationResponse{UserID: u.ID, Email: u.Email, APIKey: apiKey}, nil
}

// subscribeInvited subscribes a new account to the invitation's channels
// (and the organization's default ones when it says so) that are not
// archived, with the subscription events.
func (s *Service) subscribeInvited(ctx context.Context, w *writeTx, u *storage.User, inv *storage.Invite) error {
	ids := inv.StreamIDs
	if inv.IncludeRealmDefaultSubscriptions {
		defaults, err := w.ListDefaultStreams(ctx, u.RealmID)
		if err != nil {
			return err
		}
		for _, ch := range defaults {
			ids = append(ids, ch.ID)
		}
	}
	return s.subscribeNewAccount(ctx, w, u, ids)
}

// joinInvitedGroups adds a new account to the invitation's groups that
// are still active, with the add_members events.
func (s *Service) joinInvitedGroups(ctx context.Context, w *writeTx, u *storage.User, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	groups, err := w.GetGroupsByID(ctx, u.RealmID, ids)
	if err != nil {
		return err
	}
	for _, g := range groups {
		if g.Deactivated || g.Name == "" {
			continue
		}
		if err := w.AddGroupMembers(ctx, u.RealmID, g.ID, []int64{u.ID}); err != nil {
			return err
		}
		w.emit(everyone, UserGroupEvent{Op: "add_members", GroupID: g.ID, UserIDs: []int64{u.ID}})
	}
	return nil
}

// notifyReferrer tells the invitation's creator, in a direct message from
// the notification bot, that the account was made (the reference's
// notify_referrer_on_join text).
func (s *Service) notifyReferrer(ctx context.Context, realm *storage.Realm, referrer, u *storage.User) error {
	bot, err := s.notificationBot(ctx, realm)
	if err != nil {
		return err
	}
	content := fmt.Sprintf("@_**%s|%d** accepted your invitation to join Zulip!", u.FullName, u.ID)
	return s.sendInternalDirect(ctx, realm, bot, referrer, content, nil)
}
