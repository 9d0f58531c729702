DROP TABLE read_ranges;

--bun:split

DROP TABLE user_messages;

--bun:split

DROP TABLE messages;

--bun:split

DROP TABLE direct_conversation_members;

--bun:split

DROP TABLE direct_conversations;
