-- Telemetry: the system of record. Every row carries org_id and a seq taken
-- from the single counter below, raised on every insert and update, so the
-- DuckDB replica can catch up with "seq > last copied".
CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO counters (name, value) VALUES ('seq', 0);

-- One row per (org, session), kept current as calls arrive so the unfiltered
-- session list is an index walk. Figures cover the whole session.
CREATE TABLE sessions (
  org_id           TEXT NOT NULL,
  session_id       TEXT NOT NULL,
  seq              INTEGER NOT NULL,
  actor_id         TEXT NOT NULL,
  first_seen       INTEGER,
  last_seen        INTEGER,
  tool_call_count  INTEGER NOT NULL DEFAULT 0,
  error_count      INTEGER NOT NULL DEFAULT 0,
  success_count    INTEGER NOT NULL DEFAULT 0,
  agent_system     TEXT NOT NULL DEFAULT '',
  agent_version    TEXT NOT NULL DEFAULT '',
  model            TEXT NOT NULL DEFAULT '',
  model_ts         INTEGER,
  cost_usd         REAL NOT NULL DEFAULT 0,
  provider_name    TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (org_id, session_id)
) WITHOUT ROWID;
CREATE INDEX sessions_by_last_seen ON sessions (org_id, last_seen DESC, session_id DESC)
  WHERE last_seen IS NOT NULL;

CREATE TABLE tool_calls (
  id                TEXT PRIMARY KEY,
  org_id            TEXT NOT NULL,
  seq               INTEGER NOT NULL,
  session_id        TEXT NOT NULL,
  actor_id          TEXT NOT NULL,
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
CREATE INDEX tool_calls_by_time ON tool_calls (org_id, ts DESC, id DESC);
CREATE INDEX tool_calls_by_session ON tool_calls (org_id, session_id, ts, id);
CREATE INDEX tool_calls_by_tool_name ON tool_calls (org_id, tool_name, ts DESC, id DESC);
CREATE INDEX tool_calls_by_tool_type ON tool_calls (org_id, tool_type, ts DESC, id DESC);
CREATE INDEX tool_calls_by_category ON tool_calls (org_id, category, ts DESC, id DESC);
CREATE INDEX tool_calls_by_outcome ON tool_calls (org_id, outcome, ts DESC, id DESC);
CREATE INDEX tool_calls_by_actor ON tool_calls (org_id, actor_id, ts DESC, id DESC);
CREATE INDEX tool_calls_by_agent ON tool_calls (org_id, agent_system, ts DESC, id DESC);
CREATE INDEX tool_calls_by_seq ON tool_calls (seq);

-- Permission decisions seen before (or without) their result, by agent call id.
CREATE TABLE decisions (
  org_id          TEXT NOT NULL,
  session_id      TEXT NOT NULL,
  tool_call_id    TEXT NOT NULL,
  decision        TEXT NOT NULL,
  decision_source TEXT,
  PRIMARY KEY (org_id, session_id, tool_call_id)
) WITHOUT ROWID;

CREATE TABLE model_calls (
  id                    TEXT PRIMARY KEY,
  org_id                TEXT NOT NULL,
  seq                   INTEGER NOT NULL,
  session_id            TEXT NOT NULL,
  actor_id              TEXT NOT NULL,
  ts                    INTEGER NOT NULL,
  agent_system          TEXT NOT NULL,
  provider_name         TEXT NOT NULL DEFAULT '',
  model                 TEXT NOT NULL DEFAULT '',
  input_tokens          INTEGER NOT NULL DEFAULT 0,
  output_tokens         INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens     INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd              REAL,
  duration_ms           INTEGER
);
CREATE INDEX model_calls_by_session ON model_calls (org_id, session_id);
CREATE INDEX model_calls_by_seq ON model_calls (seq);

-- At most one flag per (tool call, kind); times are the tool call's.
CREATE TABLE risk_flags (
  call_id      TEXT NOT NULL REFERENCES tool_calls (id) ON DELETE CASCADE,
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
CREATE INDEX risk_flags_by_session ON risk_flags (org_id, session_id, ts, flag);
CREATE INDEX risk_flags_by_seq ON risk_flags (seq);

-- One hit per (tool call, domain, scheme).
CREATE TABLE domain_hits (
  call_id    TEXT NOT NULL REFERENCES tool_calls (id) ON DELETE CASCADE,
  domain     TEXT NOT NULL,
  scheme     TEXT NOT NULL,
  org_id     TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  ts         INTEGER NOT NULL,
  PRIMARY KEY (call_id, domain, scheme)
) WITHOUT ROWID;
CREATE INDEX domain_hits_by_session ON domain_hits (org_id, session_id, domain, scheme);
CREATE INDEX domain_hits_by_domain ON domain_hits (org_id, domain, session_id);
CREATE INDEX domain_hits_by_seq ON domain_hits (seq);

-- Deletions the replica must mirror (updates re-copy the row by its new seq).
CREATE TABLE tombstones (
  seq     INTEGER PRIMARY KEY,
  tbl     TEXT NOT NULL,
  row_key TEXT NOT NULL
);
