package chat

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/teamchat/chat/storage"
)

// userGroupSettings are the permission settings of user groups, with the
// reference's defaults for new groups and the system groups each may not hold.
var userGroupSettings = []settingDescriptor[storage.UserGroup]{
	newSetting[storage.UserGroup]("can_add_members_group", "", GroupInternet, GroupEveryone),
	newSetting[storage.UserGroup]("can_join_group", GroupNobody, GroupInternet, GroupEveryone),
	newSetting[storage.UserGroup]("can_leave_group", GroupEveryone, GroupInternet),
	newSetting[storage.UserGroup]("can_manage_group", "", GroupInternet, GroupEveryone),
	// The spec's rule: can_mention_group is never role:owners either.
	newSetting[storage.UserGroup]("can_mention_group", GroupEveryone, GroupInternet, GroupOwners),
	newSetting[storage.UserGroup]("can_remove_members_group", GroupNobody, GroupInternet, GroupEveryone),
}

// Each setting's field in the view and the requests, found by wire name.
var (
	userGroupViewField   = settingFields[GroupSettingValue, UserGroup](userGroupSettings)
	userGroupCreateField = settingFields[*GroupSettingValue, CreateUserGroupRequest](userGroupSettings)
	userGroupUpdateField = settingFields[*GroupSettingUpdate, UpdateUserGroupRequest](userGroupSettings)
)

// UserGroup is a named user group as the API shows it.
type UserGroup struct {
	ID                    int64             `json:"id"`
	Name                  string            `json:"name"`
	Description           string            `json:"description"`
	Members               []int64           `json:"members"`
	DirectSubgroupIDs     []int64           `json:"direct_subgroup_ids"`
	IsSystemGroup         bool              `json:"is_system_group"`
	CreatorID             *int64            `json:"creator_id"`
	DateCreated           *int64            `json:"date_created"`
	Deactivated           bool              `json:"deactivated"`
	CanAddMembersGroup    GroupSettingValue `json:"can_add_members_group"`
	CanJoinGroup          GroupSettingValue `json:"can_join_group"`
	CanLeaveGroup         GroupSettingValue `json:"can_leave_group"`
	CanManageGroup        GroupSettingValue `json:"can_manage_group"`
	CanMentionGroup       GroupSettingValue `json:"can_mention_group"`
	CanRemoveMembersGroup GroupSettingValue `json:"can_remove_members_group"`
}

// view formats a loaded named group (its settings' groups loaded too).
func (g *groupScope) view(u *storage.UserGroup) UserGroup {
	v := UserGroup{ID: u.ID, Name: u.Name, Description: u.Description, Members: uniqueSorted(nonNil(g.members[u.ID])),
		DirectSubgroupIDs: uniqueSorted(nonNil(g.subs[u.ID])), IsSystemGroup: u.IsSystemGroup, CreatorID: u.CreatorID,
		DateCreated: u.DateCreated, Deactivated: u.Deactivated}
	for i, set := range userGroupSettings {
		*userGroupViewField[i](&v) = g.value(*set.field(u))
	}
	return v
}

// settingIDs lists the groups that hold the settings of the records.
func settingIDs[R any](sets []settingDescriptor[R], recs ...*R) []int64 {
	var ids []int64
	for _, r := range recs {
		for _, set := range sets {
			ids = append(ids, *set.field(r))
		}
	}
	return ids
}

// errBotRequest answers bots on endpoints meant for humans.
var errBotRequest = refused("This endpoint does not accept bot requests.")

// requireMemberOrAdmin refuses guests and bots, as the reference's
// member-or-admin endpoints do.
func requireMemberOrAdmin(u *storage.User) error {
	if u.Role == RoleGuest {
		return errGuestNotAllowed
	}
	if u.IsBot {
		return errBotRequest
	}
	return nil
}

// GetUserGroupsRequest is the input of GetUserGroups.
type GetUserGroupsRequest struct {
	IncludeDeactivatedGroups *bool `json:"include_deactivated_groups"`
}

// GetUserGroupsResponse is the success body of GetUserGroups.
type GetUserGroupsResponse struct {
	UserGroups []UserGroup `json:"user_groups"`
}

