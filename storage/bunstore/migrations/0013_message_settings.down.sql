ALTER TABLE realms DROP COLUMN enable_read_receipts;

--bun:split

ALTER TABLE realms DROP COLUMN message_edit_history_visibility_policy;

--bun:split

ALTER TABLE realms DROP COLUMN move_messages_between_streams_limit_seconds;

--bun:split

ALTER TABLE realms DROP COLUMN move_messages_within_stream_limit_seconds;

--bun:split

ALTER TABLE realms DROP COLUMN message_content_delete_limit_seconds;

--bun:split

ALTER TABLE realms DROP COLUMN message_content_edit_limit_seconds;

--bun:split

ALTER TABLE realms DROP COLUMN allow_message_editing;

--bun:split

ALTER TABLE realms DROP COLUMN can_resolve_topics_group_id;

--bun:split

ALTER TABLE realms DROP COLUMN can_move_messages_between_topics_group_id;

--bun:split

ALTER TABLE realms DROP COLUMN can_move_messages_between_channels_group_id;

--bun:split

ALTER TABLE realms DROP COLUMN can_delete_own_message_group_id;

--bun:split

ALTER TABLE realms DROP COLUMN can_delete_any_message_group_id;

--bun:split

ALTER TABLE realms DROP COLUMN can_add_custom_emoji_group_id;
