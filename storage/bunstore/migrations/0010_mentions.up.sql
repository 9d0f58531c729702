-- Migration 0010 readies mentions. @**Full Name** finds users by their
-- full name, case-insensitively: users get full_name_key (storage.Fold of
-- full_name, written by the store, filled here for existing rows by the
-- full_name_keys step) and an index on it, so resolving a mention reads
-- the users it names, not the organization. Organizations get the
-- reference's can_mention_many_users_group (who may use wildcard mentions
-- in large channels and topics), role:administrators by default.

ALTER TABLE users ADD COLUMN full_name_key TEXT NOT NULL DEFAULT '';

--bun:split

--step:full_name_keys

--bun:split

CREATE INDEX users_realm_full_name_key ON users (realm_id, full_name_key);

--bun:split

ALTER TABLE realms ADD COLUMN can_mention_many_users_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

UPDATE realms SET can_mention_many_users_group_id =
	COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:administrators'), 0);
