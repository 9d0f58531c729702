package chat

import (
	"context"
	"slices"

	"github.com/teamchat/chat/storage"
)

// System group names. Every organization has these groups from its
// creation; their membership follows the users' roles.
const (
	GroupInternet       = "role:internet"
	GroupEveryone       = "role:everyone"
	GroupMembers        = "role:members"
	GroupFullMembers    = "role:fullmembers"
	GroupModerators     = "role:moderators"
	GroupAdministrators = "role:administrators"
	GroupOwners         = "role:owners"
	GroupNobody         = "role:nobody"
)

// systemGroups lists the system groups with their descriptions, each
// followed by the system group that is its direct subgroup: every role's
// group is contained in the group of the next less privileged role, as in
// the reference (owners ⊂ administrators ⊂ moderators ⊂ fullmembers ⊂
// members ⊂ everyone ⊂ internet).
var systemGroups = []struct{ name, description, subgroup string }{
	{GroupOwners, "Owners of this organization", ""},
	{GroupAdministrators, "Administrators of this organization, including owners", GroupOwners},
	{GroupModerators, "Moderators of this organization, including administrators", GroupAdministrators},
	{GroupFullMembers, "Members of this organization, not including new accounts and guests", GroupModerators},
	{GroupMembers, "Everyone except guests", GroupFullMembers},
	{GroupEveryone, "Everyone including guests", GroupMembers},
	{GroupInternet, "Everyone on the internet", GroupEveryone},
	{GroupNobody, "Nobody", ""},
}

// systemGroupDisplayName is how the reference shows a system group, for
// example in a mention of it ("Everyone on the internet").
func systemGroupDisplayName(name string) string {
	switch name {
	case GroupOwners:
		return "Owners"
	case GroupAdministrators:
		return "Administrators"
	case GroupModerators:
		return "Moderators"
	case GroupFullMembers:
		return "Full members"
	case GroupMembers:
		return "Members"
	case GroupEveryone:
		return "Everyone"
	case GroupInternet:
		return "Everyone on the internet"
	case GroupNobody:
		return "Nobody"
	}
	return name
}

