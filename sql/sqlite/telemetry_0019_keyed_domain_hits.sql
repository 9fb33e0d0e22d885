-- Schema 19 (issue #30): a call's external domains keyed by integers. Each
-- hit held its call's id (35 characters), the organization's (21) and the
-- session's (36), and its three indexes repeated two of them: 64 of a
-- call's ~880 bytes at 100k calls, for the ~7% of calls that reach a domain.
-- `keyed_domain_hits` holds the call's, organization's and session's keys;
-- `domain_hits` is a view with the old columns, so reads name what they
-- named before; writes go to the table (sql/sqlite/ingest.sql). A hit still
-- goes with its call (ON DELETE CASCADE, now on the call's key).
CREATE TABLE keyed_domain_hits (
  call_key    INTEGER NOT NULL REFERENCES calls (call_key) ON DELETE CASCADE,
  domain      TEXT NOT NULL,
  scheme      TEXT NOT NULL,
  org_key     INTEGER NOT NULL,
  seq         INTEGER NOT NULL,
  session_key INTEGER NOT NULL,
  ts          INTEGER NOT NULL,
  PRIMARY KEY (call_key, domain, scheme)
) WITHOUT ROWID;

INSERT INTO keyed_domain_hits (call_key, domain, scheme, org_key, seq, session_key, ts)
SELECT c.call_key, d.domain, d.scheme, c.org_key, d.seq, c.session_key, d.ts
FROM domain_hits AS d
JOIN calls AS c ON c.id = d.call_id
ORDER BY 1, 2, 3;

DROP TABLE domain_hits;
CREATE INDEX domain_hits_by_session ON keyed_domain_hits (session_key, domain, scheme);
CREATE INDEX domain_hits_by_domain ON keyed_domain_hits (org_key, domain, session_key);
CREATE INDEX domain_hits_by_seq ON keyed_domain_hits (seq);

CREATE VIEW domain_hits AS
SELECT calls.id AS call_id, d.domain, d.scheme, org_keys.org_id, d.seq, session_keys.session_id,
  d.ts
FROM keyed_domain_hits AS d
JOIN org_keys ON org_keys.org_key = d.org_key
JOIN session_keys
  ON session_keys.session_key = d.session_key AND session_keys.org_key = org_keys.org_key
-- Every hit has its call (the cascade); a statement that reads no call_id
-- leaves the join out (a LEFT JOIN on the primary key).
LEFT JOIN calls ON calls.call_key = d.call_key;

INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES
  ('keyed_domain_hits', 'domain_hits_by_session', '1000000 5 2 1'),
  ('keyed_domain_hits', 'domain_hits_by_domain', '1000000 100000 1000 2'),
  ('keyed_domain_hits', 'domain_hits_by_seq', '1000000 1');
