package chat_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
)

// BenchmarkMoveTopic measures PATCH /messages/{id} with change_all on a
// topic of 10,000 messages (the target: under 1 s on SQLite),
// with 50 subscribers who have read part of it, starred and been
// mentioned in some of it, so that every user's state has to be kept:
//
//	go test -run XXX -bench MoveTopic -benchtime 5x .
//
// WithinChannel renames the topic back and forth; ToChannel moves it
// between two public channels that both have the 50 subscribers (their
// read state is carried over). Each iteration checks that a reader's
// flags survived.
func BenchmarkMoveTopic(b *testing.B) {
	const messages, users = 10_000, 50
	ctx := context.Background()
	h := chattest.New(&keepAlive{B: b})
	owner := h.Owner
	a := newBenchChannel(b, h, "a")
	other := newBenchChannel(b, h, "other")
	var readers []chattest.User
	for range users {
		u := h.NewUser(b, chat.RoleMember)
		readers = append(readers, u)
		for _, name := range []string{"a", "other"} {
			_, err := h.Service.Subscribe(ctx, owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: name}},
				Principals: &[]chat.Principal{{ID: u.ID}}})
			check(b, err)
		}
	}
	start := time.Now()
	var ids []int64
	for done := 0; done < messages; done += 1000 {
		err := h.Store.InTx(ctx, func(tx storage.Store) error {
			for i := range 1000 {
				m := &storage.Message{RealmID: h.RealmID, SenderID: owner.ID, StreamID: &a, Topic: "t0",
					Content: fmt.Sprintf("message %d", done+i), RenderedContent: fmt.Sprintf("<p>message %d</p>", done+i), DateSent: h.Clock.Now().Unix()}
				var rows []storage.UserMessage
				if i%100 == 0 {
					rows = append(rows, storage.UserMessage{UserID: readers[i%users].ID, Flags: storage.FlagMentioned})
				}
				if err := tx.CreateMessage(ctx, m, rows); err != nil {
					return err
				}
				ids = append(ids, m.ID)
			}
			return nil
		})
		check(b, err)
	}
	// Half the readers read the first half; everyone stars a message.
	for i, u := range readers {
		if i%2 == 0 {
			check(b, h.Store.AddReadRange(ctx, h.RealmID, u.ID, a, ids[0], ids[messages/2]))
		}
		_, err := h.Service.UpdateMessageFlags(ctx, u.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{ids[i*7]}, Op: "add", Flag: "starred"})
		check(b, err)
	}
	fmt.Fprintf(os.Stderr, "seeded %d messages and %d readers in %v\n", messages, users, time.Since(start).Round(time.Millisecond))
	probe := readers[0]
	want := map[int64]string{ids[0]: "read,starred,mentioned", ids[messages-1]: ""}
	verify := func(b *testing.B) {
		got := flagsOfB(b, h, probe, ids[0], ids[messages-1])
		for id, w := range want {
			if got[id] != w {
				b.Fatalf("flags of %d: %q, want %q", id, got[id], w)
			}
		}
	}
	topic := 0
	b.Run("WithinChannel", func(b *testing.B) {
		fmt.Fprintf(os.Stderr, "MoveTopic/WithinChannel target: < 1000 ms per move of %d messages\n", messages)
		for b.Loop() {
			topic++
			_, err := h.Service.UpdateMessage(ctx, owner.Caller, chat.UpdateMessageRequest{MessageID: ids[0],
				Topic: ptr(fmt.Sprintf("t%d", topic)), PropagateMode: ptr("change_all"), SendNotificationToNewThread: ptr(false)})
			check(b, err)
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/move")
		verify(b)
	})
	channels := []int64{other, a}
	b.Run("ToChannel", func(b *testing.B) {
		fmt.Fprintf(os.Stderr, "MoveTopic/ToChannel (%d readers in both channels): %d messages per move\n", users, messages)
		for i := 0; b.Loop(); i++ {
			to := channels[i%2]
			_, err := h.Service.UpdateMessage(ctx, owner.Caller, chat.UpdateMessageRequest{MessageID: ids[0],
				StreamID: &to, PropagateMode: ptr("change_all"), SendNotificationToNewThread: ptr(false)})
			check(b, err)
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/move")
		verify(b)
	})
}

func newBenchChannel(b *testing.B, h *chattest.Harness, name string) int64 {
	_, err := h.Service.Subscribe(context.Background(), h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: name}}})
	check(b, err)
	resp, err := h.Service.GetChannelID(context.Background(), h.Owner.Caller, chat.GetChannelIDRequest{Stream: name})
	check(b, err)
	return resp.StreamID
}

// flagsOfB is each message's flags, comma-joined, as the reader fetches them.
func flagsOfB(b *testing.B, h *chattest.Harness, as chattest.User, ids ...int64) map[int64]string {
	resp, err := h.Service.GetMessages(context.Background(), as.Caller, chat.GetMessagesRequest{MessageIDs: &ids})
	check(b, err)
	out := map[int64]string{}
	for _, m := range resp.Messages {
		s := ""
		for i, f := range m.Flags {
			if i > 0 {
				s += ","
			}
			s += f
		}
		out[m.ID] = s
	}
	return out
}
