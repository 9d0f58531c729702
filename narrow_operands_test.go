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

// Integer operands and their numeric strings where the reference takes
// them (id, with, channel, sender, dm-including, group-pm-with; dm takes
// a list), through every endpoint that reads a narrow; the reference's
// errors for the rest (near, like topic or is, takes a string only: its
// operators_supporting_id does not list it).
func TestNarrowIntegerOperands(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice, bob := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleMember)
	channel := newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	first := send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("a"), Content: "one"})
	second := send(t, h, bob, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("b"), Content: "two"})
	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "three"})

	for _, tc := range []struct {
		narrow string
		want   []int64
	}{
		{fmt.Sprintf(`[{"operator":"id","operand":%d}]`, second), []int64{second}},
		{fmt.Sprintf(`[{"operator":"id","operand":"%d"}]`, second), []int64{second}},
		{fmt.Sprintf(`[["id","%d"]]`, first), []int64{first}},
		{fmt.Sprintf(`[{"operator":"with","operand":%d}]`, first), []int64{first}},
		{fmt.Sprintf(`[{"operator":"with","operand":"%d"}]`, dm), []int64{dm}},
		{fmt.Sprintf(`[{"operator":"channel","operand":%d},{"operator":"sender","operand":%d}]`, channel, bob.ID), []int64{second}},
		{fmt.Sprintf(`[{"operator":"stream","operand":%d},{"operator":"near","operand":"%d"}]`, channel, first), []int64{first, second}},
		{fmt.Sprintf(`[{"operator":"dm-including","operand":%d}]`, alice.ID), []int64{dm}},
		{fmt.Sprintf(`[{"operator":"dm","operand":[%d]}]`, alice.ID), []int64{dm}},
	} {
		resp := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(10), Narrow: &tc.narrow})
		assert.Equal(t, tc.want, fetchedIDs(resp), tc.narrow)
		match, err := h.Service.MatchesNarrow(ctx, bob.Caller, chat.MatchesNarrowRequest{MsgIDs: &[]int64{first, second, dm}, Narrow: &tc.narrow})
		if strings.Contains(tc.narrow, `"with"`) {
			requireError(t, err, chat.KindInvalid, "BAD_NARROW", "Invalid narrow operator: unknown operator with")
			continue
		}
		require.NoError(t, err, tc.narrow)
		assert.Len(t, match.Messages, len(tc.want), tc.narrow)
	}

	flags, err := h.Service.UpdateMessageFlagsForNarrow(ctx, bob.Caller, chat.UpdateMessageFlagsForNarrowRequest{Anchor: "oldest", NumAfter: 10,
		Narrow: fmt.Sprintf(`[{"operator":"id","operand":%d}]`, first), Op: "add", Flag: "starred"})
	require.NoError(t, err)
	assert.Equal(t, 1, flags.UpdatedCount)
	assert.Contains(t, flagsOf(t, h, bob, first)[first], "starred")

	for _, tc := range []struct{ narrow, msg string }{
		{fmt.Sprintf(`[{"operator":"near","operand":%d}]`, first), "operand is not a string"},
		{`[{"operator":"topic","operand":1}]`, "operand is not a string"},
		{`[{"operator":"id","operand":1.5}]`, "operand is not a string or integer"},
		{`[{"operator":"with","operand":[1]}]`, "operand is not a string or integer"},
		{`[{"operator":"dm","operand":["1"]}]`, "operand[0] is not an integer"},
	} {
		_, err := h.Service.GetMessages(ctx, bob.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(1), Narrow: &tc.narrow})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, tc.msg)
	}
	for _, narrow := range []string{`[{"operator":"id","operand":"4x"}]`, `[{"operator":"id","operand":-1}]`, `[{"operator":"id","operand":" 1"}]`} {
		_, err := h.Service.GetMessages(ctx, bob.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(1), Narrow: &narrow})
		requireError(t, err, chat.KindInvalid, "BAD_NARROW", "Invalid narrow operator: Invalid message ID")
	}
}
