package webhook_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/transport/webhook"
)

func TestPayloadJSONNames(t *testing.T) {
	p := webhook.Payload{
		Data: "d", Message: json.RawMessage(`{"id":1}`), BotEmail: "b@x", BotFullName: "B", Token: "t",
		Trigger: webhook.TriggerDirectMessage,
	}
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.Equal(t, `{"data":"d","message":{"id":1},"bot_email":"b@x","bot_full_name":"B","token":"t","trigger":"direct_message"}`, string(b))

	var back webhook.Payload
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, p, back)
}

func TestInterfaceAndKindNames(t *testing.T) {
	assert.Equal(t, webhook.Interface(1), webhook.Generic)
	assert.Equal(t, webhook.Interface(2), webhook.Slack)
	assert.Equal(t, "generic", webhook.Generic.String())
	assert.Equal(t, "slack", webhook.Slack.String())
	assert.Equal(t, "Interface(9)", webhook.Interface(9).String())
	assert.Equal(t, "reply", webhook.Reply.String())
	assert.Equal(t, "no reply", webhook.NoReply.String())
	assert.Equal(t, "failure", webhook.Failure.String())
	assert.Equal(t, "retry", webhook.Retry.String())
	assert.Equal(t, "Kind(0)", webhook.Kind(0).String())
}

func TestSlackFields(t *testing.T) {
	f := webhook.SlackFields{
		Token: "abcdef", RealmID: 2, RealmHost: "zulip.testserver", StreamID: 123, StreamName: "integrations",
		Timestamp: 123456, SenderID: 21, SenderFullName: "Sample User", Text: "@**test**", Trigger: "mention", BotID: 12,
	}
	v := f.Values()
	want := map[string]string{
		"token": "abcdef", "team_id": "T2", "team_domain": "zulip.testserver", "channel_id": "C123",
		"channel_name": "integrations", "thread_ts": "123456", "timestamp": "123456", "user_id": "U21",
		"user_name": "Sample User", "text": "@**test**", "trigger_word": "mention", "service_id": "12",
	}
	require.Len(t, v, len(want))
	for k, val := range want {
		assert.Equal(t, []string{val}, v[k], k)
	}
	assert.Equal(t, "token=abcdef&team_id=T2&team_domain=zulip.testserver&channel_id=C123&channel_name=integrations"+
		"&thread_ts=123456&timestamp=123456&user_id=U21&user_name=Sample+User&text=%40%2A%2Atest%2A%2A"+
		"&trigger_word=mention&service_id=12", f.Encode())
}

func TestStripMention(t *testing.T) {
	tests := []struct{ in, want string }{
		{"@**Echo** hello", "hello"},
		{"  @**Echo**   hello  ", "hello"},
		{"@**echo** hello", "hello"},
		{"@**Echo|12** hello", "hello"},
		{"@_**Echo** hello", "hello"},
		{"say @**Echo** hi", "say hi"},
		{"@**Echo**", ""},
		{"@**Echo Bot** hi", "@**Echo Bot** hi"}, // another user
		{"@**Echo.** hi", "@**Echo.** hi"},       // the name is matched literally
		{"plain text", "plain text"},
		{"line one\n@**Echo**\nline two", "line one\n\nline two"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, webhook.StripMention(tt.in, "Echo"), tt.in)
	}
	assert.Equal(t, "a.b hi", webhook.StripMention("@**a.b** a.b hi", "a.b"))
	assert.Equal(t, "x", webhook.StripMention(" x ", ""))
}

func TestDecodeMessageError(t *testing.T) {
	p := webhook.Payload{Message: json.RawMessage(`[]`)}
	_, err := p.DecodeMessage()
	assert.Error(t, err)
}
