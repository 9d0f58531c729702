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
package chat
