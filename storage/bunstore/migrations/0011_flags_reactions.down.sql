DROP TABLE reactions;

--bun:split

DROP INDEX user_messages_unread_historical_idx;

--bun:split

DROP INDEX user_messages_historical_idx;
