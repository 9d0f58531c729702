package main

import (
	"net/http"
	"path"
	"strings"
)

// apiPaths hands api every request whose path, its dot segments resolved,
// is below /api/v1, before site (the web client) sees it: a spelling such
// as /web/../api/v1/users/me would otherwise reach the web client's own
// "not found". The API resolves no dot segment (it answers 404 in JSON),
// so nothing is reached that the plain spelling would not reach.
func apiPaths(api, site http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.Contains(p, "/.") && strings.HasPrefix(path.Clean("/"+p), "/api/v1") {
			api.ServeHTTP(w, r)
			return
		}
		site.ServeHTTP(w, r)
	})
}
