ALTER TABLE realms DROP COLUMN can_mention_many_users_group_id;

--bun:split

DROP INDEX users_realm_full_name_key;

--bun:split

ALTER TABLE users DROP COLUMN full_name_key;
