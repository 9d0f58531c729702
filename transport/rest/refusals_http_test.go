package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/schemacheck"
	"github.com/teamchat/chat/transport/rest"
)

// The reference's OpenAPI documents, for many operations, the errors they
// answer (examples of their 4xx responses). TestDocumentedRefusals walks
// every one of them for every endpoint we serve: each is provoked through
// HTTP and must come back with the documented status and code (and the
// documented message, or ours where the row says why it differs), valid
// against the operation's error schema, and the error the Service
// returned must say what it means: a permission refusal is KindForbidden,
// a missing object KindNotFound, a clash with existing state
// KindConflict, whatever status the reference answers them with.
//
// The expected Kinds are written out here, row by row; they are not read
// from the code under test. The Kind seen is read from the handler's
// debug log line of the request, which names it.

// refusal is one documented error answer of one operation.
type refusal struct {
	method, path string // the operation, as the yaml names it
	doc          string // the documented example's message
	// msg is our message when it differs from the example's (an example
	// with the reference's own IDs or names), with why in a comment.
	msg  string
	kind chat.Kind
	// req provokes it.
	req func(f *refusalFixture) request
}

// notServed are the documented operations we do not serve: their
// refusals cannot be provoked.
var notServed = map[string]string{
	"DELETE /attachments/{attachment_id}":       "attachments are not listed or deleted by id here",
	"POST /default_streams":                     "default channels are set with PATCH /streams",
	"DELETE /default_streams":                   "default channels are set with PATCH /streams",
	"POST /export/realm":                        "no exports",
	"POST /mobile_push/test_notification":       "no mobile push",
	"POST /rest-error-handling":                 "a documentation page, not an endpoint",
	"POST /saved_snippets":                      "no saved snippets",
	"PATCH /saved_snippets/{saved_snippet_id}":  "no saved snippets",
	"DELETE /saved_snippets/{saved_snippet_id}": "no saved snippets",
	"POST /streams/{stream_id}/delete_topic":    "topics are deleted by deleting their messages",
	"GET /streams/{stream_id}/members":          "subscribers come with GET /users/me/subscriptions",
	"POST /users/me/android_gcm_reg_id":         "no mobile push",
	"DELETE /users/me/android_gcm_reg_id":       "no mobile push",
	"POST /users/me/apns_device_token":          "no mobile push",
	"DELETE /users/me/apns_device_token":        "no mobile push",
}

// unreachable are documented refusals of operations we serve that no
// request can provoke here, with why.
var unreachable = map[string]string{
	"POST /invites: You do not have permission to subscribe other users to channels.":          "every member may add subscribers (no organization-wide can_add_subscribers_group yet)",
	"POST /invites/multiuse: You do not have permission to subscribe other users to channels.": "every member may add subscribers (no organization-wide can_add_subscribers_group yet)",
	"DELETE /messages/{message_id}/reactions: Invalid emoji code":                              "the reference does not check the emoji when removing a reaction (one that exists was valid when it was added): an unknown code answers REACTION_DOES_NOT_EXIST, as here",
	"PATCH /streams/{stream_id}: Invalid parameters":                                           "answered for parameters we do not take (folder_id and kin)",
	"PATCH /streams/{stream_id}: A moderation request channel cannot be public.":               "no moderation request channel",
	"PATCH /users/{user_id}: Guests cannot be organization administrators":                     "answered for the legacy is_admin/is_guest parameters, which we do not take",
	"PATCH /users/{email}: Guests cannot be organization administrators":                       "answered for the legacy is_admin/is_guest parameters, which we do not take",
}

type refusalFixture struct {
	*env
	alice, bob, guest chattest.User
	general           int64 // a public channel of the owner, alice and bob
	private           int64 // a private channel of the owner's, named "private"
	ownerMsg          int64 // the owner's message in general
	aliceMsg          int64 // alice's message in general
	big               int64 // a public channel of 17 subscribers
	scheduled         int64 // alice's scheduled message
	link              int64 // a revoked invitation link
	inUse             int64 // a user group that is another's subgroup
	oldMsg            int64 // alice's message of 8 days ago, with a recent one after it
}

func (f *refusalFixture) as(u *chattest.User, method, path string, params url.Values) request {
	return request{method: method, path: "/api/v1" + path, user: u, params: params}
}

