-- Migration 0015 lets unread counts read a channel's messages from an
-- index alone: the channel index carries each message's topic and
-- wildcard fact, so listing a user's unread messages by channel and topic
-- does not visit the rows. It replaces the narrower index it extends.

CREATE INDEX messages_stream_cover_idx ON messages (realm_id, stream_id, id, topic, stream_wildcard) WHERE stream_id IS NOT NULL;

--bun:split

DROP INDEX messages_stream_idx;
