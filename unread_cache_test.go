package chat_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

// A reader's unread state remembered by one server stays exact while
// another server on the same database writes: every answer right after a
// write there, without waiting for anything, equals a third server's
// listed from scratch. On SQLite the servers share one Store (its bus is
// in the process); on PostgreSQL each has its own, and the writes reach
// the first through LISTEN/NOTIFY.
func TestRememberedUnreadsAcrossServers(t *testing.T) {
	chattest.SkipStoreRerun(t)
	for _, dialect := range []string{bunstore.DialectSQLite, bunstore.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			var open func() storage.Store
			if dialect == bunstore.DialectSQLite {
				st := bunstore.OpenTestSQLite(t)
				open = func() storage.Store { return st }
			} else {
				dsn, schema := bunstore.NewTestPostgresSchema(t)
				open = func() storage.Store {
					st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
					require.NoError(t, err)
					t.Cleanup(func() { _ = st.Close() })
					return st
				}
			}
			testRememberedUnreadsAcrossServers(t, open)
		})
	}
}

func testRememberedUnreadsAcrossServers(t *testing.T, open func() storage.Store) {
	ctx := context.Background()
	h := chattest.New(t, chattest.WithStore(func(testing.TB) storage.Store { return open() }))
	chat.SetUnreadCacheMin(h.Service, 1)
	writer, lister := chat.New(open()), chat.New(open())
	t.Cleanup(func() { _ = writer.Close(); _ = lister.Close() })
	go func() { _ = writer.Run(t.Context()) }()

	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	names := []string{"one", "two"}
	channels := map[string]int64{}
	for _, name := range names {
		channels[name] = newChannelBy(t, h, bob, name, false)
		subscribe(t, h, bob, name, alice.ID)
	}
	rng := rand.New(rand.NewPCG(testSeed(t, "TEAMCHAT_UNREAD_SEED"), 2))
	topics := []string{"a", "b", "C", "c"}
	var sent []int64
	sendOne := func() {
		r, err := writer.SendMessage(ctx, bob.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel(names[len(sent)%2]),
			Topic: ptr(topics[len(sent)%len(topics)]), Content: []string{"m", "@**all** m"}[rng.IntN(2)]})
		require.NoError(t, err)
		sent = append(sent, r.ID)
	}
	for range 30 {
		sendOne()
	}
	compare := func(step string) {
		want, err := lister.GetUnreadMessages(ctx, alice.Caller, chat.GetUnreadMessagesRequest{})
		require.NoError(t, err)
		got, err := h.Service.GetUnreadMessages(ctx, alice.Caller, chat.GetUnreadMessagesRequest{})
		require.NoError(t, err)
		require.Equal(t, want, got, "after %s", step)
		reg, err := h.Service.Register(ctx, alice.Caller, chat.RegisterRequest{FetchEventTypes: &[]string{"message", "update_message_flags"}})
		require.NoError(t, err)
		require.Equal(t, want, reg.State["unread_msgs"], "at register after %s", step)
	}
	compare("the first messages")
	for i := range 80 {
		var step string
		switch rng.IntN(7) {
		case 0, 1:
			sendOne()
			step = "a send"
		case 2:
			ids := []int64{sent[rng.IntN(len(sent))], sent[rng.IntN(len(sent))]}
			op := []string{"add", "remove"}[rng.IntN(2)]
			_, err := writer.UpdateMessageFlags(ctx, alice.Caller, chat.UpdateMessageFlagsRequest{Messages: ids, Op: op, Flag: "read"})
			require.NoError(t, err)
			step = op + " read"
		case 3:
			_, err := writer.MarkTopicAsRead(ctx, alice.Caller, chat.MarkTopicAsReadRequest{StreamID: channels[names[rng.IntN(2)]], TopicName: topics[rng.IntN(3)]})
			if err != nil {
				require.Contains(t, err.Error(), "No such topic")
			}
			step = "a topic marked read"
		case 4:
			id := sent[rng.IntN(len(sent))]
			_, err := writer.UpdateMessage(ctx, bob.Caller, chat.UpdateMessageRequest{MessageID: id, Topic: ptr(topics[rng.IntN(len(topics))]),
				PropagateMode: ptr("change_one")})
			if err != nil {
				require.Contains(t, err.Error(), "Nothing to change")
			}
			step = "a move"
		case 5:
			// A new content that mentions the whole channel, or no longer
			// does, or neither.
			id := sent[rng.IntN(len(sent))]
			content := []string{"@**all** look", "plain again", "plain, edited"}[rng.IntN(3)]
			_, err := writer.UpdateMessage(ctx, bob.Caller, chat.UpdateMessageRequest{MessageID: id, Content: ptr(content)})
			if err != nil {
				require.Contains(t, err.Error(), "Nothing to change")
			}
			step = "a content edit"
		default:
			_, err := writer.UpdateUserTopic(ctx, alice.Caller, chat.UpdateUserTopicRequest{StreamID: channels[names[rng.IntN(2)]],
				Topic: topics[rng.IntN(len(topics))], VisibilityPolicy: rng.IntN(3)})
			require.NoError(t, err)
			step = "a topic policy"
		}
		compare(fmt.Sprintf("step %d, %s", i, step))
	}
	hits, merges, _ := chat.UnreadCacheStats(h.Service)
	require.Positive(t, hits, "a remembered state was used")
	require.Positive(t, merges, "newer messages were added to a remembered state")
}
