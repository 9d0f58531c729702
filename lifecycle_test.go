package chat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func TestDeactivateUser(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	deactivate := func(caller chattest.User, id int64) error {
		_, err := h.Service.DeactivateUser(ctx, caller.Caller, chat.DeactivateUserRequest{UserID: id})
		return err
	}
	t.Run("who may", func(t *testing.T) {
		for _, c := range []struct {
			caller  int
			target  int
			allowed bool
			msg     string
		}{
			{chat.RoleOwner, chat.RoleOwner, true, ""},
			{chat.RoleOwner, chat.RoleMember, true, ""},
			{chat.RoleAdministrator, chat.RoleAdministrator, true, ""},
			{chat.RoleAdministrator, chat.RoleGuest, true, ""},
			{chat.RoleAdministrator, chat.RoleOwner, false, "Must be an organization owner"},
			{chat.RoleModerator, chat.RoleMember, false, "Must be an organization administrator"},
			{chat.RoleMember, chat.RoleMember, false, "Must be an organization administrator"},
			{chat.RoleGuest, chat.RoleMember, false, "Must be an organization administrator"},
		} {
			caller, target := h.NewUser(t, c.caller), h.NewUser(t, c.target)
			before := userRow(t, h, target.ID)
			err := deactivate(caller, target.ID)
			if !c.allowed {
				requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", c.msg)
				assert.Equal(t, before, userRow(t, h, target.ID))
				continue
			}
			require.NoError(t, err)
			_, err = h.Service.Authenticate(ctx, h.RealmID, target.Email, target.APIKey)
			requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
			got, err := h.Service.GetUser(ctx, caller.Caller, chat.GetUserRequest{UserID: target.ID})
			require.NoError(t, err, "deactivated users stay visible")
			assert.False(t, got.User.IsActive)
		}
	})
	t.Run("errors", func(t *testing.T) {
		admin := h.NewUser(t, chat.RoleAdministrator)
		requireError(t, deactivate(admin, 9999), chat.KindNotFound, chat.CodeBadRequest, "No such user")
		bot := h.NewBot(t, admin)
		requireError(t, deactivate(admin, bot.ID), chat.KindNotFound, chat.CodeBadRequest, "No such user")
		gone := h.NewUser(t, chat.RoleMember)
		require.NoError(t, deactivate(admin, gone.ID))
		requireError(t, deactivate(admin, gone.ID), chat.KindInvalid, chat.CodeBadRequest, "User is deactivated")
		long := strings.Repeat("x", 2001)
		_, err := h.Service.DeactivateUser(ctx, admin.Caller, chat.DeactivateUserRequest{UserID: h.NewUser(t, chat.RoleMember).ID, DeactivationNotificationComment: &long})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "deactivation_notification_comment is too long (limit: 2000 characters)")
	})
	t.Run("the only owner", func(t *testing.T) {
		h := chattest.New(t)
		err := deactivateIn(h, h.Owner, h.Owner.ID)
		requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "Cannot deactivate the only organization owner")
	})
	t.Run("bots go with their owner", func(t *testing.T) {
		owner := h.NewUser(t, chat.RoleMember)
		bot := h.NewBot(t, owner)
		require.NoError(t, deactivate(h.Owner, owner.ID))
		_, err := h.Service.Authenticate(ctx, h.RealmID, bot.Email, bot.APIKey)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
	})
}

func deactivateIn(h *chattest.Harness, caller chattest.User, id int64) error {
	_, err := h.Service.DeactivateUser(context.Background(), caller.Caller, chat.DeactivateUserRequest{UserID: id})
	return err
}

