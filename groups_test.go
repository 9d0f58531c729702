package chat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func groupID(t *testing.T, h *chattest.Harness, name string) int64 {
	t.Helper()
	g, err := h.Store.GetGroupByName(context.Background(), h.RealmID, name)
	require.NoError(t, err)
	return g.ID
}

func createGroup(t *testing.T, h *chattest.Harness, by chattest.User, name string, members ...int64) int64 {
	t.Helper()
	resp, err := h.Service.CreateUserGroup(context.Background(), by.Caller, chat.CreateUserGroupRequest{Name: name, Description: "about " + name, Members: members})
	require.NoError(t, err)
	return resp.GroupID
}

func findGroup(t *testing.T, h *chattest.Harness, id int64) chat.UserGroup {
	t.Helper()
	resp, err := h.Service.GetUserGroups(context.Background(), h.Owner.Caller, chat.GetUserGroupsRequest{IncludeDeactivatedGroups: ptr(true)})
	require.NoError(t, err)
	for _, g := range resp.UserGroups {
		if g.ID == id {
			return g
		}
	}
	t.Fatalf("group %d not listed", id)
	return chat.UserGroup{}
}

func TestCreateUserGroup(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	sub := createGroup(t, h, alice, "backend", bob.ID)
	resp, err := h.Service.CreateUserGroup(ctx, alice.Caller, chat.CreateUserGroupRequest{
		Name: "engineering", Description: "All engineers", Members: []int64{alice.ID}, Subgroups: &[]int64{sub}})
	require.NoError(t, err)
	checkSchema(t, "POST", "/user_groups/create", resp)

	list, err := h.Service.GetUserGroups(ctx, alice.Caller, chat.GetUserGroupsRequest{})
	require.NoError(t, err)
	checkSchema(t, "GET", "/user_groups", list)
	require.Len(t, list.UserGroups, 10, "8 system groups and 2 new ones")
	g := findGroup(t, h, resp.GroupID)
	assert.Equal(t, "engineering", g.Name)
	assert.Equal(t, "All engineers", g.Description)
	assert.Equal(t, []int64{alice.ID}, g.Members)
	assert.Equal(t, []int64{sub}, g.DirectSubgroupIDs)
	assert.Equal(t, ptr(alice.ID), g.CreatorID)
	assert.Equal(t, ptr(chattest.Start.Unix()), g.DateCreated)
	assert.False(t, g.IsSystemGroup)
	creatorOnly := chat.GroupSettingValue{DirectMembers: []int64{alice.ID}, DirectSubgroups: []int64{}}
	assert.Equal(t, creatorOnly, g.CanManageGroup, "the creator manages the group by default")
	assert.Equal(t, creatorOnly, g.CanAddMembersGroup)
	assert.Equal(t, ptr(groupID(t, h, chat.GroupNobody)), g.CanJoinGroup.GroupID)
	assert.Equal(t, ptr(groupID(t, h, chat.GroupEveryone)), g.CanLeaveGroup.GroupID)
	assert.Equal(t, ptr(groupID(t, h, chat.GroupEveryone)), g.CanMentionGroup.GroupID)
	assert.Equal(t, ptr(groupID(t, h, chat.GroupNobody)), g.CanRemoveMembersGroup.GroupID)

	sys := findGroup(t, h, groupID(t, h, chat.GroupMembers))
	assert.True(t, sys.IsSystemGroup)
	assert.Equal(t, ptr(groupID(t, h, chat.GroupNobody)), sys.CanManageGroup.GroupID)

	everyone, internet := groupID(t, h, chat.GroupEveryone), groupID(t, h, chat.GroupInternet)
	gone := h.NewUser(t, chat.RoleMember)
	h.Deactivate(t, gone)
	for _, c := range []struct {
		name string
		req  chat.CreateUserGroupRequest
		msg  string
		kind chat.Kind
	}{
		{"empty name", chat.CreateUserGroupRequest{Name: " ", Members: []int64{}}, "User group name can't be empty.", 0},
		{"long name", chat.CreateUserGroupRequest{Name: strings.Repeat("g", 101), Members: []int64{}}, "User group name cannot exceed 100 characters.", 0},
		{"role: prefix", chat.CreateUserGroupRequest{Name: "role:admins", Members: []int64{}}, "User group name cannot start with 'role:'.", 0},
		{"@ prefix", chat.CreateUserGroupRequest{Name: "@team", Members: []int64{}}, "User group name cannot start with '@'.", 0},
		{"channel: prefix", chat.CreateUserGroupRequest{Name: "channel:x", Members: []int64{}}, "User group name cannot start with 'channel:'.", 0},
		{"taken", chat.CreateUserGroupRequest{Name: "backend", Members: []int64{}}, "User group 'backend' already exists.", chat.KindConflict},
		{"unknown member", chat.CreateUserGroupRequest{Name: "x1", Members: []int64{9999}}, "Invalid user ID: 9999", chat.KindNotFound},
		// Zero and negative IDs are users that do not exist, not an
		// internal error (issue 22).
		{"zero member", chat.CreateUserGroupRequest{Name: "x1", Members: []int64{0}}, "Invalid user ID: 0", chat.KindNotFound},
		{"negative member", chat.CreateUserGroupRequest{Name: "x1", Members: []int64{-3, 1}}, "Invalid user ID: -3", chat.KindNotFound},
		{"zero in a setting", chat.CreateUserGroupRequest{Name: "x1", Members: []int64{}, CanJoinGroup: &chat.GroupSettingValue{DirectMembers: []int64{0}, DirectSubgroups: []int64{}}}, "Invalid user ID: 0", chat.KindNotFound},
		{"zero subgroup in a setting", chat.CreateUserGroupRequest{Name: "x1", Members: []int64{}, CanJoinGroup: &chat.GroupSettingValue{DirectMembers: []int64{}, DirectSubgroups: []int64{0}}}, "Invalid user group ID: 0", chat.KindNotFound},
		{"deactivated member", chat.CreateUserGroupRequest{Name: "x2", Members: []int64{gone.ID}}, "Invalid user ID: " + itoa(gone.ID), chat.KindNotFound},
		{"unknown subgroup", chat.CreateUserGroupRequest{Name: "x3", Members: []int64{}, Subgroups: &[]int64{9999}}, "Invalid user group ID: 9999", chat.KindNotFound},
		{"manage by everyone", chat.CreateUserGroupRequest{Name: "x4", Members: []int64{}, CanManageGroup: &chat.GroupSettingValue{GroupID: &everyone}}, "'can_manage_group' setting cannot be set to 'role:everyone' group.", 0},
		{"manage by internet", chat.CreateUserGroupRequest{Name: "x5", Members: []int64{}, CanManageGroup: &chat.GroupSettingValue{GroupID: &internet}}, "'can_manage_group' setting cannot be set to 'role:internet' group.", 0},
		{"join by everyone", chat.CreateUserGroupRequest{Name: "x6", Members: []int64{}, CanJoinGroup: &chat.GroupSettingValue{GroupID: &everyone}}, "'can_join_group' setting cannot be set to 'role:everyone' group.", 0},
		{"mention by internet", chat.CreateUserGroupRequest{Name: "x7", Members: []int64{}, CanMentionGroup: &chat.GroupSettingValue{GroupID: &internet}}, "'can_mention_group' setting cannot be set to 'role:internet' group.", 0},
		{"mention by owners", chat.CreateUserGroupRequest{Name: "x7", Members: []int64{}, CanMentionGroup: &chat.GroupSettingValue{GroupID: ptr(groupID(t, h, chat.GroupOwners))}}, "'can_mention_group' setting cannot be set to 'role:owners' group.", 0},
		{"unknown setting group", chat.CreateUserGroupRequest{Name: "x8", Members: []int64{}, CanJoinGroup: &chat.GroupSettingValue{GroupID: ptr(int64(9999))}}, "Invalid user group ID: 9999", chat.KindNotFound},
		{"unknown setting member", chat.CreateUserGroupRequest{Name: "x9", Members: []int64{}, CanJoinGroup: &chat.GroupSettingValue{DirectMembers: []int64{9999}, DirectSubgroups: []int64{}}}, "Invalid user ID: 9999", chat.KindNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, err := h.Service.GetUserGroups(ctx, alice.Caller, chat.GetUserGroupsRequest{})
			require.NoError(t, err)
			_, err = h.Service.CreateUserGroup(ctx, alice.Caller, c.req)
			requireError(t, err, orInvalid(c.kind), chat.CodeBadRequest, c.msg)
			after, err := h.Service.GetUserGroups(ctx, alice.Caller, chat.GetUserGroupsRequest{})
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing was created")
		})
	}
	t.Run("who may", func(t *testing.T) {
		for _, role := range []int{chat.RoleOwner, chat.RoleAdministrator, chat.RoleModerator, chat.RoleMember} {
			u := h.NewUser(t, role)
			_, err := h.Service.CreateUserGroup(ctx, u.Caller, chat.CreateUserGroupRequest{Name: "by " + u.FullName, Members: []int64{}})
			require.NoError(t, err)
		}
		_, err := h.Service.CreateUserGroup(ctx, h.NewUser(t, chat.RoleGuest).Caller, chat.CreateUserGroupRequest{Name: "by guest", Members: []int64{}})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Not allowed for guest users")
		_, err = h.Service.GetUserGroups(ctx, h.NewUser(t, chat.RoleGuest).Caller, chat.GetUserGroupsRequest{})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Not allowed for guest users")
		_, err = h.Service.GetUserGroups(ctx, h.NewBot(t, alice).Caller, chat.GetUserGroupsRequest{})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "This endpoint does not accept bot requests.")
	})
}

