DROP TABLE realm_emoji;

--bun:split

DROP TABLE attachment_messages;

--bun:split

DROP TABLE attachments;