func refusalRows() []refusal {
	const nope = 999999
	p := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	msgPath := func(id int64, rest string) string { return fmt.Sprintf("/messages/%d%s", id, rest) }
	return []refusal{
		{method: "POST", path: "/drafts", doc: "Must specify exactly 1 channel ID for channel messages", kind: chat.KindInvalid,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/drafts", p("drafts", `[{"type":"stream","to":[1,2],"topic":"t","content":"c"}]`))
			}},
		{method: "DELETE", path: "/drafts/{draft_id}", doc: "Draft does not exist", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request { return f.as(&f.alice, "DELETE", fmt.Sprintf("/drafts/%d", nope), nil) }},
		{method: "PATCH", path: "/drafts/{draft_id}", doc: "Draft does not exist", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", fmt.Sprintf("/drafts/%d", nope), p("draft", `{"type":"","to":[],"topic":"","content":"x"}`))
			}},
		{method: "GET", path: "/events", doc: "Bad event queue ID: fb67bf8a-c031-47cc-84cf-ed80accacda8", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "GET", "/events", p("queue_id", "fb67bf8a-c031-47cc-84cf-ed80accacda8", "last_event_id", "-1"))
			}},
		{method: "DELETE", path: "/events", doc: "Bad event queue ID: fb67bf8a-c031-47cc-84cf-ed80accacda8", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "DELETE", "/events", p("queue_id", "fb67bf8a-c031-47cc-84cf-ed80accacda8"))
			}},
		{method: "GET", path: "/get_stream_id", doc: "Invalid channel name 'nonexistent'", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "GET", "/get_stream_id", p("stream", "nonexistent"))
			}},

		// Invitations.
		{method: "POST", path: "/invites", doc: "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
			kind: chat.KindInvalid, req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "POST", "/invites", p("invitee_emails", f.alice.Email+",new-person@example.com", "stream_ids", "[]"))
			}},
		{method: "POST", path: "/invites", doc: "Insufficient permission", kind: chat.KindForbidden,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/invites", p("invitee_emails", "x@example.com", "stream_ids", "[]"))
			}},
		{method: "POST", path: "/invites", doc: "You must specify at least one email address.", kind: chat.KindInvalid,
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "POST", "/invites", p("invitee_emails", " ", "stream_ids", "[]"))
			}},
		{method: "POST", path: "/invites", doc: "Invalid channel ID 11. No invites were sent.", kind: chat.KindNotFound,
			msg: fmt.Sprintf("Invalid channel ID %d. No invites were sent.", nope), // our missing channel's ID
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "POST", "/invites", p("invitee_emails", "x@example.com", "stream_ids", fmt.Sprintf("[%d]", nope)))
			}},
		{method: "POST", path: "/invites/multiuse", doc: "Insufficient permission", kind: chat.KindForbidden,
			req: func(f *refusalFixture) request { return f.as(&f.alice, "POST", "/invites/multiuse", nil) }},
		{method: "POST", path: "/invites/multiuse", doc: "Invalid channel ID 11. No invites were sent.", kind: chat.KindNotFound,
			msg: fmt.Sprintf("Invalid channel ID %d. No invites were sent.", nope),
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "POST", "/invites/multiuse", p("stream_ids", fmt.Sprintf("[%d]", nope)))
			}},
		{method: "DELETE", path: "/invites/multiuse/{invite_id}", doc: "No such invitation", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "DELETE", fmt.Sprintf("/invites/multiuse/%d", nope), nil)
			}},
		{method: "DELETE", path: "/invites/multiuse/{invite_id}", doc: "Invitation has already been revoked", kind: chat.KindConflict,
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "DELETE", fmt.Sprintf("/invites/multiuse/%d", f.link), nil)
			}},
		{method: "DELETE", path: "/invites/{invite_id}", doc: "No such invitation", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "DELETE", fmt.Sprintf("/invites/%d", nope), nil)
			}},
		{method: "POST", path: "/invites/{invite_id}/resend", doc: "No such invitation", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "POST", fmt.Sprintf("/invites/%d/resend", nope), nil)
			}},

		// Messages.
		{method: "POST", path: "/messages", doc: "Invalid email 'eeshan@zulip.com'", kind: chat.KindNotFound,
			msg: "Invalid email 'nobody@example.com'", // an address of ours
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/messages", p("type", "private", "to", `["nobody@example.com"]`, "content", "x"))
			}},
		{method: "POST", path: "/messages", doc: "Channel 'nonexistent' does not exist", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/messages", p("type", "stream", "to", "nonexistent", "topic", "t", "content", "x"))
			}},
		{method: "POST", path: "/messages", doc: "You do not have permission to use channel wildcard mentions in this channel.", kind: chat.KindForbidden,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/messages", p("type", "stream", "to", fmt.Sprint(f.big), "topic", "t", "content", "@**all** hi"))
			}},
		{method: "POST", path: "/messages", doc: "You do not have permission to use topic wildcard mentions in this topic.", kind: chat.KindForbidden,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/messages", p("type", "stream", "to", fmt.Sprint(f.big), "topic", "busy", "content", "@**topic** hi"))
			}},
		{method: "DELETE", path: "/messages/{message_id}", doc: "Invalid message(s)", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request { return f.as(&f.alice, "DELETE", msgPath(nope, ""), nil) }},
		{method: "DELETE", path: "/messages/{message_id}", doc: "You don't have permission to delete this message", kind: chat.KindForbidden,
			req: func(f *refusalFixture) request { return f.as(&f.alice, "DELETE", msgPath(f.ownerMsg, ""), nil) }},
		{method: "GET", path: "/messages/{message_id}", doc: "Invalid message(s)", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request { return f.as(&f.alice, "GET", msgPath(nope, ""), nil) }},
		{method: "PATCH", path: "/messages/{message_id}", doc: "You don't have permission to edit this message", kind: chat.KindForbidden,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", msgPath(f.ownerMsg, ""), p("content", "mine now"))
			}},
		{method: "PATCH", path: "/messages/{message_id}", doc: "You only have permission to move the 2/5 most recent messages in this topic.", kind: chat.KindForbidden,
			msg: "You only have permission to move the 1/2 most recent messages in this topic.", // our topic's counts
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", msgPath(f.oldMsg+1, ""), p("topic", "moved", "propagate_mode", "change_all"))
			}},
		{method: "PATCH", path: "/messages/{message_id}", doc: "You do not have permission to use channel wildcard mentions in this channel.", kind: chat.KindForbidden,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", msgPath(f.bigMsg(), ""), p("content", "@**all** edit"))
			}},
		{method: "PATCH", path: "/messages/{message_id}", doc: "You do not have permission to use topic wildcard mentions in this topic.", kind: chat.KindForbidden,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", msgPath(f.bigMsg(), ""), p("content", "@**topic** edit"))
			}},
		{method: "GET", path: "/messages/{message_id}/history", doc: "Invalid message(s)", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request { return f.as(&f.alice, "GET", msgPath(nope, "/history"), nil) }},
		{method: "GET", path: "/messages/{message_id}/read_receipts", doc: "Invalid message(s)", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request { return f.as(&f.alice, "GET", msgPath(nope, "/read_receipts"), nil) }},
		{method: "POST", path: "/messages/{message_id}/reactions", doc: "Invalid emoji code", kind: chat.KindInvalid,
			msg: "Invalid emoji code.", // the reference's current message ends with a period
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", msgPath(f.ownerMsg, "/reactions"), p("emoji_name", "smile", "emoji_code", "zzzz"))
			}},
		{method: "POST", path: "/messages/{message_id}/reactions", doc: "Reaction already exists.", kind: chat.KindConflict,
			req: func(f *refusalFixture) request {
				return f.as(&f.bob, "POST", msgPath(f.ownerMsg, "/reactions"), p("emoji_name", "smile"))
			}},
		{method: "DELETE", path: "/messages/{message_id}/reactions", doc: "Reaction doesn't exist.", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "DELETE", msgPath(f.ownerMsg, "/reactions"), p("emoji_name", "tada"))
			}},

		// The organization, scheduled messages, channels.
		{method: "DELETE", path: "/realm/emoji/{emoji_name}", doc: "Emoji 'green_tick' does not exist", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request { return f.as(&f.Owner, "DELETE", "/realm/emoji/green_tick", nil) }},
		{method: "POST", path: "/scheduled_messages", doc: "Invalid user ID 10", kind: chat.KindNotFound,
			msg: fmt.Sprintf("Invalid user ID %d", nope),
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/scheduled_messages", p("type", "direct", "to", fmt.Sprintf("[%d]", nope), "content", "x",
					"scheduled_delivery_timestamp", fmt.Sprint(f.Clock.Now().Add(time.Hour).Unix())))
			}},
		{method: "PATCH", path: "/scheduled_messages/{scheduled_message_id}", doc: "Invalid user ID 10", kind: chat.KindNotFound,
			msg: fmt.Sprintf("Invalid user ID %d", nope),
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", fmt.Sprintf("/scheduled_messages/%d", f.scheduled), p("type", "direct", "to", fmt.Sprintf("[%d]", nope)))
			}},
		{method: "POST", path: "/scheduled_messages", doc: "Channel with ID '9' does not exist", kind: chat.KindNotFound,
			msg: fmt.Sprintf("Channel with ID '%d' does not exist", nope),
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/scheduled_messages", p("type", "channel", "to", fmt.Sprint(nope), "topic", "t", "content", "x",
					"scheduled_delivery_timestamp", fmt.Sprint(f.Clock.Now().Add(time.Hour).Unix())))
			}},
		{method: "PATCH", path: "/scheduled_messages/{scheduled_message_id}", doc: "Channel with ID '9' does not exist", kind: chat.KindNotFound,
			msg: fmt.Sprintf("Channel with ID '%d' does not exist", nope),
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", fmt.Sprintf("/scheduled_messages/%d", f.scheduled), p("to", fmt.Sprint(nope)))
			}},
		{method: "PATCH", path: "/scheduled_messages/{scheduled_message_id}", doc: "Scheduled message does not exist", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", fmt.Sprintf("/scheduled_messages/%d", nope), p("content", "x"))
			}},
		{method: "DELETE", path: "/scheduled_messages/{scheduled_message_id}", doc: "Scheduled message does not exist", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "DELETE", fmt.Sprintf("/scheduled_messages/%d", nope), nil)
			}},
		{method: "GET", path: "/streams/{stream_id}", doc: "Invalid channel ID", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "GET", fmt.Sprintf("/streams/%d", f.private), nil)
			}},
		{method: "PATCH", path: "/streams/{stream_id}", doc: "Invalid channel ID", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", fmt.Sprintf("/streams/%d", nope), p("description", "x"))
			}},
		{method: "DELETE", path: "/streams/{stream_id}", doc: "Invalid channel ID", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "DELETE", fmt.Sprintf("/streams/%d", nope), nil)
			}},
		{method: "GET", path: "/streams/{stream_id}/email_address", doc: "Invalid channel ID", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "GET", fmt.Sprintf("/streams/%d/email_address", f.private), nil)
			}},
		{method: "GET", path: "/users/me/{stream_id}/topics", doc: "Invalid channel ID", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "GET", fmt.Sprintf("/users/me/%d/topics", f.private), nil)
			}},
		{method: "POST", path: "/users/me/subscriptions", doc: "Unable to access channel (private).", kind: chat.KindForbidden,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/users/me/subscriptions", p("subscriptions", `[{"name":"private"}]`))
			}},
		{method: "DELETE", path: "/users/me/subscriptions", doc: "Channel 'nonexistent' does not exist", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "DELETE", "/users/me/subscriptions", p("subscriptions", `["nonexistent"]`))
			}},
		{method: "POST", path: "/typing", doc: "Missing channel ID", kind: chat.KindInvalid,
			msg: "Missing 'stream_id' argument", // the reference's current message (facts §typing)
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/typing", p("type", "stream", "op", "start", "topic", "t"))
			}},

		// Groups.
		{method: "POST", path: "/user_groups/create", doc: "Invalid user ID: 500", kind: chat.KindNotFound,
			msg: fmt.Sprintf("Invalid user ID: %d", nope),
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/user_groups/create", p("name", "crew", "description", "", "members", fmt.Sprintf("[%d]", nope)))
			}},
		{method: "PATCH", path: "/user_groups/{user_group_id}", doc: "Invalid user group", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "PATCH", fmt.Sprintf("/user_groups/%d", nope), p("name", "x"))
			}},
		{method: "POST", path: "/user_groups/{user_group_id}/deactivate", doc: "Invalid user group", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", fmt.Sprintf("/user_groups/%d/deactivate", nope), nil)
			}},
		{method: "POST", path: "/user_groups/{user_group_id}/deactivate", doc: "Cannot deactivate user group in use.", kind: chat.KindConflict,
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "POST", fmt.Sprintf("/user_groups/%d/deactivate", f.inUse), nil)
			}},

		// Users.
		{method: "POST", path: "/users", doc: "Email is already in use.", kind: chat.KindConflict,
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "POST", "/users", p("email", f.alice.Email, "password", chattest.Password, "full_name", "Another Alice"))
			}},
		{method: "DELETE", path: "/users/me", doc: "Cannot deactivate the only organization owner", kind: chat.KindConflict,
			msg: "Cannot deactivate the only organization owner.", // the reference's current message ends with a period
			req: func(f *refusalFixture) request { return f.as(&f.Owner, "DELETE", "/users/me", nil) }},
		{method: "DELETE", path: "/users/{user_id}", doc: "Cannot deactivate the only organization owner", kind: chat.KindConflict,
			req: func(f *refusalFixture) request {
				return f.as(&f.Owner, "DELETE", fmt.Sprintf("/users/%d", f.Owner.ID), nil)
			}},
		{method: "GET", path: "/users/{user_id}/status", doc: "No such user", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "GET", fmt.Sprintf("/users/%d/status", nope), nil)
			}},
		{method: "POST", path: "/users/me/alert_words", doc: "alert_words[0] is too long (limit: 100 characters)", kind: chat.KindInvalid,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/users/me/alert_words", p("alert_words", `["`+strings.Repeat("w", 101)+`"]`))
			}},
		{method: "POST", path: "/users/me/muted_users/{muted_user_id}", doc: "Cannot mute self", kind: chat.KindInvalid,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", fmt.Sprintf("/users/me/muted_users/%d", f.alice.ID), nil)
			}},
		{method: "POST", path: "/users/me/muted_users/{muted_user_id}", doc: "No such user", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", fmt.Sprintf("/users/me/muted_users/%d", nope), nil)
			}},
		{method: "POST", path: "/users/me/muted_users/{muted_user_id}", doc: "User already muted", kind: chat.KindConflict,
			req: func(f *refusalFixture) request {
				return f.as(&f.bob, "POST", fmt.Sprintf("/users/me/muted_users/%d", f.guest.ID), nil)
			}},
		{method: "DELETE", path: "/users/me/muted_users/{muted_user_id}", doc: "No such user", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "DELETE", fmt.Sprintf("/users/me/muted_users/%d", nope), nil)
			}},
		{method: "DELETE", path: "/users/me/muted_users/{muted_user_id}", doc: "User is not muted", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "DELETE", fmt.Sprintf("/users/me/muted_users/%d", f.bob.ID), nil)
			}},
		{method: "POST", path: "/users/me/status", doc: "Client did not pass any new values.", kind: chat.KindInvalid,
			req: func(f *refusalFixture) request { return f.as(&f.alice, "POST", "/users/me/status", nil) }},
		{method: "POST", path: "/users/me/status", doc: "status_text is too long (limit: 60 characters)", kind: chat.KindInvalid,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/users/me/status", p("status_text", strings.Repeat("s", 61)))
			}},
		{method: "POST", path: "/users/me/status", doc: "Client must pass emoji_name if they pass either emoji_code or reaction_type.", kind: chat.KindInvalid,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/users/me/status", p("emoji_code", "1f600", "away", "false"))
			}},
		{method: "POST", path: "/users/me/status", doc: "Emoji 'invalid' does not exist", kind: chat.KindNotFound,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/users/me/status", p("emoji_name", "invalid"))
			}},
		{method: "POST", path: "/users/me/status", doc: "Invalid emoji name.", kind: chat.KindInvalid,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/users/me/status", p("emoji_name", "palm_tree", "emoji_code", "1f600"))
			}},
		{method: "POST", path: "/users/me/status", doc: "Invalid custom emoji.", kind: chat.KindInvalid,
			req: func(f *refusalFixture) request {
				return f.as(&f.alice, "POST", "/users/me/status", p("emoji_name", "palm_tree", "reaction_type", "realm_emoji"))
			}},
	}
}

