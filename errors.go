package chat

import (
	"errors"
	"fmt"

	"github.com/teamchat/chat/internal/wire"
)

// Kind says what an error means, independently of any transport and of
// the status the reference answers it with: a permission refusal is
// KindForbidden even where the reference answers 400 (the wire status
// travels on the Error; transport/rest answers it).
type Kind int

const (
	// KindInternal is an unexpected failure; its detail is logged, never shown.
	KindInternal Kind = iota
	// KindInvalid is a malformed or unacceptable request.
	KindInvalid
	// KindUnauthenticated means the caller could not be identified.
	KindUnauthenticated
	// KindForbidden means the caller is known but may not do this: a
	// permission refusal, whatever its wire status.
	KindForbidden
	// KindNotFound is a missing resource (or one the caller may not know
	// of), whatever its wire status.
	KindNotFound
	// KindConflict is a request that clashes with existing state (a name
	// in use, something already done).
	KindConflict
	// KindRateLimited means the caller must wait.
	KindRateLimited
	// KindTooLarge is a request body over the configured limit.
	KindTooLarge
	// KindUnavailable means the server cannot do it now (its database is
	// unreachable) but may once it is back.
	KindUnavailable
)

// Wire statuses (HTTP), without importing net/http into the Service.
const (
	statusBadRequest   = 400
	statusUnauthorized = 401
	statusForbidden    = 403
	statusNotFound     = 404
	statusConflict     = 409
	statusTooLarge     = 413
	statusRateLimited  = 429
	statusInternal     = 500
	statusUnavailable  = 503
)

// usualStatus is the status of an error whose constructor set none (an
// Error literal built outside this package): the one its Kind usually
// answers.
var usualStatus = map[Kind]int{
	KindInvalid: statusBadRequest, KindUnauthenticated: statusUnauthorized, KindForbidden: statusForbidden,
	KindNotFound: statusNotFound, KindConflict: statusConflict, KindRateLimited: statusRateLimited,
	KindTooLarge: statusTooLarge, KindInternal: statusInternal, KindUnavailable: statusUnavailable,
}

func init() { wire.SetReader(wireAnswer) }

// wireAnswer is what err answers beyond its code and message (read by the
// transports through internal/wire).
func wireAnswer(err error) wire.Answer {
	e := AsError(err)
	status := e.status
	if status == 0 {
		status = usualStatus[e.Kind]
	}
	return wire.Answer{Status: status, Op: e.op}
}

func (k Kind) String() string {
	switch k {
	case KindInvalid:
		return "invalid"
	case KindUnauthenticated:
		return "unauthenticated"
	case KindForbidden:
		return "forbidden"
	case KindNotFound:
		return "not found"
	case KindConflict:
		return "conflict"
	case KindRateLimited:
		return "rate limited"
	case KindTooLarge:
		return "too large"
	case KindUnavailable:
		return "unavailable"
	default:
		return "internal"
	}
}

// Wire error codes used by the reference system (facts §6.1).
const (
	CodeBadRequest             = "BAD_REQUEST"
	CodeRequestVariableMissing = "REQUEST_VARIABLE_MISSING"
	CodeRequestVariableInvalid = "REQUEST_VARIABLE_INVALID"
	CodeRequestConfusingVar    = "REQUEST_CONFUSING_VAR"
	CodeUnauthorized           = "UNAUTHORIZED"
	CodeUserDeactivated        = "USER_DEACTIVATED"
	CodeRealmDeactivated       = "REALM_DEACTIVATED"
	CodeAuthenticationFailed   = "AUTHENTICATION_FAILED"
	CodeRateLimitHit           = "RATE_LIMIT_HIT"
	CodeStreamDoesNotExist     = "STREAM_DOES_NOT_EXIST"
	CodeNonexistentSubdomain   = "NONEXISTENT_SUBDOMAIN"
	CodeInvalidAPIKey          = "INVALID_API_KEY"
	// A wildcard mention in a large channel or topic by a sender outside
	// can_mention_many_users_group.
	CodeStreamWildcardMentionNotAllowed = "STREAM_WILDCARD_MENTION_NOT_ALLOWED"
	CodeTopicWildcardMentionNotAllowed  = "TOPIC_WILDCARD_MENTION_NOT_ALLOWED"
	CodeReactionAlreadyExists           = "REACTION_ALREADY_EXISTS"
	CodeReactionDoesNotExist            = "REACTION_DOES_NOT_EXIST"
	CodeMoveMessagesTimeLimitExceeded   = "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED"
	// An event queue that does not exist (any more), or is not the caller's.
	CodeBadEventQueueID = "BAD_EVENT_QUEUE_ID"
	// The database is unreachable for now (our own; the reference's proxy
	// answers 502 or 503 without a body then, which its clients retry).
	CodeServiceUnavailable = "SERVICE_UNAVAILABLE"
)

