-- Migration 0025 adds user_mutes: who muted whom (the reference's
-- MutedUser). A muted sender's messages count as read for the muter: the
-- unread queries consult this table rather than a row per message.

CREATE TABLE user_mutes (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	muted_user_id BIGINT NOT NULL,
	date_muted BIGINT NOT NULL,
	PRIMARY KEY (user_id, muted_user_id),
	CONSTRAINT user_mutes_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT user_mutes_muted_fkey FOREIGN KEY (realm_id, muted_user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX user_mutes_muted_idx ON user_mutes (realm_id, muted_user_id);