func TestUserGroupMembership(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	creator, alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	admin := h.NewUser(t, chat.RoleAdministrator)
	g := createGroup(t, h, creator, "readers", bob.ID)
	change := func(by chattest.User, req chat.UpdateUserGroupMembersRequest) error {
		req.UserGroupID = g
		_, err := h.Service.UpdateUserGroupMembers(ctx, by.Caller, req)
		return err
	}
	members := func() []int64 {
		resp, err := h.Service.GetUserGroupMembers(ctx, alice.Caller, chat.GetUserGroupMembersRequest{UserGroupID: g, DirectMemberOnly: ptr(true)})
		require.NoError(t, err)
		return resp.Members
	}
	// can_join_group defaults to nobody: alice cannot join herself.
	requireError(t, change(alice, chat.UpdateUserGroupMembersRequest{Add: &[]int64{alice.ID}}), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
	// The creator (can_add_members_group) may add her.
	require.NoError(t, change(creator, chat.UpdateUserGroupMembersRequest{Add: &[]int64{alice.ID}}))
	assert.Equal(t, []int64{alice.ID, bob.ID}, members())
	// can_leave_group defaults to everyone: bob leaves.
	require.NoError(t, change(bob, chat.UpdateUserGroupMembersRequest{Delete: &[]int64{bob.ID}}))
	// Removing others takes can_remove_members_group (nobody) or managing.
	requireError(t, change(bob, chat.UpdateUserGroupMembersRequest{Delete: &[]int64{alice.ID}}), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
	require.NoError(t, change(admin, chat.UpdateUserGroupMembersRequest{Delete: &[]int64{alice.ID}}))
	assert.Empty(t, members())

	// Open the group for joining: every member may join themselves
	// (role:everyone may not hold can_join_group).
	membersGroup := groupID(t, h, chat.GroupMembers)
	_, err := h.Service.UpdateUserGroup(ctx, creator.Caller, chat.UpdateUserGroupRequest{UserGroupID: g,
		CanJoinGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &membersGroup}}})
	require.NoError(t, err)
	require.NoError(t, change(alice, chat.UpdateUserGroupMembersRequest{Add: &[]int64{alice.ID}}))
	requireError(t, change(alice, chat.UpdateUserGroupMembersRequest{Add: &[]int64{bob.ID}}), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")

	for _, c := range []struct {
		req  chat.UpdateUserGroupMembersRequest
		msg  string
		kind chat.Kind
	}{
		{chat.UpdateUserGroupMembersRequest{Add: &[]int64{alice.ID}}, "User " + itoa(alice.ID) + " is already a member of this group", chat.KindConflict},
		{chat.UpdateUserGroupMembersRequest{Delete: &[]int64{bob.ID}}, "There is no member '" + itoa(bob.ID) + "' in this user group", chat.KindNotFound},
		{chat.UpdateUserGroupMembersRequest{Add: &[]int64{9999}}, "Invalid user ID: 9999", chat.KindNotFound},
		{chat.UpdateUserGroupMembersRequest{Add: &[]int64{0}}, "Invalid user ID: 0", chat.KindNotFound},
		{chat.UpdateUserGroupMembersRequest{}, "Nothing to do. Specify at least one of 'add', 'delete', 'add_subgroups' or 'delete_subgroups'.", 0},
	} {
		before := members()
		requireError(t, change(creator, c.req), orInvalid(c.kind), chat.CodeBadRequest, c.msg)
		assert.Equal(t, before, members())
	}
	_, err = h.Service.UpdateUserGroupMembers(ctx, admin.Caller, chat.UpdateUserGroupMembersRequest{UserGroupID: groupID(t, h, chat.GroupMembers), Add: &[]int64{alice.ID}})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
	_, err = h.Service.UpdateUserGroupMembers(ctx, admin.Caller, chat.UpdateUserGroupMembersRequest{UserGroupID: 9999, Add: &[]int64{alice.ID}})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid user group")
}

func TestUserGroupSubgroupsAndNesting(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	creator := h.NewUser(t, chat.RoleMember)
	a, b, c := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	top := createGroup(t, h, creator, "top", a.ID)
	mid := createGroup(t, h, creator, "mid", b.ID)
	leaf := createGroup(t, h, creator, "leaf", c.ID)
	addSubs := func(by chattest.User, group int64, subs ...int64) error {
		_, err := h.Service.UpdateUserGroupSubgroups(ctx, by.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: group, Add: &subs})
		return err
	}
	require.NoError(t, addSubs(creator, top, mid))
	require.NoError(t, addSubs(creator, mid, leaf))

	for _, cyc := range []struct{ group, sub int64 }{{leaf, top}, {mid, top}, {leaf, mid}, {top, top}} {
		err := addSubs(creator, cyc.group, cyc.sub)
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "")
		assert.Contains(t, err.Error(), "cycle", "or already a subgroup")
	}
	requireError(t, addSubs(creator, top, mid), chat.KindConflict, chat.CodeBadRequest, "User group "+itoa(mid)+" is already a subgroup of this group.")
	requireError(t, addSubs(a, top, leaf), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")

	members, err := h.Service.GetUserGroupMembers(ctx, a.Caller, chat.GetUserGroupMembersRequest{UserGroupID: top})
	require.NoError(t, err)
	checkSchema(t, "GET", "/user_groups/{user_group_id}/members", members)
	assert.Equal(t, []int64{a.ID, b.ID, c.ID}, members.Members, "members of nested groups count")
	direct, err := h.Service.GetUserGroupMembers(ctx, a.Caller, chat.GetUserGroupMembersRequest{UserGroupID: top, DirectMemberOnly: ptr(true)})
	require.NoError(t, err)
	assert.Equal(t, []int64{a.ID}, direct.Members)

	subs, err := h.Service.GetUserGroupSubgroups(ctx, a.Caller, chat.GetUserGroupSubgroupsRequest{UserGroupID: top})
	require.NoError(t, err)
	checkSchema(t, "GET", "/user_groups/{user_group_id}/subgroups", subs)
	assert.Equal(t, []int64{mid, leaf}, subs.Subgroups)
	directSubs, err := h.Service.GetUserGroupSubgroups(ctx, a.Caller, chat.GetUserGroupSubgroupsRequest{UserGroupID: top, DirectSubgroupOnly: ptr(true)})
	require.NoError(t, err)
	assert.Equal(t, []int64{mid}, directSubs.Subgroups)

	for _, tc := range []struct {
		user   chattest.User
		direct bool
		want   bool
	}{{c, false, true}, {c, true, false}, {a, true, true}, {creator, false, false}} {
		resp, err := h.Service.IsUserGroupMember(ctx, b.Caller, chat.IsUserGroupMemberRequest{UserGroupID: top, UserID: tc.user.ID, DirectMemberOnly: &tc.direct})
		require.NoError(t, err)
		checkSchema(t, "GET", "/user_groups/{user_group_id}/members/{user_id}", resp)
		assert.Equal(t, tc.want, resp.IsUserGroupMember)
	}
	_, err = h.Service.IsUserGroupMember(ctx, b.Caller, chat.IsUserGroupMemberRequest{UserGroupID: top, UserID: 9999})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
	// Guests may read memberships.
	guest := h.NewUser(t, chat.RoleGuest)
	_, err = h.Service.GetUserGroupMembers(ctx, guest.Caller, chat.GetUserGroupMembersRequest{UserGroupID: top})
	require.NoError(t, err)

	// System groups nest by role: an owner is a member of role:members.
	resp, err := h.Service.IsUserGroupMember(ctx, a.Caller, chat.IsUserGroupMemberRequest{UserGroupID: groupID(t, h, chat.GroupMembers), UserID: h.Owner.ID})
	require.NoError(t, err)
	assert.True(t, resp.IsUserGroupMember)
	resp, err = h.Service.IsUserGroupMember(ctx, a.Caller, chat.IsUserGroupMemberRequest{UserGroupID: groupID(t, h, chat.GroupMembers), UserID: guest.ID})
	require.NoError(t, err)
	assert.False(t, resp.IsUserGroupMember, "guests are not members")

	_, err = h.Service.UpdateUserGroupSubgroups(ctx, creator.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: top, Delete: &[]int64{leaf}})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "User group "+itoa(leaf)+" is not a subgroup of this group.")
	_, err = h.Service.UpdateUserGroupSubgroups(ctx, creator.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: top, Delete: &[]int64{mid}})
	require.NoError(t, err)

	t.Run("a cycle written around the Service does not hang the evaluator", func(t *testing.T) {
		require.NoError(t, h.Store.AddSubgroups(ctx, h.RealmID, leaf, []int64{mid})) // mid ⊂ leaf ⊂ mid
		resp, err := h.Service.GetUserGroupMembers(ctx, a.Caller, chat.GetUserGroupMembersRequest{UserGroupID: mid})
		require.NoError(t, err)
		assert.Equal(t, []int64{b.ID, c.ID}, resp.Members)
	})
}

