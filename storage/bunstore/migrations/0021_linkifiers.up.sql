-- Migration 0021 adds linkifiers: an organization's patterns whose
-- matches in messages and topics become links. A pattern is unique in
-- its organization, compared exactly (as the reference's
-- unique_together); linkifiers apply by linkifier_order, then id.

CREATE TABLE realm_linkifiers (
	id {{ID}},
	realm_id BIGINT NOT NULL REFERENCES realms (id),
	pattern TEXT NOT NULL,
	url_template TEXT NOT NULL,
	linkifier_order INTEGER NOT NULL DEFAULT 0,
	CONSTRAINT realm_linkifiers_realm_id_id_key UNIQUE (realm_id, id),
	CONSTRAINT realm_linkifiers_pattern_key UNIQUE (realm_id, pattern)
);
