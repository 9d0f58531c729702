package chat_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// These tests run conflicting operations at once; they run on SQLite and,
// with TEAMCHAT_TEST_STORE=postgres, on PostgreSQL, where transactions run
// concurrently. Each leaves a valid state and answers no internal error.

const racers = 20

// race runs op(i) for i in [0, racers) at once and returns the errors.
func race(op func(i int) error) []error {
	errs := make([]error, racers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range racers {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = op(i)
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

// requireNoInternal fails on an internal error and counts the successes.
func requireNoInternal(t *testing.T, errs []error) (ok int, refused []string) {
	t.Helper()
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		e := chat.AsError(err)
		require.NotEqual(t, chat.KindInternal, e.Kind, "internal error: %v", err)
		refused = append(refused, e.Msg)
	}
	return ok, refused
}

func TestConcurrentSubgroupCycle(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	a := createGroup(t, h, h.Owner, "A")
	b := createGroup(t, h, h.Owner, "B")
	errs := race(func(i int) error {
		parent, child := a, b
		if i%2 == 1 {
			parent, child = b, a
		}
		_, err := h.Service.UpdateUserGroupSubgroups(ctx, h.Owner.Caller, chat.UpdateUserGroupSubgroupsRequest{UserGroupID: parent, Add: &[]int64{child}})
		return err
	})
	ok, _ := requireNoInternal(t, errs)
	assert.Equal(t, 1, ok, "one edge is added; every other request is refused")
	aSubs, err := h.Service.GetUserGroupSubgroups(ctx, h.Owner.Caller, chat.GetUserGroupSubgroupsRequest{UserGroupID: a})
	require.NoError(t, err)
	bSubs, err := h.Service.GetUserGroupSubgroups(ctx, h.Owner.Caller, chat.GetUserGroupSubgroupsRequest{UserGroupID: b})
	require.NoError(t, err)
	assert.Equal(t, 1, len(aSubs.Subgroups)+len(bSubs.Subgroups), "no cycle: A in B or B in A, not both")
}

func TestConcurrentOwnersDemoteEachOther(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"demote", "deactivate"} {
		t.Run(how, func(t *testing.T) {
			h := chattest.New(t)
			second := h.NewUser(t, chat.RoleOwner)
			owners := []chattest.User{h.Owner, second}
			errs := race(func(i int) error {
				me, other := owners[i%2], owners[1-i%2]
				if how == "demote" {
					_, err := h.Service.UpdateUser(ctx, me.Caller, chat.UpdateUserRequest{UserID: other.ID, UserUpdate: chat.UserUpdate{Role: ptr(chat.RoleMember)}})
					return err
				}
				_, err := h.Service.DeactivateUser(ctx, me.Caller, chat.DeactivateUserRequest{UserID: other.ID})
				return err
			})
			ok, _ := requireNoInternal(t, errs)
			if how == "deactivate" {
				assert.Equal(t, 1, ok, "a deactivated owner can deactivate nobody")
			}
			users, err := h.Store.ListUsers(ctx, h.RealmID)
			require.NoError(t, err)
			active := 0
			for _, u := range users {
				if u.IsActive && u.Role == chat.RoleOwner {
					active++
				}
			}
			assert.GreaterOrEqual(t, active, 1, "the organization keeps an active owner")
		})
	}
}

func TestConcurrentOwnersLeave(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	second := h.NewUser(t, chat.RoleOwner)
	owners := []chattest.User{h.Owner, second}
	errs := race(func(i int) error {
		_, err := h.Service.DeactivateOwnUser(ctx, owners[i%2].Caller)
		return err
	})
	ok, _ := requireNoInternal(t, errs)
	assert.Equal(t, 1, ok, "one of the two owners may leave, not both")
}

func TestConcurrentSubscribeOrCreate(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	var users []chattest.User
	for range racers {
		users = append(users, h.NewUser(t, chat.RoleMember))
	}
	errs := race(func(i int) error {
		resp, err := h.Service.Subscribe(ctx, users[i].Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "launch"}}})
		if err == nil && len(resp.Subscribed[fmt.Sprint(users[i].ID)]) != 1 {
			return fmt.Errorf("user %d not subscribed: %+v", users[i].ID, resp)
		}
		return err
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	id, err := h.Service.GetChannelID(ctx, h.Owner.Caller, chat.GetChannelIDRequest{Stream: "launch"})
	require.NoError(t, err)
	subs, err := h.Store.ListStreamSubscribers(ctx, h.RealmID, id.StreamID)
	require.NoError(t, err)
	assert.Len(t, subs, racers)
}

func TestConcurrentCreateSameNames(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	t.Run("group", func(t *testing.T) {
		errs := race(func(int) error {
			_, err := h.Service.CreateUserGroup(ctx, h.Owner.Caller, chat.CreateUserGroupRequest{Name: "racers"})
			return err
		})
		ok, refused := requireNoInternal(t, errs)
		assert.Equal(t, 1, ok)
		for _, msg := range refused {
			assert.Equal(t, "User group 'racers' already exists.", msg)
		}
	})
	t.Run("user", func(t *testing.T) {
		errs := race(func(int) error {
			_, err := h.Service.CreateUser(ctx, h.Owner.Caller, chat.CreateUserRequest{Email: "racer@example.com", Password: chattest.Password, FullName: "Racer"})
			return err
		})
		ok, refused := requireNoInternal(t, errs)
		assert.Equal(t, 1, ok)
		for _, msg := range refused {
			assert.Equal(t, "Email is already in use.", msg)
		}
	})
	t.Run("private channel", func(t *testing.T) {
		errs := race(func(int) error {
			_, err := h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "vault"}}, InviteOnly: ptr(true)})
			return err
		})
		ok, _ := requireNoInternal(t, errs)
		assert.Equal(t, racers, ok, "the first creates it, the others find the owner already subscribed")
	})
}