// Error is the error type every Service method returns for expected
// failures. Msg is safe to show to the client; Fields are extra members of
// the wire error object (var_name, stream_id, ...).
type Error struct {
	Kind   Kind
	Code   string
	Msg    string
	Fields map[string]any
	// status is the wire status the reference answers (0: the usual one
	// for Kind).
	status int
	// op names the operation that failed, for logs (Error shows it).
	op string
	// wrapped is the error this one adds op to (errors.Is finds it).
	wrapped *Error
	// cause is logged for internal errors and never sent to clients.
	cause error
	// logged: the Service logged the cause already.
	logged bool
}

// Logged reports whether the Service has logged this (internal) error, so
// that a transport does not log it a second time.
func (e *Error) Logged() bool { return e.logged }

func (e *Error) Error() string {
	s := e.Code + ": " + e.Msg
	if e.op != "" {
		s = e.op + ": " + s
	}
	if e.cause != nil {
		s += fmt.Sprintf(": %v", e.cause)
	}
	return s
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error {
	if e.wrapped != nil {
		return e.wrapped
	}
	return e.cause
}

// withOp returns e naming op as the operation that failed, unless it
// names one already (the innermost operation is the most precise). e is
// not changed (it may be shared): the result wraps it.
func (e *Error) withOp(op string) *Error {
	if e.op != "" || op == "" {
		return e
	}
	c := *e
	c.op, c.wrapped = op, e
	return &c
}

// With returns a copy of e with an extra wire field set.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Fields = make(map[string]any, len(e.Fields)+1)
	for k, v := range e.Fields {
		c.Fields[k] = v
	}
	c.Fields[key] = value
	return &c
}

// AsError returns the *Error inside err. An error that is not a *Error is
// wrapped as an internal error, so callers always get Kind, Code and Msg.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindInternal, Code: CodeBadRequest, Msg: "Internal server error", status: statusInternal, cause: err}
}

// ErrorKind returns the Kind of err (KindInternal for foreign errors).
func ErrorKind(err error) Kind { return AsError(err).Kind }

// BadRequest is the reference system's generic error: HTTP 400, BAD_REQUEST.
func BadRequest(format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Code: CodeBadRequest, Msg: sprintf(format, args...), status: statusBadRequest}
}

// NotFound is a BAD_REQUEST error that the reference answers with HTTP 404.
func NotFound(format string, args ...any) *Error {
	return &Error{Kind: KindNotFound, Code: CodeBadRequest, Msg: sprintf(format, args...), status: statusNotFound}
}

// Forbidden is a BAD_REQUEST error with HTTP 403 ("Access denied" and kin).
func Forbidden(format string, args ...any) *Error {
	return &Error{Kind: KindForbidden, Code: CodeBadRequest, Msg: sprintf(format, args...), status: statusForbidden}
}

// The reference answers most refusals, missing objects and clashes with
// 400 BAD_REQUEST; their Kind still says what they mean.

// refused is a permission refusal that the reference answers with HTTP
// 400 (code BAD_REQUEST unless set).
func refused(format string, args ...any) *Error {
	return &Error{Kind: KindForbidden, Code: CodeBadRequest, Msg: sprintf(format, args...), status: statusBadRequest}
}

// noSuch is a missing object (or one the caller may not know of) that the
// reference answers with HTTP 400.
func noSuch(format string, args ...any) *Error {
	return &Error{Kind: KindNotFound, Code: CodeBadRequest, Msg: sprintf(format, args...), status: statusBadRequest}
}

// clash is a request that clashes with existing state (a name in use,
// something already done) that the reference answers with HTTP 400.
func clash(format string, args ...any) *Error {
	return &Error{Kind: KindConflict, Code: CodeBadRequest, Msg: sprintf(format, args...), status: statusBadRequest}
}

// MissingArgument reports a required parameter that was not sent.
func MissingArgument(name string) *Error {
	return &Error{Kind: KindInvalid, Code: CodeRequestVariableMissing, status: statusBadRequest,
		Msg: fmt.Sprintf("Missing '%s' argument", name), Fields: map[string]any{"var_name": name}}
}