// bigMsg is alice's message in the topic "busy" of the big channel.
func (f *refusalFixture) bigMsg() int64 { return f.aliceMsg + 1 }

// logRecords keeps the handler's request log lines.
type logRecords struct {
	mu    sync.Mutex
	lines []map[string]string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "request" {
		return nil
	}
	m := map[string]string{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, m)
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

func (l *logRecords) last() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == 0 {
		return nil
	}
	return l.lines[len(l.lines)-1]
}

func newRefusalFixture(t *testing.T, logs *logRecords) *refusalFixture {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithLogger(slog.New(logs))))
	e := serve(t, h, rest.WithRateLimit(0, 0), rest.WithAddressRateLimit(0, 0))
	f := &refusalFixture{env: e, alice: h.NewUser(t, chat.RoleMember), bob: h.NewUser(t, chat.RoleMember), guest: h.NewUser(t, chat.RoleGuest)}
	svc := h.Service
	mustID := func(name string) int64 {
		r, err := svc.GetChannelID(ctx, h.Owner.Caller, chat.GetChannelIDRequest{Stream: name})
		require.NoError(t, err)
		return r.StreamID
	}
	_, err := svc.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "general"}},
		Principals: &[]chat.Principal{{ID: h.Owner.ID}, {ID: f.alice.ID}, {ID: f.bob.ID}}})
	require.NoError(t, err)
	f.general = mustID("general")
	_, err = svc.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "private"}}, InviteOnly: ptr(true)})
	require.NoError(t, err)
	f.private = mustID("private")

	send := func(as chattest.User, channel int64, topic, content string) int64 {
		r, err := svc.SendMessage(ctx, as.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(channel), Topic: &topic, Content: content})
		require.NoError(t, err)
		return r.ID
	}
	// Moving a topic whose first message is older than a week (the rest
	// is recent).
	f.oldMsg = send(f.alice, f.general, "aging", "old")
	h.Clock.Advance(8 * 24 * time.Hour)
	require.Equal(t, f.oldMsg+1, send(f.alice, f.general, "aging", "new"))

	f.ownerMsg = send(h.Owner, f.general, "t", "hello")
	_, err = svc.AddReaction(ctx, f.bob.Caller, chat.AddReactionRequest{MessageID: f.ownerMsg, EmojiName: "smile"})
	require.NoError(t, err)

	// A channel of more than 15 subscribers, with a topic of more than 15
	// participants: wildcard mentions there are for administrators.
	everyone := []chat.Principal{{ID: h.Owner.ID}, {ID: f.alice.ID}}
	var crowd []chattest.User
	for range 15 {
		u := h.NewUser(t, chat.RoleMember)
		crowd = append(crowd, u)
		everyone = append(everyone, chat.Principal{ID: u.ID})
	}
	_, err = svc.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "big"}}, Principals: &everyone})
	require.NoError(t, err)
	f.big = mustID("big")
	for _, u := range crowd {
		send(u, f.big, "busy", "here")
	}
	f.aliceMsg = send(f.alice, f.general, "t", "mine")
	require.Equal(t, f.aliceMsg+1, send(f.alice, f.big, "busy", "mine too"), "bigMsg follows aliceMsg")

	sched, err := svc.CreateScheduledMessage(ctx, f.alice.Caller, chat.CreateScheduledMessageRequest{Type: "channel",
		To: chat.ScheduleToChannel(f.general), Topic: ptr("later"), Content: "soon", ScheduledDeliveryTimestamp: h.Clock.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	f.scheduled = sched.ScheduledMessageID

	_, err = svc.CreateInviteLink(ctx, h.Owner.Caller, chat.CreateInviteLinkRequest{})
	require.NoError(t, err)
	invites, err := svc.GetInvites(ctx, h.Owner.Caller)
	require.NoError(t, err)
	require.Len(t, invites.Invites, 1)
	f.link = invites.Invites[0].ID
	_, err = svc.RevokeInviteLink(ctx, h.Owner.Caller, chat.InviteIDRequest{InviteID: f.link})
	require.NoError(t, err)

	sub, err := svc.CreateUserGroup(ctx, h.Owner.Caller, chat.CreateUserGroupRequest{Name: "inner", Members: []int64{f.alice.ID}})
	require.NoError(t, err)
	_, err = svc.CreateUserGroup(ctx, h.Owner.Caller, chat.CreateUserGroupRequest{Name: "outer", Members: []int64{}, Subgroups: &[]int64{sub.GroupID}})
	require.NoError(t, err)
	f.inUse = sub.GroupID

	_, err = svc.MuteUser(ctx, f.bob.Caller, chat.MuteUserRequest{MutedUserID: f.guest.ID})
	require.NoError(t, err)

	// Only administrators invite by email.
	admins := groupIDByName(t, e, chat.GroupAdministrators)
	_, err = svc.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CanInviteUsersGroup: &chat.GroupSettingUpdate{
		New: &chat.GroupSettingValue{GroupID: &admins}}})
	require.NoError(t, err)

	return f
}

