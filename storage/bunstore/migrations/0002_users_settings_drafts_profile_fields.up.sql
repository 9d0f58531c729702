-- Migration 0002 adds realm and user settings, drafts, custom profile
-- fields and pending email changes.
--
-- Existing tables grow with ALTER TABLE ... ADD COLUMN, one column per
-- statement (SQLite accepts no more). SQLite only adds a column whose
-- default is a constant, and a NOT NULL column only with a non-NULL
-- default; it cannot add a table constraint (a composite foreign key)
-- at all, and a column REFERENCES clause only with a NULL default. So
-- every added column is NOT NULL with a constant default and no
-- constraint; existing rows take the default, which is also the zero
-- value of the Go field, so rows written before the upgrade read back as
-- if written with the zero value.
--
-- The realm's bot-creation group settings are BIGINT NOT NULL DEFAULT 0
-- without a foreign key: the contract spells "not set" as 0, which bun
-- writes as 0 (the record tags have no nullzero), and a reference from
-- realms to user_groups would have to be the composite
-- (id, group) -> user_groups (realm_id, id) to keep realms apart, which
-- SQLite can only add by rebuilding the realms table (other tables refer
-- to it, so that needs foreign keys off, impossible inside the migration's
-- transaction). The store therefore does not check these IDs: the caller
-- must write only 0 or the ID of a group of the same realm.
--
-- users.settings defaults to the empty string, not '{}', so that the
-- column round-trips exactly what was written (the contract reads an empty
-- string as {}).
--
-- The new tables follow 0001: realm_id on every row, (realm_id, id)
-- unique where other rows refer to the table, composite foreign keys on
-- (realm_id, ...) so no row can point into another realm, ON DELETE
-- CASCADE from a user or field to the rows that belong to it, and an
-- index on every referencing column list (SQLite scans the child table
-- on a parent delete otherwise; PostgreSQL does not index them itself).

ALTER TABLE realms ADD COLUMN name_changes_disabled BOOLEAN NOT NULL DEFAULT FALSE;

--bun:split

ALTER TABLE realms ADD COLUMN email_changes_disabled BOOLEAN NOT NULL DEFAULT FALSE;

--bun:split

ALTER TABLE realms ADD COLUMN can_create_bots_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE realms ADD COLUMN can_create_write_only_bots_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE users ADD COLUMN can_change_user_emails BOOLEAN NOT NULL DEFAULT FALSE;

--bun:split

ALTER TABLE users ADD COLUMN settings TEXT NOT NULL DEFAULT '';

--bun:split

-- "type" and "timestamp" are quoted: both are keywords in PostgreSQL.
CREATE TABLE drafts (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	"type" TEXT NOT NULL DEFAULT '',
	recipients TEXT NOT NULL DEFAULT '',
	topic TEXT NOT NULL DEFAULT '',
	content TEXT NOT NULL DEFAULT '',
	"timestamp" BIGINT NOT NULL DEFAULT 0,
	CONSTRAINT drafts_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX drafts_user_timestamp_idx ON drafts (realm_id, user_id, "timestamp");

--bun:split

CREATE TABLE custom_profile_fields (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	name TEXT NOT NULL,
	hint TEXT NOT NULL DEFAULT '',
	field_type INTEGER NOT NULL,
	field_data TEXT NOT NULL DEFAULT '',
	field_order INTEGER NOT NULL DEFAULT 0,
	display_in_profile_summary BOOLEAN NOT NULL DEFAULT FALSE,
	required BOOLEAN NOT NULL DEFAULT FALSE,
	editable_by_user BOOLEAN NOT NULL DEFAULT TRUE,
	CONSTRAINT custom_profile_fields_realm_id_id_key UNIQUE (realm_id, id)
);

--bun:split

CREATE UNIQUE INDEX custom_profile_fields_realm_name_lower_key ON custom_profile_fields (realm_id, lower(name));

--bun:split

CREATE TABLE custom_profile_field_values (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	field_id BIGINT NOT NULL,
	value TEXT NOT NULL DEFAULT '',
	rendered_value TEXT,
	PRIMARY KEY (user_id, field_id),
	CONSTRAINT custom_profile_field_values_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT custom_profile_field_values_field_fkey FOREIGN KEY (realm_id, field_id)
		REFERENCES custom_profile_fields (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX custom_profile_field_values_user_idx ON custom_profile_field_values (realm_id, user_id, field_id);

--bun:split

CREATE INDEX custom_profile_field_values_field_idx ON custom_profile_field_values (realm_id, field_id);

--bun:split

-- One pending change per user; keys are unique per realm.
CREATE TABLE email_changes (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	new_email TEXT NOT NULL,
	confirmation_key TEXT NOT NULL,
	date_created BIGINT NOT NULL DEFAULT 0,
	CONSTRAINT email_changes_realm_key_key UNIQUE (realm_id, confirmation_key),
	CONSTRAINT email_changes_realm_user_key UNIQUE (realm_id, user_id),
	CONSTRAINT email_changes_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);
