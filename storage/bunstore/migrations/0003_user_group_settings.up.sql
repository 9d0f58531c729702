-- Migration 0003 adds the user groups' permission settings: for each, the
-- ID of the group (named, or anonymous) whose members may add members,
-- join, leave, manage, mention the group, or remove members.
--
-- The columns are added as in 0002 (one ALTER TABLE per column, NOT NULL
-- with a constant default, no constraint), and for the same reasons as the
-- realm's group settings they are BIGINT NOT NULL DEFAULT 0 without a
-- foreign key: the contract spells "not set" as 0, which no foreign key
-- would accept; a realm-safe reference would be the composite
-- (realm_id, can_..._group_id) -> user_groups (realm_id, id), a table
-- constraint that SQLite cannot add to an existing table without
-- rebuilding user_groups (which other tables refer to, so foreign keys
-- would have to be off, impossible inside the migration's transaction);
-- and SQLite accepts a column REFERENCES clause on an added column only
-- with a NULL default. Existing groups read back with every setting 0
-- (not set). The store does not check these IDs: the caller must write
-- only 0 or the ID of a group of the same realm.

ALTER TABLE user_groups ADD COLUMN can_add_members_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE user_groups ADD COLUMN can_join_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE user_groups ADD COLUMN can_leave_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE user_groups ADD COLUMN can_manage_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE user_groups ADD COLUMN can_mention_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE user_groups ADD COLUMN can_remove_members_group_id BIGINT NOT NULL DEFAULT 0;
