package chat

import (
	"context"
	"slices"

	"github.com/teamchat/chat/storage"
)

// Group membership: adding and removing members and subgroups, and
// reading them.

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
	me, realm, err := s.reads().member(ctx, c)
	if err != nil {
		return nil, err
	}
	var lists [4][]int64
	for i, l := range []struct {
		name string
		ids  *[]int64
	}{{"add", req.Add}, {"delete", req.Delete}, {"add_subgroups", req.AddSubgroups}, {"delete_subgroups", req.DeleteSubgroups}} {
		if l.ids == nil {
			continue
		}
		if lists[i], err = checkIDList(l.name, *l.ids); err != nil {
			return nil, err
		}
	}
	add, del, addSubs, delSubs := lists[0], lists[1], lists[2], lists[3]
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		scope, group, err := w.reads().groupForUpdate(ctx, realm.ID, req.UserGroupID, me)
		if err != nil {
			return err
		}
		if group.Deactivated {
			return BadRequest("You can't make changes to a deactivated user group.")
		}
		manage := scope.canManage(me, group)
		direct := scope.members[group.ID]
		for _, id := range add {
			allowed := manage || scope.in(group.CanAddMembersGroupID) || id == me.ID && scope.in(group.CanJoinGroupID)
			if !allowed {
				return errInsufficient
			}
			if slices.Contains(direct, id) {
				return clash("User %d is already a member of this group", id)
			}
		}
		if err := w.reads().checkActiveUsers(ctx, realm.ID, add); err != nil {
			return err
		}
		// Deactivated users keep their memberships for a reactivation,
		// but are nobody's members meanwhile: removing one is refused as
		// adding one is.
		if err := w.reads().checkActiveUsers(ctx, realm.ID, del); err != nil {
			return err
		}
		for _, id := range del {
			allowed := manage || scope.in(group.CanRemoveMembersGroupID) || id == me.ID && scope.in(group.CanLeaveGroupID)
			if !allowed {
				return errInsufficient
			}
			if !slices.Contains(direct, id) {
				return noSuch("There is no member '%d' in this user group", id)
			}
		}
		if (len(addSubs) > 0 || len(delSubs) > 0) && !manage {
			return errInsufficient
		}
		if err := scope.load(ctx, w, realm.ID, addSubs...); err != nil {
			return err
		}
		for _, id := range addSubs {
			sg := scope.named(id)
			switch {
			case sg == nil || sg.Deactivated:
				return noSuch("Invalid user group ID: %d", id)
			case slices.Contains(scope.subs[group.ID], id):
				return clash("User group %d is already a subgroup of this group.", id)
			}
			// The check runs under the realm's write lock, so no
			// concurrent change can close a cycle behind it.
			below, err := w.GroupClosure(ctx, realm.ID, id)
			if err != nil {
				return err
			}
			if slices.Contains(below, group.ID) {
				return BadRequest("User group %d is a supergroup of this group: adding it would make a cycle.", id)
			}
		}
		for _, id := range delSubs {
			if !slices.Contains(scope.subs[group.ID], id) {
				return noSuch("User group %d is not a subgroup of this group.", id)
			}
		}
		for _, ch := range []struct {
			ids   []int64
			apply func(context.Context, int64, int64, []int64) error
			event UserGroupEvent
		}{
			{add, w.AddGroupMembers, UserGroupEvent{Op: "add_members", GroupID: group.ID, UserIDs: add}},
			{del, w.RemoveGroupMembers, UserGroupEvent{Op: "remove_members", GroupID: group.ID, UserIDs: del}},
			{addSubs, w.AddSubgroups, UserGroupEvent{Op: "add_subgroups", GroupID: group.ID, DirectSubgroupIDs: addSubs}},
			{delSubs, w.RemoveSubgroups, UserGroupEvent{Op: "remove_subgroups", GroupID: group.ID, DirectSubgroupIDs: delSubs}},
		} {
			if len(ch.ids) == 0 {
				continue
			}
			if err := ch.apply(ctx, realm.ID, group.ID, ch.ids); err != nil {
				return err
			}
			w.emit(everyone, ch.event)
		}
		return nil
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