func TestUpdateUserGroup(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	creator, other := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	g := createGroup(t, h, creator, "design")
	createGroup(t, h, creator, "taken")
	update := func(by chattest.User, req chat.UpdateUserGroupRequest) error {
		req.UserGroupID = g
		_, err := h.Service.UpdateUserGroup(ctx, by.Caller, req)
		return err
	}
	require.NoError(t, update(creator, chat.UpdateUserGroupRequest{Name: ptr("design team"), Description: ptr("Pixels")}))
	got := findGroup(t, h, g)
	assert.Equal(t, "design team", got.Name)
	assert.Equal(t, "Pixels", got.Description)
	requireError(t, update(other, chat.UpdateUserGroupRequest{Name: ptr("mine")}), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
	require.NoError(t, update(h.Owner, chat.UpdateUserGroupRequest{Description: ptr("Admins manage every group")}))
	requireError(t, update(creator, chat.UpdateUserGroupRequest{Name: ptr("taken")}), chat.KindConflict, chat.CodeBadRequest, "User group 'taken' already exists.")
	requireError(t, update(creator, chat.UpdateUserGroupRequest{}), chat.KindInvalid, chat.CodeBadRequest, "No new data supplied")
	requireError(t, update(creator, chat.UpdateUserGroupRequest{Name: ptr("role:x")}), chat.KindInvalid, chat.CodeBadRequest, "User group name cannot start with 'role:'.")

	everyone := groupID(t, h, chat.GroupEveryone)
	requireError(t, update(creator, chat.UpdateUserGroupRequest{CanManageGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &everyone}}}),
		chat.KindInvalid, chat.CodeBadRequest, "'can_manage_group' setting cannot be set to 'role:everyone' group.")
	owners := groupID(t, h, chat.GroupOwners)
	requireError(t, update(creator, chat.UpdateUserGroupRequest{CanMentionGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &owners}}}),
		chat.KindInvalid, chat.CodeBadRequest, "'can_mention_group' setting cannot be set to 'role:owners' group.")
	// An anonymous group of just role:owners is role:owners.
	requireError(t, update(creator, chat.UpdateUserGroupRequest{CanMentionGroup: &chat.GroupSettingUpdate{
		New: &chat.GroupSettingValue{DirectMembers: []int64{}, DirectSubgroups: []int64{owners}}}}),
		chat.KindInvalid, chat.CodeBadRequest, "'can_mention_group' setting cannot be set to 'role:owners' group.")
	require.NoError(t, update(creator, chat.UpdateUserGroupRequest{CanMentionGroup: &chat.GroupSettingUpdate{
		New: &chat.GroupSettingValue{DirectMembers: []int64{creator.ID}, DirectSubgroups: []int64{owners}}}}), "owners and more is another group")
	requireError(t, update(creator, chat.UpdateUserGroupRequest{CanManageGroup: &chat.GroupSettingUpdate{
		New: &chat.GroupSettingValue{DirectMembers: []int64{other.ID}, DirectSubgroups: []int64{}},
		Old: &chat.GroupSettingValue{DirectMembers: []int64{other.ID}, DirectSubgroups: []int64{}}}}),
		chat.KindInvalid, "EXPECTATION_MISMATCH", "'old' value does not match the expected value.")
	// Hand management over to other: creator loses it.
	require.NoError(t, update(creator, chat.UpdateUserGroupRequest{CanManageGroup: &chat.GroupSettingUpdate{
		New: &chat.GroupSettingValue{DirectMembers: []int64{other.ID}, DirectSubgroups: []int64{}},
		Old: &chat.GroupSettingValue{DirectMembers: []int64{creator.ID}, DirectSubgroups: []int64{}}}}))
	requireError(t, update(creator, chat.UpdateUserGroupRequest{Name: ptr("back")}), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
	require.NoError(t, update(other, chat.UpdateUserGroupRequest{Name: ptr("other's now")}))

	_, err := h.Service.UpdateUserGroup(ctx, h.Owner.Caller, chat.UpdateUserGroupRequest{UserGroupID: groupID(t, h, chat.GroupMembers), Name: ptr("renamed")})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
}

