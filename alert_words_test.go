package chat_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func addAlertWords(t *testing.T, h *chattest.Harness, as chattest.User, words ...string) []string {
	t.Helper()
	resp, err := h.Service.AddAlertWords(context.Background(), as.Caller, chat.AlertWordsRequest{AlertWords: words})
	require.NoError(t, err)
	checkSchema(t, "POST", "/users/me/alert_words", resp)
	return resp.AlertWords
}

func TestAlertWordsEndpoints(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	h.Events.Take()
	assert.Equal(t, []string{"Release", "on call"}, addAlertWords(t, h, alice, "  Release ", "", "on call"))
	ev := only(t, takeEvents(t, h), "alert_words", "")
	assert.Equal(t, []int64{alice.ID}, ev.To, "only the user hears of their words")
	assert.Equal(t, []any{"Release", "on call"}, ev.JSON["alert_words"])
	assert.Equal(t, []string{"Release", "on call", "deploy"}, addAlertWords(t, h, alice, "RELEASE", "deploy"), "a word in another case is the same word")

	got, err := h.Service.GetAlertWords(ctx, alice.Caller)
	require.NoError(t, err)
	checkSchema(t, "GET", "/users/me/alert_words", got)
	assert.Equal(t, []string{"Release", "on call", "deploy"}, got.AlertWords)

	resp, err := h.Service.RemoveAlertWords(ctx, alice.Caller, chat.AlertWordsRequest{AlertWords: []string{"release", "never added"}})
	require.NoError(t, err)
	checkSchema(t, "DELETE", "/users/me/alert_words", resp)
	assert.Equal(t, []string{"on call", "deploy"}, resp.AlertWords)

	c := register(t, h, alice, chat.RegisterRequest{FetchEventTypes: &[]string{"alert_words"}})
	assert.Equal(t, []any{"on call", "deploy"}, c.state["alert_words"])

	_, err = h.Service.AddAlertWords(ctx, alice.Caller, chat.AlertWordsRequest{AlertWords: []string{"ok", strings.Repeat("x", 101)}})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "alert_words[1] is too long (limit: 100 characters)")
	_, err = h.Service.AddAlertWords(ctx, alice.Caller, chat.AlertWordsRequest{})
	requireError(t, err, chat.KindInvalid, chat.CodeRequestVariableMissing, "Missing 'alert_words' argument")
}

// A message containing a recipient's alert word gets has_alert_word for
// them (at a word boundary, outside code blocks); only recipients do.
func TestAlertWordsFlagMessages(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	outsider := h.NewUser(t, chat.RoleMember)
	id := newChannelBy(t, h, alice, "ops", false)
	subscribe(t, h, alice, "ops", bob.ID)
	addAlertWords(t, h, bob, "deploy", "on call", "C++")
	addAlertWords(t, h, outsider, "deploy")

	alerted := func(content string) bool {
		t.Helper()
		m := send(t, h, alice, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: content})
		return slices.Contains(getMessage(t, h, bob, m).Flags, "has_alert_word")
	}
	for content, want := range map[string]bool{
		"Time to DEPLOY.":              true,
		"(deploy) now":                 true,
		"who is on call?":              true,
		"redeploy it":                  false,
		"deployment":                   false,
		"I like C++!":                  true,
		"```\ndeploy\n```":             false,
		"all quiet":                    false,
		"deploy":                       true,
		"he said \"deploy\" yesterday": false, // '"' does not end a word for the reference
	} {
		assert.Equal(t, want, alerted(content), "%q", content)
	}

	// A direct message, and the is:alerted narrow.
	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: ptr(fmt.Sprintf("[%d]", bob.ID)), Content: "deploy please"})
	assert.Contains(t, getMessage(t, h, bob, dm).Flags, "has_alert_word")
	resp, err := h.Service.GetMessages(ctx, bob.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100), NumAfter: ptr(0),
		Narrow: ptr(`[["is", "alerted"]]`)})
	require.NoError(t, err)
	assert.Len(t, resp.Messages, 6)

	// Editing the word away clears the flag; editing it in sets it.
	_, err = h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: dm, Content: ptr("please wait")})
	require.NoError(t, err)
	assert.NotContains(t, getMessage(t, h, bob, dm).Flags, "has_alert_word")
	_, err = h.Service.UpdateMessage(ctx, alice.Caller, chat.UpdateMessageRequest{MessageID: dm, Content: ptr("ok, deploy")})
	require.NoError(t, err)
	assert.Contains(t, getMessage(t, h, bob, dm).Flags, "has_alert_word")
}
