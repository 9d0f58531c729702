-- Migration 0024 adds presence: one row per user who ever reported it
-- (the reference's UserPresence), and each realm's presence sequence,
-- whose values order the rows' changes for incremental fetches.

CREATE TABLE presence_sequences (
	realm_id BIGINT NOT NULL PRIMARY KEY REFERENCES realms (id),
	last_update_id BIGINT NOT NULL
);

--bun:split

CREATE TABLE user_presences (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL PRIMARY KEY,
	last_active_time BIGINT,
	last_connected_time BIGINT,
	last_update_id BIGINT NOT NULL,
	CONSTRAINT user_presences_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX user_presences_update_idx ON user_presences (realm_id, last_update_id);

--bun:split

ALTER TABLE realms ADD COLUMN presence_disabled BOOLEAN NOT NULL DEFAULT FALSE;
