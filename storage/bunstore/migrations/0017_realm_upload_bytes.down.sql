ALTER TABLE realms DROP COLUMN upload_bytes;
