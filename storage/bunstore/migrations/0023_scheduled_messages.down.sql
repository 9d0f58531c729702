DROP TABLE scheduled_messages;
