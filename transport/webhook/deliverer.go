package webhook

import (
	"context"
	"time"

	chat "github.com/teamchat/chat"
)

// NewDeliverer adapts c to the Service's chat.WebhookDeliverer, which a
// host passes with chat.WithWebhookDeliverer:
//
//	svc := chat.New(store, chat.WithWebhookDeliverer(webhook.NewDeliverer(webhook.New(webhook.Options{}))))
func NewDeliverer(c *Client) chat.WebhookDeliverer { return deliverer{c} }

type deliverer struct{ c *Client }

func (d deliverer) Backoff(n int) time.Duration { return d.c.Backoff(n) }

// Attempt makes one request of call; a direct message to a Slack-interface
// service is refused without one.
func (d deliverer) Attempt(ctx context.Context, call chat.WebhookCall) chat.WebhookResult {
	if Interface(call.Interface) == Slack && call.Direct {
		return result(SlackDirectMessageOutcome(), call)
	}
	req := Request{URL: call.URL, Interface: Interface(call.Interface),
		Payload: Payload{Data: call.Data, Message: call.Message, BotEmail: call.BotEmail, BotFullName: call.BotFullName,
			Token: call.Token, Trigger: call.Trigger},
		Slack: SlackFields{Token: call.Token, RealmID: call.RealmID, RealmHost: call.RealmHost, StreamID: call.StreamID,
			StreamName: call.StreamName, Timestamp: call.Timestamp, SenderID: call.SenderID,
			SenderFullName: call.SenderFullName, Text: call.Data, Trigger: call.Trigger, BotID: call.BotID}}
	o, err := d.c.Attempt(ctx, req)
	if err != nil {
		// ctx ended: another attempt later.
		return chat.WebhookResult{Kind: chat.WebhookRetry, Exhausted: ptr(result(o.Exhausted(), call))}
	}
	res := result(o, call)
	if o.Kind == Retry {
		res.Exhausted = ptr(result(o.Exhausted(), call))
	}
	return res
}

func result(o Outcome, call chat.WebhookCall) chat.WebhookResult {
	r := chat.WebhookResult{Content: o.Content, Message: o.Message, OwnerMessage: o.OwnerMessage(call.MessageLink, call.BotFullName)}
	switch o.Kind {
	case Reply:
		r.Kind = chat.WebhookReply
	case NoReply:
		r.Kind = chat.WebhookNoReply
	case Retry:
		r.Kind = chat.WebhookRetry
	default:
		r.Kind = chat.WebhookFailure
	}
	return r
}

func ptr[T any](v T) *T { return &v }
