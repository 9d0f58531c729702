package chat

import (
	"context"
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/teamchat/chat/storage"
)

var (
	errInsufficient  = BadRequest("Insufficient permission")
	errOwnerRequired = &Error{Kind: KindInvalid, Code: "UNAUTHORIZED_PRINCIPAL", Msg: "Must be an organization owner"}
	errSoleOwnerRole = BadRequest("The owner permission cannot be removed from the only organization owner.")
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
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	target, err := s.store.GetUser(ctx, realm.ID, req.UserID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchUser
	} else if err != nil {
		return nil, s.internal(ctx, "update user", err)
	}
	return s.updateUser(ctx, realm, me, target, req.UserUpdate)
}

// UpdateUserByEmail is UpdateUser with the user named by email.
func (s *Service) UpdateUserByEmail(ctx context.Context, c Caller, req UpdateUserByEmailRequest) (*EmptyResponse, error) {
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	target, err := s.userByAPIOrRealEmail(ctx, realm, me, req.Email)
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
	if !canAdminUser(me, target) {
		return nil, errInsufficient
	}
	if up.NewEmail != nil && !(me.Role == RoleOwner && me.CanChangeUserEmails) {
		return nil, BadRequest("User not authorized to change user emails")
	}
	next := *target
	var columns []string
	roleChanged := false
	if up.Role != nil && *up.Role != target.Role {
		switch {
		case (*up.Role == RoleOwner || target.Role == RoleOwner) && me.Role != RoleOwner:
			return nil, errOwnerRequired
		case !isAdmin(me):
			return nil, errAdminRequired
		}
		if target.Role == RoleOwner {
			last, err := s.isLastOwner(ctx, realm.ID, target)
			if err != nil {
				return nil, err
			}
			if last {
				return nil, errSoleOwnerRole
			}
		}
		next.Role, roleChanged = *up.Role, true
		columns = append(columns, "role")
	}
	if up.FullName != nil {
		name, err := s.checkFullName(*up.FullName)
		if err != nil {
			return nil, err
		}
		if name != target.FullName {
			next.FullName = name
			columns = append(columns, "full_name")
		}
	}
	var setValues []storage.ProfileFieldValue
	var removeValues []int64
	if up.ProfileData != nil {
		var err error
		if setValues, removeValues, err = s.checkProfileData(ctx, s.store, realm.ID, target, *up.ProfileData); err != nil {
			return nil, s.internal(ctx, "update user", err)
		}
	}
	if up.NewEmail != nil {
		email, err := s.checkNewEmail(*up.NewEmail)
		if err != nil {
			return nil, err
		}
		if err := s.emailFree(ctx, s.store, realm.ID, email, target.ID); err != nil {
			return nil, err
		}
		if email != target.Email {
			next.Email = email
			columns = append(columns, "email")
		}
	}
	err := s.store.InTx(ctx, func(st storage.Store) error {
		if len(columns) > 0 {
			if err := st.UpdateUser(ctx, &next, columns...); err != nil {
				return err
			}
		}
		if roleChanged {
			if err := s.setRoleGroups(ctx, st, realm, &next); err != nil {
				return err
			}
		}
		if len(setValues) > 0 {
			if err := st.SetProfileFieldValues(ctx, setValues); err != nil {
				return err
			}
		}
		if len(removeValues) > 0 {
			return st.DeleteProfileFieldValues(ctx, realm.ID, target.ID, removeValues)
		}
		return nil
	})
	if errors.Is(err, storage.ErrConflict) {
		return nil, BadRequest("Email is already in use.")
	}
	if err != nil {
		return nil, s.internal(ctx, "update user", err)
	}
	return &EmptyResponse{}, nil
}

