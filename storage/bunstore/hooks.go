package bunstore

import (
	"context"

	"github.com/uptrace/bun"
)

// OnQuery calls fn after every SQL statement the Store runs from now on,
// on the writer and the readers (for tests and tools that bound the work
// of a request by counting its statements). fn must be safe for
// concurrent use.
func (s *Store) OnQuery(fn func(query string)) { s.hooks.add(fn) }

// onStatement calls fn after every SQL statement the Store runs from now
// on, with its arguments: none for bun's queries (their values are in
// the text), the placeholders' values for prepared ones.
func (s *Store) onStatement(fn func(query string, args []any)) { addHook(&s.hooks.withArgs, fn) }

// newQueryHooks returns the Store's hooks, installed in its databases
// once, as they open: bun's list of hooks may not change while queries
// run (the analyzer, the event listener), so functions added later join
// the hooks' own lists instead.
func newQueryHooks(dbs ...*bun.DB) *queryHooks {
	h := &queryHooks{}
	for _, db := range dbs {
		db.AddQueryHook(bunHook{h})
	}
	return h
}

// bunHook passes bun's queries to the hooks.
type bunHook struct{ h *queryHooks }

func (b bunHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (b bunHook) AfterQuery(_ context.Context, ev *bun.QueryEvent) { b.h.ran(ev.Query, ev.Query, nil) }

// Analyze refreshes the database's planner statistics (ANALYZE on both
// dialects). PostgreSQL's autovacuum does it on its own schedule; a host
// that imports many rows at once (or a benchmark that seeds them) calls
// it so that queries are planned for the data as it is.
func (s *Store) Analyze(ctx context.Context) error {
	_, err := s.writer.ExecContext(ctx, "ANALYZE")
	return wrapErr("analyze", err)
}
