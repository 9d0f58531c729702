DROP INDEX user_topics_topic_idx;

--bun:split

DROP INDEX subscriptions_notifications_idx;

--bun:split

DROP INDEX users_stream_notifications_idx;

--bun:split

ALTER TABLE users DROP COLUMN stream_notifications;

--bun:split

DROP TABLE pending_notifications;
