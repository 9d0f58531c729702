// Command embed shows teamchat inside an existing Go web application: the
// REST API is mounted under /chat/ of the application's own mux, and
// requests are authenticated by the application's own session cookie
// instead of API keys.
//
//	go run ./examples/embed
//	curl -c jar -d name=ada http://127.0.0.1:9992/login
//	curl -b jar http://127.0.0.1:9992/chat/api/v1/users/me
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/transport/rest"
)

// app is the host application: it has its own users and sessions, and
// provisions a chat account for each of its users.
type app struct {
	svc     *chat.Service
	store   storage.Store // where the chat accounts of earlier runs are found
	realmID int64

	mu       sync.Mutex
	sessions map[string]int64 // session token -> chat user ID
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9992", "address to listen on")
	dir := flag.String("dir", os.TempDir(), "folder for the SQLite file")
	flag.Parse()
	ctx := context.Background()

	store, err := bunstore.Open(ctx, filepath.Join(*dir, "embed-example.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	a, err := newApp(ctx, chat.New(store), store, "http://"+*addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *addr, Handler: a.routes(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s — POST /login with name=..., then use /chat/api/v1/...\n", *addr)
	log.Fatal(srv.ListenAndServe())
}

func newApp(ctx context.Context, svc *chat.Service, store storage.Store, url string) (*app, error) {
	a := &app{svc: svc, store: store, sessions: map[string]int64{}}
	// Reuse the organization of an earlier run, or make one.
	if id, err := svc.RealmForHost(ctx, ""); err == nil {
		a.realmID = id
	} else {
		org, err := svc.CreateRealm(ctx, chat.CreateRealmRequest{Name: "Embedded", URL: url,
			OwnerEmail: "admin@app.example.com", OwnerFullName: "App Admin", OwnerPassword: randomToken()})
		if err != nil {
			return nil, err
		}
		a.realmID = org.RealmID
	}
	return a, nil
}

func (a *app) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", a.login)
	api := rest.NewHandler(a.svc, rest.WithRealm(a.realmID), rest.WithAuthenticator(a.authenticate))
	mux.Handle("/chat/", http.StripPrefix("/chat", api))
	return mux
}

// login is the application's own login: it finds the chat account of the
// name (made on an earlier login, maybe by an earlier run: the accounts
// live in the database, not in memory), or provisions one, and sets a
// session cookie.
func (a *app) login(w http.ResponseWriter, r *http.Request) {
	name := r.FormValue("name")
	email := name + "@app.example.com"
	a.mu.Lock()
	defer a.mu.Unlock()
	var id int64
	u, err := a.store.GetUserByEmail(r.Context(), a.realmID, email)
	switch {
	case err == nil:
		id = u.ID
	case errors.Is(err, storage.ErrNotFound):
		resp, err := a.svc.ProvisionUser(r.Context(), a.realmID, chat.ProvisionUserRequest{Email: email, FullName: name})
		if err != nil {
			http.Error(w, chat.AsError(err).Msg, http.StatusBadRequest)
			return
		}
		id = resp.UserID
	default:
		http.Error(w, "account lookup failed", http.StatusInternalServerError)
		return
	}
	token := randomToken()
	a.sessions[token] = id
	http.SetCookie(w, &http.Cookie{Name: "session", Value: token, Path: "/", HttpOnly: true})
	fmt.Fprintf(w, "logged in as %s (chat user %d)\n", name, id)
}

// authenticate maps the session cookie to a chat Caller.
func (a *app) authenticate(r *http.Request, realmID int64) (chat.Caller, error) {
	c, err := r.Cookie("session")
	if err != nil {
		return chat.Caller{}, chat.Unauthorized("Not logged in")
	}
	a.mu.Lock()
	id, ok := a.sessions[c.Value]
	a.mu.Unlock()
	if !ok {
		return chat.Caller{}, chat.Unauthorized("Session expired")
	}
	return chat.Caller{RealmID: realmID, UserID: id}, nil
}

func randomToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
