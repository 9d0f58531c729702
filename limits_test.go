package chat_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// countQueries counts the SQL statements the harness's store runs.
func countQueries(t testing.TB, h *chattest.Harness) *atomic.Int64 {
	t.Helper()
	st, ok := h.Store.(interface{ OnQuery(func(string)) })
	require.True(t, ok, "the store cannot count its statements")
	n := new(atomic.Int64)
	st.OnQuery(func(string) { n.Add(1) })
	return n
}

func repeated(id int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = id
	}
	return out
}

// A long list of IDs costs what its distinct IDs cost: duplicates are
// dropped first and the IDs are resolved with one set-based query, so the
// number of statements does not grow with the list.
func TestLongIDListsCostTheSame(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	var users []int64
	for range 30 {
		users = append(users, h.NewUser(t, chat.RoleMember).ID)
	}
	queries := countQueries(t, h)
	n := 0
	createGroup := func(members []int64) int64 {
		n++
		before := queries.Load()
		_, err := h.Service.CreateUserGroup(ctx, h.Owner.Caller, chat.CreateUserGroupRequest{Name: fmt.Sprintf("g%d", n), Members: members})
		require.NoError(t, err)
		return queries.Load() - before
	}
	one := createGroup(users[:1])
	assert.Equal(t, one, createGroup(repeated(users[0], 400_000)), "400,000 copies of one ID")
	assert.Equal(t, one, createGroup(users), "30 distinct IDs")

	subscribe := func(principals []int64) int64 {
		n++
		ps := make([]chat.Principal, len(principals))
		for i, id := range principals {
			ps[i] = chat.Principal{ID: id}
		}
		before := queries.Load()
		_, err := h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: fmt.Sprintf("c%d", n)}}, Principals: &ps})
		require.NoError(t, err)
		return queries.Load() - before
	}
	base := subscribe(users[:1])
	assert.Equal(t, base, subscribe(repeated(users[0], 200_000)), "200,000 copies of one principal")

	// Lists longer than the limit are refused with a clear error.
	long := make([]int64, 10_001)
	for i := range long {
		long[i] = int64(i + 1)
	}
	_, err := h.Service.CreateUserGroup(ctx, h.Owner.Caller, chat.CreateUserGroupRequest{Name: "huge", Members: long})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Too many IDs in 'members' (limit: 10000).")
	ps := make([]chat.Principal, len(long))
	for i, id := range long {
		ps[i] = chat.Principal{ID: id}
	}
	_, err = h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "huge"}}, Principals: &ps})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Too many principals (limit: 10000).")
}

// BenchmarkLongIDLists reports how long the long-list requests take and
// how long another user's write waits meanwhile (ns/other-write).
//
//	go test -run XXX -bench LongIDLists -benchtime 5x .
func BenchmarkLongIDLists(b *testing.B) {
	ctx := context.Background()
	h := chattest.New(b)
	alice, bob := h.NewUser(b, chat.RoleMember), h.NewUser(b, chat.RoleMember)
	for _, tc := range []struct {
		name string
		run  func(i int) error
	}{
		{"CreateUserGroup400kCopies", func(i int) error {
			_, err := h.Service.CreateUserGroup(ctx, alice.Caller, chat.CreateUserGroupRequest{Name: fmt.Sprintf("g%d", i), Members: repeated(alice.ID, 400_000)})
			return err
		}},
		{"Subscribe200kPrincipals", func(i int) error {
			ps := make([]chat.Principal, 200_000)
			for j := range ps {
				ps[j] = chat.Principal{ID: alice.ID}
			}
			_, err := h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: fmt.Sprintf("c%d", i)}}, Principals: &ps})
			return err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var other time.Duration
			var writes int
			i := 0
			for b.Loop() {
				i++
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					start := time.Now()
					req := chat.UpdateSettingsRequest{}
					req.HighContrastMode = ptr(i%2 == 0)
					if _, err := h.Service.UpdateSettings(ctx, bob.Caller, req); err != nil {
						b.Error(err)
					}
					other += time.Since(start)
					writes++
				}()
				if err := tc.run(i); err != nil {
					b.Fatal(err)
				}
				wg.Wait()
			}
			b.ReportMetric(float64(other.Nanoseconds())/float64(writes), "ns/other-write")
		})
	}
}
