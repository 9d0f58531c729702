DROP TABLE saved_event_queues;

--bun:split

DROP INDEX queue_moves_server_idx;

--bun:split

DROP TABLE queue_moves;

--bun:split

DROP TABLE fleet_secrets;

--bun:split

DROP TABLE servers;
