ALTER TABLE realms DROP COLUMN presence_disabled;

--bun:split

DROP TABLE user_presences;

--bun:split

DROP TABLE presence_sequences;
