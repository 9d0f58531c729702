-- Migration 0022 adds invitations: email invitations (one account, for
-- one address) and reusable invitation links, in one table with one ID
-- sequence, with the channels and groups the new account gets; and the
-- organization settings of who may send them, with the reference's
-- defaults (email invitations: members; links: administrators).
--
-- An invitation's key is the secret its link carries; it is random and
-- unique across organizations. email_key is storage.Fold(email), so that
-- the invitations of one address are found alike on both dialects.

CREATE TABLE invites (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	referrer_id BIGINT NOT NULL,
	is_multiuse BOOLEAN NOT NULL DEFAULT FALSE,
	email TEXT NOT NULL DEFAULT '',
	email_key TEXT NOT NULL DEFAULT '',
	invite_key TEXT NOT NULL,
	invited_as INTEGER NOT NULL DEFAULT 400,
	created BIGINT NOT NULL,
	expires_at BIGINT,
	include_realm_default_subscriptions BOOLEAN NOT NULL DEFAULT FALSE,
	notify_referrer_on_join BOOLEAN NOT NULL DEFAULT TRUE,
	status INTEGER NOT NULL DEFAULT 0,
	CONSTRAINT invites_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT invites_invite_key_key UNIQUE (invite_key),
	CONSTRAINT invites_referrer_fkey FOREIGN KEY (realm_id, referrer_id)
		REFERENCES users (realm_id, id)
);

--bun:split

CREATE INDEX invites_referrer_idx ON invites (realm_id, referrer_id);

--bun:split

CREATE INDEX invites_email_idx ON invites (realm_id, email_key);

--bun:split

CREATE TABLE invite_streams (
	realm_id BIGINT NOT NULL,
	invite_id BIGINT NOT NULL,
	stream_id BIGINT NOT NULL,
	PRIMARY KEY (invite_id, stream_id),
	CONSTRAINT invite_streams_invite_fkey FOREIGN KEY (realm_id, invite_id)
		REFERENCES invites (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT invite_streams_stream_fkey FOREIGN KEY (realm_id, stream_id)
		REFERENCES streams (realm_id, id)
);

--bun:split

CREATE TABLE invite_groups (
	realm_id BIGINT NOT NULL,
	invite_id BIGINT NOT NULL,
	group_id BIGINT NOT NULL,
	PRIMARY KEY (invite_id, group_id),
	CONSTRAINT invite_groups_invite_fkey FOREIGN KEY (realm_id, invite_id)
		REFERENCES invites (realm_id, id) ON DELETE CASCADE,
	CONSTRAINT invite_groups_group_fkey FOREIGN KEY (realm_id, group_id)
		REFERENCES user_groups (realm_id, id)
);

--bun:split

ALTER TABLE realms ADD COLUMN can_invite_users_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE realms ADD COLUMN create_multiuse_invite_group_id BIGINT NOT NULL DEFAULT 0;

--bun:split

UPDATE realms SET
	can_invite_users_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:members'), 0),
	create_multiuse_invite_group_id = COALESCE((SELECT g.id FROM user_groups AS g WHERE g.realm_id = realms.id AND g.name = 'role:administrators'), 0);
