package chat_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// Run promotes members to role:fullmembers once their accounts pass the
// waiting period, round after round, until its context ends.
func TestRunPromotesFullMembers(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithMaintenanceInterval(5*time.Millisecond)))
	_, err := h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{WaitingPeriodThreshold: ptr(3)})
	require.NoError(t, err)
	alice := h.NewUser(t, chat.RoleMember)
	full := groupID(t, h, chat.GroupFullMembers)
	isFull := func() bool {
		members, err := h.Store.GroupMembers(ctx, h.RealmID, full)
		require.NoError(t, err)
		return slices.Contains(members, alice.ID)
	}
	require.False(t, isFull(), "a new account waits")

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Service.Run(runCtx) }()
	h.Clock.Advance(4 * 24 * time.Hour)
	assert.Eventually(t, isFull, 10*time.Second, 5*time.Millisecond, "promoted by a later round")
	stop()
	assert.ErrorIs(t, <-done, context.Canceled)
}
