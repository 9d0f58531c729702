-- Migration 0017 keeps each organization's total upload size on its row,
-- so that announcing an upload (upload_space_used) does not add up every
-- file of the organization.

ALTER TABLE realms ADD COLUMN upload_bytes BIGINT NOT NULL DEFAULT 0;

--bun:split

UPDATE realms SET upload_bytes = COALESCE((SELECT SUM(a.size) FROM attachments a WHERE a.realm_id = realms.id), 0);
