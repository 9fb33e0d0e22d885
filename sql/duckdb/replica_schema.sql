-- The analytics replica (analytics.duckdb): columnar copies of the telemetry
-- rows the insights read, kept in step with telemetry.db or PostgreSQL. Derived
-- data: deleting the file is always safe, it is rebuilt at start. No primary
-- keys: every merge deletes by key before it inserts, and an ART index would
-- only slow the bulk copy down.

-- meta keys: schema_version; source (which database: "sqlite",
-- "postgres:<system identifier>/<database oid>"); last_seq; mark (PostgreSQL:
-- the snapshot of the last complete catch-up, NULL before it).

-- name: create_tables
CREATE TABLE meta (
  key   VARCHAR NOT NULL,
  value VARCHAR
);

CREATE TABLE tool_calls (
  id           VARCHAR NOT NULL,
  org_id       VARCHAR NOT NULL,
  session_id   VARCHAR NOT NULL,
  ts           BIGINT NOT NULL,
  tool_name    VARCHAR NOT NULL,
  tool_type    VARCHAR NOT NULL,
  outcome      VARCHAR NOT NULL,
  duration_ms  BIGINT,
  agent_system VARCHAR NOT NULL,
  model        VARCHAR,
  seq          BIGINT NOT NULL,
  -- Schema 4 (issue #18): the actor, and the lines a file-writing call changed
  -- as src/analytics/file_changes.ts derives them from its arguments (NULL:
  -- not a file-writing call, or its arguments say nothing).
  actor_id      VARCHAR NOT NULL,
  lines_added   BIGINT,
  lines_removed BIGINT
);

CREATE TABLE model_calls (
  id                    VARCHAR NOT NULL,
  org_id                VARCHAR NOT NULL,
  session_id            VARCHAR NOT NULL,
  ts                    BIGINT NOT NULL,
  provider_name         VARCHAR NOT NULL,
  model                 VARCHAR NOT NULL,
  input_tokens          BIGINT NOT NULL,
  output_tokens         BIGINT NOT NULL,
  cache_read_tokens     BIGINT NOT NULL,
  cache_creation_tokens BIGINT NOT NULL,
  cost_usd              DOUBLE,
  seq                   BIGINT NOT NULL,
  -- Schema 4 (issue #18): whose call, from which agent.
  actor_id              VARCHAR NOT NULL,
  agent_system          VARCHAR NOT NULL,
  -- Schema 5 (issue #33): the price table's estimate when no cost was reported.
  estimated_cost_usd    DOUBLE
);

CREATE TABLE risk_flags (
  call_id    VARCHAR NOT NULL,
  flag       VARCHAR NOT NULL,
  org_id     VARCHAR NOT NULL,
  session_id VARCHAR NOT NULL,
  ts         BIGINT NOT NULL,
  tool_name  VARCHAR NOT NULL,
  seq        BIGINT NOT NULL
);

CREATE TABLE domain_hits (
  call_id    VARCHAR NOT NULL,
  domain     VARCHAR NOT NULL,
  scheme     VARCHAR NOT NULL,
  org_id     VARCHAR NOT NULL,
  session_id VARCHAR NOT NULL,
  ts         BIGINT NOT NULL,
  seq        BIGINT NOT NULL
);

-- Agents' metric points (issue #18), copied append-only: a point is stored
-- once per (series, start time, time) and never updated. Read through
-- sql/metrics/interval_deltas.sql.
CREATE TABLE metric_points (
  id            VARCHAR NOT NULL,
  org_id        VARCHAR NOT NULL,
  actor_id      VARCHAR NOT NULL,
  agent         VARCHAR NOT NULL,
  agent_system  VARCHAR NOT NULL,
  session_id    VARCHAR NOT NULL,
  measure       VARCHAR NOT NULL,
  type          VARCHAR NOT NULL,
  model         VARCHAR NOT NULL,
  tool          VARCHAR NOT NULL,
  decision      VARCHAR NOT NULL,
  language      VARCHAR NOT NULL,
  temporality   VARCHAR NOT NULL,
  monotonic     BIGINT NOT NULL,
  series_id     VARCHAR NOT NULL,
  start_time_ns BIGINT,
  time_ns       BIGINT NOT NULL,
  ts            BIGINT NOT NULL,
  value         DOUBLE NOT NULL,
  seq           BIGINT NOT NULL
);

-- name: init_meta
INSERT INTO meta (key, value)
VALUES ('schema_version', $version), ('source', $source), ('last_seq', '0'), ('mark', NULL);

-- name: read_meta
SELECT key, value FROM meta;

-- Staging tables live in the sync connection's temp catalog: the appender
-- fills them, the merge of each group of chunks empties them (same transaction).

-- name: create_staging
CREATE TEMP TABLE stage_tool_calls AS SELECT * FROM tool_calls LIMIT 0;
CREATE TEMP TABLE stage_model_calls AS SELECT * FROM model_calls LIMIT 0;
CREATE TEMP TABLE stage_risk_flags AS SELECT * FROM risk_flags LIMIT 0;
CREATE TEMP TABLE stage_domain_hits AS SELECT * FROM domain_hits LIMIT 0;
CREATE TEMP TABLE stage_metric_points AS SELECT * FROM metric_points LIMIT 0;
CREATE TEMP TABLE stage_tombstones (seq BIGINT NOT NULL, tbl VARCHAR NOT NULL, row_key VARCHAR NOT NULL);

-- A first build starts from empty tables: one that failed midway may have
-- left rows behind (nothing recorded them).

-- name: clear_tables
DELETE FROM tool_calls;
DELETE FROM model_calls;
DELETE FROM risk_flags;
DELETE FROM domain_hits;
DELETE FROM metric_points;

-- Rows already in the replica under the same key are replaced (an updated
-- row comes back with a new seq, or in PostgreSQL a new txid). Skipped while
-- the replica is empty (one catch-up reads one state, where every key occurs
-- once).

-- name: delete_tool_calls
DELETE FROM tool_calls WHERE id IN (SELECT id FROM temp.stage_tool_calls);

-- name: delete_model_calls
DELETE FROM model_calls WHERE id IN (SELECT id FROM temp.stage_model_calls);

-- name: delete_risk_flags
DELETE FROM risk_flags AS r USING temp.stage_risk_flags AS s
WHERE r.call_id = s.call_id AND r.flag = s.flag;

-- name: delete_domain_hits
DELETE FROM domain_hits AS d USING temp.stage_domain_hits AS s
WHERE d.call_id = s.call_id AND d.domain = s.domain AND d.scheme = s.scheme;

-- name: delete_metric_points
DELETE FROM metric_points WHERE id IN (SELECT id FROM temp.stage_metric_points);

-- From SQLite a row's old copy has its ts (updates in place keep it; see
-- sqlite_source.ts): joining on ts too lets DuckDB skip the row groups
-- outside the staged rows' times instead of scanning every id.

-- name: delete_same_ts_tool_calls
DELETE FROM tool_calls AS c USING temp.stage_tool_calls AS s
WHERE c.ts = s.ts AND c.id = s.id;

-- name: delete_same_ts_model_calls
DELETE FROM model_calls AS m USING temp.stage_model_calls AS s
WHERE m.ts = s.ts AND m.id = s.id;

-- name: delete_same_ts_risk_flags
DELETE FROM risk_flags AS r USING temp.stage_risk_flags AS s
WHERE r.ts = s.ts AND r.call_id = s.call_id AND r.flag = s.flag;

-- name: delete_same_ts_domain_hits
DELETE FROM domain_hits AS d USING temp.stage_domain_hits AS s
WHERE d.ts = s.ts AND d.call_id = s.call_id AND d.domain = s.domain AND d.scheme = s.scheme;

-- name: delete_same_ts_metric_points
DELETE FROM metric_points AS p USING temp.stage_metric_points AS s
WHERE p.ts = s.ts AND p.id = s.id;

-- name: insert_tool_calls
INSERT INTO tool_calls SELECT * FROM temp.stage_tool_calls;

-- name: insert_model_calls
INSERT INTO model_calls SELECT * FROM temp.stage_model_calls;

-- name: insert_risk_flags
INSERT INTO risk_flags SELECT * FROM temp.stage_risk_flags;

-- name: insert_domain_hits
INSERT INTO domain_hits SELECT * FROM temp.stage_domain_hits;

-- name: insert_metric_points
INSERT INTO metric_points SELECT * FROM temp.stage_metric_points;

-- Tombstones mirror deletions. tbl 'detections' (row_key = tool call id): a
-- reject replaced by its result lost its flags and hits. tbl 'tool_calls' /
-- 'model_calls': retention deleted the row, and with a tool call its flags and
-- hits (ON DELETE CASCADE). From SQLite each drops only rows written before it
-- (seq below), so a row stored again later stays.

-- name: apply_tombstones
DELETE FROM tool_calls AS c USING temp.stage_tombstones AS t
WHERE t.tbl = 'tool_calls' AND c.id = t.row_key AND c.seq < t.seq;
DELETE FROM model_calls AS m USING temp.stage_tombstones AS t
WHERE t.tbl = 'model_calls' AND m.id = t.row_key AND m.seq < t.seq;
DELETE FROM risk_flags AS r USING temp.stage_tombstones AS t
WHERE t.tbl IN ('detections', 'tool_calls') AND r.call_id = t.row_key AND r.seq < t.seq;
DELETE FROM domain_hits AS d USING temp.stage_tombstones AS t
WHERE t.tbl IN ('detections', 'tool_calls') AND d.call_id = t.row_key AND d.seq < t.seq;
DELETE FROM metric_points AS p USING temp.stage_tombstones AS t
WHERE t.tbl = 'metric_points' AND p.id = t.row_key AND p.seq < t.seq;

-- From PostgreSQL they are applied before the same catch-up's copies merge,
-- and drop every row of their key (postgres_source.ts says why).

-- name: apply_tombstones_by_key
DELETE FROM tool_calls AS c USING temp.stage_tombstones AS t
WHERE t.tbl = 'tool_calls' AND c.id = t.row_key;
DELETE FROM model_calls AS m USING temp.stage_tombstones AS t
WHERE t.tbl = 'model_calls' AND m.id = t.row_key;
DELETE FROM risk_flags AS r USING temp.stage_tombstones AS t
WHERE t.tbl IN ('detections', 'tool_calls') AND r.call_id = t.row_key;
DELETE FROM domain_hits AS d USING temp.stage_tombstones AS t
WHERE t.tbl IN ('detections', 'tool_calls') AND d.call_id = t.row_key;
DELETE FROM metric_points AS p USING temp.stage_tombstones AS t
WHERE t.tbl = 'metric_points' AND p.id = t.row_key;

-- name: clear_staging
DELETE FROM temp.stage_tool_calls;
DELETE FROM temp.stage_model_calls;
DELETE FROM temp.stage_risk_flags;
DELETE FROM temp.stage_domain_hits;
DELETE FROM temp.stage_metric_points;
DELETE FROM temp.stage_tombstones;

-- {seq}: an integer; {mark}: NULL or a quoted text. Inlined, not bound: the
-- statement runs in one script with the merge and the commit (replica.ts).

-- name: set_progress
UPDATE meta SET value = CASE key WHEN 'last_seq' THEN '{seq}' ELSE {mark} END
WHERE key IN ('last_seq', 'mark');
