-- Every table carries realm_id. (realm_id, id) is unique in users and
-- user_groups so that references from rows of the same realm are composite
-- foreign keys: a row can never point at another realm's user or group.

CREATE TABLE realms (
	id {{ID}},
	string_id TEXT NOT NULL,
	name TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	url TEXT NOT NULL DEFAULT '',
	host TEXT NOT NULL,
	date_created BIGINT NOT NULL DEFAULT 0,
	deactivated BOOLEAN NOT NULL DEFAULT FALSE,
	email_address_visibility INTEGER NOT NULL DEFAULT 1,
	waiting_period_threshold INTEGER NOT NULL DEFAULT 0,
	CONSTRAINT realms_string_id_key UNIQUE (string_id)
);

--bun:split

CREATE UNIQUE INDEX realms_host_lower_key ON realms (lower(host));

--bun:split

CREATE TABLE users (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	email TEXT NOT NULL,
	full_name TEXT NOT NULL DEFAULT '',
	role INTEGER NOT NULL DEFAULT 400,
	is_active BOOLEAN NOT NULL DEFAULT TRUE,
	is_bot BOOLEAN NOT NULL DEFAULT FALSE,
	bot_type INTEGER,
	bot_owner_id BIGINT,
	timezone TEXT NOT NULL DEFAULT '',
	date_joined BIGINT NOT NULL DEFAULT 0,
	password_hash TEXT NOT NULL DEFAULT '',
	api_key TEXT NOT NULL DEFAULT '',
	avatar_source TEXT NOT NULL DEFAULT 'G',
	avatar_version INTEGER NOT NULL DEFAULT 1,
	can_create_users BOOLEAN NOT NULL DEFAULT FALSE,
	CONSTRAINT users_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT users_bot_owner_fkey FOREIGN KEY (realm_id, bot_owner_id)
		REFERENCES users (realm_id, id)
);

--bun:split

CREATE UNIQUE INDEX users_realm_email_lower_key ON users (realm_id, lower(email));

--bun:split

CREATE INDEX users_bot_owner_idx ON users (realm_id, bot_owner_id) WHERE bot_owner_id IS NOT NULL;

--bun:split

CREATE TABLE user_groups (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	name TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	is_system_group BOOLEAN NOT NULL DEFAULT FALSE,
	creator_id BIGINT,
	date_created BIGINT,
	deactivated BOOLEAN NOT NULL DEFAULT FALSE,
	CONSTRAINT user_groups_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT user_groups_creator_fkey FOREIGN KEY (realm_id, creator_id)
		REFERENCES users (realm_id, id)
);

--bun:split

-- Anonymous groups (name '') are exempt from name uniqueness.
CREATE UNIQUE INDEX user_groups_realm_name_key ON user_groups (realm_id, name) WHERE name <> '';

--bun:split

CREATE INDEX user_groups_creator_idx ON user_groups (realm_id, creator_id) WHERE creator_id IS NOT NULL;

--bun:split

CREATE TABLE user_group_members (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	group_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	PRIMARY KEY (group_id, user_id),
	CONSTRAINT user_group_members_group_fkey FOREIGN KEY (realm_id, group_id)
		REFERENCES user_groups (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT user_group_members_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX user_group_members_user_idx ON user_group_members (realm_id, user_id, group_id);

--bun:split

CREATE TABLE user_group_subgroups (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	group_id BIGINT NOT NULL,
	subgroup_id BIGINT NOT NULL,
	PRIMARY KEY (group_id, subgroup_id),
	CONSTRAINT user_group_subgroups_group_fkey FOREIGN KEY (realm_id, group_id)
		REFERENCES user_groups (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT user_group_subgroups_subgroup_fkey FOREIGN KEY (realm_id, subgroup_id)
		REFERENCES user_groups (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX user_group_subgroups_subgroup_idx ON user_group_subgroups (realm_id, subgroup_id, group_id);
