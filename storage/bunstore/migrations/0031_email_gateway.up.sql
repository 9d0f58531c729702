-- Migration 0031: the internal bots and the email gateway.
--
-- users.is_system_bot marks an organization's internal bots (Notification
-- Bot, Welcome Bot, Email Gateway), which are not its users. The
-- Notification Bot made before this migration (on a first edit, at
-- notification-bot@<host>, in the role groups) moves to the internal
-- bots' domain and leaves the groups.
--
-- channel_email_addresses are the addresses of GET
-- /streams/{id}/email_address: one per (channel, creator, sender), its
-- token unique (the reference's ChannelEmailAddress).
--
-- email_reply_addresses are the reply addresses of missed-message emails:
-- the message a reply answers, the recipient it posts as, when it was
-- made and how often it was used (the reference's
-- MissedMessageEmailAddress).
--
-- email_gateway_received remembers the mails the gateway posted, by
-- recipient token and Message-ID, so that a mail delivered again is not
-- posted twice; rows older than a week are deleted.

ALTER TABLE users ADD COLUMN is_system_bot BOOLEAN NOT NULL DEFAULT FALSE;

--bun:split

UPDATE users SET is_system_bot = TRUE, email = 'notification-bot@teamchat.internal', email_key = 'notification-bot@teamchat.internal'
WHERE is_bot AND bot_owner_id IS NULL AND full_name = 'Notification Bot' AND email_key LIKE 'notification-bot@%';

--bun:split

DELETE FROM user_group_members WHERE user_id IN (SELECT id FROM users WHERE is_system_bot);

--bun:split

CREATE TABLE channel_email_addresses (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	stream_id BIGINT NOT NULL,
	creator_id BIGINT NOT NULL,
	sender_id BIGINT NOT NULL,
	email_token TEXT NOT NULL,
	date_created BIGINT NOT NULL,
	deactivated BOOLEAN NOT NULL DEFAULT FALSE
);

--bun:split

CREATE UNIQUE INDEX channel_email_addresses_token_key ON channel_email_addresses (email_token);

--bun:split

CREATE UNIQUE INDEX channel_email_addresses_channel_key ON channel_email_addresses (realm_id, stream_id, creator_id, sender_id);

--bun:split

CREATE TABLE email_reply_addresses (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	message_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	email_token TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	times_used INTEGER NOT NULL DEFAULT 0
);

--bun:split

CREATE UNIQUE INDEX email_reply_addresses_token_key ON email_reply_addresses (email_token);

--bun:split

CREATE INDEX email_reply_addresses_created_idx ON email_reply_addresses (created_at);

--bun:split

CREATE TABLE email_gateway_received (
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	email_token TEXT NOT NULL,
	message_key TEXT NOT NULL,
	message_id BIGINT NOT NULL,
	received_at BIGINT NOT NULL,
	PRIMARY KEY (email_token, message_key)
);

--bun:split

CREATE INDEX email_gateway_received_at_idx ON email_gateway_received (received_at);
