DROP INDEX pending_notifications_kind_due_idx;

--bun:split

CREATE INDEX read_ranges_stream_idx ON read_ranges (realm_id, stream_id);

--bun:split

DROP INDEX read_ranges_stream_user_idx;
