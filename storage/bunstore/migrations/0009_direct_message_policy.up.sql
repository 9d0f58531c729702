-- Migration 0009 adds the organization's direct-message policy: the
-- groups whose members may take part in (direct_message_permission_group)
-- and start (direct_message_initiator_group) direct messages. Like the
-- other group settings of realms (0002), they are BIGINT NOT NULL without
-- a foreign key. Existing organizations get the reference's default,
-- their role:everyone group.

ALTER TABLE realms ADD COLUMN direct_message_permission_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE realms ADD COLUMN direct_message_initiator_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

UPDATE realms SET
	direct_message_permission_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:everyone'), 0),
	direct_message_initiator_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:everyone'), 0);
