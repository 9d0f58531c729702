package webhook

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOwnerMessage(t *testing.T) {
	link := "http://zulip.testserver/#narrow/channel/999-Verona/topic/Foo/near/"
	// The reference's test_retry_request expectation.
	assert.Equal(t,
		"[A message](http://zulip.testserver/#narrow/channel/999-Verona/topic/Foo/near/) to your bot @_**Outgoing Webhook** triggered an outgoing webhook.\n"+
			"The webhook got a response with status code *500*.",
		OwnerMessage(link, "Outgoing Webhook", "The webhook got a response with status code *500*."))
	assert.Equal(t, "[A message](l) to your bot @_**B** triggered an outgoing webhook.", OwnerMessage("l", "B", ""))

	o := statusFailure(500, nil)
	assert.Equal(t, OwnerMessage(link, "Outgoing Webhook", o.OwnerDetail), o.OwnerMessage(link, "Outgoing Webhook"))
	assert.Empty(t, Outcome{Kind: Failure, Message: "x"}.OwnerMessage(link, "B"))
}

func TestExceptionTexts(t *testing.T) {
	// The reference's test_request_exception expectation, with its
	// exception's type name and text.
	o := exceptionFailure("RequestException", "", errors.New("I'm a generic exception :("))
	assert.Equal(t,
		"[A message](http://zulip.testserver/#narrow/channel/999-Verona/topic/Foo/near/) to your bot @_**Outgoing Webhook** triggered an outgoing webhook.\n"+
			"When trying to send a request to the webhook service, an exception of type RequestException occurred:\n```\nI'm a generic exception :(\n```",
		o.OwnerMessage("http://zulip.testserver/#narrow/channel/999-Verona/topic/Foo/near/", "Outgoing Webhook"))
	assert.Equal(t, "Failure! An exception of type *RequestException* occurred for message ``! See the Zulip server logs for more information.", o.Message)
}

func TestRejected(t *testing.T) {
	// The reference's test_jsonable_exception: the Service refused the
	// widget_content of a reply.
	reply := successOutcome(Generic, 200, []byte(`{"content": "whatever", "widget_content": "test"}`))
	assert.Equal(t, Reply, reply.Kind)
	f := reply.Rejected("Widgets: API programmer sent invalid JSON content")
	assert.Equal(t, Failure, f.Kind)
	assert.Equal(t, "Failure! Widgets: API programmer sent invalid JSON content", f.Message)
	assert.Equal(t,
		"The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n"+
			"> Widgets: API programmer sent invalid JSON content\n"+
			"The response contains the following payload:\n```\n'{\"content\": \"whatever\", \"widget_content\": \"test\"}'\n```",
		f.OwnerDetail)
}

func TestPyRepr(t *testing.T) {
	str := []struct{ in, want string }{
		{"", ""},
		{"true", `'true'`},
		{"this isn't valid json", `"this isn't valid json"`},
		{`it's "both"`, `'it\'s "both"'`},
		{"a\\b", `'a\\b'`},
		{"tab\tnl\ncr\r", `'tab\tnl\ncr\r'`},
		{"bell\x07 del\x7f", `'bell\x07 del\x7f'`},
		{"héllo ✓ 😀", `'héllo ✓ 😀'`},
		{"nbsp\u00a0zwsp\u200b", `'nbsp\xa0zwsp\u200b'`},
		{"bad \xff byte", "'bad \ufffd byte'"},
	}
	for _, tt := range str {
		assert.Equal(t, tt.want, pyReprString([]byte(tt.in)), "str %q", tt.in)
	}
	bytes := []struct{ in, want string }{
		{"", ""},
		{"oops", `b'oops'`},
		{`{"msg": "bad"}`, `b'{"msg": "bad"}'`},
		{"don't", `b"don't"`},
		{"line\n", `b'line\n'`},
		{"é", `b'\xc3\xa9'`},
		{"\x00\x1f", `b'\x00\x1f'`},
		{"a\\b\t\r", `b'a\\b\t\r'`},
		{`it's "both"`, `b'it\'s "both"'`},
	}
	for _, tt := range bytes {
		assert.Equal(t, tt.want, pyReprBytes([]byte(tt.in)), "bytes %q", tt.in)
	}
}

func TestTruthy(t *testing.T) {
	for body, want := range map[string]Kind{
		`{"response_not_required": "yes", "content": "x"}`: NoReply,
		`{"response_not_required": "", "content": "x"}`:    Reply,
		`{"response_not_required": 0, "content": "x"}`:     Reply,
		`{"response_not_required": 0.0, "content": "x"}`:   Reply,
		`{"response_not_required": [], "content": "x"}`:    Reply,
		`{"response_not_required": [0], "content": "x"}`:   NoReply,
		`{"response_not_required": {}, "content": "x"}`:    Reply,
		`{"response_not_required": null, "content": "x"}`:  Reply,
	} {
		assert.Equal(t, want, successOutcome(Generic, 200, []byte(body)).Kind, body)
	}
}
