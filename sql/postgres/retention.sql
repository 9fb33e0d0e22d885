-- Statements of the PostgreSQL retention task (src/store/postgres/retention.ts):
-- delete the oldest telemetry of one organization in bounded batches, keep the
-- sessions they touched consistent, and leave tombstones so the replicas delete
-- the same rows. Session locks, recounts and tombstones come from ingest.sql.

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
SELECT id, session_id FROM tool_calls WHERE org_id = $1 AND ts < $2 ORDER BY ts LIMIT $3;

-- name: oldest_model_calls
SELECT id, session_id FROM model_calls WHERE org_id = $1 AND ts < $2 ORDER BY ts LIMIT $3;

-- Still old once the sessions are locked (a replaced call may be newer now).
-- Flags and domain hits go with their call (ON DELETE CASCADE).
-- A permission decision goes with its call, and a session's last ones (a
-- decision whose result never came) with the session (drop_empty_sessions):
-- they hold the agent's ids, and retention promises nothing older stays.
-- name: delete_old_tool_calls
WITH gone AS (
  DELETE FROM tool_calls WHERE id = ANY($1::text[]) AND ts < $2
  RETURNING id, org_id, session_id, tool_call_id
),
decided AS (
  DELETE FROM decisions AS d USING gone
  WHERE d.org_id = gone.org_id AND d.session_id = gone.session_id
    AND d.tool_call_id = gone.tool_call_id
)
SELECT id, session_id FROM gone;

-- name: delete_old_model_calls
DELETE FROM model_calls WHERE id = ANY($1::text[]) AND ts < $2 RETURNING id, session_id;

-- Metric points go by whole (series, start time) group, once every point of
-- the group is before the cutoff: deleting only a cumulative series' older
-- points would make its oldest remaining point count its whole total as new.
-- Delta points start where the previous one ended, so each is its own group.
-- name: delete_old_metric_points
DELETE FROM metric_points WHERE id IN (
  SELECT p.id FROM metric_points AS p
  WHERE p.org_id = $1 AND p.ts < $2
    AND NOT EXISTS (
      SELECT 1 FROM metric_points AS q
      WHERE q.series_id = p.series_id AND q.start_time_ns IS NOT DISTINCT FROM p.start_time_ns
        AND q.org_id = p.org_id AND q.actor_id = p.actor_id AND q.ts >= $2
    )
  ORDER BY p.ts
  LIMIT $3
)
RETURNING id;

-- name: recount_session_costs
UPDATE sessions AS s SET
  seq = r.seq,
  (cost_usd, reported_cost_calls, estimated_cost_calls, estimated_cost_usd) = (
    SELECT coalesce(sum(cost_usd), 0), count(cost_usd), count(estimated_cost_usd),
      coalesce(sum(estimated_cost_usd), 0)
    FROM model_calls WHERE org_id = r.org_id AND session_id = r.session_id
  )
FROM unnest($1::bigint[], $2::text[], $3::text[]) AS r(seq, org_id, session_id)
WHERE s.org_id = r.org_id AND s.session_id = r.session_id;

-- name: drop_empty_sessions
WITH dropped AS (
  DELETE FROM sessions AS s
  USING unnest($1::text[], $2::text[]) AS r(org_id, session_id)
  WHERE s.org_id = r.org_id AND s.session_id = r.session_id
    AND NOT EXISTS (
      SELECT 1 FROM tool_calls AS t WHERE t.org_id = r.org_id AND t.session_id = r.session_id
    )
    AND NOT EXISTS (
      SELECT 1 FROM model_calls AS m WHERE m.org_id = r.org_id AND m.session_id = r.session_id
    )
  RETURNING s.org_id, s.session_id
),
decisions_gone AS (
  DELETE FROM decisions AS d USING dropped
  WHERE d.org_id = dropped.org_id AND d.session_id = dropped.session_id
)
-- A dropped session's dimensions go with it (docs/api.md §4.22).
DELETE FROM session_dimensions AS sd USING dropped
WHERE sd.org_id = dropped.org_id AND sd.session_id = dropped.session_id;

-- As sql/sqlite/retention.sql delete_unused_dimension_values.
-- name: delete_unused_dimension_values
DELETE FROM dimension_values AS v
WHERE NOT EXISTS (
  SELECT 1 FROM session_dimensions AS s
  WHERE s.org_id = v.org_id AND s.key = v.key AND s.value = v.value
);

-- What stored nothing (GET /v1/unmapped-events) ages out like the telemetry:
-- a row not seen since the cutoff goes.
-- name: delete_old_unmapped_events
DELETE FROM unmapped_events WHERE last_seen < $1;
