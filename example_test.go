package chat_test

import (
	"context"
	"fmt"
	"log"
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
