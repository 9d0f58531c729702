-- Migration 0012 adds uploaded files and custom emoji. An attachment is
-- a file a user uploaded (path_id is its key in the blob store, unique);
-- attachment_messages links it to the messages that link it, which is
-- what decides who may download it. Custom emoji names are unique among
-- the organization's active emoji.

CREATE TABLE attachments (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	owner_id BIGINT NOT NULL,
	path_id TEXT NOT NULL,
	file_name TEXT NOT NULL,
	size BIGINT NOT NULL,
	content_type TEXT NOT NULL DEFAULT '',
	create_time BIGINT NOT NULL,
	CONSTRAINT attachments_path_id_key UNIQUE (path_id),
	CONSTRAINT attachments_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT attachments_owner_fkey FOREIGN KEY (realm_id, owner_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX attachments_owner_idx ON attachments (realm_id, owner_id, id);

--bun:split

CREATE TABLE attachment_messages (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	attachment_id BIGINT NOT NULL,
	message_id BIGINT NOT NULL,
	PRIMARY KEY (realm_id, attachment_id, message_id),
	CONSTRAINT attachment_messages_attachment_fkey FOREIGN KEY (realm_id, attachment_id)
		REFERENCES attachments (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT attachment_messages_message_fkey FOREIGN KEY (realm_id, message_id)
		REFERENCES messages (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE INDEX attachment_messages_message_idx ON attachment_messages (realm_id, message_id);

--bun:split

CREATE TABLE realm_emoji (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	name TEXT NOT NULL,
	file_name TEXT NOT NULL,
	author_id BIGINT,
	is_animated BOOLEAN NOT NULL DEFAULT FALSE,
	deactivated BOOLEAN NOT NULL DEFAULT FALSE,
	CONSTRAINT realm_emoji_realm_id_id_key UNIQUE (realm_id, id)
);

--bun:split

CREATE UNIQUE INDEX realm_emoji_active_name_key ON realm_emoji (realm_id, name) WHERE NOT deactivated;
