package chat

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/teamchat/chat/storage"
)

// groupSetting describes one permission setting of user groups: its wire
// name, where it lives in the record, which system groups it may not be
// set to, and its default for new groups ("" means the creator alone).
type groupSetting struct {
	name       string
	field      func(g *storage.UserGroup) *int64
	disallowed []string
	def        string
}

var userGroupSettings = []groupSetting{
	{"can_add_members_group", func(g *storage.UserGroup) *int64 { return &g.CanAddMembersGroupID }, []string{GroupInternet, GroupEveryone}, ""},
	{"can_join_group", func(g *storage.UserGroup) *int64 { return &g.CanJoinGroupID }, []string{GroupInternet}, GroupNobody},
	{"can_leave_group", func(g *storage.UserGroup) *int64 { return &g.CanLeaveGroupID }, []string{GroupInternet}, GroupEveryone},
	{"can_manage_group", func(g *storage.UserGroup) *int64 { return &g.CanManageGroupID }, []string{GroupInternet, GroupEveryone}, ""},
	{"can_mention_group", func(g *storage.UserGroup) *int64 { return &g.CanMentionGroupID }, []string{GroupInternet, GroupOwners}, GroupEveryone},
	{"can_remove_members_group", func(g *storage.UserGroup) *int64 { return &g.CanRemoveMembersGroupID }, []string{GroupInternet, GroupEveryone}, GroupNobody},
}

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

// groupGraph is a realm's groups, memberships and subgroup relations,
// loaded at once so permission checks and listings cost two queries.
type groupGraph struct {
	groups  map[int64]*storage.UserGroup
	members map[int64][]int64 // group -> direct members
	subs    map[int64][]int64 // group -> direct subgroups
	userIn  map[int64][]int64 // user -> groups directly in
}

func (s *Service) loadGroupGraph(ctx context.Context, st storage.Store, realmID int64) (*groupGraph, error) {
	named, err := st.ListGroups(ctx, realmID)
	if err != nil {
		return nil, err
	}
	memberships, err := st.ListGroupMemberships(ctx, realmID)
	if err != nil {
		return nil, err
	}
	edges, err := st.ListGroupEdges(ctx, realmID)
	if err != nil {
		return nil, err
	}
	g := &groupGraph{groups: map[int64]*storage.UserGroup{}, members: map[int64][]int64{}, subs: map[int64][]int64{}, userIn: map[int64][]int64{}}
	for i := range named {
		g.groups[named[i].ID] = &named[i]
	}
	for _, m := range memberships {
		g.members[m.GroupID] = append(g.members[m.GroupID], m.UserID)
		g.userIn[m.UserID] = append(g.userIn[m.UserID], m.GroupID)
	}
	for _, e := range edges {
		g.subs[e.GroupID] = append(g.subs[e.GroupID], e.SubgroupID)
	}
	return g, nil
}

// reachable lists the group and every group nested in it (each once, so
// cycles end).
func (g *groupGraph) reachable(groupID int64) []int64 {
	seen := map[int64]bool{groupID: true}
	out := []int64{groupID}
	for i := 0; i < len(out); i++ {
		for _, sub := range g.subs[out[i]] {
			if !seen[sub] {
				seen[sub] = true
				out = append(out, sub)
			}
		}
	}
	return out
}

// has reports whether the user is in the group, directly or through
// nested subgroups.
func (g *groupGraph) has(groupID, userID int64) bool {
	mine := g.userIn[userID]
	for _, id := range g.reachable(groupID) {
		if slices.Contains(mine, id) {
			return true
		}
	}
	return false
}

// recursiveMembers lists the users in the group or any nested group, ascending.
func (g *groupGraph) recursiveMembers(groupID int64) []int64 {
	var out []int64
	for _, id := range g.reachable(groupID) {
		out = append(out, g.members[id]...)
	}
	slices.Sort(out)
	return slices.Compact(nonNil(out))
}

// value is the wire form of a setting held by group id.
func (g *groupGraph) value(id int64) GroupSettingValue {
	if _, named := g.groups[id]; named {
		return GroupSettingValue{GroupID: &id}
	}
	m, sub := slices.Clone(g.members[id]), slices.Clone(g.subs[id])
	slices.Sort(m)
	slices.Sort(sub)
	return GroupSettingValue{DirectMembers: nonNil(m), DirectSubgroups: nonNil(sub)}
}

