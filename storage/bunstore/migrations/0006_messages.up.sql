-- Migration 0006 adds messages, stored once, with per-user state only
-- where it differs from the default (../shared/DESIGN.md, "Data model
-- direction"): a send costs the same in a 10-member and a 10,000-member
-- channel.
--
-- messages: one row per message, whatever its number of readers. IDs come
-- from one sequence for the whole database, so they increase in send
-- order across organizations (a subscription period's bounds are such
-- IDs). A channel message has stream_id and a topic (topic_key holds
-- storage.Fold of it, for case-insensitive topic lookups); a direct
-- message has conversation_id instead (the check keeps exactly one of
-- the two). rendered_content is rendered once, at send time. The has_*
-- and is_me_message facts come from the renderer. Mentions that reach
-- many users are facts of the message, not rows per user: a channel
-- wildcard (@**all**) reaches every recipient, a topic wildcard
-- (@**topic**) every recipient who took part in the topic before; the
-- reader's flags are computed from them when read.
--
-- direct_conversations: one row per set of participants (sender
-- included), member_key being their sorted IDs joined by commas, unique
-- per realm; direct_conversation_members lists them, for "DMs with X"
-- lookups by user.
--
-- user_messages: the sparse per-user state, flags being the reference's
-- UserMessage bits (read 1, starred 2, collapsed 4, mentioned 8,
-- stream_wildcard_mentioned 16, topic_wildcard_mentioned 32,
-- has_alert_word 512, historical 1024, is_private 2048). Every
-- participant of a direct message has a row (there are few); a channel
-- message has rows only for readers whose state differs from the
-- default: mentioned, starred, collapsed, alerted, historical. Partial
-- indexes serve is:dm, is:starred and is:mentioned per user.
--
-- read_ranges: which channel messages a user has read, as ranges of
-- message IDs per (user, channel): a channel message m is read when a
-- range of the user and m's channel has first_id <= m.id <= last_id.
-- People read in runs, so the ranges stay few. (Direct messages keep
-- their read bit in user_messages.)
--
-- Every table carries realm_id and refers to users, channels,
-- conversations and messages of its own realm through composite foreign
-- keys; per-user rows go with their user or message (ON DELETE CASCADE).
-- Every index starts with realm_id (every query knows it), so that each
-- referencing column list is an index prefix.

CREATE TABLE direct_conversations (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	member_key TEXT NOT NULL,
	CONSTRAINT direct_conversations_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT direct_conversations_realm_members_key UNIQUE (realm_id, member_key)
);

--bun:split

CREATE TABLE direct_conversation_members (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	conversation_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	PRIMARY KEY (realm_id, conversation_id, user_id),
	CONSTRAINT direct_conversation_members_conversation_fkey FOREIGN KEY (realm_id, conversation_id)
		REFERENCES direct_conversations (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT direct_conversation_members_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX direct_conversation_members_user_idx ON direct_conversation_members (realm_id, user_id, conversation_id);

--bun:split

CREATE TABLE messages (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	sender_id BIGINT NOT NULL,
	stream_id BIGINT,
	conversation_id BIGINT,
	topic TEXT NOT NULL DEFAULT '',
	topic_key TEXT NOT NULL DEFAULT '',
	content TEXT NOT NULL,
	rendered_content TEXT NOT NULL,
	date_sent BIGINT NOT NULL,
	sending_client TEXT NOT NULL DEFAULT '',
	has_link BOOLEAN NOT NULL DEFAULT FALSE,
	has_image BOOLEAN NOT NULL DEFAULT FALSE,
	has_attachment BOOLEAN NOT NULL DEFAULT FALSE,
	is_me_message BOOLEAN NOT NULL DEFAULT FALSE,
	stream_wildcard BOOLEAN NOT NULL DEFAULT FALSE,
	topic_wildcard BOOLEAN NOT NULL DEFAULT FALSE,
	CONSTRAINT messages_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT messages_one_recipient_check CHECK ((stream_id IS NULL) <> (conversation_id IS NULL)),
	CONSTRAINT messages_sender_fkey FOREIGN KEY (realm_id, sender_id)
		REFERENCES users (realm_id, id),
	CONSTRAINT messages_stream_fkey FOREIGN KEY (realm_id, stream_id)
		REFERENCES streams (realm_id, id),
	CONSTRAINT messages_conversation_fkey FOREIGN KEY (realm_id, conversation_id)
		REFERENCES direct_conversations (realm_id, id)
);

--bun:split

CREATE INDEX messages_stream_idx ON messages (realm_id, stream_id, id) WHERE stream_id IS NOT NULL;

--bun:split

CREATE INDEX messages_stream_topic_idx ON messages (realm_id, stream_id, topic_key, id) WHERE stream_id IS NOT NULL;

--bun:split

CREATE INDEX messages_conversation_idx ON messages (realm_id, conversation_id, id) WHERE conversation_id IS NOT NULL;

--bun:split

CREATE INDEX messages_sender_idx ON messages (realm_id, sender_id, id);

--bun:split

CREATE TABLE user_messages (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	message_id BIGINT NOT NULL,
	flags BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (realm_id, user_id, message_id),
	CONSTRAINT user_messages_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT user_messages_message_fkey FOREIGN KEY (realm_id, message_id)
		REFERENCES messages (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX user_messages_message_idx ON user_messages (realm_id, message_id);

--bun:split

CREATE INDEX user_messages_private_idx ON user_messages (realm_id, user_id, message_id) WHERE (flags & 2048) <> 0;

--bun:split

CREATE INDEX user_messages_starred_idx ON user_messages (realm_id, user_id, message_id) WHERE (flags & 2) <> 0;

--bun:split

CREATE INDEX user_messages_mentioned_idx ON user_messages (realm_id, user_id, message_id) WHERE (flags & 56) <> 0;

--bun:split

CREATE TABLE read_ranges (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	stream_id BIGINT NOT NULL,
	first_id BIGINT NOT NULL,
	last_id BIGINT NOT NULL,
	PRIMARY KEY (realm_id, user_id, stream_id, first_id),
	CONSTRAINT read_ranges_order_check CHECK (first_id <= last_id),
	CONSTRAINT read_ranges_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT read_ranges_stream_fkey FOREIGN KEY (realm_id, stream_id)
		REFERENCES streams (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX read_ranges_stream_idx ON read_ranges (realm_id, stream_id);
