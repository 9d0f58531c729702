-- Migration 0029 lets several app servers on one database serve each
-- other's event queues.
--
-- servers: each running server, where its peers reach it and when it was
-- last seen (a heartbeat every few seconds); a server that stops deletes
-- its row, and rows not seen for a minute are deleted by the others.
-- fleet_secrets: one row, the secret the servers authenticate each other
-- with (made by the first server). queue_moves: queues handed from
-- the server that made them (named in their IDs) to another, as a server
-- stops. saved_event_queues: queues a stopping server saved because no
-- peer was there to take them; the next server to start takes them.

CREATE TABLE servers (
	id {{ID}},
	address TEXT NOT NULL,
	started_at BIGINT NOT NULL,
	seen_at BIGINT NOT NULL,
	draining BOOLEAN NOT NULL DEFAULT FALSE
);

--bun:split

CREATE TABLE fleet_secrets (
	id INTEGER PRIMARY KEY,
	secret TEXT NOT NULL
);

--bun:split

CREATE TABLE queue_moves (
	queue_id TEXT PRIMARY KEY,
	server_id BIGINT NOT NULL,
	moved_at BIGINT NOT NULL
);

--bun:split

CREATE INDEX queue_moves_server_idx ON queue_moves (server_id);

--bun:split

CREATE TABLE saved_event_queues (
	queue_id TEXT PRIMARY KEY,
	realm_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	saved_at BIGINT NOT NULL,
	state TEXT NOT NULL
);
