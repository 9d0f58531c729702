package chat

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/internal/writelane"
	"github.com/teamchat/chat/storage"
)

// The write path.
//
// Every state change runs in a write transaction that holds what it must
// serialize with: a channel message holds its channel (a direct message
// its conversation) and, shared, its organization; every other write
// holds its whole organization. The database holds those locks across
// servers (advisory locks on PostgreSQL; SQLite has one writer anyway);
// in this process internal/writelane queues the writers so that one
// waiting for its turn holds no pooled connection, and lets writes queued
// behind a running transaction of the same lane share the next one
// (group commit): one transaction, one lock, one commit and one round of
// notifications for all of them, in their arrival order.
//
// Why this design (measured with examples/load, see the README's
// Measuring section): a send used to hold its organization's lock for
// its whole transaction, about seven round trips to PostgreSQL, so a
// database one millisecond away capped an organization near a hundred
// sends a second whatever the number of servers. Sharing transactions
// pays those round trips once per batch; locking the channel instead of
// the organization lets sends to different channels proceed side by
// side; reading and deciding before the transaction (prepareMessage,
// planStore, most of it from the Service's caches) leaves the
// transaction only writes, which the PostgreSQL store sends together
// with the commit: two round trips whatever the batch (BEGIN with the
// locks and the batch's message IDs, then every write and COMMIT).
//
// A lane's transaction also takes in the writes of its lane that arrived
// while it waited for its lock (writelane.Batch.Join). A batch is
// composed when its transaction starts, before the lock's round trip, and
// that lock may be held by another server: without joining, a write that
// arrived a moment later waited for that whole transaction and then for
// one of its own, and a batch held about half a server's clients. The
// writes join once the lock is held, so they
// come after everything committed before it, in arrival order after the
// batch's own. They need message IDs, which are drawn inside the lock
// (below), and the batch only knows them after the lock's answer: so the
// lock's statement reserves, beside the batch's IDs, as many as the lane
// saw arrive during its previous transaction's wait (Batch.Expect, which
// each transaction that saw fewer halves), and at most that many join.
// No further round trip is made while the lock is held; an ID reserved
// and not used is skipped (under 1% of the IDs drawn with the database
// 5 ms away; up to a quarter with it on the same machine, where fewer
// writes arrive during the short wait than the last one counted). A
// transaction waiting for its lock holds one pooled connection and no
// row, and gets its transaction ID only once it holds the lock. A
// shared transaction that fails splits as any other (runWrites), the
// writes that joined included.
//
// Measured (README, "The write path on PostgreSQL"; the database 5 ms
// away, 8 clients per server): joining takes a server's batches from
// about half its clients to nearly all of them (4.0 to 7.9 writes), one
// server from 265-311 to 485-551 sends a second and two servers on one
// channel from 448-538 to 835-927. Measured and not taken (in a window
// where other work loaded the machine, against joining as built: one
// server 353-448/s, two 456-658/s):
//   - reserving the joined writes' IDs after the lock, in a second round
//     trip: the lock is then held for two trips instead of one (the
//     transaction 26-32 ms instead of 16-20), and one server gave
//     227-278/s, two 330-356/s, no better than without joining;
//   - reserving a whole batch's IDs (32) every time, without an
//     estimate: slower in that window (one server 267-286/s, two
//     399-505/s; why was not pursued), and a quiet lane draws 32 IDs a
//     message;
//   - drawing a send's message ID outside the lock (a sequence, then a
//     lock-free insert) would take the lock's round trip off the lane,
//     but IDs would then no longer increase in commit order, and a queue
//     could see a later message before an earlier one of the same
//     conversation, or a subscription change between them, unless every
//     reader also waited on an ordering epoch.
//
// What remains is the lock itself: it is held from its grant until the
// commit reaches the database, one trip from the database back to the
// server plus the batch's work, and a server's transaction lasts two
// trips. Two servers on one channel therefore keep the lock busy most of
// the time (each waits for the other's hold), which is why they give
// 1.64-1.75 times one server's rate rather than twice it (two servers
// on channels of their own give 1.86-1.89 on this machine). The step
// after this one would send a transaction whole, in one trip, the
// database drawing the IDs inside it and the writes and events taking
// them there, so that the lock is held only for the database's own
// work; that rewrites the send's statements and its events' payloads,
// and was not started. Considered and not built: a server asking for its
// lane's next lock before its commit's answer came back (two
// transactions of a lane open at once) would keep the lock busy with one
// server alone: faster for one server, with nothing left for a second
// one to add on one channel; it would also change the gate's
// one-transaction-per-lane rule and the order of after-commit work.
//
// The order clients rely on holds: message IDs are drawn inside the
// channel's (or conversation's) lock, so within a conversation they
// increase in commit order and reach every queue in that order; writes
// that change who may read a channel (subscriptions, permissions) hold
// the whole organization, so a send is ordered with them.

