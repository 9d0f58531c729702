package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage/bunstore"
)

// Example creates an organization on a SQLite file and calls the Service
// in-process, as a Go program embedding teamchat does.
func Example() {
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
		Name: "Example", URL: "https://chat.example.com",
		OwnerEmail: "owner@example.com", OwnerFullName: "Olivia Owner", OwnerPassword: "a long password",
	})
	if err != nil {
		log.Fatal(err)
	}
	owner := chat.Caller{RealmID: org.RealmID, UserID: org.OwnerID}
	if _, err := svc.CreateUser(ctx, owner, chat.CreateUserRequest{
		Email: "ada@example.com", Password: "another long password", FullName: "Ada",
	}); err != nil {
		log.Fatal(err)
	}
	users, err := svc.GetUsers(ctx, owner, chat.GetUsersRequest{})
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range users.Members {
		fmt.Println(u.UserID, u.FullName, u.Role)
	}
	// Output:
	// 1 Olivia Owner 100
	// 5 Ada 400
}

// New makes a Service on a store; options set its clock, logger, limits,
// password hashing, event sinks and the rest. It is ready to call at once.
// Run does its background work (scheduled messages, notifications, presence
// writes) until its context ends, and Close releases the store.
func ExampleNew() {
	ctx, stop := context.WithCancel(context.Background())
	dir, err := os.MkdirTemp("", "teamchat-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := bunstore.Open(ctx, filepath.Join(dir, "chat.db")) // or a postgres:// DSN
	if err != nil {
		log.Fatal(err)
	}

	svc := chat.New(store,
		chat.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		chat.WithLimits(chat.Limits{MaxMessageLength: 2000}), // the fields left zero keep their defaults
	)
	defer svc.Close()
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(ctx) }()

	org, err := svc.CreateRealm(ctx, chat.CreateRealmRequest{
		Name: "Example", URL: "https://chat.example.com",
		OwnerEmail: "owner@example.com", OwnerFullName: "Olivia Owner", OwnerPassword: "a long password",
	})
	if err != nil {
		log.Fatal(err)
	}
	id, err := svc.RealmForHost(ctx, "chat.example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("organization found by its host:", id == org.RealmID)
	fmt.Println("longest message:", svc.Limits().MaxMessageLength, "longest topic:", svc.Limits().MaxTopicLength)

	stop()
	fmt.Println("Run returned:", <-ran)
	// Output:
	// organization found by its host: true
	// longest message: 2000 longest topic: 60
	// Run returned: context canceled
}

// A member posts to a channel: the Service checks that she may, renders
// the Markdown and stores the message. A refusal is a *chat.Error whose
// Kind is for Go callers and whose Code and Msg are the reference's answer.
func ExampleService_SendMessage() {
	ctx := context.Background()
	svc, _, ada, done := exampleOrganization()
	defer done()

	topic := "greetings"
	sent, err := svc.SendMessage(ctx, ada, chat.SendMessageRequest{
		Type: "channel", To: chat.ToChannel("general"), Topic: &topic,
		Content: "Hello **world**",
	})
	if err != nil {
		log.Fatal(err)
	}
	got, err := svc.GetMessage(ctx, ada, chat.GetMessageRequest{MessageID: sent.ID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Message.SenderFullName, "in", got.Message.Subject+":", got.Message.Content)

	_, err = svc.SendMessage(ctx, ada, chat.SendMessageRequest{
		Type: "channel", To: chat.ToChannel("nowhere"), Topic: &topic, Content: "Anyone?",
	})
	e := chat.AsError(err)
	fmt.Printf("refused (%s): %s %q\n", e.Kind, e.Code, e.Msg)
	// Output:
	// Ada Lovelace in greetings: <p>Hello <strong>world</strong></p>
	// refused (not found): STREAM_DOES_NOT_EXIST "Channel 'nowhere' does not exist"
}

// A client registers an event queue, with the initial state it asks for,
// and then polls it: GetEvents returns the events after the last one it
// saw, waiting for the next when there are none.
func ExampleService_Register() {
	ctx := context.Background()
	svc, owner, ada, done := exampleOrganization()
	defer done()

	q, err := svc.Register(ctx, owner, chat.RegisterRequest{
		QueueParams:     chat.QueueParams{EventTypes: &[]string{"message"}},
		FetchEventTypes: &[]string{"realm_user"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range q.State["realm_users"].([]chat.User) {
		fmt.Println("at registration:", u.FullName)
	}

	if _, err := svc.SendMessage(ctx, ada, chat.SendMessageRequest{
		Type: "direct", To: chat.ToUsers(owner.UserID), Content: "Are you there?",
	}); err != nil {
		log.Fatal(err)
	}
	got, err := svc.GetEvents(ctx, owner, chat.GetEventsRequest{QueueID: &q.QueueID, LastEventID: &q.LastEventID})
	if err != nil {
		log.Fatal(err)
	}
	for _, raw := range got.Events {
		var ev struct {
			Type    string `json:"type"`
			Message struct {
				SenderFullName string `json:"sender_full_name"`
				Content        string `json:"content"`
			} `json:"message"`
			Flags []string `json:"flags"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Type, "from", ev.Message.SenderFullName+":", ev.Message.Content, ev.Flags)
	}
	// Output:
	// at registration: Olivia Owner
	// at registration: Ada Lovelace
	// message from Ada Lovelace: Are you there? []
}

// exampleOrganization is, for the examples of the Service's methods, what
// ExampleNew shows: a Service on a new SQLite file, with an organization
// (its default channels included) whose owner has added a member, Ada. done
// closes it all.
func exampleOrganization() (svc *chat.Service, owner, ada chat.Caller, done func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "teamchat-example")
	if err != nil {
		log.Fatal(err)
	}
	store, err := bunstore.Open(ctx, filepath.Join(dir, "chat.db"))
	if err != nil {
		log.Fatal(err)
	}
	// A cheap password hash keeps the examples fast; a server keeps the default.
	svc = chat.New(store, chat.WithPasswordHasher(chat.Argon2id{Time: 1, MemoryKiB: 64}))
	org, err := svc.CreateRealm(ctx, chat.CreateRealmRequest{
		Name: "Example", URL: "https://chat.example.com",
		OwnerEmail: "owner@example.com", OwnerFullName: "Olivia Owner", OwnerPassword: "a long password",
	})
	if err != nil {
		log.Fatal(err)
	}
	owner = chat.Caller{RealmID: org.RealmID, UserID: org.OwnerID}
	u, err := svc.CreateUser(ctx, owner, chat.CreateUserRequest{
		Email: "ada@example.com", Password: "another long password", FullName: "Ada Lovelace",
	})
	if err != nil {
		log.Fatal(err)
	}
	return svc, owner, chat.Caller{RealmID: org.RealmID, UserID: u.UserID}, func() {
		svc.Close()
		os.RemoveAll(dir)
	}
}
