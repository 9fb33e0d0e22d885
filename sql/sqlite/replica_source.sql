-- Reads of the replica's source, run on telemetry.db (SQLite) through the
-- replica's own read-only connection; the reads of one chunk share one short
-- read transaction. Each range read walks a `*_by_seq` index (tombstones:
-- their primary key). Column order matches the replica tables.
--
-- A value the replica's BIGINT columns cannot hold must never reach them: one
-- used to fail every catch-up, and so every organization's insights. Ingest
-- rejects such values and migration 4 deleted those stored before, so these
-- guards only hold the line: a row without a whole-millisecond time from 1970
-- to 9999 is not copied, and a duration or token count that is not an integer
-- from 0 to 2^53-1, or a cost that is not from 0 to 1e6, is copied as absent.

-- name: current_seq
SELECT value FROM counters WHERE name = 'seq';

-- The seq of the n-th tool call / model call after a seq: bounds a chunk.
-- name: nth_tool_call_seq
SELECT seq FROM calls WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET ?;

-- name: nth_model_call_seq
SELECT seq FROM keyed_model_calls WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET ?;

-- name: nth_metric_point_seq
SELECT seq FROM metric_points WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET ?;

-- Tool calls, model calls and metric points end with their rowid, which is
-- not a replica column (the appender stops before it): sqlite_source.ts tells
-- by it which rows were stored after the last chunk it read.

-- name: max_rowids
SELECT (SELECT max(call_key) FROM calls) AS tool_calls,
  (SELECT max(model_call_key) FROM keyed_model_calls) AS model_calls,
  (SELECT max(rowid) FROM metric_points) AS metric_points;

-- Read from `calls` itself, not the tool_calls view, for its key (its rowid).
-- name: tool_calls_range
SELECT c.id, o.org_id, s.session_id, c.ts, c.tool_name, c.tool_type, c.outcome,
  CASE WHEN typeof(c.duration_ms) = 'integer' AND c.duration_ms BETWEEN 0 AND 9007199254740991
    THEN c.duration_ms END AS duration_ms,
  c.agent_system, c.model, c.seq, a.actor_id,
  -- A file-writing call's arguments, turned into its lines by file_changes.ts.
  CASE WHEN c.category = 'file_write' THEN c.arguments END AS lines_added, NULL AS lines_removed,
  c.call_key AS rowid
FROM calls AS c
JOIN org_keys AS o ON o.org_key = c.org_key
JOIN session_keys AS s ON s.session_key = c.session_key
JOIN actor_keys AS a ON a.actor_key = c.actor_key
WHERE c.seq > ? AND c.seq <= ?
  AND typeof(c.ts) = 'integer' AND c.ts BETWEEN 0 AND 253402300799999
ORDER BY c.seq;

-- name: model_calls_range
SELECT m.id, o.org_id, s.session_id, m.ts, m.provider_name, m.model,
  CASE WHEN typeof(m.input_tokens) = 'integer' AND m.input_tokens BETWEEN 0 AND 9007199254740991
    THEN m.input_tokens ELSE 0 END AS input_tokens,
  CASE WHEN typeof(m.output_tokens) = 'integer' AND m.output_tokens BETWEEN 0 AND 9007199254740991
    THEN m.output_tokens ELSE 0 END AS output_tokens,
  CASE WHEN typeof(m.cache_read_tokens) = 'integer'
      AND m.cache_read_tokens BETWEEN 0 AND 9007199254740991
    THEN m.cache_read_tokens ELSE 0 END AS cache_read_tokens,
  CASE WHEN typeof(m.cache_creation_tokens) = 'integer'
      AND m.cache_creation_tokens BETWEEN 0 AND 9007199254740991
    THEN m.cache_creation_tokens ELSE 0 END AS cache_creation_tokens,
  CASE WHEN m.cost_usd BETWEEN 0 AND 1000000 THEN m.cost_usd END AS cost_usd,
  m.seq, a.actor_id, m.agent_system,
  CASE WHEN m.estimated_cost_usd BETWEEN 0 AND 1000000 THEN m.estimated_cost_usd END
    AS estimated_cost_usd,
  m.model_call_key AS rowid
FROM keyed_model_calls AS m
JOIN org_keys AS o ON o.org_key = m.org_key
JOIN session_keys AS s ON s.session_key = m.session_key
JOIN actor_keys AS a ON a.actor_key = m.actor_key
WHERE m.seq > ? AND m.seq <= ?
  AND typeof(m.ts) = 'integer' AND m.ts BETWEEN 0 AND 253402300799999
ORDER BY m.seq;

-- name: risk_flags_range
SELECT call_id, flag, org_id, session_id, ts, tool_name, seq
FROM risk_flags
WHERE seq > ? AND seq <= ? AND typeof(ts) = 'integer' AND ts BETWEEN 0 AND 253402300799999
ORDER BY seq;

-- name: domain_hits_range
SELECT call_id, domain, scheme, org_id, session_id, ts, seq
FROM domain_hits
WHERE seq > ? AND seq <= ? AND typeof(ts) = 'integer' AND ts BETWEEN 0 AND 253402300799999
ORDER BY seq;

-- Metric points (issue #18): nanosecond times as decimal text, exact past 2^53.
-- name: metric_points_range
SELECT id, org_id, actor_id, agent, agent_system, session_id, measure, type, model, tool,
  decision, language, temporality, monotonic, series_id,
  CAST(start_time_ns AS TEXT) AS start_time_ns, CAST(time_ns AS TEXT) AS time_ns, ts, value, seq, rowid
FROM metric_points
WHERE seq > ? AND seq <= ? AND typeof(ts) = 'integer' AND ts BETWEEN 0 AND 253402300799999
ORDER BY seq;

-- name: tombstones_range
SELECT seq, tbl, row_key FROM tombstones WHERE seq > ? AND seq <= ? ORDER BY seq;
