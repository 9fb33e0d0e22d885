-- Schema 17 (issue #30): permission decisions keyed by their session's key.
-- A decision's row repeated the organization's id (21 characters) and the
-- session's (36) in its primary key: 58 of a call's ~880 bytes at 100k calls
-- went to decisions. `keyed_decisions` holds the session's key in their
-- place; `decisions` is a view with the old columns, so reads (the writer's
-- lookup, migrate-to-postgres) name what they named before; writes go to the
-- table (sql/sqlite/ingest.sql, retention.sql).
INSERT INTO org_keys (org_id)
SELECT DISTINCT org_id FROM decisions
WHERE org_id NOT IN (SELECT org_id FROM org_keys)
ORDER BY 1;
INSERT INTO session_keys (org_key, session_id)
SELECT DISTINCT o.org_key, d.session_id
FROM decisions AS d
JOIN org_keys AS o ON o.org_id = d.org_id
WHERE NOT EXISTS (
  SELECT 1 FROM session_keys AS s WHERE s.session_id = d.session_id AND s.org_key = o.org_key
)
ORDER BY 1, 2;

CREATE TABLE keyed_decisions (
  session_key     INTEGER NOT NULL,
  tool_call_id    TEXT NOT NULL,
  decision        TEXT NOT NULL,
  decision_source TEXT,
  PRIMARY KEY (session_key, tool_call_id)
) WITHOUT ROWID;

INSERT INTO keyed_decisions (session_key, tool_call_id, decision, decision_source)
SELECT s.session_key, d.tool_call_id, d.decision, d.decision_source
FROM decisions AS d
JOIN org_keys AS o ON o.org_id = d.org_id
JOIN session_keys AS s ON s.session_id = d.session_id AND s.org_key = o.org_key
ORDER BY 1, 2;

DROP TABLE decisions;

CREATE VIEW decisions AS
SELECT org_keys.org_id, session_keys.session_id, keyed_decisions.tool_call_id,
  keyed_decisions.decision, keyed_decisions.decision_source
FROM keyed_decisions
JOIN session_keys ON session_keys.session_key = keyed_decisions.session_key
JOIN org_keys ON org_keys.org_key = session_keys.org_key;
