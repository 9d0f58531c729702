package web_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
	"github.com/teamchat/chat/transport/web"
)

// One handler serves a whole site: the web client's page and files, and
// every other request handed on to the REST API, which the page calls
// beside itself. Under a prefix, strip it for both.
func ExampleNewHandler() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "teamchat-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := bunstore.Open(ctx, filepath.Join(dir, "chat.db"))
	if err != nil {
		log.Fatal(err)
	}
	svc := chat.New(store)
	defer svc.Close()
	if _, err := svc.CreateRealm(ctx, chat.CreateRealmRequest{
		Name: "Acme", URL: "https://chat.example.com",
		OwnerEmail: "owner@example.com", OwnerFullName: "Olivia Owner", OwnerPassword: "a long password",
	}); err != nil {
		log.Fatal(err)
	}

	site := web.NewHandler(web.WithNext(rest.NewHandler(svc)))
	mux := http.NewServeMux()
	mux.Handle("/chat/", http.StripPrefix("/chat", site))

	for _, path := range []string{"/chat/", "/chat/web/js/main.js", "/chat/api/v1/server_settings", "/chat/join/KEY/"} {
		r := httptest.NewRequest("GET", "https://chat.example.com"+path, nil)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		kind, _, _ := strings.Cut(w.Header().Get("Content-Type"), ";")
		if to := w.Header().Get("Location"); to != "" {
			kind = "to " + to
		}
		fmt.Println(path, w.Code, kind)
	}
	// Output:
	// /chat/ 200 text/html
	// /chat/web/js/main.js 200 text/javascript
	// /chat/api/v1/server_settings 200 application/json
	// /chat/join/KEY/ 302 to ../../#join/KEY
}
