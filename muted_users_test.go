package chat_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func unreadIDs(t *testing.T, h *chattest.Harness, as chattest.User) ([]int64, []int64) {
	t.Helper()
	u, err := h.Service.GetUnreadMessages(context.Background(), as.Caller, chat.GetUnreadMessagesRequest{})
	require.NoError(t, err)
	var ids []int64
	for _, s := range u.Streams {
		ids = append(ids, s.UnreadMessageIDs...)
	}
	for _, p := range u.PMs {
		ids = append(ids, p.UnreadMessageIDs...)
	}
	slices.Sort(ids)
	return ids, u.Mentions
}

func TestMuteUserStates(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	bot := h.NewBot(t, bob)
	gone := h.NewUser(t, chat.RoleMember)
	h.Deactivate(t, gone)
	other := h.NewRealm(t, "https://other.example.com")
	stranger := other.NewUser(t, chat.RoleMember)
	h.Events.Take()

	mute := func(id int64) error {
		_, err := h.Service.MuteUser(ctx, alice.Caller, chat.MuteUserRequest{MutedUserID: id})
		return err
	}
	unmute := func(id int64) error {
		_, err := h.Service.UnmuteUser(ctx, alice.Caller, chat.MuteUserRequest{MutedUserID: id})
		return err
	}
	requireError(t, mute(alice.ID), chat.KindInvalid, chat.CodeBadRequest, "Cannot mute self")
	requireError(t, mute(999999), chat.KindNotFound, chat.CodeBadRequest, "No such user")
	requireError(t, mute(stranger.ID), chat.KindNotFound, chat.CodeBadRequest, "No such user")
	requireError(t, unmute(bob.ID), chat.KindNotFound, chat.CodeBadRequest, "User is not muted")
	require.Empty(t, takeEvents(t, h), "refusals change nothing")

	t0 := h.Clock.Now().Unix()
	require.NoError(t, mute(bob.ID))
	ev := only(t, takeEvents(t, h), "muted_users", "")
	assert.Equal(t, []int64{alice.ID}, ev.To, "only the muter is told")
	assert.Equal(t, []any{map[string]any{"id": float64(bob.ID), "timestamp": float64(t0)}}, ev.JSON["muted_users"])
	requireError(t, mute(bob.ID), chat.KindConflict, chat.CodeBadRequest, "User already muted")

	// Bots and deactivated users can be muted too; the event carries the
	// whole list.
	require.NoError(t, mute(bot.ID))
	require.NoError(t, mute(gone.ID))
	evs := takeEvents(t, h)
	require.Len(t, evs, 2)
	assert.Len(t, evs[1].JSON["muted_users"], 3)
	state := registerState(t, h, alice, "muted_users")
	assert.Len(t, state["muted_users"], 3)
	assert.Empty(t, registerState(t, h, bob, "muted_users")["muted_users"])

	require.NoError(t, unmute(bot.ID))
	ev = only(t, takeEvents(t, h), "muted_users", "")
	assert.Len(t, ev.JSON["muted_users"], 2)
	requireError(t, unmute(bot.ID), chat.KindNotFound, chat.CodeBadRequest, "User is not muted")
}

// Muting marks the target's messages read; while it lasts their new
// messages arrive read (events, fetches, unread counts, is:unread, the
// first-unread anchor), and their mentions are not unread mentions.
// Unmuting keeps those read; later messages are unread again.
func TestMuteUserReadRule(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	ch := newChannel(t, h, "town", false)
	subscribe(t, h, h.Owner, "town", alice.ID, bob.ID, carol.ID)
	toTown := func(from chattest.User, content string) int64 {
		return send(t, h, from, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(ch), Topic: ptr("t"), Content: content, ReadBySender: ptr(true)})
	}
	dm := func(from chattest.User, content string) int64 {
		return send(t, h, from, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(alice.ID), Content: content})
	}
	before := toTown(bob, "hello")
	beforeDM := dm(bob, "psst")
	fromCarol := toTown(carol, "hi")
	ids, _ := unreadIDs(t, h, alice)
	assert.Equal(t, []int64{before, beforeDM, fromCarol}, ids)

	queue := register(t, h, alice, chat.RegisterRequest{})
	_, err := h.Service.MuteUser(ctx, alice.Caller, chat.MuteUserRequest{MutedUserID: bob.ID})
	require.NoError(t, err)
	ids, _ = unreadIDs(t, h, alice)
	assert.Equal(t, []int64{fromCarol}, ids, "bob's messages were marked read")
	var marked []int64
	for _, e := range queue.settle() {
		if e.typ() == "update_message_flags" {
			for _, id := range e["messages"].([]any) {
				marked = append(marked, int64(id.(float64)))
			}
		}
	}
	slices.Sort(marked)
	assert.Equal(t, []int64{before, beforeDM}, marked, "with the usual flag events")

	// New messages from bob: read on arrival, mentions included.
	during := toTown(bob, "@**"+alice.FullName+"** look")
	duringDM := dm(bob, "again")
	fromCarol2 := toTown(carol, "@**"+alice.FullName+"** hey")
	for _, e := range queue.settle() {
		if e.typ() != "message" {
			continue
		}
		id := int64(e["message"].(map[string]any)["id"].(float64))
		flags := e["flags"].([]any)
		if id == fromCarol2 {
			assert.NotContains(t, flags, "read")
		} else {
			assert.Contains(t, flags, "read", "message %d from bob", id)
		}
	}
	ids, mentions := unreadIDs(t, h, alice)
	assert.Equal(t, []int64{fromCarol, fromCarol2}, ids)
	assert.Equal(t, []int64{fromCarol2}, mentions, "bob's mention is not an unread mention")
	assert.Contains(t, getMessage(t, h, alice, during).Flags, "read")
	assert.Contains(t, getMessage(t, h, alice, during).Flags, "mentioned")
	assert.Contains(t, getMessage(t, h, alice, duringDM).Flags, "read")
	assert.NotContains(t, getMessage(t, h, bob, during).Flags, "mentioned", "others see no change")
	cUnread, _ := unreadIDs(t, h, carol)
	assert.Contains(t, cUnread, during, "only for the muter")

	narrow := `[{"operator":"is","operand":"unread"}]`
	resp, err := h.Service.GetMessages(ctx, alice.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100), Narrow: &narrow})
	require.NoError(t, err)
	var got []int64
	for _, m := range resp.Messages {
		got = append(got, m.ID)
	}
	assert.Equal(t, []int64{fromCarol, fromCarol2}, got, "is:unread")
	first, err := h.Service.GetMessages(ctx, alice.Caller, chat.GetMessagesRequest{Anchor: ptr("first_unread"), NumBefore: ptr(0), NumAfter: ptr(0)})
	require.NoError(t, err)
	require.NotNil(t, first.Anchor)
	assert.Equal(t, fromCarol, *first.Anchor, "the first unread skips bob")

	// Unmuting: what was read stays read; bob's next message is unread.
	_, err = h.Service.UnmuteUser(ctx, alice.Caller, chat.MuteUserRequest{MutedUserID: bob.ID})
	require.NoError(t, err)
	after := toTown(bob, "back")
	ids, _ = unreadIDs(t, h, alice)
	assert.Equal(t, []int64{fromCarol, fromCarol2, after}, ids)
	assert.Contains(t, getMessage(t, h, alice, during).Flags, "read")
}
