-- Migration 0026 adds outgoing webhooks: each outgoing-webhook bot's
-- service (the reference's Service: base_url, interface, token), and the
-- outbox of deliveries waiting for a deliverer. A deliverer claims rows
-- (claimed_until, claim); the partial index serves its reads of the due
-- rows from the front.

CREATE TABLE bot_services (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	bot_id BIGINT NOT NULL,
	name TEXT NOT NULL,
	base_url TEXT NOT NULL,
	interface INTEGER NOT NULL,
	token TEXT NOT NULL,
	CONSTRAINT bot_services_bot_fkey FOREIGN KEY (realm_id, bot_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX bot_services_bot_idx ON bot_services (realm_id, bot_id);

--bun:split

CREATE TABLE webhook_deliveries (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	bot_id BIGINT NOT NULL,
	service_id BIGINT NOT NULL REFERENCES bot_services (id) ON DELETE CASCADE,
	message_id BIGINT NOT NULL,
	trigger_name TEXT NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0,
	next_attempt_at BIGINT NOT NULL,
	claimed_until BIGINT NOT NULL DEFAULT 0,
	claim TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL
);

--bun:split

CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id);
