-- Statements of the retention task: delete the oldest telemetry in bounded
-- batches, keep the sessions they touched consistent, and leave tombstones so
-- the DuckDB replica deletes the same rows.

-- Organizations with telemetry, one index seek each.
-- name: organizations
WITH RECURSIVE o(org_id) AS (
  SELECT min(org_id) FROM sessions
  UNION ALL
  SELECT (SELECT min(org_id) FROM sessions WHERE org_id > o.org_id) FROM o WHERE o.org_id IS NOT NULL
)
SELECT org_id FROM o WHERE org_id IS NOT NULL;

-- name: oldest_tool_calls
SELECT id, org_id, session_id FROM tool_calls WHERE org_id = ? AND ts < ? ORDER BY ts LIMIT ?;

-- name: oldest_model_calls
SELECT id, org_id, session_id FROM model_calls WHERE org_id = ? AND ts < ? ORDER BY ts LIMIT ?;

-- name: delete_tool_call
DELETE FROM tool_calls WHERE id = ?;

-- name: delete_model_call
DELETE FROM model_calls WHERE id = ?;

-- name: recount_session_cost
UPDATE sessions SET
  seq = ?1,
  cost_usd = coalesce((
    SELECT sum(cost_usd) FROM model_calls WHERE org_id = ?2 AND session_id = ?3
  ), 0)
WHERE org_id = ?2 AND session_id = ?3;

-- name: drop_empty_session
DELETE FROM sessions
WHERE org_id = ?1 AND session_id = ?2
  AND NOT EXISTS (SELECT 1 FROM tool_calls WHERE org_id = ?1 AND session_id = ?2)
  AND NOT EXISTS (SELECT 1 FROM model_calls WHERE org_id = ?1 AND session_id = ?2);

-- name: oldest_time
SELECT min(ts) AS ts FROM (
  SELECT min(ts) AS ts FROM tool_calls WHERE org_id = ?1
  UNION ALL
  SELECT min(ts) FROM model_calls WHERE org_id = ?1
);
