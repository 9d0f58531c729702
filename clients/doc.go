// Package clients holds no library code: its tests run real, unmodified
// client libraries of the reference chat API against this server, so that a
// change which breaks a client that people actually use fails the build.
//
// Each client has its own folder with a script that drives it: zulipjs/
// (the zulip-js npm package, pinned there, through zulipjs/compat.mjs) and
// python/ (the reference's official Python binding, release 0.9.1, through
// python/compat.py, which does what the reference's terminal client,
// zulip-terminal, does at start-up and in use). The Go tests start a
// server on chattest and httptest, point the script at it and fail with
// the script's output.
//
// The Node dependencies are not vendored: run `npm ci` in each folder that
// has a package-lock.json (CI does). The Python binding is not copied into
// the repository: the test finds it unmodified in shared/clients/ above
// the checkout (../shared/clients beside /work/<name>), or where
// TEAMCHAT_PYTHON_ZULIP_API says, and runs it with /usr/bin/python3
// (TEAMCHAT_PYTHON overrides), which needs the Debian packages
// python3-requests, python3-distro, python3-typing-extensions and
// python3-click (.ci/run installs them). Without what a suite needs, its
// test skips, unless TEAMCHAT_REQUIRE_CLIENTS=1, when it fails.
package clients