// InvalidArgument reports a parameter whose value has the wrong shape, with
// the reference's message templates ("x is not an integer").
func InvalidArgument(format string, args ...any) *Error {
	return BadRequest(format, args...)
}

// Unauthorized is the 401 answer for missing or wrong credentials.
func Unauthorized(msg string) *Error {
	return &Error{Kind: KindUnauthenticated, Code: CodeUnauthorized, Msg: msg, status: statusUnauthorized}
}

// Internal wraps an unexpected failure; the cause is logged, not shown.
func Internal(cause error) *Error {
	return &Error{Kind: KindInternal, Code: CodeBadRequest, Msg: "Internal server error", status: statusInternal, cause: cause}
}

// Unavailable is the 503 answer of a request that may succeed once the
// database is back (a client may retry after retryAfter seconds).
func Unavailable(cause error) *Error {
	return &Error{Kind: KindUnavailable, Code: CodeServiceUnavailable, status: statusUnavailable,
		Msg: "The server cannot reach its database; try again shortly", Fields: map[string]any{"retry-after": 1.0}, cause: cause}
}

// shuttingDown is the 503 answer of a server that is stopping (its
// readiness while it drains): another server can take the request.
func shuttingDown(cause error) *Error {
	return &Error{Kind: KindUnavailable, Code: CodeServiceUnavailable, status: statusUnavailable,
		Msg: "The server is shutting down; try another or again shortly", Fields: map[string]any{"retry-after": 1.0}, cause: cause}
}

// RateLimited is the 429 answer; retryAfter is in seconds.
func RateLimited(msg string, retryAfter float64) *Error {
	return &Error{Kind: KindRateLimited, Code: CodeRateLimitHit, Msg: msg, status: statusRateLimited,
		Fields: map[string]any{"retry-after": retryAfter}}
}

// Codes of the reference's particular errors (its own spelling), beside
// the exported ones above.
const (
	CodeInvitationFailed = "INVITATION_FAILED" // invitations that were not all sent

	codeExpectationMismatch     = "EXPECTATION_MISMATCH"
	codeGroupInUse              = "CANNOT_DEACTIVATE_GROUP_IN_USE"
	codeBadNarrow               = "BAD_NARROW"
	codeUnauthorizedPrincipal   = "UNAUTHORIZED_PRINCIPAL"
	codeCannotDeactivateLastUsr = "CANNOT_DEACTIVATE_LAST_USER"
)

// The Service's particular errors, with the reference's texts.
var (
	errExpectationMismatch = &Error{Kind: KindInvalid, status: statusBadRequest, Code: codeExpectationMismatch, Msg: "'old' value does not match the expected value."}
	errChannelWildcard     = &Error{Kind: KindForbidden, status: statusBadRequest, Code: CodeStreamWildcardMentionNotAllowed,
		Msg: "You do not have permission to use channel wildcard mentions in this channel."}
	errTopicWildcard = &Error{Kind: KindForbidden, status: statusBadRequest, Code: CodeTopicWildcardMentionNotAllowed,
		Msg: "You do not have permission to use topic wildcard mentions in this topic."}
	errTopicAndSubject = (&Error{Kind: KindInvalid, status: statusBadRequest, Code: CodeRequestConfusingVar,
		Msg: "Can't decide between 'topic' and 'subject' arguments"}).With("var_name1", "topic").With("var_name2", "subject")
	errInvalidSubdomain = &Error{Kind: KindNotFound, status: statusNotFound, Code: CodeNonexistentSubdomain, Msg: "Invalid subdomain"}
	errReactionExists   = &Error{Kind: KindConflict, status: statusBadRequest, Code: CodeReactionAlreadyExists, Msg: "Reaction already exists."}
	errReactionMissing  = &Error{Kind: KindNotFound, status: statusBadRequest, Code: CodeReactionDoesNotExist, Msg: "Reaction doesn't exist."}
	errNoSuchFile       = &Error{Kind: KindNotFound, status: statusNotFound, Code: CodeBadRequest, Msg: "This file does not exist or has been deleted."}
	errFileForbidden    = &Error{Kind: KindForbidden, status: statusForbidden, Code: CodeBadRequest, Msg: "You are not authorized to view this file."}
	errAdminRequired    = &Error{Kind: KindForbidden, status: statusBadRequest, Code: codeUnauthorizedPrincipal, Msg: "Must be an organization administrator"}
	errOwnerRequired    = &Error{Kind: KindForbidden, status: statusBadRequest, Code: codeUnauthorizedPrincipal, Msg: "Must be an organization owner"}
	// errScheduledClaimLost rolls a delivery (or a failure's mark) back:
	// the scheduled message was delivered, failed, edited or deleted since
	// it was read, or another server is delivering it.
	errScheduledClaimLost = &Error{Kind: KindConflict, status: statusConflict, Code: CodeBadRequest, Msg: "Scheduled message was already sent"}
)

