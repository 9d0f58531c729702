-- Migration 0016 adds event_payloads: on PostgreSQL, events too large for
-- a NOTIFY payload are stored here and the notification carries the row
-- ID; listeners read them and rows are swept after a few minutes. SQLite
-- delivers events in memory and leaves the table empty.

CREATE TABLE event_payloads (
	id {{ID}},
	created_at BIGINT NOT NULL,
	payload TEXT NOT NULL
);

--bun:split

CREATE INDEX event_payloads_created_idx ON event_payloads (created_at);