// writeTx is one write's view of its transaction: the Store bound to it,
// and the events that will be published if it commits.
type writeTx struct {
	storage.Store
	realmID int64
	events  []Event
	// changes are the queue standing changes of events, by index.
	changes map[int]*eventq.Change
	// callersKept: the write changes no account, role, group or
	// organization setting (a message, a flag), so the organization's
	// cached callers stay valid.
	callersKept bool
	// forgotten are messages whose cached form the write makes stale.
	forgotten []int64
	// received is what the write changes in max_message_id's values
	// (max_message_id.go).
	received receivedChanges
	// unread is what the write changes of readers' unread states
	// (unread_cache.go).
	unread unreadTouched
	// after run once the transaction has committed.
	after []func()
	svc   *Service
	// ids are message IDs reserved for the transaction's writes, of
	// which this one and the left-1 after it share the transaction.
	ids  *reservedIDs
	left int
	// syncID: the write answers once the fleet's other servers applied
	// it (fleet_sync.go).
	syncID string
}

// reservedIDs are message IDs a transaction reserved and has not used.
type reservedIDs struct{ free []int64 }

// newMessageID is the ID of a message the write creates: reserved for it
// and the transaction's later writes at once (one round trip per
// transaction, inside its lock, so IDs increase in commit order), or 0
// where the database assigns IDs as it inserts.
func (w *writeTx) newMessageID(ctx context.Context) (int64, error) {
	if len(w.ids.free) == 0 {
		ids, err := w.ReserveMessageIDs(ctx, max(w.left, 1))
		if err != nil || len(ids) == 0 {
			return 0, err
		}
		w.ids.free = ids
	}
	id := w.ids.free[0]
	w.ids.free = w.ids.free[1:]
	return id, nil
}

// keepCallers tells the write path that this write leaves every cached
// caller (account, realm) as it was, so committing it does not empty the
// organization's record cache. Only writes that touch messages and
// per-user message state may say so.
func (w *writeTx) keepCallers() { w.callersKept = true }

// forgetMessages drops the messages from the message cache now, again
// after the commit (a read in between may cache the old version), and on
// every other server when the write reaches them through the event bus.
func (w *writeTx) forgetMessages(ids ...int64) {
	w.svc.messages.forget(ids)
	w.forgotten = append(w.forgotten, ids...)
}

// afterCommit runs fn once the transaction has committed (never when it
// rolls back).
func (w *writeTx) afterCommit(fn func()) { w.after = append(w.after, fn) }

// emit queues an event of the transaction's realm.
func (w *writeTx) emit(aud Audience, body EventBody) {
	w.events = append(w.events, Event{RealmID: w.realmID, Audience: aud, Body: body})
}

// emitChanging queues an event that also changes what the event queues
// know of their users' standing (a subscription, a role, a deactivation,
// a deleted channel): queues check later events' audiences against it.
func (w *writeTx) emitChanging(aud Audience, body EventBody, c eventq.Change) {
	w.emit(aud, body)
	if w.changes == nil {
		w.changes = map[int]*eventq.Change{}
	}
	w.changes[len(w.events)-1] = &c
}

