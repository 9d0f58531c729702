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

var roleName = map[int]string{100: "owner", 200: "administrator", 300: "moderator", 400: "member", 600: "guest"}

// systemGroupNames lists the system groups a user is directly in.
func systemGroupNames(t *testing.T, h *chattest.Harness, userID int64) []string {
	t.Helper()
	ctx := context.Background()
	ids, err := h.Store.UserGroupIDs(ctx, h.RealmID, userID)
	require.NoError(t, err)
	var names []string
	for _, id := range ids {
		g, err := h.Store.GetGroup(ctx, h.RealmID, id)
		require.NoError(t, err)
		names = append(names, g.Name)
	}
	return names
}

var wantRoleGroups = map[int][]string{
	100: {chat.GroupOwners}, 200: {chat.GroupAdministrators}, 300: {chat.GroupModerators},
	400: {chat.GroupMembers, chat.GroupFullMembers}, 600: {chat.GroupEveryone},
}

// TestRoleChangeMatrix checks every caller role × target role × new role
// against the reference's rules: only administrators change roles; the
// owner role (granted or removed) takes an owner.
func TestRoleChangeMatrix(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	for _, callerRole := range allRoles {
		caller := h.NewUser(t, callerRole)
		for _, targetRole := range allRoles {
			for _, newRole := range allRoles {
				name := fmt.Sprintf("%s sets %s to %s", roleName[callerRole], roleName[targetRole], roleName[newRole])
				t.Run(name, func(t *testing.T) {
					target := h.NewUser(t, targetRole)
					before := userRow(t, h, target.ID)
					_, err := h.Service.UpdateUser(ctx, caller.Caller, chat.UpdateUserRequest{UserID: target.ID, UserUpdate: chat.UserUpdate{Role: ptr(newRole)}})
					callerIsAdmin := callerRole <= chat.RoleAdministrator
					ownerInvolved := newRole == chat.RoleOwner || targetRole == chat.RoleOwner
					switch {
					case !callerIsAdmin:
						requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
					case newRole != targetRole && ownerInvolved && callerRole != chat.RoleOwner:
						requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
					default:
						require.NoError(t, err)
						got, err := h.Service.GetUser(ctx, caller.Caller, chat.GetUserRequest{UserID: target.ID})
						require.NoError(t, err)
						assert.Equal(t, newRole, got.User.Role)
						assert.Equal(t, newRole == chat.RoleOwner, got.User.IsOwner)
						assert.Equal(t, newRole <= chat.RoleAdministrator, got.User.IsAdmin)
						assert.Equal(t, newRole == chat.RoleGuest, got.User.IsGuest)
						assert.ElementsMatch(t, wantRoleGroups[newRole], systemGroupNames(t, h, target.ID), "system groups follow the role")
						return
					}
					assert.Equal(t, before, userRow(t, h, target.ID), "rejected: row unchanged")
					assert.ElementsMatch(t, wantRoleGroups[targetRole], systemGroupNames(t, h, target.ID))
				})
			}
		}
	}
}

