package chat_test

import (
	"context"
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
				requireError(t, err, chat.KindInvalid, "UNAUTHORIZED_PRINCIPAL", c.msg)
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
		requireError(t, deactivate(admin, 9999), chat.KindInvalid, chat.CodeBadRequest, "No such user")
		bot := h.NewBot(t, admin)
		requireError(t, deactivate(admin, bot.ID), chat.KindInvalid, chat.CodeBadRequest, "No such user")
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
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Cannot deactivate the only organization owner")
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
		requireError(t, err, chat.KindInvalid, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
	}
	admin := h.NewUser(t, chat.RoleAdministrator)
	resp, err := h.Service.ReactivateUser(ctx, admin.Caller, chat.ReactivateUserRequest{UserID: u.ID})
	require.NoError(t, err)
	checkSchema(t, "POST", "/users/{user_id}/reactivate", resp)
	_, err = h.Service.Authenticate(ctx, h.RealmID, u.Email, u.APIKey)
	require.NoError(t, err, "the old key works again")
	_, err = h.Service.ReactivateUser(ctx, admin.Caller, chat.ReactivateUserRequest{UserID: u.ID})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "User is already active")
	_, err = h.Service.ReactivateUser(ctx, admin.Caller, chat.ReactivateUserRequest{UserID: 9999})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "No such user")

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
		e := requireError(t, err, chat.KindInvalid, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only user.")
		assert.Equal(t, false, e.Fields["is_last_owner"])
		assert.Equal(t, "user", e.Fields["entity"])
	})
	h := chattest.New(t)
	member := h.NewUser(t, chat.RoleMember)
	t.Run("last owner", func(t *testing.T) {
		_, err := h.Service.DeactivateOwnUser(ctx, h.Owner.Caller)
		e := requireError(t, err, chat.KindInvalid, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only organization owner.")
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
	requireError(t, err, chat.KindInvalid, "CANNOT_DEACTIVATE_LAST_USER", "")
}
