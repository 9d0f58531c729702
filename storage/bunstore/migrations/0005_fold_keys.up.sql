-- Migration 0005 makes case-insensitive names compare the same on both
-- dialects. Until now the unique indexes and lookups used lower(), which
-- folds only ASCII on SQLite and follows the database's locale on
-- PostgreSQL: "ÉQUIPE" and "équipe" were two channels on one and a
-- conflict on the other. Each case-insensitive column gets a key column
-- holding storage.Fold of its value, computed in Go (by the store on every
-- write, and here by the fold_keys step for existing rows); the unique
-- indexes and lookups move to the keys.
--
-- The step refuses to go on (and the migration rolls back) when existing
-- rows that lower() kept apart fold to the same key, naming them: rename
-- one and start again.

ALTER TABLE users ADD COLUMN email_key TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE streams ADD COLUMN name_key TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE custom_profile_fields ADD COLUMN name_key TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE user_topics ADD COLUMN topic_key TEXT NOT NULL DEFAULT '';

--bun:split

--step:fold_keys

--bun:split

DROP INDEX users_realm_email_lower_key;

--bun:split

CREATE UNIQUE INDEX users_realm_email_key ON users (realm_id, email_key);

--bun:split

DROP INDEX streams_realm_name_lower_key;

--bun:split

CREATE UNIQUE INDEX streams_realm_name_key ON streams (realm_id, name_key);

--bun:split

DROP INDEX custom_profile_fields_realm_name_lower_key;

--bun:split

CREATE UNIQUE INDEX custom_profile_fields_realm_name_key ON custom_profile_fields (realm_id, name_key);

--bun:split

DROP INDEX user_topics_user_stream_topic_lower_key;

--bun:split

CREATE UNIQUE INDEX user_topics_user_stream_topic_key ON user_topics (user_id, stream_id, topic_key);