// GetUserGroups lists the organization's named groups, system groups
// included. Guests and bots may not. Its cost follows the answer: the
// groups with their members and settings.
func (s *Service) GetUserGroups(ctx context.Context, c Caller, req GetUserGroupsRequest) (*GetUserGroupsResponse, error) {
	return s.reads().getUserGroups(ctx, c, req)
}

// getUserGroups is GetUserGroups reading through r.
func (r reads) getUserGroups(ctx context.Context, c Caller, req GetUserGroupsRequest) (*GetUserGroupsResponse, error) {
	_, realm, err := r.member(ctx, c)
	if err != nil {
		return nil, err
	}
	return r.listUserGroups(ctx, realm, req)
}

// listUserGroups lists the named groups for anyone (registration gives
// them to guests and bots too).
func (r reads) listUserGroups(ctx context.Context, realm *storage.Realm, req GetUserGroupsRequest) (*GetUserGroupsResponse, error) {
	named, err := r.st.ListGroups(ctx, realm.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get user groups", err)
	}
	named = slices.DeleteFunc(named, func(g storage.UserGroup) bool {
		return g.Deactivated && (req.IncludeDeactivatedGroups == nil || !*req.IncludeDeactivatedGroups)
	})
	scope := newGroupScope(nil)
	var ids []int64
	for i := range named {
		ids = append(ids, named[i].ID)
		ids = append(ids, settingIDs(userGroupSettings, &named[i])...)
	}
	err = scope.load(ctx, r.st, realm.ID, ids...)
	if err == nil {
		err = scope.loadContents(ctx, r.st, realm.ID, groupIDs(named)...)
	}
	if err != nil {
		return nil, r.s.internal(ctx, "get user groups", err)
	}
	resp := &GetUserGroupsResponse{UserGroups: make([]UserGroup, 0, len(named))}
	for i := range named {
		resp.UserGroups = append(resp.UserGroups, scope.view(&named[i]))
	}
	return resp, nil
}

// CreateUserGroupRequest is the input of CreateUserGroup.
type CreateUserGroupRequest struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Members     []int64 `json:"members"`
	// Subgroups may be any named groups: the creator may add them
	// irrespective of other permissions.
	Subgroups             *[]int64           `json:"subgroups"`
	CanAddMembersGroup    *GroupSettingValue `json:"can_add_members_group"`
	CanJoinGroup          *GroupSettingValue `json:"can_join_group"`
	CanLeaveGroup         *GroupSettingValue `json:"can_leave_group"`
	CanManageGroup        *GroupSettingValue `json:"can_manage_group"`
	CanMentionGroup       *GroupSettingValue `json:"can_mention_group"`
	CanRemoveMembersGroup *GroupSettingValue `json:"can_remove_members_group"`
}

// CreateUserGroupResponse is the success body of CreateUserGroup.
type CreateUserGroupResponse struct {
	GroupID int64 `json:"group_id"`
}

var groupNamePrefixes = []string{"@", "role:", "user:", "stream:", "channel:"}

func (s *Service) checkGroupName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", BadRequest("User group name can't be empty.")
	}
	if utf8.RuneCountInString(name) > s.limits.MaxGroupNameLength {
		return "", BadRequest("User group name cannot exceed %d characters.", s.limits.MaxGroupNameLength)
	}
	for _, p := range groupNamePrefixes {
		if strings.HasPrefix(name, p) {
			return "", BadRequest("User group name cannot start with '%s'.", p)
		}
	}
	return name, nil
}

// maxGroupChange bounds the users or subgroups one request may add or remove.
const maxGroupChange = 10000

// checkIDList de-duplicates a list of IDs from a request and bounds its size.
func checkIDList(name string, ids []int64) ([]int64, error) {
	out := uniqueSorted(ids)
	if len(out) > maxGroupChange {
		return nil, BadRequest("Too many IDs in '%s' (limit: %d).", name, maxGroupChange)
	}
	return out, nil
}