func (g *groupGraph) view(u *storage.UserGroup) UserGroup {
	subs := slices.Clone(g.subs[u.ID])
	slices.Sort(subs)
	members := slices.Clone(g.members[u.ID])
	slices.Sort(members)
	v := UserGroup{ID: u.ID, Name: u.Name, Description: u.Description, Members: nonNil(members),
		DirectSubgroupIDs: nonNil(subs), IsSystemGroup: u.IsSystemGroup, CreatorID: u.CreatorID,
		DateCreated: u.DateCreated, Deactivated: u.Deactivated}
	for _, set := range []struct {
		id  int64
		out *GroupSettingValue
	}{
		{u.CanAddMembersGroupID, &v.CanAddMembersGroup}, {u.CanJoinGroupID, &v.CanJoinGroup},
		{u.CanLeaveGroupID, &v.CanLeaveGroup}, {u.CanManageGroupID, &v.CanManageGroup},
		{u.CanMentionGroupID, &v.CanMentionGroup}, {u.CanRemoveMembersGroupID, &v.CanRemoveMembersGroup},
	} {
		*set.out = g.value(set.id)
	}
	return v
}

// requireMemberOrAdmin refuses guests and bots, as the reference's
// member-or-admin endpoints do.
func requireMemberOrAdmin(u *storage.User) error {
	if u.Role == RoleGuest {
		return BadRequest("Not allowed for guest users")
	}
	if u.IsBot {
		return BadRequest("This endpoint does not accept bot requests.")
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
// included. Guests and bots may not.
func (s *Service) GetUserGroups(ctx context.Context, c Caller, req GetUserGroupsRequest) (*GetUserGroupsResponse, error) {
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := requireMemberOrAdmin(me); err != nil {
		return nil, err
	}
	g, err := s.loadGroupGraph(ctx, s.store, realm.ID)
	if err != nil {
		return nil, s.internal(ctx, "get user groups", err)
	}
	resp := &GetUserGroupsResponse{UserGroups: []UserGroup{}}
	ids := make([]int64, 0, len(g.groups))
	for id := range g.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		u := g.groups[id]
		if u.Deactivated && (req.IncludeDeactivatedGroups == nil || !*req.IncludeDeactivatedGroups) {
			continue
		}
		resp.UserGroups = append(resp.UserGroups, g.view(u))
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

func (r CreateUserGroupRequest) settings() []*GroupSettingValue {
	return []*GroupSettingValue{r.CanAddMembersGroup, r.CanJoinGroup, r.CanLeaveGroup, r.CanManageGroup, r.CanMentionGroup, r.CanRemoveMembersGroup}
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

// CreateUserGroup creates a named group. Members of the organization (not
// guests) may. Unknown or deactivated users, and unknown groups, are
// BAD_REQUEST; settings that name a system group they may not hold
// (can_manage_group: role:internet or role:everyone; can_mention_group:
// role:internet or role:owners; ...) too.
func (s *Service) CreateUserGroup(ctx context.Context, c Caller, req CreateUserGroupRequest) (*CreateUserGroupResponse, error) {
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if me.Role == RoleGuest {
		return nil, BadRequest("Not allowed for guest users")
	}
	name, err := s.checkGroupName(req.Name)
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(req.Description) > 1024 {
		return nil, BadRequest("User group description cannot exceed 1024 characters.")
	}
	now := s.nowUnix()
	group := &storage.UserGroup{RealmID: realm.ID, Name: name, Description: req.Description, CreatorID: &me.ID, DateCreated: &now}
	err = s.store.InTx(ctx, func(st storage.Store) error {
		graph, err := s.loadGroupGraph(ctx, st, realm.ID)
		if err != nil {
			return err
		}
		if err := s.checkActiveUsers(ctx, st, realm.ID, req.Members); err != nil {
			return err
		}
		var subgroups []int64
		if req.Subgroups != nil {
			subgroups = *req.Subgroups
			for _, id := range subgroups {
				if sg := graph.groups[id]; sg == nil || sg.Deactivated {
					return BadRequest("Invalid user group ID: %d", id)
				}
			}
		}
		for i, set := range userGroupSettings {
			id, err := s.newGroupSetting(ctx, st, graph, realm.ID, me, set, req.settings()[i])
			if err != nil {
				return err
			}
			*set.field(group) = id
		}
		if err := st.CreateGroup(ctx, group); err != nil {
			if errors.Is(err, storage.ErrConflict) {
				return BadRequest("User group '%s' already exists.", name)
			}
			return err
		}
		if err := st.AddGroupMembers(ctx, realm.ID, group.ID, req.Members); err != nil {
			return err
		}
		return st.AddSubgroups(ctx, realm.ID, group.ID, subgroups)
	})
	if err != nil {
		return nil, s.internal(ctx, "create user group", err)
	}
	return &CreateUserGroupResponse{GroupID: group.ID}, nil
}

// newGroupSetting stores the value of a setting of a new group (or its
// default) after checking it against the setting's rules.
func (s *Service) newGroupSetting(ctx context.Context, st storage.Store, graph *groupGraph, realmID int64, me *storage.User, set groupSetting, v *GroupSettingValue) (int64, error) {
	if v == nil {
		if set.def == "" {
			v = &GroupSettingValue{DirectMembers: []int64{me.ID}, DirectSubgroups: []int64{}}
		} else {
			id, err := systemGroupID(ctx, st, realmID, set.def)
			if err != nil {
				return 0, err
			}
			v = &GroupSettingValue{GroupID: &id}
		}
	}
	if v.GroupID != nil {
		if g := graph.groups[*v.GroupID]; g != nil && g.IsSystemGroup && slices.Contains(set.disallowed, g.Name) {
			return 0, BadRequest("'%s' setting cannot be set to '%s' group.", set.name, g.Name)
		}
	}
	return s.storeGroupSetting(ctx, st, realmID, set.name, *v)
}

// checkActiveUsers checks that every ID is an active user of the realm.
func (s *Service) checkActiveUsers(ctx context.Context, st storage.Store, realmID int64, ids []int64) error {
	for _, id := range ids {
		u, err := st.GetUser(ctx, realmID, id)
		if errors.Is(err, storage.ErrNotFound) || err == nil && !u.IsActive {
			return BadRequest("Invalid user ID: %d", id)
		} else if err != nil {
			return err
		}
	}
	return nil
}

var errNoSuchGroup = BadRequest("Invalid user group")

// loadGroupForUpdate loads a named, non-system group of the realm and the
// graph around it.
func (s *Service) loadGroupForUpdate(ctx context.Context, st storage.Store, realmID, groupID int64) (*groupGraph, *storage.UserGroup, error) {
	graph, err := s.loadGroupGraph(ctx, st, realmID)
	if err != nil {
		return nil, nil, err
	}
	g := graph.groups[groupID]
	if g == nil {
		return nil, nil, errNoSuchGroup
	}
	if g.IsSystemGroup {
		return nil, nil, errInsufficient
	}
	return graph, g, nil
}

// canManage: administrators manage every group; others need can_manage_group.
func (g *groupGraph) canManage(me *storage.User, group *storage.UserGroup) bool {
	return isAdmin(me) || g.has(group.CanManageGroupID, me.ID)
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

func (r UpdateUserGroupRequest) settings() []*GroupSettingUpdate {
	return []*GroupSettingUpdate{r.CanAddMembersGroup, r.CanJoinGroup, r.CanLeaveGroup, r.CanManageGroup, r.CanMentionGroup, r.CanRemoveMembersGroup}
}

// UpdateUserGroup renames a group, changes its description or its
// permission settings. Administrators and members of can_manage_group may;
// system groups cannot be changed.
func (s *Service) UpdateUserGroup(ctx context.Context, c Caller, req UpdateUserGroupRequest) (*EmptyResponse, error) {
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := requireMemberOrAdmin(me); err != nil {
		return nil, err
	}
	changed := req.Name != nil || req.Description != nil
	for _, u := range req.settings() {
		changed = changed || u != nil
	}
	if !changed {
		return nil, BadRequest("No new data supplied")
	}
	err = s.store.InTx(ctx, func(st storage.Store) error {
		graph, group, err := s.loadGroupForUpdate(ctx, st, realm.ID, req.UserGroupID)
		if err != nil {
			return err
		}
		if !graph.canManage(me, group) {
			return errInsufficient
		}
		next := *group
		var columns []string
		if req.Name != nil {
			name, err := s.checkGroupName(*req.Name)
			if err != nil {
				return err
			}
			next.Name, columns = name, append(columns, "name")
		}
		if req.Description != nil {
			if utf8.RuneCountInString(*req.Description) > 1024 {
				return BadRequest("User group description cannot exceed 1024 characters.")
			}
			next.Description, columns = *req.Description, append(columns, "description")
		}
		for i, set := range userGroupSettings {
			up := req.settings()[i]
			if up == nil {
				continue
			}
			id, err := updateGroupSetting(graph.value(*set.field(group)), up, func(v GroupSettingValue) (int64, error) {
				return s.newGroupSetting(ctx, st, graph, realm.ID, me, set, &v)
			})
			if err != nil {
				return err
			}
			*set.field(&next) = id
			columns = append(columns, set.name+"_id")
		}
		err = st.UpdateGroup(ctx, &next, columns...)
		if errors.Is(err, storage.ErrConflict) {
			return BadRequest("User group '%s' already exists.", next.Name)
		}
		return err
	})
	if err != nil {
		return nil, s.internal(ctx, "update user group", err)
	}
	return &EmptyResponse{}, nil
}

// UpdateUserGroupMembersRequest is the input of UpdateUserGroupMembers.
type UpdateUserGroupMembersRequest struct {
	UserGroupID     int64    `json:"user_group_id"`
	Add             *[]int64 `json:"add"`
	Delete          *[]int64 `json:"delete"`
	AddSubgroups    *[]int64 `json:"add_subgroups"`
	DeleteSubgroups *[]int64 `json:"delete_subgroups"`
}

// UpdateUserGroupMembers adds and removes members and subgroups. Joining
// (adding oneself) takes can_join_group, leaving can_leave_group, adding
// others can_add_members_group, removing others can_remove_members_group;
// administrators and members of can_manage_group may do all, and only they
// change subgroups. A subgroup that would make a cycle is refused.
func (s *Service) UpdateUserGroupMembers(ctx context.Context, c Caller, req UpdateUserGroupMembersRequest) (*EmptyResponse, error) {
	if req.Add == nil && req.Delete == nil && req.AddSubgroups == nil && req.DeleteSubgroups == nil {
		return nil, BadRequest("Nothing to do. Specify at least one of 'add', 'delete', 'add_subgroups' or 'delete_subgroups'.")
	}
	return s.changeGroup(ctx, c, req)
}

// UpdateUserGroupSubgroupsRequest is the input of UpdateUserGroupSubgroups.
type UpdateUserGroupSubgroupsRequest struct {
	UserGroupID int64    `json:"user_group_id"`
	Add         *[]int64 `json:"add"`
	Delete      *[]int64 `json:"delete"`
}

// UpdateUserGroupSubgroups adds and removes subgroups (see
// UpdateUserGroupMembers for the rules).
func (s *Service) UpdateUserGroupSubgroups(ctx context.Context, c Caller, req UpdateUserGroupSubgroupsRequest) (*EmptyResponse, error) {
	if req.Add == nil && req.Delete == nil {
		return nil, BadRequest("Nothing to do. Specify at least one of 'add' or 'delete'.")
	}
	return s.changeGroup(ctx, c, UpdateUserGroupMembersRequest{UserGroupID: req.UserGroupID, AddSubgroups: req.Add, DeleteSubgroups: req.Delete})
}

func (s *Service) changeGroup(ctx context.Context, c Caller, req UpdateUserGroupMembersRequest) (*EmptyResponse, error) {
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := requireMemberOrAdmin(me); err != nil {
		return nil, err
	}
	deref := func(p *[]int64) []int64 {
		if p == nil {
			return nil
		}
		return *p
	}
	add, del, addSubs, delSubs := deref(req.Add), deref(req.Delete), deref(req.AddSubgroups), deref(req.DeleteSubgroups)
	err = s.store.InTx(ctx, func(st storage.Store) error {
		graph, group, err := s.loadGroupForUpdate(ctx, st, realm.ID, req.UserGroupID)
		if err != nil {
			return err
		}
		if group.Deactivated {
			return BadRequest("You can't make changes to a deactivated user group.")
		}
		manage := graph.canManage(me, group)
		direct := graph.members[group.ID]
		for _, id := range add {
			allowed := manage || graph.has(group.CanAddMembersGroupID, me.ID) || id == me.ID && graph.has(group.CanJoinGroupID, me.ID)
			if !allowed {
				return errInsufficient
			}
			if slices.Contains(direct, id) {
				return BadRequest("User %d is already a member of this group", id)
			}
		}
		if err := s.checkActiveUsers(ctx, st, realm.ID, add); err != nil {
			return err
		}
		for _, id := range del {
			allowed := manage || graph.has(group.CanRemoveMembersGroupID, me.ID) || id == me.ID && graph.has(group.CanLeaveGroupID, me.ID)
			if !allowed {
				return errInsufficient
			}
			if !slices.Contains(direct, id) {
				return BadRequest("There is no member '%d' in this user group", id)
			}
		}
		if (len(addSubs) > 0 || len(delSubs) > 0) && !manage {
			return errInsufficient
		}
		for _, id := range addSubs {
			sg := graph.groups[id]
			switch {
			case sg == nil || sg.Deactivated:
				return BadRequest("Invalid user group ID: %d", id)
			case slices.Contains(graph.subs[group.ID], id):
				return BadRequest("User group %d is already a subgroup of this group.", id)
			case slices.Contains(graph.reachable(id), group.ID):
				return BadRequest("User group %d is a supergroup of this group: adding it would make a cycle.", id)
			}
		}
		for _, id := range delSubs {
			if !slices.Contains(graph.subs[group.ID], id) {
				return BadRequest("User group %d is not a subgroup of this group.", id)
			}
		}
		if err := st.AddGroupMembers(ctx, realm.ID, group.ID, add); err != nil {
			return err
		}
		if err := st.RemoveGroupMembers(ctx, realm.ID, group.ID, del); err != nil {
			return err
		}
		if err := st.AddSubgroups(ctx, realm.ID, group.ID, addSubs); err != nil {
			return err
		}
		return st.RemoveSubgroups(ctx, realm.ID, group.ID, delSubs)
	})
	if err != nil {
		return nil, s.internal(ctx, "update user group members", err)
	}
	return &EmptyResponse{}, nil
}

// GetUserGroupMembersRequest is the input of GetUserGroupMembers.
type GetUserGroupMembersRequest struct {
	UserGroupID int64 `json:"user_group_id"`
	// DirectMemberOnly (default false) leaves out members of subgroups.
	DirectMemberOnly *bool `json:"direct_member_only"`
}

// GetUserGroupMembersResponse is the success body of GetUserGroupMembers.
type GetUserGroupMembersResponse struct {
	Members []int64 `json:"members"`
}

// readGroup loads the graph and a named group of the realm for reading.
func (s *Service) readGroup(ctx context.Context, c Caller, groupID int64) (*groupGraph, *storage.UserGroup, error) {
	_, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	graph, err := s.loadGroupGraph(ctx, s.store, realm.ID)
	if err != nil {
		return nil, nil, s.internal(ctx, "read user group", err)
	}
	g := graph.groups[groupID]
	if g == nil {
		return nil, nil, errNoSuchGroup
	}
	return graph, g, nil
}

// GetUserGroupMembers lists a group's members (through subgroups unless
// direct_member_only). Every user may read memberships.
func (s *Service) GetUserGroupMembers(ctx context.Context, c Caller, req GetUserGroupMembersRequest) (*GetUserGroupMembersResponse, error) {
	graph, g, err := s.readGroup(ctx, c, req.UserGroupID)
	if err != nil {
		return nil, err
	}
	if req.DirectMemberOnly != nil && *req.DirectMemberOnly {
		m := slices.Clone(graph.members[g.ID])
		slices.Sort(m)
		return &GetUserGroupMembersResponse{Members: nonNil(m)}, nil
	}
	return &GetUserGroupMembersResponse{Members: graph.recursiveMembers(g.ID)}, nil
}

// IsUserGroupMemberRequest is the input of IsUserGroupMember.
type IsUserGroupMemberRequest struct {
	UserGroupID      int64 `json:"user_group_id"`
	UserID           int64 `json:"user_id"`
	DirectMemberOnly *bool `json:"direct_member_only"`
}

// IsUserGroupMemberResponse is the success body of IsUserGroupMember.
type IsUserGroupMemberResponse struct {
	IsUserGroupMember bool `json:"is_user_group_member"`
}

// IsUserGroupMember reports whether a user is in a group.
func (s *Service) IsUserGroupMember(ctx context.Context, c Caller, req IsUserGroupMemberRequest) (*IsUserGroupMemberResponse, error) {
	graph, g, err := s.readGroup(ctx, c, req.UserGroupID)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.GetUser(ctx, g.RealmID, req.UserID); errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchUser
	} else if err != nil {
		return nil, s.internal(ctx, "is user group member", err)
	}
	in := slices.Contains(graph.members[g.ID], req.UserID)
	if req.DirectMemberOnly == nil || !*req.DirectMemberOnly {
		in = graph.has(g.ID, req.UserID)
	}
	return &IsUserGroupMemberResponse{IsUserGroupMember: in}, nil
}

// GetUserGroupSubgroupsRequest is the input of GetUserGroupSubgroups.
type GetUserGroupSubgroupsRequest struct {
	UserGroupID int64 `json:"user_group_id"`
	// DirectSubgroupOnly (default false) leaves out nested subgroups.
	DirectSubgroupOnly *bool `json:"direct_subgroup_only"`
}

// GetUserGroupSubgroupsResponse is the success body of GetUserGroupSubgroups.
type GetUserGroupSubgroupsResponse struct {
	Subgroups []int64 `json:"subgroups"`
}

// GetUserGroupSubgroups lists a group's subgroups (recursively unless
// direct_subgroup_only).
func (s *Service) GetUserGroupSubgroups(ctx context.Context, c Caller, req GetUserGroupSubgroupsRequest) (*GetUserGroupSubgroupsResponse, error) {
	graph, g, err := s.readGroup(ctx, c, req.UserGroupID)
	if err != nil {
		return nil, err
	}
	var out []int64
	if req.DirectSubgroupOnly != nil && *req.DirectSubgroupOnly {
		out = slices.Clone(graph.subs[g.ID])
	} else {
		out = graph.reachable(g.ID)[1:]
	}
	slices.Sort(out)
	return &GetUserGroupSubgroupsResponse{Subgroups: nonNil(out)}, nil
}

// DeactivateUserGroupRequest is the input of DeactivateUserGroup.
type DeactivateUserGroupRequest struct {
	UserGroupID int64 `json:"user_group_id"`
}

// DeactivateUserGroup deactivates a group that nothing uses. A group that
// holds an organization permission or a permission of another active group
// (directly or as a subgroup of an anonymous setting group) answers
// CANNOT_DEACTIVATE_GROUP_IN_USE with the objections.
func (s *Service) DeactivateUserGroup(ctx context.Context, c Caller, req DeactivateUserGroupRequest) (*EmptyResponse, error) {
	me, realm, err := s.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := requireMemberOrAdmin(me); err != nil {
		return nil, err
	}
	err = s.store.InTx(ctx, func(st storage.Store) error {
		graph, group, err := s.loadGroupForUpdate(ctx, st, realm.ID, req.UserGroupID)
		if err != nil {
			return err
		}
		if !graph.canManage(me, group) {
			return errInsufficient
		}
		if group.Deactivated {
			return BadRequest("User group is already deactivated.")
		}
		if objections := graph.objections(realm, group.ID); len(objections) > 0 {
			return &Error{Kind: KindInvalid, Code: "CANNOT_DEACTIVATE_GROUP_IN_USE",
				Msg: "Cannot deactivate user group in use.", Fields: map[string]any{"objections": objections}}
		}
		next := *group
		next.Deactivated = true
		return st.UpdateGroup(ctx, &next, "deactivated")
	})
	if err != nil {
		return nil, s.internal(ctx, "deactivate user group", err)
	}
	return &EmptyResponse{}, nil
}

// usesGroup reports whether the setting held by holder names target: it is
// target, or an anonymous group with target as a direct subgroup.
func (g *groupGraph) usesGroup(holder, target int64) bool {
	if holder == target {
		return true
	}
	if _, named := g.groups[holder]; named {
		return false
	}
	return slices.Contains(g.subs[holder], target)
}

// objections lists where a group is used, in the reference's shape.
func (g *groupGraph) objections(realm *storage.Realm, target int64) []map[string]any {
	var out []map[string]any
	var realmSettings []string
	for _, rs := range []struct {
		name string
		id   int64
	}{{"can_create_bots_group", realm.CanCreateBotsGroupID}, {"can_create_write_only_bots_group", realm.CanCreateWriteOnlyBotsGroupID}} {
		if rs.id != 0 && g.usesGroup(rs.id, target) {
			realmSettings = append(realmSettings, rs.name)
		}
	}
	if len(realmSettings) > 0 {
		out = append(out, map[string]any{"type": "realm", "settings": realmSettings})
	}
	ids := make([]int64, 0, len(g.groups))
	for id := range g.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		other := g.groups[id]
		if other.ID == target || other.Deactivated {
			continue
		}
		var settings []string
		for _, set := range userGroupSettings {
			if g.usesGroup(*set.field(other), target) {
				settings = append(settings, set.name)
			}
		}
		if len(settings) > 0 {
			out = append(out, map[string]any{"type": "user_group", "group_id": other.ID, "settings": settings})
		}
	}
	return out
}
