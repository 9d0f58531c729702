package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// A host application mounts the API under /chat/ of its own mux and
// authenticates requests with its own sessions instead of API keys: its
// Authenticator maps a request to a chat.Caller, or refuses it with a
// *chat.Error that the handler answers in the API's JSON.
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
	org, err := svc.CreateRealm(ctx, chat.CreateRealmRequest{
		Name: "Acme", URL: "https://app.example.com",
		OwnerEmail: "admin@app.example.com", OwnerFullName: "App Admin", OwnerPassword: "a long password",
	})
	if err != nil {
		log.Fatal(err)
	}
	// The application's user Ada gets a chat account (no password: she
	// never logs in to the chat itself), and a session of the application.
	ada, err := svc.ProvisionUser(ctx, org.RealmID, chat.ProvisionUserRequest{Email: "ada@app.example.com", FullName: "Ada Lovelace"})
	if err != nil {
		log.Fatal(err)
	}
	sessions := map[string]int64{"s3cret-session": ada.UserID}

	authenticate := func(r *http.Request, realmID int64) (chat.Caller, error) {
		c, err := r.Cookie("session")
		if err != nil {
			return chat.Caller{}, chat.Unauthorized("Not logged in")
		}
		id, ok := sessions[c.Value]
		if !ok {
			return chat.Caller{}, chat.Unauthorized("Session expired")
		}
		return chat.Caller{RealmID: realmID, UserID: id}, nil
	}
	api := rest.NewHandler(svc, rest.WithRealm(org.RealmID), rest.WithAuthenticator(authenticate))
	mux := http.NewServeMux()
	mux.Handle("/chat/", http.StripPrefix("/chat", api))

	call := func(method, path string, form url.Values, session string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if session != "" {
			r.AddCookie(&http.Cookie{Name: "session", Value: session})
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w
	}

	w := call("GET", "/chat/api/v1/users/me", nil, "")
	fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))

	w = call("GET", "/chat/api/v1/users/me", nil, "s3cret-session")
	var me struct {
		FullName string `json:"full_name"`
		Email    string `json:"email"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &me); err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.Code, me.FullName, me.Email)

	w = call("POST", "/chat/api/v1/messages", url.Values{
		"type": {"channel"}, "to": {"general"}, "topic": {"hello"}, "content": {"Sent through the host's session"},
	}, "s3cret-session")
	var sent struct {
		Result string `json:"result"`
		ID     int64  `json:"id"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &sent); err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.Code, sent.Result, sent.ID > 0)
	// Output:
	// 401 {"code":"UNAUTHORIZED","msg":"Not logged in","result":"error"}
	// 200 Ada Lovelace ada@app.example.com
	// 200 success true
}
