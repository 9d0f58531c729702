ALTER TABLE realms DROP COLUMN mandatory_topics;