// isLastOwner reports whether u is the realm's only active owner.
func (s *Service) isLastOwner(ctx context.Context, realmID int64, u *storage.User) (bool, error) {
	if u.Role != RoleOwner || !u.IsActive {
		return false, nil
	}
	users, err := s.store.ListUsers(ctx, realmID)
	if err != nil {
		return false, s.internal(ctx, "count owners", err)
	}
	for _, other := range users {
		if other.ID != u.ID && other.IsActive && !other.IsBot && other.Role == RoleOwner {
			return false, nil
		}
	}
	return true, nil
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
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if !isAdmin(me) {
		return nil, errAdminRequired
	}
	if req.DeactivationNotificationComment != nil && utf8.RuneCountInString(*req.DeactivationNotificationComment) > 2000 {
		return nil, BadRequest("deactivation_notification_comment is too long (limit: 2000 characters)")
	}
	target, err := s.store.GetUser(ctx, realm.ID, req.UserID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && target.IsBot {
		return nil, errNoSuchUser
	} else if err != nil {
		return nil, s.internal(ctx, "deactivate user", err)
	}
	if !target.IsActive {
		return nil, BadRequest("User is deactivated")
	}
	if target.Role == RoleOwner && me.Role != RoleOwner {
		return nil, errOwnerRequired
	}
	if last, err := s.isLastOwner(ctx, realm.ID, target); err != nil {
		return nil, err
	} else if last {
		return nil, BadRequest("Cannot deactivate the only organization owner")
	}
	if err := s.deactivate(ctx, realm.ID, target); err != nil {
		return nil, err
	}
	return &EmptyResponse{}, nil
}

// DeactivateOwnUser deactivates the caller (and their bots). The last active
// user, and the only owner, cannot leave: CANNOT_DEACTIVATE_LAST_USER.
func (s *Service) DeactivateOwnUser(ctx context.Context, c Caller) (*EmptyResponse, error) {
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	users, err := s.store.ListUsers(ctx, realm.ID)
	if err != nil {
		return nil, s.internal(ctx, "deactivate own user", err)
	}
	active := 0
	for _, u := range users {
		if u.IsActive {
			active++
		}
	}
	if active == 1 {
		return nil, errLastUser(false)
	}
	if last, err := s.isLastOwner(ctx, realm.ID, me); err != nil {
		return nil, err
	} else if last {
		return nil, errLastUser(true)
	}
	if err := s.deactivate(ctx, realm.ID, me); err != nil {
		return nil, err
	}
	return &EmptyResponse{}, nil
}

func errLastUser(owner bool) *Error {
	entity := "user"
	if owner {
		entity = "organization owner"
	}
	return &Error{Kind: KindInvalid, Code: "CANNOT_DEACTIVATE_LAST_USER", Msg: "Cannot deactivate the only " + entity + ".",
		Fields: map[string]any{"is_last_owner": owner, "entity": entity}}
}

// deactivate marks u and the bots it owns deactivated.
func (s *Service) deactivate(ctx context.Context, realmID int64, u *storage.User) error {
	err := s.store.InTx(ctx, func(st storage.Store) error {
		users, err := st.ListUsers(ctx, realmID)
		if err != nil {
			return err
		}
		for i := range users {
			v := &users[i]
			owned := v.IsBot && v.BotOwnerID != nil && *v.BotOwnerID == u.ID
			if (v.ID == u.ID || owned) && v.IsActive {
				v.IsActive = false
				if err := st.UpdateUser(ctx, v, "is_active"); err != nil {
					return err
				}
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
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if !isAdmin(me) {
		return nil, errAdminRequired
	}
	target, err := s.store.GetUser(ctx, realm.ID, req.UserID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchUser
	} else if err != nil {
		return nil, s.internal(ctx, "reactivate user", err)
	}
	if target.IsActive {
		return nil, BadRequest("User is already active")
	}
	if target.IsBot && target.BotOwnerID != nil {
		owner, err := s.store.GetUser(ctx, realm.ID, *target.BotOwnerID)
		if err != nil {
			return nil, s.internal(ctx, "reactivate user", err)
		}
		if !owner.IsActive {
			return nil, BadRequest("Cannot reactivate a bot whose owner is deactivated")
		}
	}
	target.IsActive = true
	if err := s.store.UpdateUser(ctx, target, "is_active"); err != nil {
		return nil, s.internal(ctx, "reactivate user", err)
	}
	return &EmptyResponse{}, nil
}
