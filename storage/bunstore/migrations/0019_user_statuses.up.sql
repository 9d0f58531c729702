-- Migration 0019 adds user_statuses: a user's status text and emoji (the
-- reference's UserStatus), one row per user who ever set one.

CREATE TABLE user_statuses (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL PRIMARY KEY,
	status_text TEXT NOT NULL DEFAULT '',
	emoji_name TEXT NOT NULL DEFAULT '',
	emoji_code TEXT NOT NULL DEFAULT '',
	reaction_type TEXT NOT NULL DEFAULT 'unicode_emoji',
	updated_at BIGINT NOT NULL,
	CONSTRAINT user_statuses_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX user_statuses_realm_idx ON user_statuses (realm_id, user_id);