func TestDocumentedRefusals(t *testing.T) {
	documented, err := schemacheck.DocumentedErrors()
	require.NoError(t, err)
	logs := &logRecords{}
	f := newRefusalFixture(t, logs)
	rows := refusalRows()

	// Every documented refusal of an operation we serve has a row (or a
	// reason it cannot be provoked), and every row is documented.
	served := map[string]bool{}
	covered := map[string]bool{}
	for _, d := range documented {
		op := d.Method + " " + d.Path
		if _, ok := served[op]; !ok {
			served[op] = f.serves(t, d.Method, d.Path)
		}
		if !served[op] {
			assert.Contains(t, notServed, op, "documented refusals of %s: do we serve it now?", op)
			continue
		}
		assert.NotContains(t, notServed, op, "%s is served", op)
		key := op + ": " + d.Msg
		if _, ok := unreachable[key]; ok {
			covered[key] = true
			continue
		}
		i := slices.IndexFunc(rows, func(r refusal) bool { return r.method == d.Method && r.path == d.Path && r.doc == d.Msg })
		if !assert.GreaterOrEqual(t, i, 0, "no row provokes %s %q (%d %s)", op, d.Msg, d.Status, d.Code) {
			continue
		}
		covered[key] = true
		r := rows[i]
		t.Run(key, func(t *testing.T) {
			want := r.msg
			if want == "" {
				want = d.Msg
			}
			resp := f.do(t, r.req(f))
			require.Equal(t, d.Status, resp.status, "the documented status; body: %s", resp.raw)
			assert.Equal(t, "error", resp.body["result"])
			assert.Equal(t, d.Code, resp.body["code"], "the documented code")
			assert.Equal(t, want, resp.body["msg"])
			checkDocumented(t, d, resp)
			line := logs.last()
			require.NotNil(t, line)
			assert.Equal(t, r.kind.String(), line["kind"], "what the refusal means")
			assert.Equal(t, fmt.Sprint(d.Status), line["status"])
		})
	}
	for _, r := range rows {
		assert.True(t, covered[r.method+" "+r.path+": "+r.doc], "row %s %s %q is not a documented refusal", r.method, r.path, r.doc)
	}
	for key := range unreachable {
		assert.True(t, covered[key], "%s is not documented (any more)", key)
	}
}

