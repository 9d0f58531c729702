-- Migration 0023 adds scheduled messages: messages a user asks to be sent
-- later, to a channel's topic (stream_id, topic) or to users (recipients,
-- a JSON list of user IDs). A message is pending until it is delivered
-- (delivered, delivered_message_id) or fails (failed, failure_message);
-- version counts the changes of an undelivered one. Two partial indexes
-- serve the two readers: a user's undelivered messages by delivery time,
-- and the scheduler's pending messages of every organization in delivery
-- order, which it reads from the front (so its cost does not grow with
-- the messages scheduled for later or already sent).

CREATE TABLE scheduled_messages (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	sender_id BIGINT NOT NULL,
	stream_id BIGINT,
	topic TEXT NOT NULL DEFAULT '',
	recipients TEXT NOT NULL DEFAULT '',
	content TEXT NOT NULL,
	rendered_content TEXT NOT NULL,
	scheduled_timestamp BIGINT NOT NULL,
	read_by_sender BOOLEAN NOT NULL DEFAULT FALSE,
	sending_client TEXT NOT NULL DEFAULT '',
	version BIGINT NOT NULL DEFAULT 1,
	delivered BOOLEAN NOT NULL DEFAULT FALSE,
	delivered_message_id BIGINT,
	failed BOOLEAN NOT NULL DEFAULT FALSE,
	failure_message TEXT,
	CONSTRAINT scheduled_messages_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT scheduled_messages_sender_fkey FOREIGN KEY (realm_id, sender_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT scheduled_messages_stream_fkey FOREIGN KEY (realm_id, stream_id)
		REFERENCES streams (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX scheduled_messages_sender_idx ON scheduled_messages (realm_id, sender_id, scheduled_timestamp) WHERE delivered = FALSE;

--bun:split

CREATE INDEX scheduled_messages_due_idx ON scheduled_messages (scheduled_timestamp, id) WHERE delivered = FALSE AND failed = FALSE;