// badQueue is the error for a queue that is gone or not the caller's.
func badQueue(id string) *Error {
	return (&Error{Kind: KindNotFound, status: statusBadRequest, Code: CodeBadEventQueueID, Msg: "Bad event queue ID: " + id}).With("queue_id", id)
}

// badValue is the reference's answer to a parameter's unacceptable value.
func badValue(name, value string) error {
	return &Error{Kind: KindInvalid, status: statusBadRequest, Code: CodeRequestVariableInvalid, Msg: "Bad value for '" + name + "': " + value,
		Fields: map[string]any{"var_name": name, "bad_value": value}}
}

// badNarrow is a narrow the reference refuses with BAD_NARROW.
func badNarrow(msg, desc string) *Error {
	return &Error{Kind: KindInvalid, status: statusBadRequest, Code: codeBadNarrow, Msg: msg, Fields: map[string]any{"desc": desc}}
}

// noSuchChannelID and noSuchChannelName answer a channel that does not
// exist (or that the caller may not know of).
func noSuchChannelID(id int64) *Error {
	return (&Error{Kind: KindNotFound, status: statusBadRequest, Code: CodeStreamDoesNotExist,
		Msg: fmt.Sprintf("Channel with ID '%d' does not exist", id)}).With("stream_id", id)
}

func noSuchChannelName(name string) *Error {
	return (&Error{Kind: KindNotFound, status: statusBadRequest, Code: CodeStreamDoesNotExist,
		Msg: fmt.Sprintf("Channel '%s' does not exist", name)}).With("stream", name)
}

// errGroupInUse refuses to deactivate a group that settings name.
func errGroupInUse(objections any) *Error {
	return &Error{Kind: KindConflict, status: statusBadRequest, Code: codeGroupInUse,
		Msg: "Cannot deactivate user group in use.", Fields: map[string]any{"objections": objections}}
}

// errMoveTimeLimit refuses a move of more of a topic than the caller may
// move.
func errMoveTimeLimit(first any, allowed, total int) *Error {
	return (&Error{Kind: KindForbidden, status: statusBadRequest, Code: CodeMoveMessagesTimeLimitExceeded,
		Msg: fmt.Sprintf("You only have permission to move the %d/%d most recent messages in this topic.", allowed, total)}).
		With("first_message_id_allowed_to_move", first).
		With("total_messages_allowed_to_move", allowed).With("total_messages_in_topic", total)
}

// invitationFailed is the reference's InvitationError: errors lists
// [address, reason, whether the address is a deactivated user's].
func invitationFailed(msg string, errs [][]any, sent bool) *Error {
	if errs == nil {
		errs = [][]any{}
	}
	return &Error{Kind: KindInvalid, status: statusBadRequest, Code: CodeInvitationFailed, Msg: msg, Fields: map[string]any{
		"errors": errs, "sent_invitations": sent, "license_limit_reached": false, "daily_limit_reached": false}}
}

// errLastUser refuses to deactivate the only user or owner.
func errLastUser(owner bool) *Error {
	entity := "user"
	if owner {
		entity = "organization owner"
	}
	return &Error{Kind: KindConflict, status: statusBadRequest, Code: codeCannotDeactivateLastUsr, Msg: "Cannot deactivate the only " + entity + ".",
		Fields: map[string]any{"is_last_owner": owner, "entity": entity}}
}

var (
	errUserDeactivated  = &Error{Kind: KindUnauthenticated, status: statusUnauthorized, Code: CodeUserDeactivated, Msg: "Account is deactivated"}
	errRealmDeactivated = &Error{Kind: KindUnauthenticated, status: statusUnauthorized, Code: CodeRealmDeactivated, Msg: "This organization has been deactivated"}
	errAuthFailed       = &Error{Kind: KindUnauthenticated, status: statusUnauthorized, Code: CodeAuthenticationFailed, Msg: "Your username or password is incorrect"}
)

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}
