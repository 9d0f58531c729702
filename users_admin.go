package chat

import (
	"context"
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/storage"
)

var (
	errInsufficient  = refused("Insufficient permission")
	errSoleOwnerRole = clash("The owner permission cannot be removed from the only organization owner.")
	allRoles         = []int{RoleOwner, RoleAdministrator, RoleModerator, RoleMember, RoleGuest}
)

// UserUpdate holds the optional changes of UpdateUser and UpdateUserByEmail.
type UserUpdate struct {
	FullName *string `json:"full_name"`
	// Role: 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest.
	Role *int `json:"role"`
	// ProfileData sets custom profile values ({id, value}; an empty value removes).
	ProfileData *[]ProfileDataUpdate `json:"profile_data"`
	// NewEmail changes the user's email at once (owners holding the
	// change-user-emails permission only).
	NewEmail *string `json:"new_email"`
}

// UpdateUserRequest is the input of UpdateUser.
type UpdateUserRequest struct {
	UserID int64 `json:"user_id"`
	UserUpdate
}

// UpdateUserByEmailRequest is the input of UpdateUserByEmail.
type UpdateUserByEmailRequest struct {
	// Email is the real email when the caller may see it, else the API
	// email (user{id}@{host}).
	Email string `json:"email"`
	UserUpdate
}

// UpdateUser changes another user's name, role, custom profile values or
// email. Administrators may update anyone; a bot's owner may update the
// bot's name and profile. Granting or removing the owner role takes an
// owner, and the only owner keeps it. Everything is checked before
// anything is written: a rejected request changes nothing.
func (s *Service) UpdateUser(ctx context.Context, c Caller, req UpdateUserRequest) (*EmptyResponse, error) {
	r := s.reads()
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	target, err := r.user(ctx, realm.ID, req.UserID, "update user")
	if err != nil {
		return nil, err
	}
	return s.updateUser(ctx, realm, me, target, req.UserUpdate)
}

// UpdateUserByEmail is UpdateUser with the user named by email.
func (s *Service) UpdateUserByEmail(ctx context.Context, c Caller, req UpdateUserByEmailRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	target, err := s.reads().userByAPIOrRealEmail(ctx, realm, me, req.Email)
	if err != nil {
		return nil, err
	}
	return s.updateUser(ctx, realm, me, target, req.UserUpdate)
}

// canAdminUser: administrators administer everyone, owners of bots their bots.
func canAdminUser(me, target *storage.User) bool {
	return isAdmin(me) || target.IsBot && target.BotOwnerID != nil && *target.BotOwnerID == me.ID
}

func (s *Service) updateUser(ctx context.Context, realm *storage.Realm, me, target *storage.User, up UserUpdate) (*EmptyResponse, error) {
	if up.Role != nil && !slices.Contains(allRoles, *up.Role) {
		return nil, BadRequest("Invalid role")
	}
	var email string
	if up.NewEmail != nil {
		var err error
		if email, err = s.checkNewEmail(*up.NewEmail); err != nil {
			return nil, err
		}
	}
	// Every check runs inside the write, on fresh rows, under the realm's
	// write lock: two owners demoting each other at once cannot both
	// succeed.
	err := s.write(ctx, realm.ID, func(w *writeTx) error {
		me, target, err := reload(ctx, w, realm.ID, me.ID, target.ID)
		if err != nil {
			return err
		}
		if !canAdminUser(me, target) {
			return errInsufficient
		}
		if up.NewEmail != nil && !(me.Role == RoleOwner && me.CanChangeUserEmails) {
			return refused("User not authorized to change user emails")
		}
		next := *target
		var columns []string
		changes := map[string]any{}
		roleChanged := false
		if up.Role != nil && *up.Role != target.Role {
			switch {
			case (*up.Role == RoleOwner || target.Role == RoleOwner) && me.Role != RoleOwner:
				return errOwnerRequired
			case !isAdmin(me):
				return errAdminRequired
			}
			if last, err := w.reads().isLastOwner(ctx, realm.ID, target); err != nil {
				return err
			} else if last {
				return errSoleOwnerRole
			}
			next.Role, roleChanged = *up.Role, true
			columns, changes["role"] = append(columns, "role"), *up.Role
		}
		if up.FullName != nil {
			name, err := s.checkFullName(*up.FullName)
			if err != nil {
				return err
			}
			if name != target.FullName {
				next.FullName = name
				columns, changes["full_name"] = append(columns, "full_name"), name
			}
		}
		var setValues []storage.ProfileFieldValue
		var removeValues []int64
		if up.ProfileData != nil {
			if setValues, removeValues, err = w.reads().checkProfileData(ctx, realm.ID, target, *up.ProfileData); err != nil {
				return err
			}
		}
		if up.NewEmail != nil {
			if err := w.reads().emailFree(ctx, realm.ID, email, target.ID); err != nil {
				return err
			}
			if email != target.Email {
				next.Email = email
				columns = append(columns, "email")
			}
		}
		if len(columns) > 0 {
			if err := w.UpdateUser(ctx, &next, columns...); err != nil {
				return err
			}
		}
		if roleChanged {
			if err := s.setRoleGroups(ctx, w, realm, &next); err != nil {
				return err
			}
		}
		if len(setValues) > 0 {
			if err := w.SetProfileFieldValues(ctx, setValues); err != nil {
				return err
			}
		}
		if len(removeValues) > 0 {
			if err := w.DeleteProfileFieldValues(ctx, realm.ID, target.ID, removeValues); err != nil {
				return err
			}
		}
		if v, ok := changes["full_name"]; ok {
			emitUserUpdate(w, target.ID, map[string]any{"full_name": v})
		}
		if roleChanged {
			// The user's queues follow their new role.
			w.emitChanging(everyone, RealmUserEvent{Op: "update", Person: map[string]any{"user_id": target.ID, "role": next.Role}},
				eventq.Change{Users: []int64{target.ID}, Role: &next.Role})
		}
		if next.IsBot && next.FullName != target.FullName {
			emitBotUpdate(w, &next, map[string]any{"full_name": next.FullName})
		}
		for _, v := range setValues {
			emitUserUpdate(w, target.ID, map[string]any{"custom_profile_field": map[string]any{
				"id": v.FieldID, "value": v.Value, "rendered_value": v.RenderedValue}})
		}
		for _, id := range removeValues {
			emitUserUpdate(w, target.ID, map[string]any{"custom_profile_field": map[string]any{"id": id, "value": nil}})
		}
		if next.Email != target.Email {
			emitEmailChange(w, realm, target, &next)
		}
		return nil
	})
	if errors.Is(err, storage.ErrConflict) {
		return nil, clash("Email is already in use.")
	}
	if err != nil {
		return nil, s.internal(ctx, "update user", err)
	}
	return &EmptyResponse{}, nil
}

