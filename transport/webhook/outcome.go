package webhook

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind says what the Service does with an Outcome.
type Kind int

const (
	// Reply: the bot posts Outcome.Content (with Outcome.WidgetContent
	// when set) in the triggering conversation: the same channel and
	// topic, or the same direct-message group.
	Reply Kind = iota + 1
	// NoReply: nothing to post.
	NoReply
	// Failure: the bot posts Outcome.Message in the triggering
	// conversation and, when Outcome.OwnerDetail is not empty, sends its
	// owner the direct message Outcome.OwnerMessage(link, bot name).
	Failure
	// Retry comes only from Client.Attempt: a timeout or connection error.
	// Call Attempt again after Client.Backoff(o.Attempts); once
	// MaxAttempts attempts have failed, act on o.Exhausted() instead.
	Retry
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Reply:
		return "reply"
	case NoReply:
		return "no reply"
	case Failure:
		return "failure"
	case Retry:
		return "retry"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Texts of the reference system (zerver/lib/outgoing_webhook.py).
const (
	// FailurePrefix starts every failure posted in the conversation.
	FailurePrefix = "Failure! "
	// SlackDirectMessageRefusal is posted in a direct message that
	// triggers a Slack-compatible (interface 2) service, which is not
	// called: Slack's format has no direct messages. The owner gets no
	// message.
	SlackDirectMessageRefusal = FailurePrefix + "Slack outgoing webhooks don't support direct messages."
	// BotUnavailable is posted when every attempt timed out or failed to
	// connect.
	BotUnavailable = FailurePrefix + "Bot is unavailable"

	msgInvalidJSON    = "Invalid JSON in response"
	msgInvalidFormat  = "Invalid response format"
	ownerConnection   = "A connection error occurred. Is my bot server down?"
	ownerDisallowed   = "The URL configured for the webhook is for a private or disallowed network."
	ownerReplyRefused = "The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> "
)

// Outcome is the result of delivering one trigger to one bot service: what
// the Service must post, and where.
type Outcome struct {
	Kind Kind

	// Content is the Markdown to post (Reply).
	Content string
	// WidgetContent is the bot's widget_content, as the JSON value it sent
	// (Reply, generic interface, nil when absent). The reference expects a
	// string holding JSON and validates it when posting; when the Service
	// refuses it, it acts on o.Rejected(msg) instead.
	WidgetContent json.RawMessage

	// Message is the whole text to post in the conversation (Failure, and
	// the text for when attempts run out with Retry).
	Message string
	// OwnerDetail is what the owner's direct message says after its first
	// line (Failure); empty means the owner is not told.
	OwnerDetail string

	// StatusCode is the HTTP status of the last answer (0 when none came).
	StatusCode int
	// Body is the body of the last answer, cut at Options.MaxResponseBytes.
	Body []byte
	// Attempts counts the requests made, this one included.
	Attempts int
	// Err is the underlying error of a failure, for the logs.
	Err error
}

// OwnerMessage returns the direct message for the bot's owner:
//
//	[A message](<link>) to your bot @_**<bot>** triggered an outgoing webhook.
//	<detail>
//
// messageLink is the triggering message's permalink ("near" link);
// botFullName is the bot's full name.
func OwnerMessage(messageLink, botFullName, detail string) string {
	s := "[A message](" + messageLink + ") to your bot @_**" + botFullName + "** triggered an outgoing webhook."
	if detail != "" {
		s += "\n" + detail
	}
	return s
}

// OwnerMessage returns the owner's direct message for this outcome (see
// the function OwnerMessage), or "" when the owner is not to be told.
func (o Outcome) OwnerMessage(messageLink, botFullName string) string {
	if o.OwnerDetail == "" {
		return ""
	}
	return OwnerMessage(messageLink, botFullName, o.OwnerDetail)
}

// Exhausted returns the Failure a Retry outcome becomes when no attempts
// are left: "Failure! Bot is unavailable" in the conversation, the reason
// of the last attempt for the owner. Other outcomes are returned as they
// are.
func (o Outcome) Exhausted() Outcome {
	if o.Kind == Retry {
		o.Kind = Failure
	}
	return o
}

// Rejected returns the Failure for a Reply the Service could not post for
// a reason the bot's author should see (msg, a client-safe error message
// such as "Widgets: API programmer sent invalid JSON content"): msg in the
// conversation after "Failure! ", and for the owner the reference's
// explanation with the bot's answer.
func (o Outcome) Rejected(msg string) Outcome {
	return Outcome{
		Kind:        Failure,
		Message:     FailurePrefix + msg,
		OwnerDetail: ownerReplyRefused + msg + payloadBlock(pyReprString(o.Body)),
		StatusCode:  o.StatusCode,
		Body:        o.Body,
		Attempts:    o.Attempts,
		Err:         o.Err,
	}
}

// SlackDirectMessageOutcome is the outcome of a direct message that
// triggers a Slack-compatible service, which is not called:
// SlackDirectMessageRefusal in the conversation, nothing for the owner.
func SlackDirectMessageOutcome() Outcome {
	return Outcome{Kind: Failure, Message: SlackDirectMessageRefusal}
}

// statusFailure is the outcome of a non-2xx answer.
func statusFailure(status int, body []byte) Outcome {
	detail := fmt.Sprintf("The webhook got a response with status code *%d*.", status)
	if status == 407 {
		detail = ownerDisallowed
	}
	return Outcome{
		Kind:        Failure,
		Message:     fmt.Sprintf("%sThird party responded with %d", FailurePrefix, status),
		OwnerDetail: detail + payloadBlock(pyReprBytes(body)),
		StatusCode:  status,
		Body:        body,
	}
}

// disallowedFailure is the outcome of a connection the client refused to
// open (a non-public address): what the reference reports when its
// filtering proxy answers 407.
func disallowedFailure(err error) Outcome {
	return Outcome{
		Kind:        Failure,
		Message:     FailurePrefix + "Third party responded with 407",
		OwnerDetail: ownerDisallowed,
		Err:         err,
	}
}

// exceptionFailure is the outcome of a request that failed for another
// reason than a timeout or a connection error. typeName takes the place of
// the Python exception's class name (InvalidSchema, TooManyRedirects, ...);
// command is the triggering message's content.
func exceptionFailure(typeName, command string, err error) Outcome {
	return Outcome{
		Kind: Failure,
		Message: FailurePrefix + "An exception of type *" + typeName + "* occurred for message `" + command +
			"`! See the Zulip server logs for more information.",
		OwnerDetail: "When trying to send a request to the webhook service, an exception of type " + typeName +
			" occurred:\n```\n" + err.Error() + "\n```",
		Err: err,
	}
}

// retryTimeout and retryConnection are the outcomes of a failed attempt
// that may be tried again.
func retryTimeout(timeout time.Duration, err error) Outcome {
	return Outcome{Kind: Retry, Message: BotUnavailable, OwnerDetail: timeoutDetail(timeout), Err: err}
}

func retryConnection(err error) Outcome {
	return Outcome{Kind: Retry, Message: BotUnavailable, OwnerDetail: ownerConnection, Err: err}
}

// timeoutDetail says "Request timed out after 10 seconds." with the
// configured timeout in seconds, as the reference prints its setting.
func timeoutDetail(d time.Duration) string {
	return "Request timed out after " + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " seconds."
}

// replyFailure is the outcome of a 2xx answer the client cannot use.
func replyFailure(msg string, status int, body []byte) Outcome {
	return Outcome{StatusCode: status, Body: body}.Rejected(msg)
}

// payloadBlock shows a non-empty answer body to the owner ("" when empty).
func payloadBlock(repr string) string {
	if repr == "" {
		return ""
	}
	return "\nThe response contains the following payload:\n```\n" + repr + "\n```"
}

// pyReprBytes writes body as Python's repr of bytes (b'...'), the way the
// reference shows the body of a non-2xx answer; "" for an empty body.
func pyReprBytes(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	q := pyQuote(string(body))
	var b strings.Builder
	b.WriteString("b")
	b.WriteByte(q)
	for _, c := range body {
		switch {
		case c == '\\' || c == q:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyReprString writes body, read as UTF-8 text, as Python's repr of a str,
// the way the reference shows the body of a 2xx answer it could not use;
// "" for an empty body.
func pyReprString(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	s := string(body)
	q := pyQuote(s)
	var b strings.Builder
	b.WriteByte(q)
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsPrint(r): // includes U+FFFD, what invalid UTF-8 decodes to
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyQuote picks Python's quote: ' unless the text has ' and no ".
func pyQuote(s string) byte {
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		return '"'
	}
	return '\''
}
