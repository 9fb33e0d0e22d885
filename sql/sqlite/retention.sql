-- Statements of the retention task: delete the oldest telemetry in bounded
-- batches, keep the sessions they touched consistent, and leave tombstones so
-- the DuckDB replica deletes the same rows.

-- name: oldest_tool_calls
SELECT id, org_id, session_id FROM tool_calls WHERE ts < ? ORDER BY ts LIMIT ?;

-- name: oldest_model_calls
SELECT id, org_id, session_id FROM model_calls WHERE ts < ? ORDER BY ts LIMIT ?;

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
  SELECT min(ts) AS ts FROM tool_calls UNION ALL SELECT min(ts) FROM model_calls
);
