package storage

import (
	"context"
	"slices"
)

// EventStore carries the events of committed writes from the transaction
// that made them to every Service on the same database (the event bus),
// and gives readers a snapshot that says which of those writes it sees.
//
// Together they let a client's initial state and its event queue meet
// exactly: a queue drops the events whose writes its snapshot already
// contains (Snapshot.Includes) and keeps the others, so nothing is lost or
// seen twice.
type EventStore interface {
	// PublishEvents, called on the Store of a write transaction, records
	// payload for delivery to every listener after the transaction commits;
	// a rolled-back transaction delivers nothing. A transaction's payloads
	// arrive together, in the order published.
	PublishEvents(ctx context.Context, payload []byte) error
	// ListenEvents starts delivering every batch committed from now on to
	// fn, in commit order, one call at a time on a goroutine of its own,
	// until ctx ends. It returns once listening has started: a write that
	// commits after it returns is delivered. fn must not block for long.
	ListenEvents(ctx context.Context, fn func(EventBatch)) error
	// ReadSnapshot runs fn in a read-only transaction: every read through
	// the Store passed to fn sees the database as of one instant, and the
	// Snapshot says which committed writes that instant includes.
	ReadSnapshot(ctx context.Context, fn func(Store, Snapshot) error) error
}

// EventBatch is what one committed transaction published.
type EventBatch struct {
	// Token identifies the transaction for Snapshot.Includes.
	Token uint64
	// Payloads are the transaction's PublishEvents payloads, in order.
	Payloads [][]byte
	// Gap reports that batches may have been lost before this one (the
	// listener's connection to the database broke and was restored);
	// a Gap batch carries no payloads.
	Gap bool
}

// Snapshot says which committed transactions a read snapshot contains, in
// the shape of a PostgreSQL snapshot: every token below Xmin is included,
// none at or above Xmax, and between them all but those listed in Running.
type Snapshot struct {
	Xmin, Xmax uint64
	Running    []uint64
}

// Includes reports whether the writes of the transaction with this token
// are visible in the snapshot.
func (s Snapshot) Includes(token uint64) bool {
	if token < s.Xmin {
		return true
	}
	return token < s.Xmax && !slices.Contains(s.Running, token)
}
