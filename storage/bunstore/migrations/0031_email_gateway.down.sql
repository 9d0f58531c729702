DROP TABLE email_gateway_received;

--bun:split

DROP TABLE email_reply_addresses;

--bun:split

DROP TABLE channel_email_addresses;

--bun:split

ALTER TABLE users DROP COLUMN is_system_bot;
