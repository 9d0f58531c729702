// Package clients holds no library code: its tests run real, unmodified
// client libraries of the reference chat API against this server, so that a
// change which breaks a client that people actually use fails the build.
//
// Each client lives in its own folder with its pinned dependencies and a
// script that drives it (zulipjs/: the zulip-js npm package, through
// zulipjs/compat.mjs). The Go tests start a server on chattest and
// httptest, point the script at it and fail with the script's output.
//
// The Node dependencies are not vendored: run `npm ci` in each folder that
// has a package-lock.json (CI does). Without them, or without node on PATH,
// the tests skip, unless TEAMCHAT_REQUIRE_CLIENTS=1, when they fail.
package clients
