package chattest_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// A program that embeds the library tests its chat features on a harness:
// a real Service on a temporary SQLite file, users of every role, a clock
// the test moves and the events the Service published. In a test, t is the
// test's own; an Example has none, so this one runs on a stand-in.
func Example() {
	t := newExampleT()
	defer t.end()
	ctx := context.Background()

	h := chattest.New(t)
	ada := h.NewUser(t, chat.RoleMember)
	fmt.Println("new user:", ada.FullName, ada.Email)
	h.Events.Take() // forget the events of her creation

	sent, err := h.Service.SendMessage(ctx, ada.Caller, chat.SendMessageRequest{
		Type: "direct", To: chat.ToUsers(h.Owner.ID), Content: "Hello",
	})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	names := map[int64]string{ada.ID: "Ada", h.Owner.ID: "the owner"}
	for _, ev := range h.Events.Take() {
		for _, id := range ev.Audience.Users {
			fmt.Println("published:", ev.Body.EventType(), "to", names[id])
		}
	}

	// An hour later the message may no longer be edited.
	h.Clock.Advance(time.Hour)
	edit := "Hello again"
	_, err = h.Service.UpdateMessage(ctx, ada.Caller, chat.UpdateMessageRequest{MessageID: sent.ID, Content: &edit})
	fmt.Println("edit:", chat.ErrorKind(err), chat.AsError(err).Msg)
	// Output:
	// new user: Test member 1 member1@example.com
	// published: message to Ada
	// published: message to the owner
	// edit: forbidden The time limit for editing this message has passed
}

// exampleT stands in for a test's *testing.T in an Example: it has the
// part of testing.TB the harness uses (the embedded TB is nil, so anything
// else would panic), and fails the Example by panicking or printing.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func newExampleT() *exampleT { return &exampleT{} }

func (t *exampleT) Helper()                           {}
func (t *exampleT) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Errorf(format string, args ...any) { fmt.Printf("error: "+format+"\n", args...) }
func (t *exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (t *exampleT) Skipf(format string, args ...any)  { panic(fmt.Sprintf(format, args...)) }

func (t *exampleT) TempDir() string {
	dir, err := os.MkdirTemp("", "chattest-example")
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// end runs the cleanups, the last registered first, as a test's end does.
func (t *exampleT) end() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