// CreateUserGroup creates a named group. Members of the organization (not
// guests or bots) may. Unknown or deactivated users, and unknown groups,
// are BAD_REQUEST; settings that name a system group they may not hold
// (can_manage_group: role:internet or role:everyone; can_mention_group:
// role:internet or role:owners; ...) too.
func (s *Service) CreateUserGroup(ctx context.Context, c Caller, req CreateUserGroupRequest) (*CreateUserGroupResponse, error) {
	me, realm, err := s.reads().member(ctx, c)
	if err != nil {
		return nil, err
	}
	name, err := s.checkGroupName(req.Name)
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(req.Description) > 1024 {
		return nil, BadRequest("User group description cannot exceed 1024 characters.")
	}
	members, err := checkIDList("members", req.Members)
	if err != nil {
		return nil, err
	}
	var subgroups []int64
	if req.Subgroups != nil {
		if subgroups, err = checkIDList("subgroups", *req.Subgroups); err != nil {
			return nil, err
		}
	}
	now := s.nowUnix()
	group := &storage.UserGroup{RealmID: realm.ID, Name: name, Description: req.Description, CreatorID: &me.ID, DateCreated: &now}
	var view UserGroup
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		if err := w.reads().checkActiveUsers(ctx, realm.ID, members); err != nil {
			return err
		}
		scope := newGroupScope(nil)
		if err := scope.load(ctx, w, realm.ID, subgroups...); err != nil {
			return err
		}
		for _, id := range subgroups {
			if sg := scope.named(id); sg == nil || sg.Deactivated {
				return noSuch("Invalid user group ID: %d", id)
			}
		}
		for i, set := range userGroupSettings {
			id, err := w.reads().newGroupSetting(ctx, realm.ID, me, set, *userGroupCreateField[i](&req))
			if err != nil {
				return err
			}
			*set.field(group) = id
		}
		if err := w.CreateGroup(ctx, group); err != nil {
			if errors.Is(err, storage.ErrConflict) {
				return clash("User group '%s' already exists.", name)
			}
			return err
		}
		if err := w.AddGroupMembers(ctx, realm.ID, group.ID, members); err != nil {
			return err
		}
		if err := w.AddSubgroups(ctx, realm.ID, group.ID, subgroups); err != nil {
			return err
		}
		if err := scope.load(ctx, w, realm.ID, settingIDs(userGroupSettings, group)...); err != nil {
			return err
		}
		if err := scope.loadContents(ctx, w, realm.ID, group.ID); err != nil {
			return err
		}
		view = scope.view(group)
		// The reference announces the subgroups in an event of their own.
		view.DirectSubgroupIDs = []int64{}
		w.emit(everyone, UserGroupEvent{Op: "add", Group: &view})
		if len(subgroups) > 0 {
			w.emit(everyone, UserGroupEvent{Op: "add_subgroups", GroupID: group.ID, DirectSubgroupIDs: subgroups})
		}
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "create user group", err)
	}
	return &CreateUserGroupResponse{GroupID: group.ID}, nil
}

// newGroupSetting stores the value of a setting of a new group (or its
// default) after checking it against the setting's rules.
func (r reads) newGroupSetting(ctx context.Context, realmID int64, me *storage.User, set settingDescriptor[storage.UserGroup], v *GroupSettingValue) (int64, error) {
	if v != nil {
		c, err := r.collapse(ctx, realmID, *v)
		if err != nil {
			return 0, err
		}
		v = &c
	}
	if v == nil {
		if set.def == "" {
			v = &GroupSettingValue{DirectMembers: []int64{me.ID}, DirectSubgroups: []int64{}}
		} else {
			id, err := r.systemGroupID(ctx, realmID, set.def)
			if err != nil {
				return 0, err
			}
			v = &GroupSettingValue{GroupID: &id}
		}
	}
	if v.GroupID != nil {
		scope := newGroupScope(nil)
		if err := scope.load(ctx, r.st, realmID, *v.GroupID); err != nil {
			return 0, err
		}
		if err := set.checkAllowed(scope, *v); err != nil {
			return 0, err
		}
	}
	return r.s.storeGroupSetting(ctx, r.st, realmID, set.name, *v)
}

// checkActiveUsers checks, with one query, that every ID is an active
// user of the realm.
func (r reads) checkActiveUsers(ctx context.Context, realmID int64, ids []int64) error {
	ids = uniqueSorted(ids)
	if len(ids) == 0 {
		return nil
	}
	active := true
	users, err := r.st.FindUsers(ctx, realmID, storage.UserFilter{IDs: ids, Active: &active})
	if err != nil {
		return err
	}
	if missing, ok := firstMissing(ids, users, func(u storage.User) int64 { return u.ID }); ok {
		return noSuch("Invalid user ID: %d", missing)
	}
	return nil
}

