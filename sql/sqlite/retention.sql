-- Statements of the retention task: delete the oldest telemetry in bounded
-- batches, keep the sessions they touched consistent, and leave tombstones so
-- the DuckDB replica deletes the same rows.

-- Organizations with telemetry (sessions or metric points), one index seek each.
-- name: organizations
WITH RECURSIVE o(org_id) AS (
  SELECT min(org_id) FROM sessions
  UNION ALL
  SELECT (SELECT min(org_id) FROM sessions WHERE org_id > o.org_id) FROM o WHERE o.org_id IS NOT NULL
),
m(org_id) AS (
  SELECT min(org_id) FROM metric_points
  UNION ALL
  SELECT (SELECT min(org_id) FROM metric_points WHERE org_id > m.org_id)
  FROM m WHERE m.org_id IS NOT NULL
)
SELECT org_id FROM o WHERE org_id IS NOT NULL
UNION
SELECT org_id FROM m WHERE org_id IS NOT NULL;

-- name: oldest_tool_calls
SELECT id, org_id, session_id, tool_call_id FROM tool_calls
WHERE org_id = ? AND ts < ? ORDER BY ts LIMIT ?;

-- name: oldest_model_calls
SELECT id, org_id, session_id FROM model_calls WHERE org_id = ? AND ts < ? ORDER BY ts LIMIT ?;

-- name: delete_tool_call
DELETE FROM calls WHERE id = ?;

-- name: delete_model_call
DELETE FROM keyed_model_calls WHERE id = ?;

-- A permission decision goes with its call, and a session's last ones (a
-- decision whose result never came) with the session: they hold the agent's
-- ids, and retention promises nothing older stays.
-- name: delete_call_decision
DELETE FROM keyed_decisions
WHERE session_key = (
    SELECT s.session_key FROM session_keys AS s JOIN org_keys AS o ON o.org_key = s.org_key
    WHERE o.org_id = ? AND s.session_id = ?
  )
  AND tool_call_id = ?;

-- name: delete_session_decisions
DELETE FROM keyed_decisions
WHERE session_key = (
  SELECT s.session_key FROM session_keys AS s JOIN org_keys AS o ON o.org_key = s.org_key
  WHERE o.org_id = ? AND s.session_id = ?
);

-- A dropped session's dimensions go with it (docs/api.md §4.22).
-- name: delete_session_dimensions
DELETE FROM session_dimensions WHERE org_id = ? AND session_id = ?;

-- A dimension value no session has any more leaves its key's values, so
-- that the bound of 1,000 per key counts values still in use.
-- name: delete_unused_dimension_values
DELETE FROM dimension_values
WHERE NOT EXISTS (
  SELECT 1 FROM session_dimensions AS s
  WHERE s.org_id = dimension_values.org_id AND s.key = dimension_values.key
    AND s.value = dimension_values.value
);

-- name: recount_session_cost
UPDATE sessions SET
  seq = ?1,
  (cost_usd, reported_cost_calls, estimated_cost_calls, estimated_cost_usd) = (
    SELECT coalesce(sum(cost_usd), 0), count(cost_usd), count(estimated_cost_usd),
      coalesce(sum(estimated_cost_usd), 0)
    FROM model_calls WHERE org_id = ?2 AND session_id = ?3
  )
WHERE org_id = ?2 AND session_id = ?3;

-- name: drop_empty_session
DELETE FROM sessions
WHERE org_id = ?1 AND session_id = ?2
  AND NOT EXISTS (SELECT 1 FROM tool_calls WHERE org_id = ?1 AND session_id = ?2)
  AND NOT EXISTS (SELECT 1 FROM model_calls WHERE org_id = ?1 AND session_id = ?2);

-- A dropped session's prompts go with it, before its key.
-- name: delete_session_prompt_keys
DELETE FROM prompt_keys
WHERE session_key = (
  SELECT s.session_key FROM session_keys AS s JOIN org_keys AS o ON o.org_key = s.org_key
  WHERE o.org_id = ? AND s.session_id = ?
);

-- A dropped session's key goes with it (no call holds it any more): the
-- agent's session id is not kept past its telemetry.
-- name: delete_session_key
DELETE FROM session_keys
WHERE session_id = ?2 AND org_key = (SELECT org_key FROM org_keys WHERE org_id = ?1);

-- name: oldest_time
SELECT min(ts) AS ts FROM (
  SELECT min(ts) AS ts FROM tool_calls WHERE org_id = ?1
  UNION ALL
  SELECT min(ts) FROM model_calls WHERE org_id = ?1
  UNION ALL
  SELECT min(ts) FROM metric_points WHERE org_id = ?1
);

-- Metric points go by whole (series, start time) group, once every point of
-- the group is before the cutoff: deleting only a cumulative series' older
-- points would make its oldest remaining point count its whole total as new.
-- Delta points start where the previous one ended, so each is its own group.
-- name: oldest_metric_points
SELECT p.id FROM metric_points AS p
WHERE p.org_id = ?1 AND p.ts < ?2
  AND NOT EXISTS (
    SELECT 1 FROM metric_points AS q
    WHERE q.series_id = p.series_id AND q.start_time_ns IS p.start_time_ns
      AND q.org_id = p.org_id AND q.actor_id = p.actor_id AND q.ts >= ?2
  )
ORDER BY p.ts
LIMIT ?3;

-- name: delete_metric_point
DELETE FROM metric_points WHERE id = ?;

-- What stored nothing (GET /v1/unmapped-events) ages out like the telemetry:
-- a row not seen since the cutoff goes.
-- name: delete_old_unmapped_events
DELETE FROM unmapped_events WHERE last_seen < ?;
