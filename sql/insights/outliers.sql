-- GET /v1/insights/outliers (docs/api.md §4.11) on the DuckDB replica: sessions whose
-- call count in the window is strictly above the continuous 95th percentile
-- of all sessions' counts in the window. No sessions: p95 is 0.

-- /*sessions*/ marks where the dimension filters (docs/api.md §4.22) narrow a
-- read to their sessions (src/analytics/insights.ts splices it; unfiltered: nothing).

-- name: summary
WITH counts AS (
  SELECT session_id, count(*) AS call_count
  FROM tool_calls
  WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
  GROUP BY session_id
),
threshold AS (
  SELECT quantile_cont(call_count, 0.95) AS p95 FROM counts
)
SELECT
  coalesce(threshold.p95, 0) AS p95_call_count,
  (SELECT count(*) FROM counts WHERE call_count > threshold.p95) AS outlier_count,
  (SELECT count(*) FROM counts) AS session_count
FROM threshold;

-- agent_system and model come from the latest call in the window (ties: the
-- greater id); model from the latest call that reports one, '' when none.
-- name: breakdown
WITH calls AS NOT MATERIALIZED (
  SELECT session_id, id, ts, outcome, agent_system, model
  FROM tool_calls
  WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
),
counts AS (
  SELECT session_id, count(*) AS call_count FROM calls GROUP BY session_id
),
threshold AS (
  SELECT quantile_cont(call_count, 0.95) AS p95 FROM counts
),
outliers AS (
  SELECT session_id, call_count
  FROM counts, threshold
  WHERE call_count > threshold.p95
  ORDER BY call_count DESC, session_id
  LIMIT 50
)
SELECT
  o.session_id,
  o.call_count,
  min(c.ts) AS first_seen,
  max(c.ts) AS last_seen,
  arg_max(c.agent_system, (c.ts, c.id)) AS agent_system,
  coalesce(
    arg_max(c.model, (c.ts, c.id)) FILTER (WHERE c.model IS NOT NULL AND c.model <> ''),
    ''
  ) AS model,
  count(*) FILTER (WHERE c.outcome = 'error') AS error_count
FROM outliers AS o
JOIN calls AS c ON c.session_id = o.session_id
GROUP BY o.session_id, o.call_count
ORDER BY o.call_count DESC, o.session_id;

-- group_by (docs/api.md §4.23): the summary per group, biggest first, ties by value
-- with the null group last; /*group_value*/ and /*group_join*/ become the group's
-- column or the join that finds it (src/analytics/insights.ts).
-- A group's p95 is over its own sessions' counts.
-- name: groups
WITH counts AS (
  SELECT /*group_value*/ AS group_value, session_id, count(*) AS call_count
  FROM tool_calls /*group_join*/
  WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
  GROUP BY group_value, session_id
),
thresholds AS (
  SELECT group_value, quantile_cont(call_count, 0.95) AS p95, count(*) AS session_count
  FROM counts
  GROUP BY group_value
)
SELECT
  t.group_value,
  t.p95 AS p95_call_count,
  (SELECT count(*) FROM counts AS c
    WHERE c.group_value IS NOT DISTINCT FROM t.group_value AND c.call_count > t.p95)
    AS outlier_count,
  t.session_count
FROM thresholds AS t
ORDER BY t.session_count DESC, t.group_value NULLS LAST
LIMIT $group_limit;
