package webhook

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Interface is the wire format a bot's service speaks (the bot's
// "interface" setting in the reference system).
type Interface int

const (
	// Generic is interface 1 (the reference calls it "zulip" in its
	// configuration): a JSON Payload, a JSON reply with content.
	Generic Interface = 1
	// Slack is interface 2: a form-encoded body in the shape of Slack's
	// legacy outgoing webhooks (SlackFields), a JSON reply with text.
	// It serves channel messages only (see SlackDirectMessageRefusal).
	Slack Interface = 2
)

// String names the interface.
func (i Interface) String() string {
	switch i {
	case Generic:
		return "generic"
	case Slack:
		return "slack"
	}
	return "Interface(" + strconv.Itoa(int(i)) + ")"
}

// Trigger values: why a message reached the bot.
const (
	// TriggerMention: a non-silent @-mention of the bot in a channel.
	TriggerMention = "mention"
	// TriggerDirectMessage: a direct message with the bot among the
	// recipients (called "private_message" before feature level 201).
	TriggerDirectMessage = "direct_message"
)

// Payload is the body of a generic (interface 1) outgoing webhook request,
// the object of the spec's endpoint 21. Fields are in the reference's
// order.
type Payload struct {
	// Data is the triggering message's raw Markdown content.
	Data string `json:"data"`
	// Message is the triggering message as a message object (the
	// GET /messages shape with raw content and rendered_content, no
	// flags), already encoded: the Service builds it, bots may decode it
	// with DecodeMessage.
	Message json.RawMessage `json:"message"`
	// BotEmail and BotFullName identify the bot that was triggered.
	BotEmail    string `json:"bot_email"`
	BotFullName string `json:"bot_full_name"`
	// Token is the bot service's secret; the receiver checks it with
	// VerifyToken.
	Token string `json:"token"`
	// Trigger is TriggerMention or TriggerDirectMessage.
	Trigger string `json:"trigger"`
}

// Message holds the fields of Payload.Message a bot most often needs. The
// service sends more (avatar_url, client, reactions, submessages, ...);
// decode Payload.Message yourself to read them.
type Message struct {
	ID              int64  `json:"id"`
	Type            string `json:"type"` // "stream" or "private"
	SenderID        int64  `json:"sender_id"`
	SenderEmail     string `json:"sender_email"`
	SenderFullName  string `json:"sender_full_name"`
	SenderRealmStr  string `json:"sender_realm_str"`
	Content         string `json:"content"`
	RenderedContent string `json:"rendered_content"`
	// DisplayRecipient is the channel name (a JSON string) for a channel
	// message, a list of {id, email, full_name, is_mirror_dummy} objects
	// for a direct message.
	DisplayRecipient json.RawMessage `json:"display_recipient"`
	RecipientID      int64           `json:"recipient_id"`
	StreamID         int64           `json:"stream_id,omitempty"` // channel messages only
	Subject          string          `json:"subject"`             // the topic
	Timestamp        int64           `json:"timestamp"`
}

// DecodeMessage decodes p.Message.
func (p *Payload) DecodeMessage() (*Message, error) {
	var m Message
	if err := json.Unmarshal(p.Message, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// StripMention removes the mentions of the user called fullName from
// content (@**Name**, @**Name|id** and the silent @_**Name** forms,
// matched without regard to case, each with one space that follows it)
// and trims the result: what a bot was told once its own name is taken
// away ("@**Echo** hello" gives "hello").
func StripMention(content, fullName string) string {
	if fullName == "" {
		return strings.TrimSpace(content)
	}
	re := regexp.MustCompile(`(?i)@_?\*\*` + regexp.QuoteMeta(fullName) + `(?:\|\d+)?\*\*[ \t]?`)
	return strings.TrimSpace(re.ReplaceAllLiteralString(content, ""))
}

// SlackFields are what a Slack-compatible (interface 2) request carries
// about a channel message.
type SlackFields struct {
	Token          string // the bot service's token
	RealmID        int64  // sent as team_id "T<id>"
	RealmHost      string // team_domain: the organization's host
	StreamID       int64  // sent as channel_id "C<id>"
	StreamName     string // channel_name
	Timestamp      int64  // the message's send time in Unix seconds: thread_ts and timestamp
	SenderID       int64  // sent as user_id "U<id>"
	SenderFullName string // user_name
	Text           string // the message's raw Markdown content
	Trigger        string // trigger_word (TriggerMention)
	BotID          int64  // service_id: the bot's user ID
}

// slackField is one form field, kept in the reference's order.
type slackField struct{ name, value string }

func (f SlackFields) fields() []slackField {
	ts := strconv.FormatInt(f.Timestamp, 10)
	return []slackField{
		{"token", f.Token},
		{"team_id", "T" + strconv.FormatInt(f.RealmID, 10)},
		{"team_domain", f.RealmHost},
		{"channel_id", "C" + strconv.FormatInt(f.StreamID, 10)},
		{"channel_name", f.StreamName},
		{"thread_ts", ts},
		{"timestamp", ts},
		{"user_id", "U" + strconv.FormatInt(f.SenderID, 10)},
		{"user_name", f.SenderFullName},
		{"text", f.Text},
		{"trigger_word", f.Trigger},
		{"service_id", strconv.FormatInt(f.BotID, 10)},
	}
}

// Values returns the form fields: token, team_id, team_domain, channel_id,
// channel_name, thread_ts, timestamp, user_id, user_name, text,
// trigger_word, service_id.
func (f SlackFields) Values() url.Values {
	v := url.Values{}
	for _, kv := range f.fields() {
		v.Set(kv.name, kv.value)
	}
	return v
}

// Encode returns the form body, fields in the reference's order (which
// url.Values.Encode, sorting by name, would not keep).
func (f SlackFields) Encode() string {
	var b strings.Builder
	for i, kv := range f.fields() {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(kv.name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(kv.value))
	}
	return b.String()
}
