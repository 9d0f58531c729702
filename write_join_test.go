package chat

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/teamchat/chat/internal/writelane"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

// joinRig is two Services on one database and a channel's lane: the
// first (other) holds the lane's database lock while a test queues writes
// on the second (s), whose transaction waits for that lock meanwhile, as
// it would behind another server.
type joinRig struct {
	other, s *Service
	st       storage.Store
	reader   *sdkmetric.ManualReader
	owner    Caller
	channel  int64
	lane     writelane.Key
	mu       sync.Mutex
	// messages are the IDs of the messages s published, topics the
	// user-topic names, in order.
	messages, topics []string
}

func newJoinRig(t *testing.T, dialect string) *joinRig {
	t.Helper()
	var open func() storage.Store
	if dialect == bunstore.DialectSQLite {
		path := filepath.Join(t.TempDir(), "teamchat.db")
		open = func() storage.Store {
			st, err := bunstore.OpenSQLite(context.Background(), path)
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			return st
		}
	} else {
		dsn, schema := bunstore.NewTestPostgresSchema(t)
		open = func() storage.Store {
			st, err := bunstore.OpenPostgres(context.Background(), dsn, bunstore.WithSchema(schema))
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			return st
		}
	}
	r := &joinRig{reader: sdkmetric.NewManualReader()}
	hasher := WithPasswordHasher(Argon2id{Time: 1, MemoryKiB: 64})
	r.st = open()
	r.s = New(r.st, hasher, WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))),
		WithEventSink(func(ev Event) {
			r.mu.Lock()
			defer r.mu.Unlock()
			switch e := ev.Body.(type) {
			case MessageEvent:
				// One event per form of the message; once is enough here.
				if id := fmt.Sprint(e.Message.ID); !slices.Contains(r.messages, id) {
					r.messages = append(r.messages, id)
				}
			case UserTopicEvent:
				r.topics = append(r.topics, e.TopicName)
			}
		}))
	r.other = New(open(), hasher)
	t.Cleanup(func() { _ = r.s.Close(); _ = r.other.Close() })
	ctx := context.Background()
	realm, err := r.s.CreateRealm(ctx, CreateRealmRequest{Name: "Org", URL: "http://chat.example.com",
		OwnerEmail: "owner@example.com", OwnerFullName: "Owner", OwnerPassword: "a long enough password", SkipOnboarding: true})
	require.NoError(t, err)
	r.owner = Caller{RealmID: realm.RealmID, UserID: realm.OwnerID}
	_, err = r.s.Subscribe(ctx, r.owner, SubscribeRequest{Subscriptions: []ChannelSpec{{Name: "lane"}}})
	require.NoError(t, err)
	ch, err := r.s.GetChannelID(ctx, r.owner, GetChannelIDRequest{Stream: "lane"})
	require.NoError(t, err)
	r.channel = ch.StreamID
	r.lane = channelLane(realm.RealmID, ch.StreamID)
	return r
}

// round makes the other Service hold the lane's lock, starts lead on s
// and waits until its transaction has started (and so waits for the
// lock), then starts each of queued in turn, waiting until it is queued,
// and finally lets the other Service go. It returns when all are done.
func (r *joinRig) round(t *testing.T, lead func(), queued ...func()) {
	t.Helper()
	ctx := context.Background()
	holding, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- r.other.writeIn(ctx, r.lane, false, func(*writeTx) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	var wg sync.WaitGroup
	wg.Go(lead)
	require.Eventually(t, func() bool { return !r.s.writes.Idle() && r.s.writes.Queued(r.lane) == 0 },
		10*time.Second, 100*time.Microsecond, "the lead's transaction started")
	for i, fn := range queued {
		wg.Go(fn)
		require.Eventually(t, func() bool { return r.s.writes.Queued(r.lane) == i+1 }, 10*time.Second, 100*time.Microsecond)
	}
	close(release)
	wg.Wait()
	require.NoError(t, <-held)
	require.True(t, r.s.writes.Idle())
}

// Sends that arrive while their lane's transaction waits for the
// database's lock join it, as many as the lane saw arrive last time:
// message IDs keep the arrival order, which is the commit order, and the
// events go out in it.
func TestSendsJoinTheTransactionWaitingForTheLock(t *testing.T) {
	skipStoreRerun(t)
	for _, dialect := range []string{bunstore.DialectSQLite, bunstore.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			r := newJoinRig(t, dialect)
			ctx := context.Background()
			var ids [10]int64
			send := func(i int) func() {
				return func() {
					resp, err := r.s.SendMessage(ctx, r.owner, SendMessageRequest{Type: "channel", To: ToChannel("lane"),
						Topic: ToChannel("joins"), Content: fmt.Sprintf("send %d", i)})
					if assert.NoError(t, err, "send %d", i) {
						ids[i] = resp.ID
					}
				}
			}
			// The lane's first transaction expects no one and takes no one
			// in: it counts the four that arrived, which then share the
			// next transaction. That one finds no one waiting, so the lane
			// expects half of four: the lead of the second round takes in
			// two, and the last two share a transaction of their own.
			r.round(t, send(0), send(1), send(2), send(3), send(4))
			r.round(t, send(5), send(6), send(7), send(8), send(9))
			require.True(t, slices.IsSorted(ids[:]), "IDs in arrival order: %v", ids)
			assert.Len(t, slices.Compact(slices.Clone(ids[:])), len(ids))

			m := writeMetrics(t, r.reader, "channel")
			assert.Equal(t, int64(2), m["chat.write.joined"], "sends 6 and 7 joined")
			assert.Equal(t, int64(4), m["chat.write.duration"], "transactions: 0; 1-4; 5-7; 8-9")
			assert.Equal(t, int64(10), m["chat.write.batch.size:sum"])
			assert.Equal(t, int64(10), m["chat.write.wait"], "a wait per write")
			assert.Zero(t, m["chat.write.retries"])

			r.mu.Lock()
			want := make([]string, 0, len(ids))
			for _, id := range ids {
				want = append(want, fmt.Sprint(id))
			}
			// Every send's event reached the sink once. (A sink gets each
			// transaction's events together; the next transaction of the
			// lane may finish first, since a batch is finished once its
			// lane is free: commit order is the event queues', through
			// the bus.)
			assert.ElementsMatch(t, want, r.messages, "every send's event, once")
			r.mu.Unlock()
			msgs, err := r.st.GetMessagesByID(ctx, r.owner.RealmID, ids[:])
			require.NoError(t, err)
			var stored []int64
			for _, m := range msgs {
				stored = append(stored, m.ID)
			}
			assert.ElementsMatch(t, ids[:], stored, "every send is stored")
		})
	}
}