// readGroup loads a named group of the realm for reading.
func (r reads) readGroup(ctx context.Context, c Caller, groupID int64) (*groupScope, *storage.UserGroup, error) {
	_, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	scope := newGroupScope(nil)
	if err := scope.load(ctx, r.st, realm.ID, groupID); err != nil {
		return nil, nil, r.s.internal(ctx, "read user group", err)
	}
	g := scope.named(groupID)
	if g == nil {
		return nil, nil, errNoSuchGroup
	}
	return scope, g, nil
}

// GetUserGroupMembers lists a group's members (through subgroups unless
// direct_member_only). Every user may read memberships.
func (s *Service) GetUserGroupMembers(ctx context.Context, c Caller, req GetUserGroupMembersRequest) (*GetUserGroupMembersResponse, error) {
	return s.reads().getUserGroupMembers(ctx, c, req)
}

// getUserGroupMembers is GetUserGroupMembers reading through r.
func (r reads) getUserGroupMembers(ctx context.Context, c Caller, req GetUserGroupMembersRequest) (*GetUserGroupMembersResponse, error) {
	scope, g, err := r.readGroup(ctx, c, req.UserGroupID)
	if err != nil {
		return nil, err
	}
	if req.DirectMemberOnly != nil && *req.DirectMemberOnly {
		if err := scope.loadContents(ctx, r.st, g.RealmID, g.ID); err != nil {
			return nil, r.s.internal(ctx, "get user group members", err)
		}
		return &GetUserGroupMembersResponse{Members: uniqueSorted(nonNil(scope.members[g.ID]))}, nil
	}
	below, err := r.st.GroupClosure(ctx, g.RealmID, g.ID)
	if err == nil {
		err = scope.loadContents(ctx, r.st, g.RealmID, below...)
	}
	if err != nil {
		return nil, r.s.internal(ctx, "get user group members", err)
	}
	var out []int64
	for _, id := range below {
		out = append(out, scope.members[id]...)
	}
	return &GetUserGroupMembersResponse{Members: uniqueSorted(nonNil(out))}, nil
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
	return s.reads().isUserGroupMember(ctx, c, req)
}

// isUserGroupMember is IsUserGroupMember reading through r.
func (r reads) isUserGroupMember(ctx context.Context, c Caller, req IsUserGroupMemberRequest) (*IsUserGroupMemberResponse, error) {
	_, g, err := r.readGroup(ctx, c, req.UserGroupID)
	if err != nil {
		return nil, err
	}
	u, err := r.user(ctx, g.RealmID, req.UserID, "is user group member")
	if err != nil {
		return nil, err
	}
	if !u.IsActive {
		// A deactivated user is nobody's member (their memberships are
		// kept for a reactivation).
		return &IsUserGroupMemberResponse{IsUserGroupMember: false}, nil
	}
	var in bool
	if req.DirectMemberOnly != nil && *req.DirectMemberOnly {
		direct, err := r.st.UserGroupIDs(ctx, g.RealmID, req.UserID)
		if err != nil {
			return nil, r.s.internal(ctx, "is user group member", err)
		}
		in = slices.Contains(direct, g.ID)
	} else {
		theirs, err := r.callerScope(ctx, g.RealmID, req.UserID)
		if err != nil {
			return nil, r.s.internal(ctx, "is user group member", err)
		}
		in = theirs.in(g.ID)
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
	return s.reads().getUserGroupSubgroups(ctx, c, req)
}

// getUserGroupSubgroups is GetUserGroupSubgroups reading through r.
func (r reads) getUserGroupSubgroups(ctx context.Context, c Caller, req GetUserGroupSubgroupsRequest) (*GetUserGroupSubgroupsResponse, error) {
	_, g, err := r.readGroup(ctx, c, req.UserGroupID)
	if err != nil {
		return nil, err
	}
	if req.DirectSubgroupOnly != nil && *req.DirectSubgroupOnly {
		subs, err := r.st.Subgroups(ctx, g.RealmID, g.ID)
		if err != nil {
			return nil, r.s.internal(ctx, "get user group subgroups", err)
		}
		return &GetUserGroupSubgroupsResponse{Subgroups: nonNil(subs)}, nil
	}
	below, err := r.st.GroupClosure(ctx, g.RealmID, g.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get user group subgroups", err)
	}
	out := slices.DeleteFunc(below, func(id int64) bool { return id == g.ID })
	return &GetUserGroupSubgroupsResponse{Subgroups: nonNil(out)}, nil
}
