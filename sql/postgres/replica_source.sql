-- Reads of the analytics replica's catch-up from PostgreSQL (docs/design.md §8), run
-- by each node in one REPEATABLE READ READ ONLY transaction. `seq` is taken
-- before commit, so "seq above the last one copied" would skip a row whose
-- transaction commits late. Instead a catch-up copies the rows whose writing
-- transaction (`txid`, re-stamped on update) is visible in its own snapshot
-- but was not in the snapshot of the previous catch-up ($1): exactly the
-- transactions committed in between, whatever their seqs. Those are the ones
-- in progress at $1 and those from its xmax on, so the reads walk the
-- (txid, seq) indexes over just these ranges of keys, each (from, to]: $2, $3
-- is the key a page starts after, $4, $5 the key it may go up to.
-- name: source_identity
SELECT 'postgres:' || s.system_identifier::text || '/' || d.oid::text AS identity
FROM pg_control_system() AS s, pg_database AS d
WHERE d.datname = current_database();

-- Read before the catch-up's snapshot: every seq up to it was taken by then.
-- name: seq_reached
SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS seq FROM telemetry_seq;

-- name: current_snapshot
SELECT pg_current_snapshot()::text AS snapshot;

-- How many rows of {table} in one range this catch-up copies, counted up to
-- $6: whether it is a build (replica_source.ts BUILDING_ROWS). Sequence
-- numbers cannot tell: the sequence runs 2-4 times ahead of the rows.
-- name: rows_in_range
SELECT count(*)::int AS rows FROM (
  SELECT FROM {table}
  WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
    AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
  LIMIT $6
) AS copied;

-- The (txid, seq) of the $6-th following tool call / model call (0-based): bounds a chunk.
-- name: nth_tool_call_key
SELECT txid::text AS txid, seq FROM tool_calls
WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
  AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
ORDER BY tool_calls.txid, tool_calls.seq OFFSET $6 LIMIT 1;

-- name: nth_model_call_key
SELECT txid::text AS txid, seq FROM model_calls
WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
  AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
ORDER BY model_calls.txid, model_calls.seq OFFSET $6 LIMIT 1;

-- name: nth_metric_point_key
SELECT txid::text AS txid, seq FROM metric_points
WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
  AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
ORDER BY metric_points.txid, metric_points.seq OFFSET $6 LIMIT 1;

-- Column order matches the replica tables. (The orders name the table's
-- columns: a bare `txid` would be the text output column, sorted as text —
-- "1000" before "999" — and by a full sort instead of the index.) As from
-- SQLite (sql/sqlite/replica_source.sql), a row without a time from 1970 to
-- 9999 is not copied and a number outside 0..2^53-1 (cost: 0..1e6, NaN
-- excluded) is copied as absent: the copy goes through a double, and a
-- BIGINT near 2^63 rounds past INT64 there.

-- name: tool_calls_range
SELECT id, org_id, session_id, ts, tool_name, tool_type, outcome,
  CASE WHEN duration_ms BETWEEN 0 AND 9007199254740991 THEN duration_ms END AS duration_ms,
  agent_system, model, seq, actor_id,
  -- A file-writing call's arguments, turned into its lines by file_changes.ts.
  CASE WHEN category = 'file_write' THEN arguments END AS lines_added, NULL AS lines_removed
FROM tool_calls
WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
  AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
  AND ts BETWEEN 0 AND 253402300799999;

-- name: model_calls_range
SELECT id, org_id, session_id, ts, provider_name, model,
  CASE WHEN input_tokens BETWEEN 0 AND 9007199254740991 THEN input_tokens ELSE 0 END
    AS input_tokens,
  CASE WHEN output_tokens BETWEEN 0 AND 9007199254740991 THEN output_tokens ELSE 0 END
    AS output_tokens,
  CASE WHEN cache_read_tokens BETWEEN 0 AND 9007199254740991 THEN cache_read_tokens ELSE 0 END
    AS cache_read_tokens,
  CASE WHEN cache_creation_tokens BETWEEN 0 AND 9007199254740991
    THEN cache_creation_tokens ELSE 0 END AS cache_creation_tokens,
  CASE WHEN cost_usd BETWEEN 0 AND 1000000 THEN cost_usd END AS cost_usd,
  seq, actor_id, agent_system,
  CASE WHEN estimated_cost_usd BETWEEN 0 AND 1000000 THEN estimated_cost_usd END
    AS estimated_cost_usd
FROM model_calls
WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
  AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
  AND ts BETWEEN 0 AND 253402300799999;

-- name: risk_flags_range
SELECT call_id, flag, org_id, session_id, ts, tool_name, seq
FROM risk_flags
WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
  AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
  AND ts BETWEEN 0 AND 253402300799999;

-- name: domain_hits_range
SELECT call_id, domain, scheme, org_id, session_id, ts, seq
FROM domain_hits
WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
  AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
  AND ts BETWEEN 0 AND 253402300799999;

-- Metric points (issue #18): nanosecond times as decimal text, exact past 2^53.
-- name: metric_points_range
SELECT id, org_id, actor_id, agent, agent_system, session_id, measure, type, model, tool,
  decision, language, temporality, monotonic, series_id,
  start_time_ns::text AS start_time_ns, time_ns::text AS time_ns, ts, value, seq
FROM metric_points
WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
  AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
  AND ts BETWEEN 0 AND 253402300799999;

-- The next $6 tombstones, with their txid to page on.
-- name: tombstones_page
SELECT seq, tbl, row_key, txid::text AS txid
FROM tombstones
WHERE (txid, seq) > ($2::xid8, $3::bigint) AND (txid, seq) <= ($4::xid8, $5::bigint)
  AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)
ORDER BY tombstones.txid, tombstones.seq
LIMIT $6;
