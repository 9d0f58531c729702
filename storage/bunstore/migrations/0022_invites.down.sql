ALTER TABLE realms DROP COLUMN create_multiuse_invite_group_id;

--bun:split

ALTER TABLE realms DROP COLUMN can_invite_users_group_id;

--bun:split

DROP TABLE invite_groups;

--bun:split

DROP TABLE invite_streams;

--bun:split

DROP TABLE invites;
