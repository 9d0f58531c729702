package bunstore

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// Statements kept for the next one: a transaction that only writes is one
// round trip with its commit; its statements run in order; a failure of a
// kept statement fails the transaction (at the statement that carried it)
// and nothing of it commits; a transaction that did nothing costs nothing.
func TestDeferredStatements(t *testing.T) {
	s := OpenTestPostgres(t)
	ctx := context.Background()
	_, err := s.writer.ExecContext(ctx, "CREATE TABLE defer_t (id int PRIMARY KEY)")
	require.NoError(t, err)
	count := func() int {
		var n int
		require.NoError(t, s.writer.NewRaw("SELECT count(*) FROM defer_t").Scan(ctx, &n))
		return n
	}
	insert := func(tx storage.Store, id int) error {
		_, err := tx.(*Store).w.NewRaw("INSERT INTO defer_t VALUES (?)", id).Exec(deferrable(ctx))
		return err
	}
	trips := func(fn func(tx storage.Store) error) (int64, error) {
		before := s.pgTrips.Load()
		err := s.InTx(ctx, fn)
		return s.pgTrips.Load() - before, err
	}

	n, err := trips(func(tx storage.Store) error {
		if err := insert(tx, 1); err != nil {
			return err
		}
		return insert(tx, 2)
	})
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "BEGIN, both inserts and COMMIT in one round trip")
	assert.Equal(t, 2, count())

	n, err = trips(func(tx storage.Store) error {
		if err := insert(tx, 3); err != nil {
			return err
		}
		var seen int
		// A read goes out with what was kept before it, in order.
		if err := tx.(*Store).r.NewRaw("SELECT count(*) FROM defer_t").Scan(ctx, &seen); err != nil {
			return err
		}
		assert.Equal(t, 3, seen, "the read sees the kept insert")
		return nil
	})
	require.NoError(t, err)
	assert.EqualValues(t, 2, n, "the read with the kept statements, then COMMIT")

	_, err = trips(func(tx storage.Store) error {
		if err := insert(tx, 4); err != nil {
			return err
		}
		return insert(tx, 1) // a duplicate: fails when sent
	})
	require.Error(t, err)
	assert.True(t, errors.Is(err, storage.ErrConflict), "translated like any statement's error: %v", err)
	assert.Equal(t, 3, count(), "nothing of the failed transaction committed")

	n, err = trips(func(storage.Store) error { return nil })
	require.NoError(t, err)
	assert.Zero(t, n, "a transaction that did nothing never reached the server")

	// A kept statement failing under a later read fails the read, and the
	// transaction rolls back.
	_, err = trips(func(tx storage.Store) error {
		if err := insert(tx, 2); err != nil {
			return err
		}
		var seen int
		return tx.(*Store).r.NewRaw("SELECT count(*) FROM defer_t").Scan(ctx, &seen)
	})
	require.Error(t, err)
	assert.Equal(t, 3, count())
	// The connection is usable again.
	_, err = trips(func(tx storage.Store) error { return insert(tx, 5) })
	require.NoError(t, err)
	assert.Equal(t, 4, count())
}
