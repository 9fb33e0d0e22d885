-- Schema 15 (issue #30): tool calls keyed by integers. Every row of
-- tool_calls and every entry of its eight indexes held the organization's id
-- (21 characters), and the rows and the session and actor indexes the
-- session's (36) and the actor's (21) as TEXT: about 300 of the 892 bytes a
-- call cost in the table and its indexes at 1M calls, and model_calls the
-- same. The calls now live in `calls` and `keyed_model_calls`, whose rows and
-- indexes hold small integer keys; `org_keys`, `session_keys` and `actor_keys`
-- hold each text once. `tool_calls` and `model_calls` are views with the old
-- columns, so every read names the same columns as before and the planner
-- turns `org_id = ?` into one key lookup and an index range; writes go to the
-- tables (sql/sqlite/ingest.sql, retention.sql).
CREATE TABLE org_keys (
  org_key INTEGER PRIMARY KEY,
  org_id  TEXT NOT NULL UNIQUE
);

CREATE TABLE session_keys (
  session_key INTEGER PRIMARY KEY,
  org_key     INTEGER NOT NULL,
  session_id  TEXT NOT NULL,
  UNIQUE (session_id, org_key)
);

CREATE TABLE actor_keys (
  actor_key INTEGER PRIMARY KEY,
  org_key   INTEGER NOT NULL,
  actor_id  TEXT NOT NULL,
  UNIQUE (actor_id, org_key)
);

INSERT INTO org_keys (org_id)
SELECT org_id FROM tool_calls UNION SELECT org_id FROM model_calls ORDER BY 1;
INSERT INTO session_keys (org_key, session_id)
SELECT o.org_key, c.session_id
FROM (SELECT org_id, session_id FROM tool_calls UNION SELECT org_id, session_id FROM model_calls)
  AS c
JOIN org_keys AS o ON o.org_id = c.org_id
ORDER BY 1, 2;
INSERT INTO actor_keys (org_key, actor_id)
SELECT o.org_key, c.actor_id
FROM (SELECT org_id, actor_id FROM tool_calls UNION SELECT org_id, actor_id FROM model_calls) AS c
JOIN org_keys AS o ON o.org_id = c.org_id
ORDER BY 1, 2;

-- The key of a call is its place in arrival order (ids are hashes: in id
-- order every insert lands on a random page of the table).
CREATE TABLE calls (
  call_key          INTEGER PRIMARY KEY,
  id                TEXT NOT NULL,
  org_key           INTEGER NOT NULL,
  seq               INTEGER NOT NULL,
  session_key       INTEGER NOT NULL,
  actor_key         INTEGER NOT NULL,
  ts                INTEGER NOT NULL,
  tool_name         TEXT NOT NULL,
  tool_type         TEXT NOT NULL,
  category          TEXT NOT NULL,
  outcome           TEXT NOT NULL CHECK (outcome IN ('ok', 'error', 'rejected')),
  duration_ms       INTEGER,
  result_size_bytes INTEGER,
  agent_system      TEXT NOT NULL,
  agent_version     TEXT NOT NULL DEFAULT '',
  model             TEXT,
  error_message     TEXT,
  error_type        TEXT,
  decision          TEXT,
  decision_source   TEXT,
  prompt_id         TEXT,
  agent_name        TEXT,
  provider_name     TEXT,
  tool_call_id      TEXT,
  tool_use_id       TEXT,
  tool_description  TEXT,
  source            TEXT NOT NULL,
  arguments         TEXT,
  result            TEXT,
  mcp_server_name   TEXT,
  mcp_server_scope  TEXT,
  os_type           TEXT,
  host_arch         TEXT,
  terminal_type     TEXT,
  cwd               TEXT,
  trace_id          TEXT,
  span_id           TEXT
);

INSERT INTO calls
SELECT c.rowid, c.id, o.org_key, c.seq, s.session_key, a.actor_key, c.ts, c.tool_name,
  c.tool_type, c.category, c.outcome, c.duration_ms, c.result_size_bytes, c.agent_system,
  c.agent_version, c.model, c.error_message, c.error_type, c.decision, c.decision_source,
  c.prompt_id, c.agent_name, c.provider_name, c.tool_call_id, c.tool_use_id, c.tool_description,
  c.source, c.arguments, c.result, c.mcp_server_name, c.mcp_server_scope, c.os_type, c.host_arch,
  c.terminal_type, c.cwd, c.trace_id, c.span_id
FROM tool_calls AS c
JOIN org_keys AS o ON o.org_id = c.org_id
JOIN session_keys AS s ON s.org_key = o.org_key AND s.session_id = c.session_id
JOIN actor_keys AS a ON a.org_key = o.org_key AND a.actor_id = c.actor_id
ORDER BY c.rowid;

-- Built after the rows: one sorted pass each (the id's first: flags and hits
-- reference it).
CREATE UNIQUE INDEX calls_by_id ON calls (id);

CREATE TABLE keyed_model_calls (
  model_call_key        INTEGER PRIMARY KEY,
  id                    TEXT NOT NULL,
  org_key               INTEGER NOT NULL,
  seq                   INTEGER NOT NULL,
  session_key           INTEGER NOT NULL,
  actor_key             INTEGER NOT NULL,
  ts                    INTEGER NOT NULL,
  agent_system          TEXT NOT NULL,
  provider_name         TEXT NOT NULL DEFAULT '',
  model                 TEXT NOT NULL DEFAULT '',
  input_tokens          INTEGER NOT NULL DEFAULT 0,
  output_tokens         INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens     INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd              REAL,
  duration_ms           INTEGER,
  estimated_cost_usd    REAL
);

INSERT INTO keyed_model_calls
SELECT m.rowid, m.id, o.org_key, m.seq, s.session_key, a.actor_key, m.ts, m.agent_system,
  m.provider_name, m.model, m.input_tokens, m.output_tokens, m.cache_read_tokens,
  m.cache_creation_tokens, m.cost_usd, m.duration_ms, m.estimated_cost_usd
FROM model_calls AS m
JOIN org_keys AS o ON o.org_id = m.org_id
JOIN session_keys AS s ON s.org_key = o.org_key AND s.session_id = m.session_id
JOIN actor_keys AS a ON a.org_key = o.org_key AND a.actor_id = m.actor_id
ORDER BY m.rowid;
DROP TABLE model_calls;
CREATE UNIQUE INDEX model_calls_by_id ON keyed_model_calls (id);
CREATE INDEX model_calls_by_seq ON keyed_model_calls (seq);
CREATE INDEX model_calls_by_time ON keyed_model_calls (org_key, ts);
CREATE INDEX model_calls_by_session ON keyed_model_calls (session_key);

-- Flags and domain hits follow their call (ON DELETE CASCADE): rebuilt to
-- name `calls`, before tool_calls goes (dropping a parent deletes its
-- children's rows first).
CREATE TABLE risk_flags_keyed (
  call_id      TEXT NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
  flag         TEXT NOT NULL,
  org_id       TEXT NOT NULL,
  seq          INTEGER NOT NULL,
  session_id   TEXT NOT NULL,
  ts           INTEGER NOT NULL,
  tool_call_id TEXT NOT NULL,
  tool_name    TEXT NOT NULL,
  evidence     TEXT NOT NULL,
  PRIMARY KEY (call_id, flag)
) WITHOUT ROWID;
INSERT INTO risk_flags_keyed SELECT * FROM risk_flags;

CREATE TABLE domain_hits_keyed (
  call_id    TEXT NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
  domain     TEXT NOT NULL,
  scheme     TEXT NOT NULL,
  org_id     TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  ts         INTEGER NOT NULL,
  PRIMARY KEY (call_id, domain, scheme)
) WITHOUT ROWID;
INSERT INTO domain_hits_keyed SELECT * FROM domain_hits;

DROP TABLE risk_flags;
DROP TABLE domain_hits;
DROP TABLE tool_calls;
ALTER TABLE risk_flags_keyed RENAME TO risk_flags;
ALTER TABLE domain_hits_keyed RENAME TO domain_hits;
CREATE INDEX risk_flags_by_session ON risk_flags (org_id, session_id, ts, flag);
CREATE INDEX risk_flags_by_seq ON risk_flags (seq);
CREATE INDEX risk_flags_by_time ON risk_flags (org_id, ts, flag, session_id, tool_name);
CREATE INDEX domain_hits_by_session ON domain_hits (org_id, session_id, domain, scheme);
CREATE INDEX domain_hits_by_domain ON domain_hits (org_id, domain, session_id);
CREATE INDEX domain_hits_by_seq ON domain_hits (seq);

CREATE INDEX calls_by_seq ON calls (seq);
CREATE INDEX calls_by_time ON calls (org_key, ts);
CREATE INDEX calls_by_session ON calls (session_key, ts);
CREATE INDEX calls_by_actor ON calls (actor_key, ts);
CREATE INDEX calls_by_tool_name ON calls (org_key, tool_name, ts);
CREATE INDEX calls_by_tool_type ON calls (org_key, tool_type, ts);
CREATE INDEX calls_by_category ON calls (org_key, category, ts);
CREATE INDEX calls_by_outcome ON calls (org_key, outcome, ts);

CREATE VIEW tool_calls AS
SELECT calls.id, org_keys.org_id, calls.seq, session_keys.session_id, actor_keys.actor_id,
  calls.ts, calls.tool_name, calls.tool_type, calls.category, calls.outcome, calls.duration_ms,
  calls.result_size_bytes, calls.agent_system, calls.agent_version, calls.model,
  calls.error_message, calls.error_type, calls.decision, calls.decision_source, calls.prompt_id,
  calls.agent_name, calls.provider_name, calls.tool_call_id, calls.tool_use_id,
  calls.tool_description, calls.source, calls.arguments, calls.result, calls.mcp_server_name,
  calls.mcp_server_scope, calls.os_type, calls.host_arch, calls.terminal_type, calls.cwd,
  calls.trace_id, calls.span_id
FROM calls
JOIN org_keys ON org_keys.org_key = calls.org_key
-- The second term of each join repeats what the key implies; with it the
-- planner proves `session_id = ?` (or `actor_id = ?`) names one key.
JOIN session_keys
  ON session_keys.session_key = calls.session_key AND session_keys.org_key = org_keys.org_key
JOIN actor_keys
  ON actor_keys.actor_key = calls.actor_key AND actor_keys.org_key = org_keys.org_key;

CREATE VIEW model_calls AS
SELECT keyed_model_calls.id, org_keys.org_id, keyed_model_calls.seq, session_keys.session_id,
  actor_keys.actor_id, keyed_model_calls.ts, keyed_model_calls.agent_system,
  keyed_model_calls.provider_name, keyed_model_calls.model, keyed_model_calls.input_tokens,
  keyed_model_calls.output_tokens, keyed_model_calls.cache_read_tokens,
  keyed_model_calls.cache_creation_tokens, keyed_model_calls.cost_usd,
  keyed_model_calls.duration_ms, keyed_model_calls.estimated_cost_usd
FROM keyed_model_calls
JOIN org_keys ON org_keys.org_key = keyed_model_calls.org_key
JOIN session_keys
  ON session_keys.session_key = keyed_model_calls.session_key
  AND session_keys.org_key = org_keys.org_key
JOIN actor_keys
  ON actor_keys.actor_key = keyed_model_calls.actor_key AND actor_keys.org_key = org_keys.org_key;

-- The planner's row estimates for the keyed tables, written rather than
-- measured (the service never runs ANALYZE): without them it reckons every
-- key as selective as any other, and for `session_id = ?` walks the
-- organization's calls by time testing each call's session instead of
-- finding the session's key and reading its calls. The shape that matters:
-- an organization holds many calls, a session or an actor few.
ANALYZE sqlite_schema;
DELETE FROM sqlite_stat1
WHERE tbl IN ('calls', 'keyed_model_calls', 'org_keys', 'session_keys', 'actor_keys');
INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES
  ('calls', 'calls_by_id', '10000000 1'),
  ('calls', 'calls_by_seq', '10000000 1'),
  ('calls', 'calls_by_time', '10000000 1000000 2'),
  ('calls', 'calls_by_session', '10000000 50 2'),
  ('calls', 'calls_by_actor', '10000000 5000 2'),
  ('calls', 'calls_by_tool_name', '10000000 1000000 20000 2'),
  ('calls', 'calls_by_tool_type', '10000000 1000000 300000 2'),
  ('calls', 'calls_by_category', '10000000 1000000 100000 2'),
  ('calls', 'calls_by_outcome', '10000000 1000000 300000 2'),
  ('keyed_model_calls', 'model_calls_by_id', '10000000 1'),
  ('keyed_model_calls', 'model_calls_by_seq', '10000000 1'),
  ('keyed_model_calls', 'model_calls_by_time', '10000000 1000000 2'),
  ('keyed_model_calls', 'model_calls_by_session', '10000000 50'),
  ('org_keys', 'sqlite_autoindex_org_keys_1', '10 1'),
  ('session_keys', 'sqlite_autoindex_session_keys_1', '200000 1 1'),
  ('actor_keys', 'sqlite_autoindex_actor_keys_1', '2000 1 1');