// createSystemGroups makes the system groups of a new realm and returns
// their IDs by name.
func createSystemGroups(ctx context.Context, st storage.Store, realmID int64, now int64) (map[string]int64, error) {
	ids := make(map[string]int64, len(systemGroups))
	for _, sg := range systemGroups {
		g := &storage.UserGroup{RealmID: realmID, Name: sg.name, Description: sg.description,
			IsSystemGroup: true, DateCreated: &now}
		if err := st.CreateGroup(ctx, g); err != nil {
			return nil, err
		}
		ids[sg.name] = g.ID
		if sg.subgroup != "" {
			if err := st.AddSubgroups(ctx, realmID, g.ID, []int64{ids[sg.subgroup]}); err != nil {
				return nil, err
			}
		}
	}
	// System groups are managed by roles: nobody may change their
	// membership; everyone may mention them (the reference's settings).
	for _, sg := range systemGroups {
		g := &storage.UserGroup{ID: ids[sg.name], RealmID: realmID,
			CanAddMembersGroupID: ids[GroupNobody], CanJoinGroupID: ids[GroupNobody], CanLeaveGroupID: ids[GroupNobody],
			CanManageGroupID: ids[GroupNobody], CanMentionGroupID: ids[GroupEveryone], CanRemoveMembersGroupID: ids[GroupNobody]}
		if err := st.UpdateGroup(ctx, g, "can_add_members_group_id", "can_join_group_id", "can_leave_group_id",
			"can_manage_group_id", "can_mention_group_id", "can_remove_members_group_id"); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// roleGroups returns the system groups a user of this role is a direct
// member of. Members are direct members of role:members, and also of
// role:fullmembers once their account is older than the realm's waiting
// period.
func roleGroups(role int, fullMember bool) []string {
	switch role {
	case RoleOwner:
		return []string{GroupOwners}
	case RoleAdministrator:
		return []string{GroupAdministrators}
	case RoleModerator:
		return []string{GroupModerators}
	case RoleGuest:
		return []string{GroupEveryone}
	default:
		if fullMember {
			return []string{GroupMembers, GroupFullMembers}
		}
		return []string{GroupMembers}
	}
}

// addToRoleGroups makes a new user a direct member of their role's system
// groups.
func (s *Service) addToRoleGroups(ctx context.Context, w *writeTx, realm *storage.Realm, u *storage.User) error {
	full := u.Role == RoleMember && s.isFullMember(realm, u)
	for _, name := range roleGroups(u.Role, full) {
		g, err := w.GetGroupByName(ctx, realm.ID, name)
		if err != nil {
			return err
		}
		if err := w.AddGroupMembers(ctx, realm.ID, g.ID, []int64{u.ID}); err != nil {
			return err
		}
		w.emit(everyone, UserGroupEvent{Op: "add_members", GroupID: g.ID, UserIDs: []int64{u.ID}})
	}
	return nil
}

// isFullMember reports whether the account is older than the realm's
// waiting period (in days).
func (s *Service) isFullMember(realm *storage.Realm, u *storage.User) bool {
	return s.nowUnix()-u.DateJoined >= int64(realm.WaitingPeriodThreshold)*86400
}

// systemGroupID returns the ID of a system group of the realm.
func (r reads) systemGroupID(ctx context.Context, realmID int64, name string) (int64, error) {
	g, err := r.st.GetGroupByName(ctx, realmID, name)
	if err != nil {
		return 0, err
	}
	return g.ID, nil
}

// setRoleGroups moves a user into the system groups of their (new) role.
func (s *Service) setRoleGroups(ctx context.Context, w *writeTx, realm *storage.Realm, u *storage.User) error {
	direct, err := w.UserGroupIDs(ctx, realm.ID, u.ID)
	if err != nil {
		return err
	}
	scope := newGroupScope(nil)
	if err := scope.load(ctx, w, realm.ID, direct...); err != nil {
		return err
	}
	for _, id := range direct {
		if scope.systemName(id) == "" {
			continue
		}
		if err := w.RemoveGroupMembers(ctx, realm.ID, id, []int64{u.ID}); err != nil {
			return err
		}
		w.emit(everyone, UserGroupEvent{Op: "remove_members", GroupID: id, UserIDs: []int64{u.ID}})
	}
	return s.addToRoleGroups(ctx, w, realm, u)
}

// PromoteFullMembers brings role:fullmembers in step with the realm's
// waiting period: members whose accounts are old enough become full
// members, and (after the period grows) younger ones stop being. It is a
// server-maintenance operation with no Caller, the counterpart of the
// reference's daily job; UpdateRealm runs it when the period changes and
// examples/server runs it every hour. It returns how many memberships
// changed.
func (s *Service) PromoteFullMembers(ctx context.Context, realmID int64) (int, error) {
	changed := 0
	err := s.write(ctx, realmID, func(w *writeTx) error {
		realm, err := w.GetRealm(ctx, realmID)
		if err != nil {
			return err
		}
		full, err := w.reads().systemGroupID(ctx, realmID, GroupFullMembers)
		if err != nil {
			return err
		}
		current, err := w.GroupMembers(ctx, realmID, full)
		if err != nil {
			return err
		}
		role := RoleMember
		users, err := w.FindUsers(ctx, realmID, storage.UserFilter{Role: &role})
		if err != nil {
			return err
		}
		var add, remove []int64
		for i := range users {
			u := &users[i]
			if u.IsSystemBot {
				continue // in no group of the organization
			}
			want := s.isFullMember(realm, u)
			has := slices.Contains(current, u.ID)
			switch {
			case want && !has:
				add = append(add, u.ID)
			case !want && has:
				remove = append(remove, u.ID)
			}
		}
		changed = len(add) + len(remove)
		if len(add) > 0 {
			if err := w.AddGroupMembers(ctx, realmID, full, add); err != nil {
				return err
			}
			w.emit(everyone, UserGroupEvent{Op: "add_members", GroupID: full, UserIDs: add})
		}
		if len(remove) > 0 {
			if err := w.RemoveGroupMembers(ctx, realmID, full, remove); err != nil {
				return err
			}
			w.emit(everyone, UserGroupEvent{Op: "remove_members", GroupID: full, UserIDs: remove})
		}
		return nil
	})
	if err != nil {
		return 0, s.internal(ctx, "promote full members", err)
	}
	return changed, nil
}