// A write taken into a transaction that then fails gets the answer it
// would have had alone: the grown batch splits like any other (the writes
// before the failed one again together, the failed one alone, those after
// it together), and the writes left for the next transaction are not
// affected.
func TestFailureSplitsAGrownBatch(t *testing.T) {
	skipStoreRerun(t)
	for _, dialect := range []string{bunstore.DialectSQLite, bunstore.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			r := newJoinRig(t, dialect)
			ctx := context.Background()
			refused := errors.New("refused")
			var runs [10]atomic.Int32
			errs := make([]error, 10)
			var ids sync.Map
			op := func(i int) func() {
				return func() {
					errs[i] = r.s.writeIn(ctx, r.lane, true, func(w *writeTx) error {
						runs[i].Add(1)
						id, err := w.newMessageID(ctx)
						if err != nil {
							return err
						}
						ids.Store(i, id)
						topic := fmt.Sprintf("op %d", i)
						if err := w.SetUserTopic(ctx, &storage.UserTopic{RealmID: r.owner.RealmID, UserID: r.owner.UserID,
							StreamID: r.channel, TopicName: topic, VisibilityPolicy: TopicPolicyFollowed, LastUpdated: 1}); err != nil {
							return err
						}
						w.emit(toUsers(r.owner.UserID), UserTopicEvent{StreamID: r.channel, TopicName: topic, VisibilityPolicy: TopicPolicyFollowed})
						if i == 6 {
							return refused
						}
						return nil
					})
				}
			}
			r.round(t, op(0), op(1), op(2), op(3), op(4))
			// 5 takes in 6 and 7; 6 fails (7 never ran): 5 runs again
			// alone, 6 alone (and fails), 7 alone; 8 and 9 share the next
			// transaction.
			r.round(t, op(5), op(6), op(7), op(8), op(9))
			for i, err := range errs {
				if i == 6 {
					assert.ErrorIs(t, err, refused)
				} else {
					assert.NoError(t, err, "op %d", i)
				}
			}
			var got []int32
			for i := range runs {
				got = append(got, runs[i].Load())
			}
			assert.Equal(t, []int32{1, 1, 1, 1, 1, 2, 2, 1, 1, 1}, got, "runs of each op")
			m := writeMetrics(t, r.reader, "channel")
			assert.Equal(t, int64(2), m["chat.write.joined"])
			assert.Equal(t, int64(3), m["chat.write.retries"], "the grown batch's three ran again")
			assert.Equal(t, int64(7), m["chat.write.duration"], "transactions: 0; 1-4; 5-7; 5; 6; 7; 8-9")

			// The sink gets each transaction's events together, but the
			// lane's next transaction may reach it first (a batch is
			// finished once its lane is free; commit order is the event
			// queues', and the IDs' below): every committed op once.
			r.mu.Lock()
			assert.ElementsMatch(t, []string{"op 0", "op 1", "op 2", "op 3", "op 4", "op 5", "op 7", "op 8", "op 9"}, r.topics,
				"the failed op published nothing; the others once")
			r.mu.Unlock()
			for i := range 10 {
				_, err := r.st.GetUserTopic(ctx, r.owner.RealmID, r.owner.UserID, r.channel, fmt.Sprintf("op %d", i))
				if i == 6 {
					assert.ErrorIs(t, err, storage.ErrNotFound, "the failed op's write rolled back")
				} else {
					assert.NoError(t, err, "op %d committed", i)
				}
			}
			if dialect == bunstore.DialectPostgres {
				var order []int64
				for _, i := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9} {
					id, _ := ids.Load(i)
					order = append(order, id.(int64))
				}
				assert.True(t, slices.IsSorted(order), "the committed ops' IDs in their order: %v", order)
			}
		})
	}
}
