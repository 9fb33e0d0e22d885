-- GET /v1/insights/activity (docs/api.md §4.9) over the per-day rollups
-- (issue #31; sql/duckdb/replica_days.sql keeps them and says why they are
-- exact): the whole UTC days in [$day_lo, $day_hi) are read from
-- activity_days, the rest of the window, [$start, $day_lo) and [$day_hi, $end),
-- from raw rows (a window's edges fall mid-day, and days at or after the
-- rollups' mark are not rolled up yet). The answer is the raw-row statements'
-- (sql/insights/activity.sql, the reference) byte for byte: sums of counts, and
-- session_count as DISTINCT over (day, session) rows, never a sum of counts.
-- src/analytics/insights.ts sets $day_lo and $day_hi and opens each statement
-- with `rows`; /*sessions*/, /*group_value*/ and /*group_join*/ as there.

-- name: rows
WITH calls AS (
  SELECT session_id, actor_id, agent_system, day AS ts, calls AS n, errors AS n_errors
  FROM activity_days
  WHERE org_id = $org AND day >= $day_lo AND day < $day_hi /*sessions*/
  UNION ALL
  SELECT session_id, actor_id, agent_system, ts, 1 AS n,
    CASE WHEN outcome = 'error' THEN 1 ELSE 0 END AS n_errors
  FROM tool_calls
  WHERE org_id = $org AND ts >= $start AND ts < $day_lo /*sessions*/
  UNION ALL
  SELECT session_id, actor_id, agent_system, ts, 1 AS n,
    CASE WHEN outcome = 'error' THEN 1 ELSE 0 END AS n_errors
  FROM tool_calls
  WHERE org_id = $org AND ts >= $day_hi AND ts < $end /*sessions*/
)

-- name: summary
SELECT
  sum(n) AS total_calls,
  sum(n_errors) AS error_count,
  count(DISTINCT session_id) AS session_count
FROM calls;

-- A day's rollup row stands at the day's midnight: its bucket is its calls'.

-- name: series
SELECT
  ts - (((ts + $offset) % $width) + $width) % $width AS bucket,
  sum(n) AS calls,
  sum(n_errors) AS errors
FROM calls
GROUP BY bucket
ORDER BY bucket;

-- name: groups
SELECT
  /*group_value*/ AS group_value,
  sum(n) AS total_calls,
  sum(n_errors) AS error_count,
  count(DISTINCT session_id) AS session_count
FROM calls /*group_join*/
GROUP BY group_value
ORDER BY total_calls DESC, group_value NULLS LAST
LIMIT $group_limit;
