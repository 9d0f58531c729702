package bunstore

import (
	"context"

	"github.com/uptrace/bun"
)

// OnQuery calls fn after every SQL statement the Store runs from now on,
// on the writer and the readers (for tests and tools that bound the work
// of a request by counting its statements). fn must be safe for
// concurrent use.
func (s *Store) OnQuery(fn func(query string)) {
	s.hooks.add(fn)
	h := queryHook(fn)
	for _, db := range []*bun.DB{s.writer, s.reader} {
		if db != nil {
			db.AddQueryHook(h)
		}
	}
}

// onStatement calls fn after every SQL statement the Store runs from now
// on, with its arguments: none for bun's queries (their values are in
// the text), the placeholders' values for prepared ones.
func (s *Store) onStatement(fn func(query string, args []any)) {
	addHook(&s.hooks.withArgs, fn)
	h := queryHook(func(q string) { fn(q, nil) })
	for _, db := range []*bun.DB{s.writer, s.reader} {
		if db != nil {
			db.AddQueryHook(h)
		}
	}
}

type queryHook func(query string)

func (h queryHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (h queryHook) AfterQuery(_ context.Context, ev *bun.QueryEvent) { h(ev.Query) }

// Analyze refreshes the database's planner statistics (ANALYZE on both
// dialects). PostgreSQL's autovacuum does it on its own schedule; a host
// that imports many rows at once (or a benchmark that seeds them) calls
// it so that queries are planned for the data as it is.
func (s *Store) Analyze(ctx context.Context) error {
	_, err := s.writer.ExecContext(ctx, "ANALYZE")
	return wrapErr("analyze", err)
}
