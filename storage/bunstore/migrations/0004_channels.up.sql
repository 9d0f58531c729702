-- Migration 0004 adds channels (streams), subscriptions with their
-- history (subscription_periods), and per-topic visibility policies
-- (user_topics). All four tables are new, so they follow 0001 and 0002:
-- realm_id on every row, composite foreign keys on (realm_id, ...) so that
-- no row can point into another realm, ON DELETE CASCADE from a user or
-- channel to the rows that belong to it, and an index on every
-- referencing column list.
--
-- streams: the name is unique per realm case-insensitively (a unique index
-- on (realm_id, lower(name)); names are stored as given), and
-- (realm_id, id) is unique so that subscriptions and user topics refer to
-- a channel of their own realm. The creator is a composite reference to
-- users, NULL when unknown. first_message_id and message_retention_days
-- are plain nullable columns (there is no messages table yet). The five
-- permission settings (can_..._group_id) are BIGINT NOT NULL DEFAULT 0
-- without a foreign key, like the realm's and the groups' settings of
-- 0002 and 0003: the record holds them as int64 with 0 meaning not set
-- (which no foreign key would accept), and keeping every group setting of
-- the schema alike keeps one rule for callers: the store does not check
-- these IDs, the caller writes 0 or a group of the same realm.
--
-- subscriptions: one row per (user, channel), kept when the user
-- unsubscribes (active FALSE) so that the settings come back. The primary
-- key is (user_id, stream_id); the unique (realm_id, stream_id, user_id)
-- is both the index that lists a channel's subscribers and the target of
-- the periods' composite foreign key. The notification settings are
-- nullable (NULL inherits the user's default).
--
-- subscription_periods: one row per span of an active subscription,
-- referring to its subscription by (realm_id, stream_id, user_id) (so a
-- period is of the realm of its subscription) with ON DELETE CASCADE. A
-- partial unique index allows at most one open period (ended_at NULL)
-- per subscription; (realm_id, user_id, stream_id, id) lists a user's
-- periods in a channel oldest first and serves the foreign key.
--
-- user_topics: one row per (user, channel, topic) compared
-- case-insensitively: the unique index on
-- (user_id, stream_id, lower(topic_name)) is the target of the upsert of
-- SetUserTopic (ON CONFLICT on an expression index, supported by both
-- PostgreSQL and SQLite) and orders a user's list.

CREATE TABLE streams (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	rendered_description TEXT NOT NULL DEFAULT '',
	invite_only BOOLEAN NOT NULL DEFAULT FALSE,
	is_web_public BOOLEAN NOT NULL DEFAULT FALSE,
	history_public_to_subscribers BOOLEAN NOT NULL DEFAULT FALSE,
	message_retention_days INTEGER,
	date_created BIGINT NOT NULL DEFAULT 0,
	creator_id BIGINT,
	is_archived BOOLEAN NOT NULL DEFAULT FALSE,
	is_default BOOLEAN NOT NULL DEFAULT FALSE,
	first_message_id BIGINT,
	can_add_subscribers_group_id BIGINT NOT NULL DEFAULT 0,
	can_remove_subscribers_group_id BIGINT NOT NULL DEFAULT 0,
	can_administer_channel_group_id BIGINT NOT NULL DEFAULT 0,
	can_send_message_group_id BIGINT NOT NULL DEFAULT 0,
	can_subscribe_group_id BIGINT NOT NULL DEFAULT 0,
	CONSTRAINT streams_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT streams_creator_fkey FOREIGN KEY (realm_id, creator_id)
		REFERENCES users (realm_id, id)
);

--bun:split

CREATE UNIQUE INDEX streams_realm_name_lower_key ON streams (realm_id, lower(name));

--bun:split

CREATE INDEX streams_creator_idx ON streams (realm_id, creator_id) WHERE creator_id IS NOT NULL;

--bun:split

CREATE TABLE subscriptions (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	stream_id BIGINT NOT NULL,
	active BOOLEAN NOT NULL DEFAULT TRUE,
	color TEXT NOT NULL DEFAULT '',
	is_muted BOOLEAN NOT NULL DEFAULT FALSE,
	pin_to_top BOOLEAN NOT NULL DEFAULT FALSE,
	desktop_notifications BOOLEAN,
	email_notifications BOOLEAN,
	push_notifications BOOLEAN,
	audible_notifications BOOLEAN,
	wildcard_mentions_notify BOOLEAN,
	PRIMARY KEY (user_id, stream_id),
	CONSTRAINT subscriptions_realm_stream_user_key UNIQUE (realm_id, stream_id, user_id),
	CONSTRAINT subscriptions_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT subscriptions_stream_fkey FOREIGN KEY (realm_id, stream_id)
		REFERENCES streams (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE TABLE subscription_periods (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	stream_id BIGINT NOT NULL,
	start_message_id BIGINT NOT NULL DEFAULT 0,
	end_message_id BIGINT,
	started_at BIGINT NOT NULL DEFAULT 0,
	ended_at BIGINT,
	CONSTRAINT subscription_periods_subscription_fkey FOREIGN KEY (realm_id, stream_id, user_id)
		REFERENCES subscriptions (realm_id, stream_id, user_id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX subscription_periods_user_stream_idx ON subscription_periods (realm_id, user_id, stream_id, id);

--bun:split

CREATE UNIQUE INDEX subscription_periods_open_key ON subscription_periods (user_id, stream_id) WHERE ended_at IS NULL;

--bun:split

CREATE TABLE user_topics (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	stream_id BIGINT NOT NULL,
	topic_name TEXT NOT NULL,
	visibility_policy INTEGER NOT NULL DEFAULT 0,
	last_updated BIGINT NOT NULL DEFAULT 0,
	CONSTRAINT user_topics_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT user_topics_stream_fkey FOREIGN KEY (realm_id, stream_id)
		REFERENCES streams (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE UNIQUE INDEX user_topics_user_stream_topic_lower_key ON user_topics (user_id, stream_id, lower(topic_name));

--bun:split

CREATE INDEX user_topics_stream_idx ON user_topics (realm_id, stream_id);
