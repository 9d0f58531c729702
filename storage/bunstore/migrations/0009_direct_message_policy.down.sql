ALTER TABLE realms DROP COLUMN direct_message_initiator_group_id;

--bun:split

ALTER TABLE realms DROP COLUMN direct_message_permission_group_id;
