package chat

import (
	"context"

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

// addToRoleGroups makes a new user a direct member of their role's system groups.
func (s *Service) addToRoleGroups(ctx context.Context, st storage.Store, realm *storage.Realm, u *storage.User) error {
	full := u.Role == RoleMember && s.isFullMember(realm, u)
	for _, name := range roleGroups(u.Role, full) {
		g, err := st.GetGroupByName(ctx, realm.ID, name)
		if err != nil {
			return err
		}
		if err := st.AddGroupMembers(ctx, realm.ID, g.ID, []int64{u.ID}); err != nil {
			return err
		}
	}
	return nil
}

// isFullMember reports whether the account is older than the realm's
// waiting period (in days).
func (s *Service) isFullMember(realm *storage.Realm, u *storage.User) bool {
	return s.nowUnix()-u.DateJoined >= int64(realm.WaitingPeriodThreshold)*86400
}