// reload reads the caller and the target again inside a write: a caller
// deactivated meanwhile can no longer act.
func reload(ctx context.Context, st storage.Store, realmID, meID, targetID int64) (*storage.User, *storage.User, error) {
	users, err := st.FindUsers(ctx, realmID, storage.UserFilter{IDs: []int64{meID, targetID}})
	if err != nil {
		return nil, nil, err
	}
	var me, target *storage.User
	for i := range users {
		if users[i].ID == meID {
			me = &users[i]
		}
		if users[i].ID == targetID {
			target = &users[i]
		}
	}
	if me == nil || !me.IsActive {
		return nil, nil, errUserDeactivated
	}
	if target == nil || target.IsSystemBot {
		return nil, nil, errNoSuchUser
	}
	return me, target, nil
}

// isLastOwner reports whether u is the realm's only active human owner.
// Run inside a write, it sees every committed role change.
func (r reads) isLastOwner(ctx context.Context, realmID int64, u *storage.User) (bool, error) {
	if u.Role != RoleOwner || !u.IsActive || u.IsBot {
		return false, nil
	}
	role, yes, no := RoleOwner, true, false
	n, err := r.st.CountUsers(ctx, realmID, storage.UserFilter{Role: &role, Active: &yes, Bot: &no})
	return n <= 1, err
}

// DeactivateUserRequest is the input of DeactivateUser.
type DeactivateUserRequest struct {
	UserID int64 `json:"user_id"`
	// DeactivationNotificationComment is accepted for compatibility; no
	// mail is sent.
	DeactivationNotificationComment *string `json:"deactivation_notification_comment"`
}

