// Package chat is teamchat: an embeddable team chat server. Every endpoint
// of the chat REST API is a typed method on *Service, callable in-process;
// transport/rest serves the same methods over HTTP.
//
// A Service runs on a storage.Store (storage/bunstore: SQLite by default,
// PostgreSQL to scale out) and can host several organizations (realms). The
// Service authorizes, validates and stores; it never imports net/http,
// database/sql or bun.
//
// Method shape:
//
//	func (s *Service) GetUsers(ctx context.Context, c Caller, req GetUsersRequest) (*GetUsersResponse, error)
//
// Caller{RealmID, UserID} names who calls; the Service loads and checks that
// user on every call. Unauthenticated operations (GetServerSettings,
// FetchAPIKey) and server-administration operations (CreateRealm,
// ProvisionUser) take no Caller. Request structs carry the wire names in json
// tags; pointer fields are optional. Errors are *Error values with a
// transport-neutral Kind, the wire Code, a client-safe Msg and extra Fields.
//
// # Writes and events
//
// Every change goes through one write path: a transaction that holds what
// the change must be ordered with. A message holds its channel (or direct
// conversation) and, shared, its organization; every other change holds
// the whole organization (SQLite runs one writer; on PostgreSQL these are
// transaction-scoped advisory locks), so the checks that guard an
// invariant (the last owner, subgroup cycles, unique names) run on fresh
// rows beside the writes they guard, with the same meaning on both
// databases, and within a conversation message IDs increase in commit
// order. Writes queued behind a running transaction of their channel share
// the next one (group commit), and a send reads what it needs before its
// transaction, so that a database far away costs a batch of sends two
// round trips (write.go says why this design). The operation queues typed events (RealmUserEvent,
// StreamEvent, SubscriptionEvent, UserGroupEvent, ...) in the reference's
// shapes, each with its Audience, and hands them to the event bus
// (storage.EventStore) inside the transaction: every Service on the
// database receives them after the commit, in commit order (a rolled-back
// change publishes nothing), delivers them to its event queues and drops
// what its caches hold of the change. The sinks registered with
// WithEventSink get this Service's events right after each commit. An
// Audience that covers everyone is a rule (roles, the subscribers of a
// channel) resolved on delivery, so a write never lists the organization
// to announce itself; ResolveAudience expands one to user IDs.
//
// # Event queues
//
// Register creates a queue and returns the caller's initial state, read
// from one snapshot that the queue is matched against: events the
// snapshot already contains are dropped, later ones kept. GetEvents
// long-polls a queue; DeleteEvents drops it. Each queue keeps a replica of
// its user's role and channels, updated by the events it sees, so a
// delivery to many queues costs no database reads; it shows events in its
// client's form and is dropped when its client falls behind or stops
// polling (QueueLimits), after which the client registers again.
//
// # Messages
//
// SendMessage stores a message once, whatever its number of readers; what
// differs per reader is stored only where it differs (a row per
// participant of a direct message; for channel messages, rows only for
// mentions, stars and the like, and read state as ranges of message IDs).
// Who may read a channel message follows from the channel's history
// setting and the reader's subscription periods (GetMessage). Each
// recipient gets a MessageEvent with their flags after the commit.
//
// UpdateMessageFlags and the mark-as-read methods change that state:
// read ranges for messages the reader received, rows otherwise (a
// message they never received gets a "historical" row, as in the
// reference). GetUnreadMessages computes the reference's unread_msgs from
// it. UpdateMessage edits and moves messages, carrying every reader's
// state to the destination; DeleteMessage deletes. Reactions, uploaded
// files (kept in a blob store set by WithBlobStore: a directory or S3)
// and custom emoji complete the message actions.
//
// # Cost
//
// A request reads what its answer and the caller's permissions need:
// permission checks ask for the groups the caller is in (one recursive
// query), never the organization's group graph; listings pay per item.
// Callers (authentication and the account) are cached per organization
// until the next committed write of that organization.
//
// # Background work
//
// Run does the periodic work (the full-member promotion of every
// organization, collecting idle event queues) until its context ends; a
// host program starts it once. A host that stops calls DrainEvents as it
// begins (waiting long polls end, later ones are short) and HandOverEvents
// once it serves no more requests and Run has returned: the event queues
// move to the other servers on the database, or are saved for the next
// start, so that clients notice nothing. StopEvents instead drops them.
//
// # Several servers
//
// WithFleet makes a Service one of several servers on one PostgreSQL
// database behind an ordinary balancer: each records itself in the
// database, a queue's ID names the server that holds it, and any server
// answers a request for any queue by forwarding it to its holder through
// a PeerTransport (transport/peer carries the calls over HTTP/2); "is this
// user here" asks them all; a write that makes caches stale answers once
// every server applied it. fleet.go describes the design and its failure
// modes.
//
// # Operating
//
// The Service reports metrics and spans through the OpenTelemetry API to
// the providers of WithMeterProvider and WithTracerProvider (nothing is
// measured without them), and Ready answers a readiness probe. The
// README's Operating section lists the metrics; examples/server exports
// them.
package chat
