package chat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

// Writes queued behind a running transaction of their lane share the
// next one; when one of them fails, the failing one publishes nothing and
// changes nothing while the others commit and publish once, in their
// order.
func TestSharedTransactionWithOneFailure(t *testing.T) {
	skipStoreRerun(t)
	for _, dialect := range []string{bunstore.DialectSQLite, bunstore.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			var st storage.Store
			if dialect == bunstore.DialectSQLite {
				st = bunstore.OpenTestSQLite(t)
			} else {
				st = bunstore.OpenTestPostgres(t)
			}
			ctx := context.Background()
			var mu sync.Mutex
			var published []string
			reader := sdkmetric.NewManualReader()
			s := New(st, WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
				WithPasswordHasher(Argon2id{Time: 1, MemoryKiB: 64}), WithEventSink(func(ev Event) {
					if e, ok := ev.Body.(UserTopicEvent); ok {
						mu.Lock()
						published = append(published, e.TopicName)
						mu.Unlock()
					}
				}))
			t.Cleanup(func() { _ = s.Close() })
			realm, err := s.CreateRealm(ctx, CreateRealmRequest{Name: "Org", URL: "http://chat.example.com",
				OwnerEmail: "owner@example.com", OwnerFullName: "Owner", OwnerPassword: "a long enough password", SkipOnboarding: true})
			require.NoError(t, err)
			owner := Caller{RealmID: realm.RealmID, UserID: realm.OwnerID}
			_, err = s.Subscribe(ctx, owner, SubscribeRequest{Subscriptions: []ChannelSpec{{Name: "lane"}}})
			require.NoError(t, err)
			ch, err := s.GetChannelID(ctx, owner, GetChannelIDRequest{Stream: "lane"})
			require.NoError(t, err)
			lane := channelLane(realm.RealmID, ch.StreamID)

			// op i sets a topic policy named after it and announces it;
			// op 3 then fails.
			var runs [6]atomic.Int32
			refused := errors.New("refused")
			op := func(i int) func(w *writeTx) error {
				return func(w *writeTx) error {
					runs[i].Add(1)
					topic := fmt.Sprintf("op %d", i)
					if err := w.SetUserTopic(ctx, &storage.UserTopic{RealmID: realm.RealmID, UserID: owner.UserID,
						StreamID: ch.StreamID, TopicName: topic, VisibilityPolicy: TopicPolicyFollowed, LastUpdated: 1}); err != nil {
						return err
					}
					w.emit(toUsers(owner.UserID), UserTopicEvent{StreamID: ch.StreamID, TopicName: topic, VisibilityPolicy: TopicPolicyFollowed})
					if i == 3 {
						return refused
					}
					return nil
				}
			}
			// Op 0 holds the lane until ops 1-5 are queued behind it.
			// It waits until op 0 is inside its transaction: a write still
			// waiting for the lock would take the next ones into its batch.
			release := make(chan struct{})
			entered := make(chan struct{})
			first := make(chan error, 1)
			go func() {
				first <- s.writeIn(ctx, lane, true, func(w *writeTx) error {
					close(entered)
					<-release
					return op(0)(w)
				})
			}()
			select {
			case <-entered:
			case <-time.After(10 * time.Second):
				t.Fatal("op 0 never entered its transaction")
			}
			errs := make([]error, 6)
			var wg sync.WaitGroup
			for i := 1; i <= 5; i++ {
				wg.Go(func() { errs[i] = s.writeIn(ctx, lane, true, op(i)) })
				// Queued in this order: the next waits for this one.
				require.Eventually(t, func() bool { return s.writes.Queued(lane) == i }, 10*time.Second, 100*time.Microsecond)
			}
			close(release)
			wg.Wait()
			errs[0] = <-first
			for i, err := range errs {
				if i == 3 {
					assert.ErrorIs(t, err, refused)
				} else {
					assert.NoError(t, err, "op %d", i)
				}
			}
			// Ops 1-3 shared a transaction until op 3 failed; then 1 and 2
			// shared one again, 3 ran alone, and 4 and 5 shared one.
			assert.Equal(t, []int32{1, 2, 2, 2, 1, 1}, []int32{runs[0].Load(), runs[1].Load(), runs[2].Load(),
				runs[3].Load(), runs[4].Load(), runs[5].Load()}, "runs of each op")
			mu.Lock()
			assert.Equal(t, []string{"op 0", "op 1", "op 2", "op 4", "op 5"}, published, "the failed op published nothing")
			mu.Unlock()
			for i := range 6 {
				_, err := st.GetUserTopic(ctx, realm.RealmID, owner.UserID, ch.StreamID, fmt.Sprintf("op %d", i))
				if i == 3 {
					assert.ErrorIs(t, err, storage.ErrNotFound, "the failed op's write rolled back")
				} else {
					assert.NoError(t, err, "op %d committed", i)
				}
			}
			assert.True(t, s.writes.Idle())

			// The metrics of the lane's transactions: op 0 alone, 1-5
			// (failed, so the five ran again), 1-2, 3 alone, 4-5.
			lanes := writeMetrics(t, reader, "channel")
			assert.Equal(t, int64(5), lanes["chat.write.retries"])
			assert.Equal(t, int64(5), lanes["chat.write.duration"], "transactions")
			assert.Equal(t, int64(5), lanes["chat.write.lock.duration"], "locks taken")
			assert.Equal(t, int64(11), lanes["chat.write.wait"], "a wait per write per transaction it ran in")
			assert.Equal(t, int64(11), lanes["chat.write.batch.size:sum"], "writes in the transactions")
		})
	}
}

