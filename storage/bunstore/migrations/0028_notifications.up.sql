-- Migration 0028 adds missed-message notifications (email and push).
--
-- pending_notifications holds each notification from the transaction of
-- the message that causes it until a deliverer sends (or drops) it: one
-- row per (message, recipient, kind), kind 1 email, 2 push, and 3 for
-- a channel-wide mention, which a deliverer expands a page of subscribers
-- at a time (user_id 0, cursor_id the last user done). A deliverer claims
-- rows (claimed_until, claim) as for outgoing webhooks.
--
-- A send finds the few subscribers that its channel's messages may
-- concern by their settings through three partial or narrow indexes,
-- never by listing the channel's subscribers: subscriptions that turn
-- email or push notifications on; users whose user-level defaults for
-- channel messages are on (users.stream_notifications: 1 email, 2 push,
-- kept by package chat beside the settings document, and filled here
-- from it); and the topic's policies (followed topics).

CREATE TABLE pending_notifications (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	message_id BIGINT NOT NULL,
	kind INTEGER NOT NULL,
	trigger_name TEXT NOT NULL DEFAULT '',
	mentioned_group_id BIGINT NOT NULL DEFAULT 0,
	due_at BIGINT NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0,
	claimed_until BIGINT NOT NULL DEFAULT 0,
	claim TEXT NOT NULL DEFAULT '',
	cursor_id BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);

--bun:split

CREATE UNIQUE INDEX pending_notifications_message_user_kind_key ON pending_notifications (message_id, user_id, kind);

--bun:split

CREATE INDEX pending_notifications_due_idx ON pending_notifications (due_at, id);

--bun:split

CREATE INDEX pending_notifications_user_idx ON pending_notifications (user_id, kind);

--bun:split

ALTER TABLE users ADD COLUMN stream_notifications INTEGER NOT NULL DEFAULT 0;

--bun:split

--step:stream_notification_defaults

--bun:split

CREATE INDEX users_stream_notifications_idx ON users (realm_id, id) WHERE stream_notifications <> 0;

--bun:split

CREATE INDEX subscriptions_notifications_idx ON subscriptions (realm_id, stream_id, user_id) WHERE email_notifications OR push_notifications;

--bun:split

CREATE INDEX user_topics_topic_idx ON user_topics (realm_id, stream_id, topic_key);
