-- GET /v1/insights/outliers (docs/api.md §4.11) on PostgreSQL, the benchmark's baseline with
-- --database:
-- sessions whose call count in the window is strictly above the continuous 95th percentile of all
-- sessions' counts in the window (percentile_cont, as DuckDB's quantile_cont). No sessions: p95 is
-- 0.

-- name: summary
WITH counts AS (
  SELECT session_id, count(*) AS call_count
  FROM tool_calls
  WHERE org_id = $org AND ts >= $start AND ts < $end
  GROUP BY session_id
),
threshold AS (
  SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY call_count) AS p95 FROM counts
)
SELECT
  coalesce(threshold.p95, 0) AS p95_call_count,
  (SELECT count(*) FROM counts WHERE call_count > threshold.p95) AS outlier_count,
  (SELECT count(*) FROM counts) AS session_count
FROM threshold;

-- agent_system and model come from the latest call in the window (ties: the greater id); model
-- from the latest call that reports one, '' when none.
-- name: breakdown
WITH counts AS (
  SELECT session_id, count(*) AS call_count
  FROM tool_calls
  WHERE org_id = $org AND ts >= $start AND ts < $end
  GROUP BY session_id
),
threshold AS (
  SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY call_count) AS p95 FROM counts
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
  (array_agg(c.agent_system ORDER BY c.ts DESC, c.id DESC))[1] AS agent_system,
  coalesce(
    (array_agg(c.model ORDER BY c.ts DESC, c.id DESC)
      FILTER (WHERE c.model IS NOT NULL AND c.model <> ''))[1],
    ''
  ) AS model,
  count(*) FILTER (WHERE c.outcome = 'error') AS error_count
FROM outliers AS o
JOIN tool_calls AS c
  ON c.org_id = $org AND c.session_id = o.session_id AND c.ts >= $start AND c.ts < $end
GROUP BY o.session_id, o.call_count
ORDER BY o.call_count DESC, o.session_id;

-- group_by (docs/api.md §4.23): the summary per group, as sql/insights/outliers.sql; /*group_value*/
-- and /*group_join*/ become the group's column or the join that finds it.
-- name: groups
WITH counts AS (
  SELECT /*group_value*/ AS group_value, session_id, count(*) AS call_count
  FROM tool_calls /*group_join*/
  WHERE org_id = $org AND ts >= $start AND ts < $end
  GROUP BY 1, session_id
),
thresholds AS (
  SELECT
    group_value,
    percentile_cont(0.95) WITHIN GROUP (ORDER BY call_count) AS p95,
    count(*) AS session_count
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