// writeOp is one write on its way: its function and, once its
// transaction has committed, what it did.
type writeOp struct {
	// ctx is the caller's: a transaction of this write alone ends with it
	// (a shared one does not, but the write's own statements do).
	ctx  context.Context
	fn   func(w *writeTx) error
	done *writeTx
	// queued is when the write asked for its turn (only with metrics).
	queued time.Time
}

// maxWriteBatch bounds how many writes share a transaction.
const maxWriteBatch = 32

// newWriteLanes is the Service's writelane.Gate.
func newWriteLanes(s *Service, limit int) *writelane.Gate[*writeOp] {
	return writelane.New(s.runBatch, s.afterWrites, maxWriteBatch, limit)
}

// write is the one write path for a change of the whole organization
// (realmID 0: a new realm, which nobody else can see yet). fn runs in a
// transaction that holds the organization, so checks inside fn and the
// writes they guard mean the same on SQLite and PostgreSQL. Inside the
// same transaction the write hands fn's events and cache invalidations to
// the event bus (storage.EventStore), which delivers them to every
// server's event queues after the commit, in commit order; the local sinks
// get them right after the commit. A failed or rolled-back fn publishes
// nothing.
func (s *Service) write(ctx context.Context, realmID int64, fn func(w *writeTx) error) error {
	return s.writeIn(ctx, writelane.Org(realmID), false, fn)
}

// writeIn runs fn in lane key. A batchable fn may share its transaction
// with other batchable writes of the lane (see write.go's comment); it
// must then be safe to run again, because when one write of a shared
// transaction fails, each of them runs again alone.
func (s *Service) writeIn(ctx context.Context, key writelane.Key, batchable bool, fn func(w *writeTx) error) (err error) {
	if s.tel.traces {
		var sp trace.Span
		ctx, sp = s.span(ctx, "chat.write", laneNames[laneKind(key)])
		defer func() { endSpan(sp, err) }()
	}
	op := &writeOp{ctx: ctx, fn: fn}
	if s.tel.metrics {
		op.queued = time.Now()
	}
	if key.Realm == 0 {
		ops := []*writeOp{op}
		_, err = s.writeTxn(ctx, key, ops, nil)
		s.afterWrites(ctx, ops, []error{err})
	} else {
		err = s.writes.Do(ctx, key, op, batchable)
	}
	if err == nil && op.done != nil && op.done.syncID != "" {
		s.syncPeers(ctx, op.done.syncID)
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return s.internal(ctx, "wait for the write's transaction", err)
	}
	return err
}

// runBatch runs b in one transaction of lane key (the writelane Runner),
// which takes in the writes that arrived while it waited for its lock (see
// write.go's comment). If one of them fails, the transaction rolls back,
// and they run again as runWrites says.
func (s *Service) runBatch(ctx context.Context, key writelane.Key, b *writelane.Batch[*writeOp]) []error {
	txCtx := ctx
	if ops := b.Ops(); len(ops) == 1 && b.Expect() == 0 {
		// A write alone, which will take no one in (but counts who
		// arrived): its transaction ends with its caller's context.
		txCtx = ops[0].ctx
	}
	failed, err := s.writeTxn(txCtx, key, b.Ops(), b)
	if ops := b.Ops(); len(ops) > 1 {
		return s.afterFailure(ctx, key, ops, failed, err)
	}
	return []error{err}
}

// runWrites runs ops in one transaction of lane key, taking no one in. If
// one of them fails, the transaction rolls back (see afterFailure).
func (s *Service) runWrites(ctx context.Context, key writelane.Key, ops []*writeOp) []error {
	if len(ops) == 1 {
		_, err := s.writeTxn(ops[0].ctx, key, ops, nil)
		return []error{err}
	}
	failed, err := s.writeTxn(ctx, key, ops, nil)
	return s.afterFailure(ctx, key, ops, failed, err)
}

