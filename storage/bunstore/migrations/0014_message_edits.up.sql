-- Migration 0014 readies edits, moves and deletions. A message keeps its
-- edit history (a JSON array, newest entry first, as the reference's
-- edit_history; '' when never edited or moved), the time of its last
-- edit or move, and its kind (0 a message, 2 a notice that a topic was
-- resolved or unresolved, which a quick undo deletes).

ALTER TABLE messages ADD COLUMN edit_history TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE messages ADD COLUMN last_edit_time BIGINT;

--bun:split

ALTER TABLE messages ADD COLUMN message_type INTEGER NOT NULL DEFAULT 0;

--bun:split

CREATE INDEX subscription_periods_stream_idx ON subscription_periods (realm_id, stream_id, start_message_id);
