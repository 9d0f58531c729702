-- Back to the lower() indexes of 0001, 0002 and 0004. Rows that fold to
-- different keys but share lower() (possible only for non-ASCII names
-- written after 0005) make the down migration fail on the unique index.

DROP INDEX user_topics_user_stream_topic_key;

--bun:split

CREATE UNIQUE INDEX user_topics_user_stream_topic_lower_key ON user_topics (user_id, stream_id, lower(topic_name));

--bun:split

DROP INDEX custom_profile_fields_realm_name_key;

--bun:split

CREATE UNIQUE INDEX custom_profile_fields_realm_name_lower_key ON custom_profile_fields (realm_id, lower(name));

--bun:split

DROP INDEX streams_realm_name_key;

--bun:split

CREATE UNIQUE INDEX streams_realm_name_lower_key ON streams (realm_id, lower(name));

--bun:split

DROP INDEX users_realm_email_key;

--bun:split

CREATE UNIQUE INDEX users_realm_email_lower_key ON users (realm_id, lower(email));

--bun:split

ALTER TABLE user_topics DROP COLUMN topic_key;

--bun:split

ALTER TABLE custom_profile_fields DROP COLUMN name_key;

--bun:split

ALTER TABLE streams DROP COLUMN name_key;

--bun:split

ALTER TABLE users DROP COLUMN email_key;