// serves reports whether the handler serves method on the yaml's path
// template (OPTIONS lists the methods of a path it knows).
func (f *refusalFixture) serves(t *testing.T, method, template string) bool {
	path := template
	for strings.Contains(path, "{") {
		i, j := strings.Index(path, "{"), strings.Index(path, "}")
		value := "1"
		if strings.Contains(path[i:j], "email") || strings.Contains(path[i:j], "emoji_name") {
			value = "a"
		}
		path = path[:i] + value + path[j+1:]
	}
	resp := f.do(t, request{method: http.MethodOptions, path: "/api/v1" + path})
	if resp.status != http.StatusNoContent {
		return false
	}
	return slices.Contains(strings.Split(resp.header.Get("Allow"), ", "), method)
}

// checkDocumented validates an error answer against the operation's
// documented error schema. Members the documented example has beyond the
// envelope must be there too, of the same JSON types. Where the
// reference's schema does not declare them (its own example fails it:
// the objections of CANNOT_DEACTIVATE_GROUP_IN_USE, the counts of
// MOVE_MESSAGES_TIME_LIMIT_EXCEEDED), the rest of the answer is validated
// without them.
func checkDocumented(t *testing.T, d schemacheck.DocumentedError, resp response) {
	t.Helper()
	stripped := map[string]any{}
	for k, v := range resp.body {
		stripped[k] = v
	}
	for k, v := range d.Body {
		if k == "result" || k == "msg" || k == "code" {
			continue
		}
		if assert.Contains(t, resp.body, k, "the documented example has %s", k) {
			assert.IsType(t, v, resp.body[k], "%s has the documented example's type", k)
		}
		delete(stripped, k)
	}
	if schemacheck.Validate(d.Method, d.Path, resp.status, resp.raw) == nil {
		return
	}
	if schemacheck.Validate(d.Method, d.Path, d.Status, mustJSON(t, d.Body)) == nil {
		schemacheck.Check(t, d.Method, d.Path, resp.status, resp.raw) // the example passes: so must we
		return
	}
	schemacheck.Check(t, d.Method, d.Path, resp.status, mustJSON(t, stripped))
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
