package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/transport/rest"
)

// The client follows events across the loss of its queue: when the server
// drops it, the next poll answers BAD_EVENT_QUEUE_ID, the client
// registers again and keeps receiving.
func TestFollowReregistersAfterBadQueue(t *testing.T) {
	h := chattest.New(t)
	srv := httptest.NewServer(rest.NewHandler(h.Service, rest.WithRateLimit(0, 0)))
	t.Cleanup(srv.Close)
	c := &client{site: srv.URL, email: h.Owner.Email, key: h.Owner.APIKey, types: []string{"message"}, http: &http.Client{Timeout: 90 * time.Second}}

	var mu sync.Mutex
	var registrations int
	var contents []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- c.follow(ctx, func(kind string, v any) {
			mu.Lock()
			defer mu.Unlock()
			switch kind {
			case "registered":
				registrations++
			case "event":
				ev := v.(map[string]any)
				contents = append(contents, ev["message"].(map[string]any)["content"].(string))
			}
		})
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return cond() }, 10*time.Second, 10*time.Millisecond, what)
	}
	send := func(content string) {
		_, err := h.Service.SendMessage(context.Background(), h.Owner.Caller, chat.SendMessageRequest{Type: "private",
			To: new(`["` + h.Owner.Email + `"]`), Content: content})
		require.NoError(t, err)
	}
	waitFor("the first registration", func() bool { return registrations == 1 })
	send("before")
	waitFor("the first message", func() bool { return len(contents) == 1 })

	// The server loses every queue (as after a restart, or when a queue
	// has idled past its lifespan).
	h.Service.DropEventQueues()
	waitFor("a second registration", func() bool { return registrations == 2 })
	send("after")
	waitFor("the message after re-registering", func() bool { return len(contents) == 2 })
	require.Equal(t, []string{"<p>before</p>", "<p>after</p>"}, contents)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}
