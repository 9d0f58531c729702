package chat_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// A registration with every state reads each thing once: no statement
// runs twice (on PostgreSQL each is a round trip), whichever parts of the
// state ask for the same subscriptions, groups or channels.
func TestRegisterRunsNoStatementTwice(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	me := h.NewUser(t, chat.RoleMember)
	other := h.NewUser(t, chat.RoleMember)
	for _, name := range []string{"one", "two"} {
		subscribe(t, h, me, name, me.ID, other.ID)
		_, err := h.Service.SendMessage(ctx, other.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel(name),
			Topic: ptr("topic"), Content: "hello @**" + me.FullName + "**"})
		require.NoError(t, err)
	}
	_, err := h.Service.SendMessage(ctx, other.Caller, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(me.ID), Content: "hi"})
	require.NoError(t, err)
	_, err = h.Service.CreateUserGroup(ctx, me.Caller, chat.CreateUserGroupRequest{Name: "crew", Description: "x", Members: []int64{me.ID, other.ID}})
	require.NoError(t, err)

	st, ok := h.Store.(interface{ OnQuery(func(string)) })
	require.True(t, ok, "the store cannot count its statements")
	var mu sync.Mutex
	var seen map[string]int
	st.OnQuery(func(q string) {
		mu.Lock()
		if seen != nil {
			seen[q]++
		}
		mu.Unlock()
	})
	_, err = h.Service.Register(ctx, me.Caller, chat.RegisterRequest{}) // warm the shared caches
	require.NoError(t, err)
	mu.Lock()
	seen = map[string]int{}
	mu.Unlock()
	_, err = h.Service.Register(ctx, me.Caller, chat.RegisterRequest{})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	for q, n := range seen {
		require.Equal(t, 1, n, "run %d times in one registration:\n%s", n, q)
	}
	require.NotEmpty(t, seen)
}
