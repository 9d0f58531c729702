package chat_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

// A burst of sends and edits in one organization, on a PostgreSQL pool of
// two connections, by Services with cold caches (as after a restart):
// every write gets through. Before the write path waited for the
// organization's turn ahead of the pool (write_gate.go), sends stood
// still here until the driver's 10-second read timeout failed them. The
// write path's promise itself is TestWriteBurstReadingOutsideTransaction.
func TestWriteBurstOnSmallPostgresPool(t *testing.T) {
	chattest.SkipStoreRerun(t)
	dsn, schema := bunstore.NewTestPostgresSchema(t)
	st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema), bunstore.WithMaxConns(2))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.Equal(t, 1, st.MaxConcurrentWrites())
	h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return st }))
	const writers = 12
	users := make([]chattest.User, writers)
	msgs := make([]int64, writers)
	for i := range users {
		users[i] = h.NewUser(t, chat.RoleMember)
	}
	for i := range users {
		msgs[i] = send(t, h, users[i], chat.SendMessageRequest{Type: "direct",
			To: chat.ToUsers(users[(i+1)%writers].ID), Content: "first"})
	}
	for round := range 3 {
		// A Service with cold caches, as after a restart.
		svc := chat.New(st, chat.WithClock(h.Clock.Now))
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		var wg sync.WaitGroup
		errs := make(chan error, 2*writers)
		for i := range users {
			wg.Add(2)
			go func() {
				defer wg.Done()
				content := fmt.Sprintf("edit %d", round)
				_, err := svc.UpdateMessage(ctx, users[i].Caller, chat.UpdateMessageRequest{MessageID: msgs[i], Content: &content})
				errs <- err
			}()
			go func() {
				defer wg.Done()
				_, err := svc.SendMessage(ctx, users[i].Caller, chat.SendMessageRequest{Type: "direct",
					To: chat.ToUsers(users[(i+2)%writers].ID), Content: fmt.Sprintf("round %d", round)})
				errs <- err
			}()
		}
		wg.Wait()
		cancel()
		close(errs)
		for err := range errs {
			require.NoError(t, err, "round %d", round)
		}
	}
}
