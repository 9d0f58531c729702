package bunstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// The topic list and the newest received message read indexes only:
// seeks per topic and span, never the channel's messages one by one. The
// test prints and checks each dialect's plan (PostgreSQL is told not to
// prefer a scan of the small test table).
func TestTopicQueriesUseIndexes(t *testing.T) {
	for _, name := range []string{DialectSQLite, DialectPostgres} {
		t.Run(name, func(t *testing.T) {
			var s *Store
			if name == DialectSQLite {
				s = OpenTestSQLite(t)
			} else {
				s = OpenTestPostgres(t)
			}
			ctx := t.Context()
			// Fifty channels of ten topics, five senders, two realms: the
			// planner sees a channel, a topic and a sender as the small part
			// of the messages they are.
			var realms []*storage.Realm
			var users []*storage.User
			var channels []*storage.Stream
			for r := range 2 {
				realm := &storage.Realm{StringID: fmt.Sprint(r), Name: "r", URL: fmt.Sprintf("https://%d.example.com", r), Host: fmt.Sprintf("%d.example.com", r)}
				require.NoError(t, s.CreateRealm(ctx, realm))
				realms = append(realms, realm)
				for i := range 5 {
					u := &storage.User{RealmID: realm.ID, Email: fmt.Sprintf("u%d@a", i), FullName: "U", Role: 400, IsActive: true, APIKey: fmt.Sprintf("k%d-%d", r, i), AvatarSource: "G"}
					require.NoError(t, s.CreateUser(ctx, u))
					users = append(users, u)
				}
				for i := range 25 {
					c := &storage.Stream{RealmID: realm.ID, Name: fmt.Sprint(i), HistoryPublicToSubscribers: true}
					require.NoError(t, s.CreateStream(ctx, c))
					channels = append(channels, c)
				}
			}
			require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
				for i := range 5000 {
					c := channels[i%len(channels)]
					sender := users[(i/len(channels))%5+5*int(c.RealmID-realms[0].ID)]
					m := &storage.Message{RealmID: c.RealmID, SenderID: sender.ID, StreamID: &c.ID, Topic: fmt.Sprintf("topic %d", (i/len(channels))%10),
						Content: "x", RenderedContent: "<p>x</p>"}
					readers := []storage.UserMessage{{UserID: sender.ID, Flags: storage.FlagRead}}
					if err := tx.CreateMessage(ctx, m, readers); err != nil {
						return err
					}
				}
				return nil
			}))
			realm, u, c := realms[0], users[0], channels[0]
			require.NoError(t, s.Analyze(ctx))
			var queries []string
			s.OnQuery(func(q string) {
				if strings.HasPrefix(q, "WITH RECURSIVE keys") || strings.HasPrefix(q, "SELECT COALESCE(max(v), 0)") {
					queries = append(queries, q)
				}
			})
			through := int64(2500)
			topics, err := s.ListChannelTopics(ctx, realm.ID, c.ID, nil)
			require.NoError(t, err)
			require.Len(t, topics, 10)
			_, err = s.ListChannelTopics(ctx, realm.ID, c.ID, []storage.ChannelSpan{{StreamID: c.ID, After: 10, Through: &through}, {StreamID: c.ID, After: 4000}})
			require.NoError(t, err)
			// In a transaction its values are written inline (outside one
			// they are placeholders of a prepared statement), so the
			// recorded text can be explained.
			require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
				_, err := tx.NewestReceivedMessage(ctx, realm.ID, u.ID, []storage.ChannelSpan{{StreamID: c.ID, After: 10, Through: &through}, {StreamID: c.ID, After: 4000}})
				return err
			}))
			require.Len(t, queries, 3)
			for i, q := range queries {
				plan := explain(t, s, q)
				t.Logf("%s\n%s", q, plan)
				assert.NotContains(t, plan, "Seq Scan")
				assert.NotRegexp(t, `SCAN (messages|m|f|n)\b`, plan, "no full scan of messages (SQLite)")
				if i < 2 {
					assert.Contains(t, plan, "messages_stream_topic_idx")
					assert.NotContains(t, plan, "messages_pkey", "each topic's message by its (realm, ID) key")
					continue
				}
				assert.Contains(t, plan, "messages_stream_cover_idx")
				if name == DialectSQLite {
					assert.Contains(t, plan, "messages_sender_idx")
				}
			}
		})
	}
}
