-- Reads of the replica's source, run on telemetry.db (SQLite) through the
-- replica's own read-only connection; the reads of one chunk share one short
-- read transaction. Each range read walks a `*_by_seq` index (tombstones:
-- their primary key). Column order matches the replica tables.

-- name: current_seq
SELECT value FROM counters WHERE name = 'seq';

-- The seq of the n-th tool call / model call after a seq: bounds a chunk.
-- name: nth_tool_call_seq
SELECT seq FROM tool_calls WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET ?;

-- name: nth_model_call_seq
SELECT seq FROM model_calls WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET ?;

-- name: tool_calls_range
SELECT id, org_id, session_id, ts, tool_name, tool_type, outcome, duration_ms, agent_system,
  model, seq
FROM tool_calls WHERE seq > ? AND seq <= ? ORDER BY seq;

-- name: model_calls_range
SELECT id, org_id, session_id, ts, provider_name, model, input_tokens, output_tokens,
  cache_read_tokens, cache_creation_tokens, cost_usd, seq
FROM model_calls WHERE seq > ? AND seq <= ? ORDER BY seq;

-- name: risk_flags_range
SELECT call_id, flag, org_id, session_id, ts, tool_name, seq
FROM risk_flags WHERE seq > ? AND seq <= ? ORDER BY seq;

-- name: domain_hits_range
SELECT call_id, domain, scheme, org_id, session_id, ts, seq
FROM domain_hits WHERE seq > ? AND seq <= ? ORDER BY seq;

-- name: tombstones_range
SELECT seq, tbl, row_key FROM tombstones WHERE seq > ? AND seq <= ? ORDER BY seq;
