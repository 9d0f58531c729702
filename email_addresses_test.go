package chat_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// A channel's address writes its name as the reference does (its
// encode_email_address cases, written out): non-word runs become one
// hyphen, accents go, and a name that cannot be written in ASCII is left
// out, the token alone standing for the channel.
func TestChannelAddressNames(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithEmailGateway("mail.example.com")))
	member := h.NewUser(t, chat.RoleMember)
	for name, want := range map[string]string{
		"dev. help":                  "dev-help.",
		"Denmark":                    "denmark.",
		"ąężć":                       "aezc.",
		"Тестовы some ascii letters": "",
		"a_b":                        "a_b.",
		"_x":                         "",
		"日本":                         "",
		"C++ & Go":                   "c-go.",
	} {
		id := newChannelBy(t, h, member, name, false)
		r, err := h.Service.GetStreamEmailAddress(ctx, member.Caller, chat.GetStreamEmailAddressRequest{StreamID: id})
		require.NoError(t, err, name)
		assert.Regexp(t, "^"+regexp.QuoteMeta(want)+`[0-9a-f]{32}\.show-sender@mail\.example\.com$`, r.Email, name)
		// The address works: the listener would take it.
		rcpt, err := h.Service.CheckEmailRecipient(ctx, strings.ToUpper(r.Email))
		require.NoError(t, err, name)
		assert.False(t, rcpt.Reply)
		assert.Equal(t, h.RealmID, rcpt.RealmID)
	}
}

// A missed-message email carries a reply address with a gateway, and says
// so; without one it has none and says not to reply.
func TestNotificationReplyAddress(t *testing.T) {
	for _, gateway := range []bool{true, false} {
		opts := []chattest.Option{}
		if gateway {
			opts = append(opts, chattest.WithServiceOptions(chat.WithEmailGateway("mail.example.com")))
		}
		e := newNotifyEnv(t, opts...)
		alice, bob := e.NewUser(t, chat.RoleMember), e.NewUser(t, chat.RoleMember)
		e.dm(t, bob, "hello", alice.ID)
		emails, _ := e.later(t)
		require.Len(t, emails, 1)
		got := e.smtp.Wait(t, 1, 10*time.Second)[0]
		if gateway {
			assert.Regexp(t, `^mm[0-9a-f]{32}@mail\.example\.com$`, emails[0].ReplyTo)
			assert.Contains(t, emails[0].Text, "Reply to this email directly, or view it in Test Organization:")
			assert.Contains(t, emails[0].HTML, "Reply to this email directly, <a href=")
			assert.NotContains(t, emails[0].Text, "Do not reply")
			assert.Equal(t, `"Test Organization" <`+emails[0].ReplyTo+`>`, got.Header.Get("Reply-To"))
			rcpt, err := e.Service.CheckEmailRecipient(context.Background(), emails[0].ReplyTo)
			require.NoError(t, err)
			assert.True(t, rcpt.Reply)
		} else {
			assert.Empty(t, emails[0].ReplyTo)
			assert.Contains(t, emails[0].Text, "Do not reply to this email.")
			assert.Empty(t, got.Header.Get("Reply-To"))
		}
	}
}