// writeMetrics reads the write path's metrics of a lane kind: each
// histogram's count (and the batch size's sum), each counter's value.
func writeMetrics(t *testing.T, reader *sdkmetric.ManualReader, lane string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	isLane := func(set attribute.Set) bool {
		v, ok := set.Value("chat.write.lane")
		return ok && v.AsString() == lane
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					if isLane(dp.Attributes) {
						out[m.Name] += int64(dp.Count)
					}
				}
			case metricdata.Histogram[int64]:
				for _, dp := range d.DataPoints {
					if isLane(dp.Attributes) {
						out[m.Name] += int64(dp.Count)
						out[m.Name+":sum"] += dp.Sum
					}
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					if isLane(dp.Attributes) {
						out[m.Name] += dp.Value
					}
				}
			}
		}
	}
	return out
}

// A lane's sends reserve their message IDs together with the lane's locks,
// inside them: IDs of one transaction increase in the order of its
// writes.
func TestSharedTransactionMessageIDs(t *testing.T) {
	skipStoreRerun(t)
	st := bunstore.OpenTestPostgres(t)
	ctx := context.Background()
	s := New(st, WithPasswordHasher(Argon2id{Time: 1, MemoryKiB: 64}))
	t.Cleanup(func() { _ = s.Close() })
	realm, err := s.CreateRealm(ctx, CreateRealmRequest{Name: "Org", URL: "http://chat.example.com",
		OwnerEmail: "owner@example.com", OwnerFullName: "Owner", OwnerPassword: "a long enough password", SkipOnboarding: true})
	require.NoError(t, err)
	var ids []int64
	_, err = s.writeTxn(ctx, channelLane(realm.RealmID, 1), []*writeOp{
		{ctx: ctx, fn: func(w *writeTx) error { return appendID(ctx, w, &ids) }},
		{ctx: ctx, fn: func(w *writeTx) error { return appendID(ctx, w, &ids) }},
		{ctx: ctx, fn: func(w *writeTx) error { return appendID(ctx, w, &ids) }},
	}, nil)
	require.NoError(t, err)
	require.Len(t, ids, 3)
	assert.True(t, slices.IsSorted(ids))
	assert.Len(t, slices.Compact(slices.Clone(ids)), 3)
}

func appendID(ctx context.Context, w *writeTx, ids *[]int64) error {
	id, err := w.newMessageID(ctx)
	*ids = append(*ids, id)
	return err
}

// skipStoreRerun is chattest.SkipStoreRerun for this package's own tests
// (chattest imports it).
func skipStoreRerun(t *testing.T) {
	if os.Getenv("TEAMCHAT_TEST_STORE") == "postgres" {
		t.Skip("picks its databases itself: it ran in the run without TEAMCHAT_TEST_STORE")
	}
}