func TestRoleChangeRules(t *testing.T) {
	ctx := context.Background()
	t.Run("the only owner keeps the role", func(t *testing.T) {
		h := chattest.New(t)
		before := userRow(t, h, h.Owner.ID)
		_, err := h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: h.Owner.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleAdministrator)}})
		requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "The owner permission cannot be removed from the only organization owner.")
		assert.Equal(t, before, userRow(t, h, h.Owner.ID))
		// With a second owner it may go; then the second is the only one.
		second := h.NewUser(t, chat.RoleOwner)
		_, err = h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: h.Owner.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleMember)}})
		require.NoError(t, err)
		_, err = h.Service.UpdateUser(ctx, second.Caller, chat.UpdateUserRequest{UserID: second.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleMember)}})
		requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "The owner permission cannot be removed from the only organization owner.")
	})
	t.Run("deactivated owners do not count", func(t *testing.T) {
		h := chattest.New(t)
		gone := h.NewUser(t, chat.RoleOwner)
		h.Deactivate(t, gone)
		_, err := h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: h.Owner.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleMember)}})
		requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "The owner permission cannot be removed from the only organization owner.")
	})
	t.Run("invalid role values", func(t *testing.T) {
		h := chattest.New(t)
		u := h.NewUser(t, chat.RoleMember)
		for _, r := range []int{0, 1, 150, 500, 700, -100} {
			_, err := h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: u.ID, UserUpdate: chat.UserUpdate{Role: ptr(r)}})
			requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid role")
		}
	})
	t.Run("bots: owners rename, administrators change roles", func(t *testing.T) {
		h := chattest.New(t)
		member := h.NewUser(t, chat.RoleMember)
		bot := h.NewBot(t, member)
		_, err := h.Service.UpdateUser(ctx, member.Caller, chat.UpdateUserRequest{UserID: bot.ID, UserUpdate: chat.UserUpdate{FullName: ptr("Renamed Bot")}})
		require.NoError(t, err)
		_, err = h.Service.UpdateUser(ctx, member.Caller, chat.UpdateUserRequest{UserID: bot.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleModerator)}})
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
		other := h.NewUser(t, chat.RoleMember)
		_, err = h.Service.UpdateUser(ctx, other.Caller, chat.UpdateUserRequest{UserID: bot.ID, UserUpdate: chat.UserUpdate{FullName: ptr("Hijacked")}})
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
		_, err = h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: bot.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleModerator)}})
		require.NoError(t, err)
	})
}

