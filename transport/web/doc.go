// Package web is a small web client for the chat server, served from files
// embedded in the binary: plain HTML, CSS and JavaScript modules, with no
// build step and nothing loaded from other sites. It talks to the server
// only through the public REST and event API, exactly as any other client:
// it logs in with POST /fetch_api_key (the key is kept in the tab's
// sessionStorage, and logging out forgets it), registers an event queue,
// long-polls it, and registers again when the queue is gone.
//
// A host mounts the Handler beside the REST handler:
//
//	api := rest.NewHandler(svc)
//	http.ListenAndServe(addr, web.NewHandler(web.WithNext(api)))
//
// The page is at "/" and its files below "/web/"; an invitation link
// (/join/KEY/) is sent on to the page's sign-up form (#join/KEY); every
// other request goes to the next handler. Text files are gzipped once, when
// the handler is made, and sent so to browsers that take it. Under a prefix, strip it for both (the client uses
// paths relative to its page, so it finds the API beside itself):
//
//	mux.Handle("/chat/", http.StripPrefix("/chat", web.NewHandler(web.WithNext(api))))
//
// Safety: the only HTML the client inserts is a message's content as the
// server's Markdown renderer made it; names, topics, descriptions and
// everything else a person typed are inserted as text. Every file is served
// with a Content-Security-Policy (ContentSecurityPolicy) that refuses inline
// scripts, inline event handlers and other origins and requires Trusted
// Types, so that only the message-content policy can create HTML, and with
// X-Content-Type-Options, Referrer-Policy and frame-ancestors (plus
// X-Frame-Options for older browsers).
//
// Emoji are images of one sheet (static/emoji, Google's Noto Emoji from
// emoji-datasource-google, made by internal/emojigen with the server's
// emoji names), so they show the same everywhere.
//
// The browser tests drive a headless Chromium (Debian's chromium package)
// with chromedp; they skip when no Chromium is found, unless
// TEAMCHAT_REQUIRE_BROWSER=1. The README's screenshot is made by
//
//	go test ./transport/web -run TestScreenshot -update-screenshot
//
// and the client's weight and speed budgets are measured by
//
//	go test ./transport/web -run '^$' -bench ClientBudgets -benchtime 5x
package web
