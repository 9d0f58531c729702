package bunstore

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// isDeadlock recognises PostgreSQL's deadlock abort (which
// ClaimNotifications retries), and nothing else.
func TestIsDeadlock(t *testing.T) {
	s := OpenTestPostgres(t)
	ctx := context.Background()
	_, err := s.writer.ExecContext(ctx, "CREATE TABLE deadlock_t (id int PRIMARY KEY); INSERT INTO deadlock_t VALUES (1), (2)")
	require.NoError(t, err)
	// Two transactions lock the two rows in opposite orders.
	first := make([]*sql.Tx, 2)
	for i := range first {
		first[i], err = s.writer.DB.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = first[i].ExecContext(ctx, "UPDATE deadlock_t SET id = id WHERE id = $1", i+1)
		require.NoError(t, err)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range first {
		wg.Go(func() {
			_, errs[i] = first[i].ExecContext(ctx, "UPDATE deadlock_t SET id = id WHERE id = $1", 2-i)
			if errs[i] != nil {
				_ = first[i].Rollback()
			} else {
				_ = first[i].Commit()
			}
		})
	}
	wg.Wait()
	assert.True(t, isDeadlock(errs[0]) != isDeadlock(errs[1]), "one of the two is the victim: %v, %v", errs[0], errs[1])
	assert.False(t, isDeadlock(nil))
	_, err = s.writer.ExecContext(ctx, "INSERT INTO deadlock_t VALUES (1)")
	assert.False(t, isDeadlock(err), "a unique violation is not a deadlock")
}
