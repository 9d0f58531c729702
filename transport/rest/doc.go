// Package rest serves the chat API over HTTP: NewHandler turns requests
// under /api/v1 into chat.Service calls and writes the JSON envelope back.
//
// It holds no business rules. It picks the organization (by Host, or fixed
// with WithRealm), authenticates the caller (HTTP Basic with email and API
// key, or the host application's own Authenticator), applies the rate
// limits (per user, and per client address for requests that are not
// authenticated; the address is read from X-Forwarded-For only when the
// peer is a proxy named by WithTrustedProxies), decodes parameters and
// encodes answers:
//
//   - parameters are merged from the query string and the body for every
//     method (urlencoded or multipart/form-data, DELETE bodies included);
//     list and object parameters are JSON-encoded strings (one rule for
//     every list: null, a null item or an item of another type is refused
//     in the reference's words, never read as a zero value); request
//     structs are read by their json tags, pointer fields being optional;
//   - a missing parameter answers REQUEST_VARIABLE_MISSING with var_name, a
//     malformed one BAD_REQUEST naming it, and unknown parameters are listed
//     in ignored_parameters_unsupported;
//   - every answer is JSON, 404 and 405 included; repeated slashes are
//     collapsed ("//api/v1/users" works), never redirected.
//
// With WithMeterProvider and WithTracerProvider it measures requests and
// traces them under OpenTelemetry's HTTP server conventions (telemetry.go).
//
// To mount it under a prefix of another server, strip the prefix:
//
//	mux.Handle("/chat/", http.StripPrefix("/chat", rest.NewHandler(svc)))
package rest