func TestUpdateUserFields(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	u := h.NewUser(t, chat.RoleMember)
	update := func(caller chattest.User, up chat.UserUpdate) error {
		_, err := h.Service.UpdateUser(ctx, caller.Caller, chat.UpdateUserRequest{UserID: u.ID, UserUpdate: up})
		return err
	}
	t.Run("full_name", func(t *testing.T) {
		require.NoError(t, update(admin, chat.UserUpdate{FullName: ptr("Renamed By Admin")}))
		assert.Equal(t, "Renamed By Admin", userRow(t, h, u.ID).FullName)
		for _, bad := range []struct{ name, msg string }{{"x", "Name too short!"}, {"a*b", "Invalid characters in name!"}, {strings.Repeat("n", 101), "Name too long!"}} {
			before := userRow(t, h, u.ID)
			requireError(t, update(admin, chat.UserUpdate{FullName: ptr(bad.name)}), chat.KindInvalid, chat.CodeBadRequest, bad.msg)
			assert.Equal(t, before, userRow(t, h, u.ID))
		}
		// Administrators rename even when name changes are disabled.
		_, err := h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{NameChangesDisabled: ptr(true)})
		require.NoError(t, err)
		require.NoError(t, update(admin, chat.UserUpdate{FullName: ptr("Still Renamed")}))
	})
	t.Run("new_email", func(t *testing.T) {
		requireError(t, update(admin, chat.UserUpdate{NewEmail: ptr("x@example.com")}), chat.KindForbidden, chat.CodeBadRequest, "User not authorized to change user emails")
		requireError(t, update(h.Owner, chat.UserUpdate{NewEmail: ptr("x@example.com")}), chat.KindForbidden, chat.CodeBadRequest, "User not authorized to change user emails")
		holder := h.Provision(t, chat.ProvisionUserRequest{Email: "emailer@example.com", FullName: "Emailer", Role: chat.RoleOwner, Password: chattest.Password})
		require.NoError(t, h.Service.SetUserPermissions(ctx, h.RealmID, holder.ID, chat.UserPermissions{CanChangeUserEmails: true}))
		requireError(t, update(holder, chat.UserUpdate{NewEmail: ptr(admin.Email)}), chat.KindConflict, chat.CodeBadRequest, "Email is already in use.")
		requireError(t, update(holder, chat.UserUpdate{NewEmail: ptr("bad")}), chat.KindInvalid, chat.CodeBadRequest, "Bad name or username")
		require.NoError(t, update(holder, chat.UserUpdate{NewEmail: ptr("changed@example.com")}))
		assert.Equal(t, "changed@example.com", userRow(t, h, u.ID).Email)
		_, err := h.Service.Authenticate(ctx, h.RealmID, "changed@example.com", u.APIKey)
		require.NoError(t, err)
		// An administrator holding the permission but not the owner role may not.
		adminHolder := h.NewUser(t, chat.RoleAdministrator)
		require.NoError(t, h.Service.SetUserPermissions(ctx, h.RealmID, adminHolder.ID, chat.UserPermissions{CanChangeUserEmails: true}))
		requireError(t, update(adminHolder, chat.UserUpdate{NewEmail: ptr("again@example.com")}), chat.KindForbidden, chat.CodeBadRequest, "User not authorized to change user emails")
	})
	t.Run("members may not update others", func(t *testing.T) {
		m := h.NewUser(t, chat.RoleModerator)
		before := userRow(t, h, u.ID)
		requireError(t, update(m, chat.UserUpdate{FullName: ptr("Nope Nope")}), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
		assert.Equal(t, before, userRow(t, h, u.ID))
	})
	t.Run("unknown user", func(t *testing.T) {
		_, err := h.Service.UpdateUser(ctx, admin.Caller, chat.UpdateUserRequest{UserID: 9999, UserUpdate: chat.UserUpdate{FullName: ptr("Ghost Name")}})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
	})
	t.Run("a rejected part rejects the whole request", func(t *testing.T) {
		before := userRow(t, h, u.ID)
		_, err := h.Service.UpdateUser(ctx, h.Owner.Caller, chat.UpdateUserRequest{UserID: u.ID, UserUpdate: chat.UserUpdate{
			Role: ptr(chat.RoleModerator), FullName: ptr("Fine Name"), ProfileData: &[]chat.ProfileDataUpdate{{ID: 4242, Value: "x"}}}})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Field id 4242 not found.")
		assert.Equal(t, before, userRow(t, h, u.ID))
		assert.ElementsMatch(t, wantRoleGroups[chat.RoleMember], systemGroupNames(t, h, u.ID))
	})
	t.Run("by email", func(t *testing.T) {
		v := h.NewUser(t, chat.RoleMember)
		_, err := h.Service.UpdateUserByEmail(ctx, admin.Caller, chat.UpdateUserByEmailRequest{Email: strings.ToUpper(v.Email), UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleModerator)}})
		require.NoError(t, err)
		assert.Equal(t, chat.RoleModerator, userRow(t, h, v.ID).Role)
		_, err = h.Service.UpdateUserByEmail(ctx, admin.Caller, chat.UpdateUserByEmailRequest{Email: "nobody@example.com", UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleModerator)}})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
		// A hidden real email does not find the user; the dummy address does.
		hidden := h.NewUser(t, chat.RoleMember)
		_, err = h.Service.UpdateSettings(ctx, hidden.Caller, patchFor(t, "email_address_visibility", "4"))
		require.NoError(t, err)
		_, err = h.Service.UpdateUserByEmail(ctx, admin.Caller, chat.UpdateUserByEmailRequest{Email: hidden.Email, UserUpdate: chat.UserUpdate{FullName: ptr("Found Me")}})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
		_, err = h.Service.UpdateUserByEmail(ctx, admin.Caller, chat.UpdateUserByEmailRequest{Email: fmt.Sprintf("user%d@chat.example.com", hidden.ID), UserUpdate: chat.UserUpdate{FullName: ptr("Found Me")}})
		require.NoError(t, err)
		assert.Equal(t, "Found Me", userRow(t, h, hidden.ID).FullName)
	})
}

func TestSetUserPermissions(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	u := h.NewUser(t, chat.RoleMember)
	create := func(n string) error {
		_, err := h.Service.CreateUser(ctx, u.Caller, chat.CreateUserRequest{Email: n + "@example.com", Password: "a good password", FullName: "User " + n})
		return err
	}
	requireError(t, create("a"), chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "")
	require.NoError(t, h.Service.SetUserPermissions(ctx, h.RealmID, u.ID, chat.UserPermissions{CanCreateUsers: true}))
	require.NoError(t, create("b"))
	require.NoError(t, h.Service.SetUserPermissions(ctx, h.RealmID, u.ID, chat.UserPermissions{}))
	requireError(t, create("c"), chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "")
	err := h.Service.SetUserPermissions(ctx, h.RealmID, 9999, chat.UserPermissions{CanCreateUsers: true})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such user")
}
