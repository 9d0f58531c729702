// Package webhook is the HTTP side of outgoing webhooks, the spec's
// endpoint 21: the server calling a bot's service when a message triggers
// the bot, and the bot's service answering. It follows the reference
// system (zerver/lib/outgoing_webhook.py) and does not import package
// chat: the Service decides when a bot is triggered, builds the request,
// and acts on the Outcome (posting replies as the bot, telling the bot's
// owner); this package does the HTTP, the retries and the reading of
// answers.
//
// # Server side
//
// A message triggers an outgoing-webhook bot when it @-mentions the bot
// non-silently in a channel (trigger "mention") or is a direct message
// with the bot among the recipients ("direct_message"), and its sender is
// not a bot. The Service then builds a Request per service of the bot:
//
//   - Generic (interface 1): a JSON Payload — data (the raw Markdown),
//     message (the message object with content and rendered_content),
//     bot_email, bot_full_name, token, trigger.
//   - Slack (interface 2): the form fields of Slack's legacy outgoing
//     webhooks (SlackFields), channel messages only; a direct message gets
//     SlackDirectMessageOutcome without a call.
//
// Client.Deliver POSTs it with the User-Agent
// "ZulipOutgoingWebhook/<version>", each attempt bounded by a timeout
// (10 s by default). Timeouts and connection errors are retried, with
// waits between attempts, up to MaxAttempts (4) requests in all; nothing
// else is. Client.Attempt makes a single request for a caller that keeps
// the count itself. The Outcome says what to do:
//
//   - Reply: post Content (and WidgetContent) as the bot, in the same
//     channel and topic or the same direct-message group. The answer was a
//     2xx JSON object with "content" (or the legacy "response_string"); a
//     Slack service answers "text".
//   - NoReply: post nothing ({"response_not_required": true}, empty or
//     white-space content, no content, or the JSON string "" of old bot
//     servers).
//   - Failure: post Message ("Failure! ...") in the conversation and, when
//     OwnerDetail is set, send the bot's owner OwnerMessage(link, bot) as
//     a direct message from the bot: a non-2xx answer ("Failure! Third
//     party responded with <status>"), an answer that is not JSON or not
//     an object, attempts exhausted ("Failure! Bot is unavailable"), or
//     another error ("Failure! An exception of type *X* occurred ...").
//
// When the Service cannot post a Reply for a reason the bot's author
// should see (an invalid widget_content), it acts on Outcome.Rejected.
//
// # Address protection
//
// A bot's URL is chosen by its owner, so by default the client refuses to
// connect to addresses that are not public (IsPublicAddr): loopback,
// private and unique-local networks, link-local (with the cloud metadata
// address 169.254.169.254), carrier-grade NAT, multicast, broadcast,
// unspecified, reserved ranges and the IPv4-mapped forms of these. The
// check runs in the dialer, after DNS resolution, on every connection the
// client opens, so redirects and DNS answers that change between lookups
// are judged too; environment proxies are not used. A refused connection
// is a Failure without retry, reported as the reference's filtering proxy
// reports it (status 407: "The URL configured for the webhook is for a
// private or disallowed network."). Options.AllowPrivate turns the check
// off for development.
//
// # Bot side
//
// A bot's service is an HTTP endpoint. NewHandler serves one from a token
// and a function returning the reply:
//
//	h := webhook.NewHandler(token, func(ctx context.Context, p *webhook.Payload) (string, error) {
//		return webhook.StripMention(p.Data, p.BotFullName), nil
//	})
//	http.ListenAndServe(":8081", h)
//
// For more control, DecodePayload reads a request (size-limited),
// VerifyToken checks its token in constant time, and WriteReply or
// WriteNoReply answer. examples/echobot is a complete bot.
package webhook