// afterFailure answers ops, whose shared transaction ended with err (in
// ops[failed]'s function if failed >= 0): when it failed, the writes
// before the failed one run again together, the failed one alone (so that
// it gets the answer it would have had alone: its error, or success if the
// failure came from a write before it), and those after it together; if
// the failure was no write's (the lock, the commit), each runs alone.
func (s *Service) afterFailure(ctx context.Context, key writelane.Key, ops []*writeOp, failed int, err error) []error {
	errs := make([]error, len(ops))
	if err != nil && s.tel.metrics {
		s.tel.writeRetries.Add(ctx, int64(len(ops)), laneAddAttrs[laneKind(key)]...)
	}
	switch {
	case err == nil:
	case failed < 0:
		for i, op := range ops {
			_, errs[i] = s.writeTxn(op.ctx, key, ops[i:i+1], nil)
		}
	default:
		copy(errs, s.runWrites(ctx, key, ops[:failed]))
		_, errs[failed] = s.writeTxn(ops[failed].ctx, key, ops[failed:failed+1], nil)
		copy(errs[failed+1:], s.runWrites(ctx, key, ops[failed+1:]))
	}
	return errs
}

// writeTxn is one transaction of lane key running ops and, when b is not
// nil (ops are b's), the writes of b's lane that arrived while it waited
// for its lock: as many as b expects, for which it reserves message IDs
// with the lock. When it fails in one of the ops' functions, failed is
// that op's index in b.Ops() (else -1).
func (s *Service) writeTxn(ctx context.Context, key writelane.Key, ops []*writeOp, b *writelane.Batch[*writeOp]) (failed int, err error) {
	failed = -1
	kind := laneKind(key)
	var start time.Time
	if s.tel.metrics || s.tel.traces {
		start = s.writeStarts(ctx, kind, ops)
		var sp trace.Span
		ctx, sp = s.span(ctx, "chat.write.transaction")
		defer func() {
			sp.SetAttributes(attribute.Int("chat.write.batch.size", len(ops)))
			endSpan(sp, err)
			if s.tel.metrics {
				s.tel.writeBatch.Record(ctx, int64(len(ops)), laneAttrs[kind]...)
				s.tel.writeHeld.Record(ctx, since(start), laneAttrs[kind]...)
			}
		}()
	}
	var runs []*writeTx
	err = s.store.InTx(ctx, func(st storage.Store) error {
		expect := 0
		if b != nil {
			expect = b.Expect()
		}
		ids := &reservedIDs{}
		var err error
		if ids.free, err = s.lockLane(ctx, st, key, len(ops)+expect); err != nil {
			return err
		}
		if b != nil {
			joined := b.Join(expect)
			s.writesJoined(ctx, kind, joined)
			ops = b.Ops()
		}
		runs = make([]*writeTx, len(ops))
		for i, op := range ops {
			w := &writeTx{realmID: key.Realm, svc: s, ids: ids, left: len(ops) - i}
			w.Store = unreadWatch{Store: st, t: &w.unread}
			if err := op.fn(w); err != nil {
				failed = i
				return err
			}
			if err := s.publishInTx(ctx, st, w); err != nil {
				return err
			}
			runs[i] = w
		}
		return nil
	})
	if err != nil {
		return failed, err
	}
	for i, op := range ops {
		op.done = runs[i]
	}
	return -1, nil
}

// writeStarts records, as a transaction of ops starts, how long each of
// them waited for it, and returns the start time.
func (s *Service) writeStarts(ctx context.Context, kind int, ops []*writeOp) time.Time {
	start := time.Now()
	if !s.tel.metrics {
		return start
	}
	for _, op := range ops {
		s.tel.writeWait.Record(ctx, start.Sub(op.queued).Seconds(), laneAttrs[kind]...)
	}
	return start
}

