ALTER TABLE user_groups DROP COLUMN can_remove_members_group_id;

--bun:split

ALTER TABLE user_groups DROP COLUMN can_mention_group_id;

--bun:split

ALTER TABLE user_groups DROP COLUMN can_manage_group_id;

--bun:split

ALTER TABLE user_groups DROP COLUMN can_leave_group_id;

--bun:split

ALTER TABLE user_groups DROP COLUMN can_join_group_id;

--bun:split

ALTER TABLE user_groups DROP COLUMN can_add_members_group_id;
