// Package bunstore is the one implementation of storage.Store, built on bun
// (github.com/uptrace/bun). The same code serves SQLite, the embedded
// default, and PostgreSQL, for deployments that outgrow one machine; the
// record types of package storage are used directly as bun models.
//
// # Opening
//
// Open picks the database from the DSN:
//
//	postgres://user:pass@host:5432/db?sslmode=disable   PostgreSQL (also postgresql://)
//	/var/lib/teamchat/chat.db                          SQLite file, created if missing
//	file:/var/lib/teamchat/chat.db?cache=private        SQLite file: URI
//
// OpenSQLite and OpenPostgres open one kind explicitly; OpenPostgres takes
// WithSchema to put the tables in a given (existing) schema through the
// connection's search_path. Every Open applies the pending migrations
// (migrations.go) with bun's migrate package, which records them in the
// bun_migrations table: opening an up-to-date database changes nothing.
// Migrations are hand-written SQL files, one pair (up, down) per
// migration, embedded from migrations/, with a per-dialect substitution
// for the few spelling differences (the auto-increment primary key) and,
// where SQL cannot compute a value the same way on both dialects, a named
// Go step; never generated from the Go models. On PostgreSQL concurrent
// openers take turns through an advisory lock.
//
// Everything else that differs between the dialects (DDL tokens, the
// realm write lock, bytewise ordering; full-text search and notifications
// to come) is one dialectOps value per dialect, in dialect_sqlite.go and
// dialect_postgres.go; the SQLite driver itself (cgo) is in sqlite.go,
// left out by the nosqlite build tag.
//
// # SQLite connections
//
// SQLite allows one writer at a time, so a Store holds two bun.DBs on the
// same file:
//
//   - the writer: exactly one connection, WAL journal, foreign keys on,
//     synchronous=NORMAL, a 5 s busy timeout and BEGIN IMMEDIATE
//     transactions. Every write, and everything inside InTx, runs here;
//     concurrent writers queue for the connection instead of failing
//     with SQLITE_BUSY.
//   - the readers: a pool of 4 query-only connections (PRAGMA query_only)
//     for reads outside a transaction. WAL lets them read while the writer
//     writes; they see the last committed state.
//
// Migrations run on the writer before the readers open, so the file and its
// WAL exist when they do. In-memory databases are refused (the readers
// could not see the writer's database). Inside InTx, use the Store passed to
// the callback: a write through the outer Store would wait for the writer
// connection that the transaction holds.
//
// # PostgreSQL connections
//
// One ordinary pool (pgdriver + pgdialect) serves reads and writes.
//
// # Plans without statistics (PostgreSQL)
//
// PostgreSQL plans with the statistics ANALYZE gathers. A table that was
// never analyzed (a database created or filled minutes ago: a new
// organization, one just moved to PostgreSQL) is planned with fixed
// guesses: every equality keeps 0.5% of the rows, a pair of bounds on one
// column 0.5% again, and any estimate under one row counts as one. So
// every index whose columns a query fixes looks as good as another, the
// smallest wins, and a window of the newest 50 messages was planned as a
// sort of every message in scope (a twelfth of the speed, under load, of
// the same window after ANALYZE). The hot statements are therefore written
// so that one index is the only sensible plan, whatever the estimates:
//
//   - a window of history whose filter keeps most messages is read arm by
//     arm (window_postgres.go): a LATERAL seek per channel and per
//     conversation of the reader, and the reader's historical rows, each
//     in the order of its own index and stopping at the window's size,
//     merged by ID; a first pass bounds the scans by the window's place
//     among each arm's first messages, so its cost is about two seeks per
//     arm and the window. Windows of searches, of conditions few messages
//     meet, and of negations that may fail a whole arm (in:home) keep one
//     query; either way a window's scope keeps only the arms its filter
//     can match (scopeOf);
//   - a window shown to its reader comes with the reader's rows and read
//     ranges in the same statement (window_state.go): the reader's rows as
//     row comparisons led by the user, which only the primary key can take
//     (the message's index would read every user's row of the message);
//   - an equality on every column of an index's prefix, the near ID bound
//     plain, the far one a row comparison led by the last equality column
//     ((m.stream_id, m.id) > (sid, lo)), which only an index with that
//     column just before the ID can use: two plain bounds on the ID would
//     let the organization's (realm_id, id) index look as good. PostgreSQL
//     15 stops a scan at a row comparison only where its first column
//     fails, so a scan that may run out of rows before its LIMIT (the
//     unread messages of a span, dialectOps.unreadAggregates) reads the
//     rest of the channel past a far row-comparison bound: there the far
//     bound is plain and the near one, where the scan starts, is the row
//     comparison, for spans whose near end is the channel's end;
//   - a newest or oldest ID is ORDER BY ... LIMIT 1, never max() (which
//     the planner may compute over a whole channel);
//   - a list of IDs is bounded by its span with row comparisons (idSpan),
//     or, for messages, checked against the realm on each row rather
//     than by the realm's index: the planner otherwise answered it by
//     reading the user's or the organization's rows and filtering;
//   - a query driven by a user's rows looks their messages up in a LATERAL
//     subquery (rowDriven), so that a channel's index cannot drive it;
//   - where a query's equalities had no index of their own, migration 0030
//     gives them one (read ranges by channel and user, notifications by
//     kind and due time), and a claim picks its rows once, in a
//     MATERIALIZED CTE.
//
// The store's connections run without JIT compilation (jit = off unless
// the DSN sets it): PostgreSQL compiles a statement whose estimated cost
// passes a threshold, which an estimate without statistics, or a LATERAL
// subquery costed per row, easily passes, and compiling takes hundreds of
// milliseconds to seconds, for statements that run in milliseconds.
//
// TestPostgresHotPlansWithoutStatistics builds a never-analyzed
// organization of 40,000 messages and checks each hot statement's custom
// and generic plans: its index, no large sequential scan, and the rows it
// reads bounded by its answer (then again after ANALYZE).
//
// The other statements are planned with statistics, and a PostgreSQL
// Store makes sure the tables it grows have them (analyze_postgres.go):
// every 30 seconds, in the background, it reads PostgreSQL's row counts
// of its schema's tables and analyzes a table never analyzed once it holds
// 1,000 rows, or one changed by as many rows as it held at its last
// analysis, when autovacuum (which analyzes on its own schedule) has not.
// Servers sharing the database take turns; a table whose autovacuum is
// off is left to the operator. Close stops it.
//
// # Errors
//
// errors.go translates driver errors, and is the only place that does:
// no rows gives storage.ErrNotFound, a unique violation storage.ErrConflict,
// and a foreign key violation (a referenced realm, user or group that does
// not exist in the realm) storage.ErrNotFound. Other errors are wrapped
// with the operation's name.
//
// # Realm scoping in the schema
//
// Every row carries realm_id. Users and groups are unique by (realm_id, id)
// and rows referring to them (bot owner, group creator, members, subgroups)
// use composite foreign keys on (realm_id, ...), so the database itself
// refuses a reference to another realm's user or group. Case-insensitive
// names (user emails, channel, profile field and topic names) are stored
// as given next to a key column holding storage.Fold of the value
// (email_key, name_key, topic_key), written by the store on every insert
// and on every update of the value; unique indexes and lookups use the
// keys, so non-ASCII letters fold the same on both dialects whatever the
// database's locale (SQLite's lower() folds only ASCII). Realm hosts,
// which are ASCII (internationalized names arrive as punycode) and stored
// in lower case by the Service, keep a unique index on lower(host).
// Group names are unique per realm through a partial index that leaves
// anonymous groups (empty name) out. Drafts, profile field values and
// pending email changes refer to their user (and a value to its field)
// the same way, with ON DELETE CASCADE; a user has at most one pending
// email change (unique (realm_id, user_id)), and confirmation keys are
// unique per realm.
//
// Channels (the streams table) are unique per realm by name_key and
// refer to their creator like groups do. Subscriptions, topic visibility
// policies (user_topics) and subscription periods refer to their user and
// channel (a period to its subscription) with composite foreign keys and
// ON DELETE CASCADE. An unsubscribed user keeps the subscription row,
// inactive, with its settings; each active span is a period, and a
// partial unique index allows one open period (ended_at NULL) per
// subscription. Topic policies are unique by
// (user_id, stream_id, topic_key), the target of SetUserTopic's
// upsert.
//
// Messages are stored once (messages), whatever their number of readers:
// a channel message names its channel and topic (with topic_key), a
// direct message its conversation (direct_conversations, one per set of
// participants, with direct_conversation_members). Per-user state is
// sparse (user_messages: a row per participant of a direct message, and
// for a channel message only where a reader's flags differ from the
// default), and channel read state is ranges of message IDs per user and
// channel (read_ranges). Message IDs come from one sequence, so a
// subscription period's bounds, read by Subscribe and Unsubscribe inside
// their transaction as the newest message ID, say which messages the
// period covers.
//
// Full-text search (migration 0007) indexes each message's topic and the
// text of its rendered content, folded: an FTS4 table with porter
// stemming on SQLite (what go-sqlite3 compiles without build tags), a
// tsvector column with a GIN index and the english configuration on
// PostgreSQL. Every word and quoted phrase of a search must match.
//
// The exceptions are the group settings of realms (CanCreateBotsGroupID,
// CanCreateWriteOnlyBotsGroupID), of user groups (CanAddMembersGroupID,
// CanJoinGroupID, ...) and of channels (CanAddSubscribersGroupID, ...):
// plain BIGINT NOT NULL DEFAULT 0 columns without a foreign key, 0 meaning
// not set, so the caller must only write 0 or a group of the same realm.
// Migrations 0002, 0003 and 0004 in migrations.go explain why (SQLite
// cannot add a composite foreign key to an existing table; the channel
// settings follow for one rule).
//
// # Tests
//
// OpenTestSQLite gives a Store on a temporary file. OpenTestPostgres gives
// a Store on a fresh schema (random name, dropped with CASCADE when the test
// ends) of the database named by the TEAMCHAT_POSTGRES_DSN environment
// variable, for example
//
//	TEAMCHAT_POSTGRES_DSN='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' go test ./...
//
// Without that variable PostgreSQL tests are skipped, unless
// TEAMCHAT_REQUIRE_POSTGRES=1 (set it in CI), which makes them fail instead.
// The conformance suite both dialects pass is storage/storagetest.
package bunstore