var errNoSuchGroup = noSuch("Invalid user group")

// groupForUpdate loads a named, non-system group of the realm, its direct
// members and subgroups, the groups of its settings, and the caller's
// groups.
func (r reads) groupForUpdate(ctx context.Context, realmID, groupID int64, me *storage.User) (*groupScope, *storage.UserGroup, error) {
	scope, err := r.callerScope(ctx, realmID, me.ID)
	if err != nil {
		return nil, nil, err
	}
	if err := scope.load(ctx, r.st, realmID, groupID); err != nil {
		return nil, nil, err
	}
	g := scope.named(groupID)
	if g == nil {
		return nil, nil, errNoSuchGroup
	}
	if g.IsSystemGroup {
		return nil, nil, errInsufficient
	}
	if err := scope.load(ctx, r.st, realmID, settingIDs(userGroupSettings, g)...); err != nil {
		return nil, nil, err
	}
	if err := scope.loadContents(ctx, r.st, realmID, g.ID); err != nil {
		return nil, nil, err
	}
	return scope, g, nil
}

// canManage: administrators manage every group; others need can_manage_group.
func (g *groupScope) canManage(me *storage.User, group *storage.UserGroup) bool {
	return isAdmin(me) || g.in(group.CanManageGroupID)
}

// UpdateUserGroupRequest is the input of UpdateUserGroup.
type UpdateUserGroupRequest struct {
	UserGroupID           int64               `json:"user_group_id"`
	Name                  *string             `json:"name"`
	Description           *string             `json:"description"`
	CanAddMembersGroup    *GroupSettingUpdate `json:"can_add_members_group"`
	CanJoinGroup          *GroupSettingUpdate `json:"can_join_group"`
	CanLeaveGroup         *GroupSettingUpdate `json:"can_leave_group"`
	CanManageGroup        *GroupSettingUpdate `json:"can_manage_group"`
	CanMentionGroup       *GroupSettingUpdate `json:"can_mention_group"`
	CanRemoveMembersGroup *GroupSettingUpdate `json:"can_remove_members_group"`
}

// UpdateUserGroup renames a group, changes its description or its
// permission settings. Administrators and members of can_manage_group may;
// system groups cannot be changed.
func (s *Service) UpdateUserGroup(ctx context.Context, c Caller, req UpdateUserGroupRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().member(ctx, c)
	if err != nil {
		return nil, err
	}
	changed := req.Name != nil || req.Description != nil
	for i := range userGroupSettings {
		changed = changed || *userGroupUpdateField[i](&req) != nil
	}
	if !changed {
		return nil, BadRequest("No new data supplied")
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		scope, group, err := w.reads().groupForUpdate(ctx, realm.ID, req.UserGroupID, me)
		if err != nil {
			return err
		}
		if !scope.canManage(me, group) {
			return errInsufficient
		}
		next := *group
		var columns []string
		data := map[string]any{}
		if req.Name != nil {
			name, err := s.checkGroupName(*req.Name)
			if err != nil {
				return err
			}
			next.Name, columns, data["name"] = name, append(columns, "name"), name
		}
		if req.Description != nil {
			if utf8.RuneCountInString(*req.Description) > 1024 {
				return BadRequest("User group description cannot exceed 1024 characters.")
			}
			next.Description, columns, data["description"] = *req.Description, append(columns, "description"), *req.Description
		}
		for i, set := range userGroupSettings {
			up := *userGroupUpdateField[i](&req)
			if up == nil {
				continue
			}
			id, err := w.reads().updateGroupSetting(ctx, realm.ID, set.name, scope.value(*set.field(group)), up, func(v GroupSettingValue) (int64, error) {
				return w.reads().newGroupSetting(ctx, realm.ID, me, set, &v)
			})
			if err != nil {
				return err
			}
			if err := scope.load(ctx, w, realm.ID, id); err != nil {
				return err
			}
			*set.field(&next) = id
			columns, data[set.name] = append(columns, set.column()), scope.value(id)
		}
		err = w.UpdateGroup(ctx, &next, columns...)
		if errors.Is(err, storage.ErrConflict) {
			return clash("User group '%s' already exists.", next.Name)
		} else if err != nil {
			return err
		}
		w.emit(everyone, UserGroupEvent{Op: "update", GroupID: group.ID, Data: data})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "update user group", err)
	}
	return &EmptyResponse{}, nil
}