func TestDeactivateUserGroup(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	creator := h.NewUser(t, chat.RoleMember)
	g := createGroup(t, h, creator, "temporary")
	user := createGroup(t, h, creator, "user of temporary")
	_, err := h.Service.UpdateUserGroup(ctx, creator.Caller, chat.UpdateUserGroupRequest{UserGroupID: user,
		CanMentionGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{DirectMembers: []int64{}, DirectSubgroups: []int64{g}}}})
	require.NoError(t, err)
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CanCreateBotsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &g}}})
	require.NoError(t, err)
	// A channel permission held by the group (directly, and through an
	// anonymous group) is a use too.
	ch := newChannelBy(t, h, creator, "team", false)
	super := createGroup(t, h, creator, "super")
	_, err = h.Service.UpdateUserGroupSubgroups(ctx, creator.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: super, Add: &[]int64{g}})
	require.NoError(t, err)
	_, err = h.Service.UpdateChannel(ctx, creator.Caller, chat.UpdateChannelRequest{StreamID: ch,
		CanSendMessageGroup:    &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &g}},
		CanAddSubscribersGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{DirectMembers: []int64{creator.ID}, DirectSubgroups: []int64{g}}}})
	require.NoError(t, err)

	_, err = h.Service.DeactivateUserGroup(ctx, creator.Caller, chat.DeactivateUserGroupRequest{UserGroupID: g})
	e := requireError(t, err, chat.KindConflict, "CANNOT_DEACTIVATE_GROUP_IN_USE", "Cannot deactivate user group in use.")
	assert.Equal(t, []map[string]any{
		{"type": "subgroup", "supergroup_ids": []int64{super}},
		{"type": "channel", "channel_id": ch, "settings": []string{"can_add_subscribers_group", "can_send_message_group"}},
		{"type": "user_group", "group_id": user, "settings": []string{"can_mention_group"}},
		{"type": "realm", "settings": []string{"can_create_bots_group"}},
	}, e.Fields["objections"], "the reference's order")

	membersID := groupID(t, h, chat.GroupMembers)
	_, err = h.Service.UpdateChannel(ctx, creator.Caller, chat.UpdateChannelRequest{StreamID: ch,
		CanSendMessageGroup:    &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &membersID}},
		CanAddSubscribersGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &membersID}}})
	require.NoError(t, err)

	_, err = h.Service.UpdateUserGroupSubgroups(ctx, creator.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: super, Delete: &[]int64{g}})
	require.NoError(t, err)
	members := groupID(t, h, chat.GroupMembers)
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CanCreateBotsGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &members}}})
	require.NoError(t, err)
	_, err = h.Service.UpdateUserGroup(ctx, creator.Caller, chat.UpdateUserGroupRequest{UserGroupID: user,
		CanMentionGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &members}}})
	require.NoError(t, err)

	_, err = h.Service.DeactivateUserGroup(ctx, h.NewUser(t, chat.RoleMember).Caller, chat.DeactivateUserGroupRequest{UserGroupID: g})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
	resp, err := h.Service.DeactivateUserGroup(ctx, creator.Caller, chat.DeactivateUserGroupRequest{UserGroupID: g})
	require.NoError(t, err)
	checkSchema(t, "POST", "/user_groups/{user_group_id}/deactivate", resp)
	assert.True(t, findGroup(t, h, g).Deactivated)
	list, err := h.Service.GetUserGroups(ctx, creator.Caller, chat.GetUserGroupsRequest{})
	require.NoError(t, err)
	for _, x := range list.UserGroups {
		assert.NotEqual(t, g, x.ID, "deactivated groups are listed only on request")
	}
	_, err = h.Service.DeactivateUserGroup(ctx, creator.Caller, chat.DeactivateUserGroupRequest{UserGroupID: g})
	requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "User group is already deactivated.")
	_, err = h.Service.UpdateUserGroupMembers(ctx, creator.Caller, chat.UpdateUserGroupMembersRequest{UserGroupID: g, Add: &[]int64{creator.ID}})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "You can't make changes to a deactivated user group.")
	_, err = h.Service.DeactivateUserGroup(ctx, h.Owner.Caller, chat.DeactivateUserGroupRequest{UserGroupID: groupID(t, h, chat.GroupModerators)})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
}