func TestReactivateUser(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	require.NoError(t, deactivateIn(h, h.Owner, u.ID))
	for _, role := range []int{chat.RoleModerator, chat.RoleMember, chat.RoleGuest} {
		_, err := h.Service.ReactivateUser(ctx, h.NewUser(t, role).Caller, chat.ReactivateUserRequest{UserID: u.ID})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	}
	admin := h.NewUser(t, chat.RoleAdministrator)
	resp, err := h.Service.ReactivateUser(ctx, admin.Caller, chat.ReactivateUserRequest{UserID: u.ID})
	require.NoError(t, err)
	checkSchema(t, "POST", "/users/{user_id}/reactivate", resp)
	_, err = h.Service.Authenticate(ctx, h.RealmID, u.Email, u.APIKey)
	require.NoError(t, err, "the old key works again")
	_, err = h.Service.ReactivateUser(ctx, admin.Caller, chat.ReactivateUserRequest{UserID: u.ID})
	requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "User is already active")
	_, err = h.Service.ReactivateUser(ctx, admin.Caller, chat.ReactivateUserRequest{UserID: 9999})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")

	owner := h.NewUser(t, chat.RoleMember)
	bot := h.NewBot(t, owner)
	require.NoError(t, deactivateIn(h, admin, owner.ID))
	_, err = h.Service.ReactivateUser(ctx, admin.Caller, chat.ReactivateUserRequest{UserID: bot.ID})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Cannot reactivate a bot whose owner is deactivated")
	_, err = h.Service.ReactivateUser(ctx, admin.Caller, chat.ReactivateUserRequest{UserID: owner.ID})
	require.NoError(t, err)
	_, err = h.Service.ReactivateUser(ctx, admin.Caller, chat.ReactivateUserRequest{UserID: bot.ID})
	require.NoError(t, err)
}

