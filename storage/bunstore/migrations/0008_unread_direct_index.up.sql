-- Migration 0008: a partial index of each user's unread direct messages
-- (rows with is_private set and read unset), so that finding the first
-- unread one reads only unread rows, however many were read.

CREATE INDEX user_messages_unread_private_idx ON user_messages (realm_id, user_id, message_id) WHERE (flags & 2049) = 2048;
