DROP INDEX subscription_periods_stream_idx;

--bun:split

ALTER TABLE messages DROP COLUMN message_type;

--bun:split

ALTER TABLE messages DROP COLUMN last_edit_time;

--bun:split

ALTER TABLE messages DROP COLUMN edit_history;