func TestPromoteFullMembers(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	old := h.NewUser(t, chat.RoleMember)
	full := groupID(t, h, chat.GroupFullMembers)
	isFull := func(u chattest.User) bool {
		resp, err := h.Service.IsUserGroupMember(ctx, h.Owner.Caller, chat.IsUserGroupMemberRequest{UserGroupID: full, UserID: u.ID})
		require.NoError(t, err)
		return resp.IsUserGroupMember
	}
	require.True(t, isFull(old), "a waiting period of 0 days makes members full members at once")

	h.Clock.Advance(5 * 24 * time.Hour)
	_, err := h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{WaitingPeriodThreshold: ptr(3)})
	require.NoError(t, err)
	young := h.NewUser(t, chat.RoleMember)
	assert.True(t, isFull(old), "5 days old")
	assert.False(t, isFull(young), "new accounts wait")
	assert.True(t, isFull(h.NewUser(t, chat.RoleModerator)), "moderators are full members through the nested groups")

	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{WaitingPeriodThreshold: ptr(10)})
	require.NoError(t, err)
	assert.False(t, isFull(old), "a longer period demotes accounts younger than it")

	h.Clock.Advance(11 * 24 * time.Hour)
	n, err := h.Service.PromoteFullMembers(ctx, h.RealmID)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.True(t, isFull(old))
	assert.True(t, isFull(young), "accounts age into full membership")
	n, err = h.Service.PromoteFullMembers(ctx, h.RealmID)
	require.NoError(t, err)
	assert.Zero(t, n, "idempotent")
}
