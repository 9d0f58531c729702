-- Migration 0018 adds code playgrounds: sites that open an organization's
-- code blocks of a language. A (language, name) pair is unique in its
-- organization, compared exactly (as the reference's unique_together).

CREATE TABLE realm_playgrounds (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	name TEXT NOT NULL,
	pygments_language TEXT NOT NULL,
	url_template TEXT NOT NULL,
	CONSTRAINT realm_playgrounds_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT realm_playgrounds_language_name_key UNIQUE (realm_id, pygments_language, name)
);
