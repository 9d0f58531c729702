// Package narrow reads, checks and evaluates message narrows (the
// `narrow` parameter of GET /messages, GET /messages/matches_narrow, POST
// /messages/flags/narrow, POST /register and GET /events) as the
// reference (Zulip 10.2, zerver/lib/narrow.py and narrow_predicate.py)
// does. It is pure: no storage, no HTTP.
//
// # Flow
//
//   - Parse reads the wire form: a JSON list of
//     {"operator", "operand", "negated"} dicts and/or legacy
//     ["operator", "operand"] string pairs, and checks operand types.
//   - Canonical checks what needs no data (operators, is/has/in/channels
//     operands, id operands, channel/DM conflicts, `with` count) and
//     rewrites aliases; Resolve does the same plus what needs the caller's
//     data through a Resolver (channel names and user emails to IDs,
//     the `with` target, spectator rules), in the reference's order so
//     that the first error is the reference's.
//   - Match evaluates resolved terms against one message in memory (the
//     oracle the server's compiled queries are tested against; the
//     server itself does not call it);
//     IncludeHistory says whether the narrow reads shared channel
//     history; IsWebPublicNarrow and SpectatorCompatible are the
//     spectator rules.
//   - ParseEventsNarrow / ParseEventsNarrowJSON and MatchEvent are the
//     events path (only channel, topic, sender, is; never negated).
//
// Errors are *Error with Code CodeBadRequest, CodeBadNarrow (with Desc,
// the API error's `desc`) or CodeUnauthorized (a spectator narrow that
// must be answered 401).
//
// # Operators
//
//	operator (aliases)          operand (wire)              matches
//	channel (stream)            name or channel ID          messages of that channel
//	channels (streams)          "public" | "web-public"     messages of public (shared-history) / web-public channels
//	topic                       string                      channel messages whose topic equals it, ignoring case;
//	                                                        "general chat" in the first topic term means the empty topic
//	sender                      email or user ID            sent by that user
//	dm (pm-with, pm_with)       "a@x,b@y" or [IDs]          exactly the conversation among those users and the reader;
//	                                                        [] matches nothing
//	dm-including                email or user ID            DMs (1:1 and group) including the reader and that user;
//	                                                        the reader themself: every DM
//	group-pm-with (group_pm_with) email or user ID          group DMs (3+ people) including the reader and that user
//	is                          dm (private)                direct messages
//	                            starred / unread            starred flag / read flag absent
//	                            mentioned                   mentioned, stream/topic wildcard or group mention flag
//	                            alerted                     has_alert_word flag
//	                            resolved                    channel message whose topic starts with "✔ "
//	                            followed                    channel message in a topic the reader follows
//	                            muted                       channel message in a muted topic, or in a muted channel
//	                                                        unless the topic is followed or unmuted
//	has                         link, image, attachment,    the message's has_* facts; reaction: it has a reaction
//	                            reaction
//	in                          home / all                  home: not is:muted; all: no filter (negated too)
//	search                      non-blank string            full-text search (see Match; the database is the reference)
//	id                          ID (int or digits)          that message; above 2147483647: "Invalid message ID"
//	with                        message ID                  replaced by Resolve with the message's conversation
//	near                        string                      no filter (clients pass the ID as anchor)
//
// Every term may be negated (dict form) except that negation is ignored
// by in:all, near and search (the reference joins all search operands
// into one positive search). Operand types: channel/stream, id, sender,
// group-pm-with, dm-including and with take a string or an integer
// ("operand is not a string or integer"); dm and pm-with a string or a
// list of integers ("operand is not a string or an integer list",
// "operand[0] is not an integer"); search a non-blank string ("operand
// cannot be blank."); everything else, the underscore aliases included,
// a string ("operand is not a string").
//
// A positive channel, channels or topic term (or a negated is:dm) and a
// positive dm, dm-including, group-pm-with or is:dm term together are
// "No message can be both a channel message and direct message".
//
// Spectators (unauthenticated readers) must include a positive
// channels:web-public term and may use only channel, channels, topic,
// sender, has, search, near, id, with and is:resolved (positive in:home
// terms are dropped first).
package narrow
