-- DROP COLUMN needs SQLite 3.35 or later (go-sqlite3 bundles a newer one).

DROP TABLE email_changes;

--bun:split

DROP TABLE custom_profile_field_values;

--bun:split

DROP TABLE custom_profile_fields;

--bun:split

DROP TABLE drafts;

--bun:split

ALTER TABLE users DROP COLUMN settings;

--bun:split

ALTER TABLE users DROP COLUMN can_change_user_emails;

--bun:split

ALTER TABLE realms DROP COLUMN can_create_write_only_bots_group_id;

--bun:split

ALTER TABLE realms DROP COLUMN can_create_bots_group_id;

--bun:split

ALTER TABLE realms DROP COLUMN email_changes_disabled;

--bun:split

ALTER TABLE realms DROP COLUMN name_changes_disabled;
