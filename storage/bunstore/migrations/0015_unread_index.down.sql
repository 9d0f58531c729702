CREATE INDEX messages_stream_idx ON messages (realm_id, stream_id, id) WHERE stream_id IS NOT NULL;

--bun:split

DROP INDEX messages_stream_cover_idx;
