package chat_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// registeredMaxMessageID is max_message_id as POST /register reads it:
// from its snapshot, counted by the store.
func registeredMaxMessageID(t *testing.T, svc *chat.Service, u chattest.User) int64 {
	t.Helper()
	ctx := context.Background()
	types := []string{"message"}
	r, err := svc.Register(ctx, u.Caller, chat.RegisterRequest{FetchEventTypes: &types})
	require.NoError(t, err)
	_, err = svc.DeleteEvents(ctx, u.Caller, chat.DeleteEventsRequest{QueueID: &r.QueueID})
	require.NoError(t, err)
	return r.State["max_message_id"].(int64)
}

// GET /users/me answers max_message_id from what the write path keeps;
// after every step of a random sequence of sends, direct messages,
// reactions, stars, edits that mention, moves to other channels and
// topics, deletions, subscriptions and unsubscriptions, every user's
// answer is the one counted from scratch (register's).
func TestMaxMessageIDKeptMatchesCounting(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	users := []chattest.User{admin}
	for range 4 {
		users = append(users, h.NewUser(t, chat.RoleMember))
	}
	names := []string{"alpha", "beta", "gamma"}
	channels := map[string]int64{}
	for _, n := range names {
		channels[n] = newChannelBy(t, h, admin, n, false)
	}
	rng := rand.New(rand.NewPCG(33, 34))
	pick := func() chattest.User { return users[rng.IntN(len(users))] }
	var sent []int64
	senders := map[int64]chattest.User{}
	steps := map[string]int{}
	for step := range 150 {
		var err error
		op := rng.IntN(10)
		switch {
		case op < 3 || len(sent) == 0:
			from := pick()
			var resp *chat.SendMessageResponse
			if rng.IntN(3) == 0 {
				to := []int64{pick().ID}
				if rng.IntN(2) == 0 {
					to = append(to, pick().ID)
				}
				resp, err = h.Service.SendMessage(ctx, from.Caller, chat.SendMessageRequest{Type: "private", To: chat.ToUsers(to...), Content: fmt.Sprint("dm ", step)})
			} else {
				resp, err = h.Service.SendMessage(ctx, from.Caller, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(channels[names[rng.IntN(3)]]), Topic: ptr(fmt.Sprint("t", rng.IntN(2))), Content: fmt.Sprint("m ", step)})
			}
			if err == nil {
				sent = append(sent, resp.ID)
				senders[resp.ID] = from
				steps["send"]++
			}
		case op == 3:
			_, err = h.Service.AddReaction(ctx, pick().Caller, chat.AddReactionRequest{MessageID: sent[rng.IntN(len(sent))], EmojiName: "tada"})
			if err == nil {
				steps["react"]++
			}
		case op == 4:
			_, err = h.Service.UpdateMessageFlags(ctx, pick().Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{sent[rng.IntN(len(sent))]}, Op: "add", Flag: "starred"})
			if err == nil {
				steps["star"]++
			}
		case op == 5:
			id := sent[rng.IntN(len(sent))]
			text := fmt.Sprintf("now with @**%s**", pick().FullName)
			_, err = h.Service.UpdateMessage(ctx, senders[id].Caller, chat.UpdateMessageRequest{MessageID: id, Content: &text})
			if err == nil {
				steps["edit"]++
			}
		case op == 6:
			to := channels[names[rng.IntN(3)]]
			mode := []string{"change_one", "change_later", "change_all"}[rng.IntN(3)]
			_, err = h.Service.UpdateMessage(ctx, admin.Caller, chat.UpdateMessageRequest{MessageID: sent[rng.IntN(len(sent))], StreamID: &to, PropagateMode: &mode})
			if err == nil {
				steps["move"]++
			}
		case op == 7:
			i := rng.IntN(len(sent))
			_, err = h.Service.DeleteMessage(ctx, admin.Caller, chat.DeleteMessageRequest{MessageID: sent[i]})
			if err == nil {
				sent = append(sent[:i], sent[i+1:]...)
				steps["delete"]++
			}
		case op == 8:
			subscribe(t, h, admin, names[rng.IntN(3)], pick().ID)
			steps["subscribe"]++
		default:
			u := pick()
			_, err = h.Service.Unsubscribe(ctx, u.Caller, chat.UnsubscribeRequest{Subscriptions: []string{names[rng.IntN(3)]}})
			if err == nil {
				steps["unsubscribe"]++
			}
		}
		_ = err // refused steps (a message gone, not one's own to edit) change nothing
		for _, u := range users {
			own, err := h.Service.GetOwnUser(ctx, u.Caller)
			require.NoError(t, err)
			require.Equal(t, registeredMaxMessageID(t, h.Service, u), own.MaxMessageID, "step %d, user %d", step, u.ID)
		}
	}
	for _, op := range []string{"send", "react", "star", "edit", "move", "delete", "subscribe", "unsubscribe"} {
		require.Positive(t, steps[op], "the sequence had no %s", op)
	}
}

// A send on one server raises max_message_id on another, which answered
// it from memory before, once the event bus brings the write there.
func TestMaxMessageIDAcrossServers(t *testing.T) {
	f := newFleet(t, 2)
	ctx := context.Background()
	alice, bob := f.h.NewUser(t, chat.RoleMember), f.h.NewUser(t, chat.RoleMember)
	own := func() int64 {
		o, err := f.servers[1].GetOwnUser(ctx, bob.Caller)
		require.NoError(t, err)
		return o.MaxMessageID
	}
	before := own()
	id := sendDM(t, f.servers[0], alice, bob, "hello")
	require.Greater(t, id, before)
	require.Eventually(t, func() bool { return own() == id }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, registeredMaxMessageID(t, f.servers[1], bob), own())
}
