-- Migration 0020 adds alert_words: each user's alert words, found by the
-- first token of the lower-cased word, so that a message looks up only
-- the alert words its own words may match.

CREATE TABLE alert_words (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	user_id BIGINT NOT NULL,
	word TEXT NOT NULL,
	word_key TEXT NOT NULL,
	first_token TEXT NOT NULL,
	CONSTRAINT alert_words_user_fkey FOREIGN KEY (realm_id, user_id)
		REFERENCES users (realm_id, id) ON DELETE CASCADE
);

--bun:split

CREATE UNIQUE INDEX alert_words_user_key ON alert_words (user_id, word_key);

--bun:split

CREATE INDEX alert_words_token_idx ON alert_words (realm_id, first_token);