// DeactivateUser deactivates a human user and their bots. Administrators
// only; deactivating an owner takes an owner, and the only owner cannot be
// deactivated. The user's API key stops working at once.
func (s *Service) DeactivateUser(ctx context.Context, c Caller, req DeactivateUserRequest) (*EmptyResponse, error) {
	r := s.reads()
	me, realm, err := r.admin(ctx, c)
	if err != nil {
		return nil, err
	}
	if req.DeactivationNotificationComment != nil && utf8.RuneCountInString(*req.DeactivationNotificationComment) > 2000 {
		return nil, BadRequest("deactivation_notification_comment is too long (limit: 2000 characters)")
	}
	target, err := r.user(ctx, realm.ID, req.UserID, "deactivate user")
	if err != nil {
		return nil, err
	}
	if target.IsBot {
		return nil, errNoSuchUser
	}
	if !target.IsActive {
		return nil, BadRequest("User is deactivated")
	}
	if target.Role == RoleOwner && me.Role != RoleOwner {
		return nil, errOwnerRequired
	}
	if err := s.deactivate(ctx, realm.ID, target, func(ctx context.Context, w *writeTx, target *storage.User) error {
		me, target, err := reload(ctx, w, realm.ID, me.ID, target.ID)
		if err != nil {
			return err
		}
		if !isAdmin(me) {
			return errAdminRequired
		}
		if target.Role == RoleOwner && me.Role != RoleOwner {
			return errOwnerRequired
		}
		if !target.IsActive {
			return BadRequest("User is deactivated")
		}
		if last, err := w.reads().isLastOwner(ctx, realm.ID, target); err != nil {
			return err
		} else if last {
			return clash("Cannot deactivate the only organization owner")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return &EmptyResponse{}, nil
}

// DeactivateOwnUser deactivates the caller (and their bots). The last active
// user, and the only owner, cannot leave: CANNOT_DEACTIVATE_LAST_USER.
func (s *Service) DeactivateOwnUser(ctx context.Context, c Caller) (*EmptyResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := s.deactivate(ctx, realm.ID, me, func(ctx context.Context, w *writeTx, me *storage.User) error {
		if !me.IsActive {
			return errUserDeactivated
		}
		yes := true
		active, err := w.CountUsers(ctx, realm.ID, storage.UserFilter{Active: &yes})
		if err != nil {
			return err
		}
		bots, err := w.reads().activeSystemBots(ctx, realm.ID)
		if err != nil {
			return err
		}
		if active-bots == 1 {
			return errLastUser(false)
		}
		if last, err := w.reads().isLastOwner(ctx, realm.ID, me); err != nil {
			return err
		} else if last {
			return errLastUser(true)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return &EmptyResponse{}, nil
}

// deactivate marks u deactivated with every bot below it: the bots it owns,
// the bots those bots own, and so on, so that no bot outlives its owner.
// check runs first, inside the same write, on a fresh copy of u.
func (s *Service) deactivate(ctx context.Context, realmID int64, u *storage.User, check func(context.Context, *writeTx, *storage.User) error) error {
	err := s.write(ctx, realmID, func(w *writeTx) error {
		fresh, err := w.GetUser(ctx, realmID, u.ID)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(ctx, w, fresh); err != nil {
				return err
			}
		}
		gone := []storage.User{*fresh}
		yes := true
		for frontier := []int64{fresh.ID}; len(frontier) > 0; {
			bots, err := w.FindUsers(ctx, realmID, storage.UserFilter{BotOwnerIDs: frontier, Active: &yes})
			if err != nil {
				return err
			}
			frontier = frontier[:0]
			for _, b := range bots {
				if !slices.ContainsFunc(gone, func(g storage.User) bool { return g.ID == b.ID }) {
					gone = append(gone, b)
					frontier = append(frontier, b.ID)
				}
			}
		}
		for i := range gone {
			v := &gone[i]
			if !v.IsActive {
				continue
			}
			v.IsActive = false
			if err := w.UpdateUser(ctx, v, "is_active"); err != nil {
				return err
			}
			// The user's queues are dropped.
			w.emitChanging(everyone, RealmUserEvent{Op: "update", Person: map[string]any{"user_id": v.ID, "is_active": false}},
				eventq.Change{Users: []int64{v.ID}, Deactivated: true})
			if v.IsBot {
				emitBotUpdate(w, v, map[string]any{"is_active": false})
			}
		}
		return nil
	})
	if err != nil {
		return s.internal(ctx, "deactivate", err)
	}
	return nil
}

// ReactivateUserRequest is the input of ReactivateUser.
type ReactivateUserRequest struct {
	UserID int64 `json:"user_id"`
}

// ReactivateUser reactivates a deactivated user or bot. Administrators only.
func (s *Service) ReactivateUser(ctx context.Context, c Caller, req ReactivateUserRequest) (*EmptyResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		// Checked under the realm's write lock: of two concurrent
		// reactivations one succeeds and one is refused, and a bot's
		// owner deactivated meanwhile keeps the bot deactivated.
		target, err := w.reads().reactivatable(ctx, realm.ID, req.UserID)
		if err != nil {
			return err
		}
		target.IsActive = true
		if err := w.UpdateUser(ctx, target, "is_active"); err != nil {
			return err
		}
		emitUserUpdate(w, target.ID, map[string]any{"is_active": true})
		if target.IsBot {
			emitBotUpdate(w, target, map[string]any{"is_active": true})
		}
		return emitReactivation(ctx, w, realm, target)
	})
	if err != nil {
		return nil, s.internal(ctx, "reactivate user", err)
	}
	return &EmptyResponse{}, nil
}

// reactivatable is a deactivated user who may be reactivated: a bot only
// while its owner is active.
func (r reads) reactivatable(ctx context.Context, realmID, id int64) (*storage.User, error) {
	target, err := r.user(ctx, realmID, id, "reactivate user")
	if err != nil {
		return nil, err
	}
	if target.IsActive {
		return nil, clash("User is already active")
	}
	if target.IsBot && target.BotOwnerID != nil {
		owner, err := r.st.GetUser(ctx, realmID, *target.BotOwnerID)
		if err != nil {
			return nil, err
		}
		if !owner.IsActive {
			return nil, BadRequest("Cannot reactivate a bot whose owner is deactivated")
		}
	}
	return target, nil
}