// writesJoined records the writes a transaction took in once it held its
// lock: how long each waited, and how many joined.
func (s *Service) writesJoined(ctx context.Context, kind int, ops []*writeOp) {
	if !s.tel.metrics || len(ops) == 0 {
		return
	}
	now := time.Now()
	for _, op := range ops {
		s.tel.writeWait.Record(ctx, now.Sub(op.queued).Seconds(), laneAttrs[kind]...)
	}
	s.tel.writeJoined.Add(ctx, int64(len(ops)), laneAddAttrs[kind]...)
}

// publishInTx hands w's events and invalidations to the event bus, in
// its transaction.
func (s *Service) publishInTx(ctx context.Context, st storage.Store, w *writeTx) (err error) {
	if s.tel.traces {
		var sp trace.Span
		ctx, sp = s.span(ctx, "chat.events.publish", attribute.Int("chat.events", len(w.events)))
		defer func() { endSpan(sp, err) }()
	}
	payload, err := s.busPayload(w)
	if err != nil || payload == nil {
		return err
	}
	return st.PublishEvents(ctx, payload)
}

// lockLane takes the database's locks of lane key (see lockLane), in a
// span of its own and measured when telemetry is on.
func (s *Service) lockLane(ctx context.Context, st storage.Store, key writelane.Key, n int) (ids []int64, err error) {
	if !s.tel.metrics && !s.tel.traces {
		return lockLane(ctx, st, key, n)
	}
	start := time.Now()
	ctx, sp := s.span(ctx, "chat.write.lock")
	ids, err = lockLane(ctx, st, key, n)
	endSpan(sp, err)
	if s.tel.metrics {
		s.tel.writeLock.Record(ctx, since(start), laneAttrs[laneKind(key)]...)
	}
	return ids, err
}

// lockLane takes the database's locks of lane key. A lane's writes are
// messages: it reserves an ID for each of the n writes (where the
// database reserves IDs) in the same round trip.
func lockLane(ctx context.Context, st storage.Store, key writelane.Key, n int) ([]int64, error) {
	switch {
	case key.Realm == 0:
		return nil, nil
	case key.Lane == 0:
		return nil, st.LockRealm(ctx, key.Realm)
	default:
		return st.LockLane(ctx, key.Realm, key.Lane, n)
	}
}

// afterWrites finishes the committed writes, once their lane is free for
// the next transaction (a sink may write again): caches, after-commit
// functions and the local sinks, in order.
func (s *Service) afterWrites(_ context.Context, ops []*writeOp, errs []error) {
	for i, op := range ops {
		if errs[i] != nil || op.done == nil {
			continue
		}
		w := op.done
		if !w.callersKept {
			s.records.bump(w.realmID)
		}
		if len(w.forgotten) > 0 {
			s.messages.forget(w.forgotten)
		}
		s.received.apply(w.realmID, &w.received)
		s.unread.apply(w.realmID, &w.unread)
		for _, fn := range w.after {
			fn()
		}
		if len(w.events) > 0 && len(s.sinks) > 0 {
			_, sp := s.span(op.ctx, "chat.publish", attribute.Int("chat.events", len(w.events)))
			s.publish(w.events)
			sp.End()
		}
	}
}

// Lanes of an organization other than lane 0, by what they serialize.
const (
	laneChannel uint64 = 1 << 62
	laneDirect  uint64 = 2 << 62
)

// channelLane is the lane of a channel's messages.
func channelLane(realmID, streamID int64) writelane.Key {
	return writelane.Key{Realm: realmID, Lane: laneChannel | uint64(streamID)&(1<<62-1)}
}

// directLane is the lane of a direct conversation's messages.
func directLane(realmID, conversationID int64) writelane.Key {
	return writelane.Key{Realm: realmID, Lane: laneDirect | uint64(conversationID)&(1<<62-1)}
}

// writeLimit is the store's limit on open write transactions (0: none).
func writeLimit(store storage.Store) int {
	if l, ok := store.(storage.WriteLimiter); ok {
		return l.MaxConcurrentWrites()
	}
	return 0
}
