-- Migration 0011 readies message actions. Starring or reacting to a
-- channel message one never received gives a "historical" row (flag
-- 1024): a partial index finds a user's historical rows (they join the
-- user's own messages), and another the unread ones among them (marked
-- unread in a subscribed channel), so that unread counts and
-- mark_all_as_read read only unread state. Reactions are one row per
-- (message, user, emoji), in the order they were added; a message's
-- reactions are read by message through the unique key.

CREATE INDEX user_messages_historical_idx ON user_messages (realm_id, user_id, message_id) WHERE (flags & 1024) <> 0;

--bun:split

CREATE INDEX user_messages_unread_historical_idx ON user_messages (realm_id, user_id, message_id) WHERE (flags & 3073) = 1024;

--bun:split

CREATE TABLE reactions (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	message_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	reaction_type TEXT NOT NULL,
	emoji_code TEXT NOT NULL,
	emoji_name TEXT NOT NULL,
	CONSTRAINT reactions_one_key UNIQUE (realm_id, message_id, user_id, reaction_type, emoji_code),
	CONSTRAINT reactions_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT reactions_message_fkey FOREIGN KEY (realm_id, message_id)
		REFERENCES messages (realm_id, id) ON DELETE CASCADE
);