// DeactivateUserGroupRequest is the input of DeactivateUserGroup.
type DeactivateUserGroupRequest struct {
	UserGroupID int64 `json:"user_group_id"`
}

// DeactivateUserGroup deactivates a group that nothing uses. A group that
// holds a permission of the organization, of another active group or of a
// channel (directly or as a subgroup of an anonymous setting group)
// answers CANNOT_DEACTIVATE_GROUP_IN_USE with the objections.
func (s *Service) DeactivateUserGroup(ctx context.Context, c Caller, req DeactivateUserGroupRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().member(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		scope, group, err := w.reads().groupForUpdate(ctx, realm.ID, req.UserGroupID, me)
		if err != nil {
			return err
		}
		if !scope.canManage(me, group) {
			return errInsufficient
		}
		if group.Deactivated {
			return clash("User group is already deactivated.")
		}
		objections, err := w.reads().groupObjections(ctx, realm, group.ID)
		if err != nil {
			return err
		}
		if len(objections) > 0 {
			return errGroupInUse(objections)
		}
		next := *group
		next.Deactivated = true
		if err := w.UpdateGroup(ctx, &next, "deactivated"); err != nil {
			return err
		}
		// Both, as the reference sends them: queues that include
		// deactivated groups keep the first, the others the second.
		w.emit(everyone, UserGroupEvent{Op: "update", GroupID: group.ID, Data: map[string]any{"deactivated": true}})
		w.emit(everyone, UserGroupEvent{Op: "remove", GroupID: group.ID})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "deactivate user group", err)
	}
	return &EmptyResponse{}, nil
}

// groupObjections lists where a group is used, in the reference's shape:
// the settings that name it directly, or through an anonymous group that
// has it as a direct subgroup.
func (r reads) groupObjections(ctx context.Context, realm *storage.Realm, target int64) ([]map[string]any, error) {
	holders := []int64{target}
	parents, err := r.st.SupergroupIDs(ctx, realm.ID, target)
	if err != nil {
		return nil, err
	}
	scope := newGroupScope(nil)
	if err := scope.load(ctx, r.st, realm.ID, parents...); err != nil {
		return nil, err
	}
	for _, id := range parents {
		if g := scope.groups[id]; g != nil && g.Name == "" {
			holders = append(holders, id)
		}
	}
	uses := func(id int64) bool { return slices.Contains(holders, id) }
	// In the reference's order: supergroups, channels, groups, the
	// organization.
	var out []map[string]any
	var supergroups []int64
	for _, id := range parents {
		if g := scope.named(id); g != nil && !g.Deactivated {
			supergroups = append(supergroups, id)
		}
	}
	if len(supergroups) > 0 {
		out = append(out, map[string]any{"type": "subgroup", "supergroup_ids": supergroups})
	}
	channels, err := r.st.ListStreamsUsingGroups(ctx, realm.ID, holders)
	if err != nil {
		return nil, err
	}
	for i := range channels {
		var settings []string
		for _, set := range channelSettings {
			if uses(*set.field(&channels[i])) {
				settings = append(settings, set.name)
			}
		}
		out = append(out, map[string]any{"type": "channel", "channel_id": channels[i].ID, "settings": settings})
	}
	groups, err := r.st.ListGroupsUsingGroups(ctx, realm.ID, holders)
	if err != nil {
		return nil, err
	}
	for i := range groups {
		if groups[i].ID == target {
			continue
		}
		var settings []string
		for _, set := range userGroupSettings {
			if uses(*set.field(&groups[i])) {
				settings = append(settings, set.name)
			}
		}
		out = append(out, map[string]any{"type": "user_group", "group_id": groups[i].ID, "settings": settings})
	}
	var realmSettings []string
	for _, set := range realmGroupSettings {
		if id := *set.field(realm); id != 0 && uses(id) {
			realmSettings = append(realmSettings, set.name)
		}
	}
	if len(realmSettings) > 0 {
		out = append(out, map[string]any{"type": "realm", "settings": realmSettings})
	}
	return out, nil
}

func groupIDs(gs []storage.UserGroup) []int64 {
	out := make([]int64, len(gs))
	for i := range gs {
		out[i] = gs[i].ID
	}
	return out
}
