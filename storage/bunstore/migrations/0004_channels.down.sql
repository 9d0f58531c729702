DROP TABLE user_topics;

--bun:split

DROP TABLE subscription_periods;

--bun:split

DROP TABLE subscriptions;

--bun:split

DROP TABLE streams;
