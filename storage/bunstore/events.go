package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/teamchat/chat/storage"
)

// The event bus (storage.EventStore).
//
// On SQLite every Service shares one process with the database's only
// writer, so the bus is in memory: a transaction's payloads are handed to
// the listeners while the commit is still serialized (localBus.mu), which
// orders them as the commits are, and a read snapshot notes how many
// event-bearing commits it contains under the same lock.
//
// On PostgreSQL the bus is LISTEN/NOTIFY (events_postgres.go): a payload
// is sent with pg_notify inside the transaction, so it is delivered only if
// and after the transaction commits, in commit order, to every listening
// server. A transaction's token is its transaction ID and a snapshot is
// pg_current_snapshot(), so Snapshot.Includes is PostgreSQL's own
// visibility rule.

// localBus is the in-process bus of a SQLite Store, shared with the
// Store's transactions.
type localBus struct {
	mu        sync.Mutex // held around each event-bearing commit and each snapshot start
	committed uint64     // event-bearing commits so far (the last token)
	listeners []*busListener
}

// busListener is one ListenEvents call: batches wait in an unbounded
// queue so that a commit never waits for a slow listener.
type busListener struct {
	mu      sync.Mutex
	queue   []storage.EventBatch
	wake    chan struct{}
	stopped bool
}

func (l *busListener) push(b storage.EventBatch) {
	l.mu.Lock()
	if !l.stopped {
		l.queue = append(l.queue, b)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *busListener) run(ctx context.Context, fn func(storage.EventBatch)) {
	for {
		select {
		case <-ctx.Done():
			l.mu.Lock()
			l.stopped, l.queue = true, nil
			l.mu.Unlock()
			return
		case <-l.wake:
		}
		for {
			l.mu.Lock()
			batch := l.queue
			l.queue = nil
			l.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			for _, b := range batch {
				if ctx.Err() != nil {
					break
				}
				fn(b)
			}
		}
	}
}

// txEvents are the payloads a transaction published, delivered on commit.
type txEvents struct {
	payloads [][]byte
	// xid is the PostgreSQL transaction's ID once a lock statement has
	// read it: notifications can then go out without a round trip.
	xid string
}

// PublishEvents implements storage.EventStore.
func (s *Store) PublishEvents(ctx context.Context, payload []byte) error {
	if !s.inTx || s.pending == nil {
		return errors.New("bunstore: PublishEvents outside a write transaction")
	}
	if s.ops.name == DialectPostgres {
		return s.notifyPostgres(ctx, payload)
	}
	s.pending.payloads = append(s.pending.payloads, payload)
	return nil
}

// ListenEvents implements storage.EventStore.
func (s *Store) ListenEvents(ctx context.Context, fn func(storage.EventBatch)) error {
	if s.inTx {
		return errors.New("bunstore: ListenEvents on a transaction")
	}
	if s.ops.name == DialectPostgres {
		return s.listenPostgres(ctx, fn)
	}
	l := &busListener{wake: make(chan struct{}, 1)}
	s.bus.mu.Lock()
	s.bus.listeners = append(s.bus.listeners, l)
	s.bus.mu.Unlock()
	go func() {
		l.run(ctx, fn)
		s.bus.mu.Lock()
		for i, x := range s.bus.listeners {
			if x == l {
				s.bus.listeners = append(s.bus.listeners[:i], s.bus.listeners[i+1:]...)
				break
			}
		}
		s.bus.mu.Unlock()
	}()
	return nil
}

// commitLocal commits a SQLite transaction that published events and hands
// them to the listeners, in commit order.
func (s *Store) commitLocal(tx interface{ Commit() error }, ev *txEvents) error {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	if err := tx.Commit(); err != nil {
		return err
	}
	s.bus.committed++
	b := storage.EventBatch{Token: s.bus.committed, Payloads: ev.payloads}
	for _, l := range s.bus.listeners {
		l.push(b)
	}
	return nil
}

// ReadSnapshot implements storage.EventStore.
func (s *Store) ReadSnapshot(ctx context.Context, fn func(storage.Store, storage.Snapshot) error) error {
	if s.inTx {
		return errors.New("bunstore: ReadSnapshot on a transaction")
	}
	pg := s.ops.name == DialectPostgres
	db := s.reader
	opts := &sql.TxOptions{ReadOnly: true}
	if pg {
		db = s.writer
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return wrapErr("begin snapshot", err)
	}
	defer func() { _ = tx.Rollback() }()
	var snap storage.Snapshot
	if pg {
		// The first statement takes the transaction's snapshot.
		var text string
		if err := tx.QueryRowContext(ctx, "SELECT pg_current_snapshot()::text").Scan(&text); err != nil {
			return wrapErr("snapshot", err)
		}
		if snap, err = parsePgSnapshot(text); err != nil {
			return err
		}
	} else {
		// A read transaction's snapshot starts at its first read; taking
		// it under the bus lock pins which commits it contains.
		s.bus.mu.Lock()
		var one int
		err := tx.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM realms LIMIT 1)").Scan(&one)
		n := s.bus.committed
		s.bus.mu.Unlock()
		if err != nil {
			return wrapErr("snapshot", err)
		}
		snap = storage.Snapshot{Xmin: n + 1, Xmax: n + 1}
	}
	return fn(&Store{ops: s.ops, w: tx, r: tx, hooks: s.hooks, inTx: true, bus: s.bus, channel: s.channel}, snap)
}

// parsePgSnapshot reads pg_snapshot's text form "xmin:xmax:xip,xip".
func parsePgSnapshot(text string) (storage.Snapshot, error) {
	parts := strings.Split(text, ":")
	if len(parts) != 3 {
		return storage.Snapshot{}, fmt.Errorf("bunstore: snapshot %q", text)
	}
	var snap storage.Snapshot
	var err error
	if snap.Xmin, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
		return snap, fmt.Errorf("bunstore: snapshot %q: %w", text, err)
	}
	if snap.Xmax, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return snap, fmt.Errorf("bunstore: snapshot %q: %w", text, err)
	}
	if parts[2] != "" {
		for x := range strings.SplitSeq(parts[2], ",") {
			id, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return snap, fmt.Errorf("bunstore: snapshot %q: %w", text, err)
			}
			snap.Running = append(snap.Running, id)
		}
	}
	return snap, nil
}
