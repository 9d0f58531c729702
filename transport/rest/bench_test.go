package rest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/transport/rest"
)

// BenchmarkGetOwnUser measures GET /users/me through the handler without a
// network (authentication, routing, the Service and SQLite included):
// go test -bench GetOwnUser -cpu 1,2 ./transport/rest
func BenchmarkGetOwnUser(b *testing.B) {
	h := chattest.New(b)
	alice := h.NewUser(b, chat.RoleMember)
	handler := rest.NewHandler(h.Service, rest.WithRateLimit(0, 0))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", "http://chat.example.com/api/v1/users/me", nil)
			req.SetBasicAuth(alice.Email, alice.APIKey)
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
			_, _ = io.Copy(io.Discard, w.Body)
		}
	})
}
