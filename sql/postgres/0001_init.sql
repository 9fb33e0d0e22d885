-- PostgreSQL store (docs/design.md §8): the key store and the telemetry tables in one
-- database, shared by every node. Same tables and meaning as the SQLite files
-- (sql/sqlite/keys_0001_init.sql, telemetry_0001..0003), with two additions:
-- `seq` comes from one sequence (raised on every insert and update), and every
-- replicated row records the transaction that last wrote it (`txid`), so each
-- node's DuckDB replica can copy exactly the transactions committed since its
-- last catch-up, whatever order they committed in (sql/postgres/replica_source.sql).

CREATE TABLE orgs (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE members (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES orgs (id),
  email      TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE (org_id, email)
);

CREATE TABLE api_keys (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES orgs (id),
  member_id  TEXT NOT NULL,
  name       TEXT NOT NULL DEFAULT '',
  key_hash   TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX api_keys_by_org ON api_keys (org_id, created_at, id);
CREATE INDEX api_keys_by_member ON api_keys (member_id);

CREATE TABLE actors (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES orgs (id),
  name            TEXT NOT NULL DEFAULT '',
  ingest_key_hash TEXT NOT NULL UNIQUE,
  created_at      BIGINT NOT NULL,
  revoked_at      BIGINT
);

-- Telemetry text compares byte-wise (COLLATE "C"), as SQLite's does, whatever
-- the database's locale: lists, cursors and facets then order as on SQLite,
-- straight from the indexes.
CREATE SEQUENCE telemetry_seq AS BIGINT;

CREATE TABLE sessions (
  org_id           TEXT COLLATE "C" NOT NULL,
  session_id       TEXT COLLATE "C" NOT NULL,
  seq              BIGINT NOT NULL,
  actor_id         TEXT COLLATE "C" NOT NULL,
  first_seen       BIGINT,
  last_seen        BIGINT,
  tool_call_count  BIGINT NOT NULL DEFAULT 0,
  error_count      BIGINT NOT NULL DEFAULT 0,
  success_count    BIGINT NOT NULL DEFAULT 0,
  agent_system     TEXT COLLATE "C" NOT NULL DEFAULT '',
  agent_version    TEXT COLLATE "C" NOT NULL DEFAULT '',
  model            TEXT COLLATE "C" NOT NULL DEFAULT '',
  model_ts         BIGINT,
  cost_usd         DOUBLE PRECISION NOT NULL DEFAULT 0,
  provider_name    TEXT COLLATE "C" NOT NULL DEFAULT '',
  PRIMARY KEY (org_id, session_id)
);
CREATE INDEX sessions_by_last_seen ON sessions (org_id, last_seen DESC, session_id DESC)
  WHERE last_seen IS NOT NULL;
CREATE INDEX sessions_by_agent ON sessions (org_id, agent_system);

CREATE TABLE tool_calls (
  id                TEXT COLLATE "C" PRIMARY KEY,
  org_id            TEXT COLLATE "C" NOT NULL,
  seq               BIGINT NOT NULL,
  txid              XID8 NOT NULL DEFAULT pg_current_xact_id(),
  session_id        TEXT COLLATE "C" NOT NULL,
  actor_id          TEXT COLLATE "C" NOT NULL,
  ts                BIGINT NOT NULL,
  tool_name         TEXT COLLATE "C" NOT NULL,
  tool_type         TEXT COLLATE "C" NOT NULL,
  category          TEXT COLLATE "C" NOT NULL,
  outcome           TEXT COLLATE "C" NOT NULL CHECK (outcome IN ('ok', 'error', 'rejected')),
  duration_ms       BIGINT,
  result_size_bytes BIGINT,
  agent_system      TEXT COLLATE "C" NOT NULL,
  agent_version     TEXT COLLATE "C" NOT NULL DEFAULT '',
  model             TEXT COLLATE "C",
  error_message     TEXT COLLATE "C",
  error_type        TEXT COLLATE "C",
  decision          TEXT COLLATE "C",
  decision_source   TEXT COLLATE "C",
  prompt_id         TEXT COLLATE "C",
  agent_name        TEXT COLLATE "C",
  provider_name     TEXT COLLATE "C",
  tool_call_id      TEXT COLLATE "C",
  tool_use_id       TEXT COLLATE "C",
  tool_description  TEXT COLLATE "C",
  source            TEXT COLLATE "C" NOT NULL,
  arguments         TEXT COLLATE "C",
  result            TEXT COLLATE "C",
  mcp_server_name   TEXT COLLATE "C",
  mcp_server_scope  TEXT COLLATE "C",
  os_type           TEXT COLLATE "C",
  host_arch         TEXT COLLATE "C",
  terminal_type     TEXT COLLATE "C",
  cwd               TEXT COLLATE "C",
  trace_id          TEXT COLLATE "C",
  span_id           TEXT COLLATE "C"
);
CREATE INDEX tool_calls_by_time ON tool_calls (org_id, ts DESC, id DESC);
CREATE INDEX tool_calls_by_session ON tool_calls (org_id, session_id, ts, id);
CREATE INDEX tool_calls_by_tool_name ON tool_calls (org_id, tool_name, ts DESC, id DESC);
CREATE INDEX tool_calls_by_tool_type ON tool_calls (org_id, tool_type, ts DESC, id DESC);
CREATE INDEX tool_calls_by_category ON tool_calls (org_id, category, ts DESC, id DESC);
CREATE INDEX tool_calls_by_outcome ON tool_calls (org_id, outcome, ts DESC, id DESC);
CREATE INDEX tool_calls_by_actor ON tool_calls (org_id, actor_id, ts DESC, id DESC);
CREATE INDEX tool_calls_by_txid ON tool_calls (txid, seq);

CREATE TABLE decisions (
  org_id          TEXT COLLATE "C" NOT NULL,
  session_id      TEXT COLLATE "C" NOT NULL,
  tool_call_id    TEXT COLLATE "C" NOT NULL,
  decision        TEXT COLLATE "C" NOT NULL,
  decision_source TEXT COLLATE "C",
  PRIMARY KEY (org_id, session_id, tool_call_id)
);

CREATE TABLE model_calls (
  id                    TEXT COLLATE "C" PRIMARY KEY,
  org_id                TEXT COLLATE "C" NOT NULL,
  seq                   BIGINT NOT NULL,
  txid                  XID8 NOT NULL DEFAULT pg_current_xact_id(),
  session_id            TEXT COLLATE "C" NOT NULL,
  actor_id              TEXT COLLATE "C" NOT NULL,
  ts                    BIGINT NOT NULL,
  agent_system          TEXT COLLATE "C" NOT NULL,
  provider_name         TEXT COLLATE "C" NOT NULL DEFAULT '',
  model                 TEXT COLLATE "C" NOT NULL DEFAULT '',
  input_tokens          BIGINT NOT NULL DEFAULT 0,
  output_tokens         BIGINT NOT NULL DEFAULT 0,
  cache_read_tokens     BIGINT NOT NULL DEFAULT 0,
  cache_creation_tokens BIGINT NOT NULL DEFAULT 0,
  cost_usd              DOUBLE PRECISION,
  duration_ms           BIGINT
);
CREATE INDEX model_calls_by_session ON model_calls (org_id, session_id);
CREATE INDEX model_calls_by_time ON model_calls (org_id, ts);
CREATE INDEX model_calls_by_txid ON model_calls (txid, seq);

CREATE TABLE risk_flags (
  call_id      TEXT COLLATE "C" NOT NULL REFERENCES tool_calls (id) ON DELETE CASCADE,
  flag         TEXT COLLATE "C" NOT NULL,
  org_id       TEXT COLLATE "C" NOT NULL,
  seq          BIGINT NOT NULL,
  txid         XID8 NOT NULL DEFAULT pg_current_xact_id(),
  session_id   TEXT COLLATE "C" NOT NULL,
  ts           BIGINT NOT NULL,
  tool_call_id TEXT COLLATE "C" NOT NULL,
  tool_name    TEXT COLLATE "C" NOT NULL,
  evidence     TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (call_id, flag)
);
CREATE INDEX risk_flags_by_session ON risk_flags (org_id, session_id, ts, flag);
CREATE INDEX risk_flags_by_txid ON risk_flags (txid, seq);

CREATE TABLE domain_hits (
  call_id    TEXT COLLATE "C" NOT NULL REFERENCES tool_calls (id) ON DELETE CASCADE,
  domain     TEXT COLLATE "C" NOT NULL,
  scheme     TEXT COLLATE "C" NOT NULL,
  org_id     TEXT COLLATE "C" NOT NULL,
  seq        BIGINT NOT NULL,
  txid       XID8 NOT NULL DEFAULT pg_current_xact_id(),
  session_id TEXT COLLATE "C" NOT NULL,
  ts         BIGINT NOT NULL,
  PRIMARY KEY (call_id, domain, scheme)
);
CREATE INDEX domain_hits_by_session ON domain_hits (org_id, session_id, domain, scheme);
CREATE INDEX domain_hits_by_domain ON domain_hits (org_id, domain, session_id);
CREATE INDEX domain_hits_by_txid ON domain_hits (txid, seq);

-- Deletions the replicas must mirror (updates re-copy the row: its txid changes).
CREATE TABLE tombstones (
  seq     BIGINT PRIMARY KEY,
  txid    XID8 NOT NULL DEFAULT pg_current_xact_id(),
  tbl     TEXT COLLATE "C" NOT NULL,
  row_key TEXT COLLATE "C" NOT NULL
);
CREATE INDEX tombstones_by_txid ON tombstones (txid, seq);

-- An update re-stamps the row with its transaction, so replicas copy it again.
CREATE FUNCTION stamp_txid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.txid := pg_current_xact_id();
  RETURN NEW;
END;
$$;
CREATE TRIGGER tool_calls_stamp BEFORE UPDATE ON tool_calls
  FOR EACH ROW EXECUTE FUNCTION stamp_txid();
CREATE TRIGGER model_calls_stamp BEFORE UPDATE ON model_calls
  FOR EACH ROW EXECUTE FUNCTION stamp_txid();
CREATE TRIGGER risk_flags_stamp BEFORE UPDATE ON risk_flags
  FOR EACH ROW EXECUTE FUNCTION stamp_txid();
CREATE TRIGGER domain_hits_stamp BEFORE UPDATE ON domain_hits
  FOR EACH ROW EXECUTE FUNCTION stamp_txid();