func TestDeactivateOwnUser(t *testing.T) {
	ctx := context.Background()
	t.Run("last user", func(t *testing.T) {
		h := chattest.New(t)
		_, err := h.Service.DeactivateOwnUser(ctx, h.Owner.Caller)
		e := requireError(t, err, chat.KindConflict, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only user.")
		assert.Equal(t, false, e.Fields["is_last_owner"])
		assert.Equal(t, "user", e.Fields["entity"])
	})
	h := chattest.New(t)
	member := h.NewUser(t, chat.RoleMember)
	t.Run("last owner", func(t *testing.T) {
		_, err := h.Service.DeactivateOwnUser(ctx, h.Owner.Caller)
		e := requireError(t, err, chat.KindConflict, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only organization owner.")
		assert.Equal(t, true, e.Fields["is_last_owner"])
		assert.Equal(t, "organization owner", e.Fields["entity"])
	})
	for _, u := range []chattest.User{member, h.NewUser(t, chat.RoleGuest), h.NewUser(t, chat.RoleAdministrator), h.NewBot(t, h.Owner)} {
		resp, err := h.Service.DeactivateOwnUser(ctx, u.Caller)
		require.NoError(t, err)
		checkSchema(t, "DELETE", "/users/me", resp)
		_, err = h.Service.GetOwnUser(ctx, u.Caller)
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
	}
	second := h.NewUser(t, chat.RoleOwner)
	_, err := h.Service.DeactivateOwnUser(ctx, h.Owner.Caller)
	require.NoError(t, err, "another owner remains")
	_, err = h.Service.DeactivateOwnUser(ctx, second.Caller)
	requireError(t, err, chat.KindConflict, "CANNOT_DEACTIVATE_LAST_USER", "")
}

// A deactivated user is nobody's member while deactivated (the reference
// since feature level 303): group members, setting values, the membership
// check and member edits leave them out; reactivation brings them back and
// tells everyone, as the reference does.
func TestDeactivatedUsersLeaveGroupViewsAndComeBack(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	other := h.NewUser(t, chat.RoleMember)
	team := createGroup(t, h, h.Owner, "team", u.ID, other.ID)
	managed := createGroup(t, h, h.Owner, "managed")
	anon := chat.GroupSettingValue{DirectMembers: []int64{u.ID, other.ID}, DirectSubgroups: []int64{}}
	_, err := h.Service.UpdateUserGroup(ctx, h.Owner.Caller, chat.UpdateUserGroupRequest{UserGroupID: managed,
		CanManageGroup: &chat.GroupSettingUpdate{New: &anon}})
	require.NoError(t, err)
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CanCreateBotsGroup: &chat.GroupSettingUpdate{New: &anon}})
	require.NoError(t, err)
	ch := newChannel(t, h, "ops", false)
	_, err = h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: ch,
		CanAdministerChannelGroup: &chat.GroupSettingUpdate{New: &anon}})
	require.NoError(t, err)
	_, err = h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "ops"}},
		Principals: &[]chat.Principal{{ID: u.ID}, {ID: other.ID}}})
	require.NoError(t, err)

	groupsView := func() map[int64]chat.UserGroup {
		resp, err := h.Service.GetUserGroups(ctx, other.Caller, chat.GetUserGroupsRequest{})
		require.NoError(t, err)
		out := map[int64]chat.UserGroup{}
		for _, g := range resp.UserGroups {
			out[g.ID] = g
		}
		return out
	}
	require.NoError(t, deactivateIn(h, h.Owner, u.ID))
	takeEvents(t, h)

	view := groupsView()
	assert.Equal(t, []int64{other.ID}, view[team].Members)
	assert.Equal(t, []int64{other.ID}, view[managed].CanManageGroup.DirectMembers)
	members, err := h.Service.GetUserGroupMembers(ctx, other.Caller, chat.GetUserGroupMembersRequest{UserGroupID: team})
	require.NoError(t, err)
	assert.Equal(t, []int64{other.ID}, members.Members)
	for _, direct := range []bool{true, false} {
		in, err := h.Service.IsUserGroupMember(ctx, other.Caller, chat.IsUserGroupMemberRequest{UserGroupID: team, UserID: u.ID, DirectMemberOnly: &direct})
		require.NoError(t, err)
		assert.False(t, in.IsUserGroupMember, "direct_member_only=%v", direct)
	}
	got, err := h.Service.GetChannel(ctx, h.Owner.Caller, chat.GetChannelRequest{StreamID: ch})
	require.NoError(t, err)
	assert.Equal(t, []int64{other.ID}, got.Stream.CanAdministerChannelGroup.DirectMembers)
	for _, req := range []chat.UpdateUserGroupMembersRequest{
		{UserGroupID: team, Delete: &[]int64{u.ID}},
		{UserGroupID: team, Add: &[]int64{u.ID}},
	} {
		_, err = h.Service.UpdateUserGroupMembers(ctx, h.Owner.Caller, req)
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, fmt.Sprintf("Invalid user ID: %d", u.ID))
	}

	_, err = h.Service.ReactivateUser(ctx, h.Owner.Caller, chat.ReactivateUserRequest{UserID: u.ID})
	require.NoError(t, err)
	evs := takeEvents(t, h)
	everyone := activeIDs(t, h)
	var addedTo []int64
	for _, e := range evs {
		switch e.Type + "/" + e.Op {
		case "user_group/add_members":
			addedTo = append(addedTo, int64(e.JSON["group_id"].(float64)))
			assert.Equal(t, []any{float64(u.ID)}, e.JSON["user_ids"])
			assert.Equal(t, everyone, e.To)
		case "user_group/update":
			assert.Equal(t, float64(managed), e.JSON["group_id"])
			assert.Equal(t, map[string]any{"can_manage_group": map[string]any{
				"direct_members": []any{float64(u.ID), float64(other.ID)}, "direct_subgroups": []any{}}}, e.JSON["data"])
		case "realm/update_dict":
			assert.Equal(t, map[string]any{"can_create_bots_group": map[string]any{
				"direct_members": []any{float64(u.ID), float64(other.ID)}, "direct_subgroups": []any{}}}, e.JSON["data"])
		case "stream/update":
			assert.Equal(t, "can_administer_channel_group", e.JSON["property"])
		case "subscription/peer_add":
			assert.Equal(t, []any{float64(ch)}, e.JSON["stream_ids"])
			assert.Equal(t, []any{float64(u.ID)}, e.JSON["user_ids"])
			assert.NotContains(t, e.To, u.ID)
			assert.Contains(t, e.To, other.ID)
		}
	}
	for _, k := range []string{"realm_user/update", "subscription/peer_add", "user_group/update", "realm/update_dict", "stream/update"} {
		assert.Contains(t, kinds(evs), k)
	}
	assert.Contains(t, addedTo, team)
	assert.Contains(t, addedTo, groupID(t, h, chat.GroupMembers), "system groups too")
	assert.Equal(t, []int64{u.ID, other.ID}, groupsView()[team].Members, "back in the group")
}
