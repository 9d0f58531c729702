-- Migration 0013 adds the organization settings of message actions, with
-- the reference's defaults: who may add custom emoji (members), delete
-- any message (administrators) or their own (everyone), move messages
-- between channels (members) or topics (everyone), resolve topics
-- (everyone); whether and for how long messages may be edited, deleted
-- and moved (NULL: no limit); who sees edit history (1 all, 2 moves
-- only, 3 nobody); whether read receipts are shown.

ALTER TABLE realms ADD COLUMN can_add_custom_emoji_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE realms ADD COLUMN can_delete_any_message_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE realms ADD COLUMN can_delete_own_message_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE realms ADD COLUMN can_move_messages_between_channels_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE realms ADD COLUMN can_move_messages_between_topics_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE realms ADD COLUMN can_resolve_topics_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

UPDATE realms SET
	can_add_custom_emoji_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:members'), 0),
	can_delete_any_message_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:administrators'), 0),
	can_delete_own_message_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:everyone'), 0),
	can_move_messages_between_channels_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:members'), 0),
	can_move_messages_between_topics_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:everyone'), 0),
	can_resolve_topics_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:everyone'), 0);

--bun:split

ALTER TABLE realms ADD COLUMN allow_message_editing BOOLEAN NOT NULL DEFAULT TRUE;

--bun:split

ALTER TABLE realms ADD COLUMN message_content_edit_limit_seconds BIGINT;

--bun:split

ALTER TABLE realms ADD COLUMN message_content_delete_limit_seconds BIGINT;

--bun:split

ALTER TABLE realms ADD COLUMN move_messages_within_stream_limit_seconds BIGINT;

--bun:split

ALTER TABLE realms ADD COLUMN move_messages_between_streams_limit_seconds BIGINT;

--bun:split

-- NULL means no limit, so the columns have no default (a store writing
-- NULL must get NULL); existing organizations get the reference's limits.
UPDATE realms SET message_content_edit_limit_seconds = 600,
	move_messages_within_stream_limit_seconds = 604800, move_messages_between_streams_limit_seconds = 604800;

--bun:split

ALTER TABLE realms ADD COLUMN message_edit_history_visibility_policy INTEGER NOT NULL DEFAULT 1;

--bun:split

ALTER TABLE realms ADD COLUMN enable_read_receipts BOOLEAN NOT NULL DEFAULT TRUE;
